// SPDX-License-Identifier: MIT
/*
 * Reports of commtap-mirror: the workers' snapshots merged and analysed as
 * `commtap analyze` does, with a "mirror" section beside it (port and
 * per-queue drops, capture loss, the last interval's rates), handed to the
 * report sink. Also the rte_telemetry command for live counters.
 */
#include "mirror.h"
#include "report_sink.h"

#include <commtap/analysis.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

/* PSN gaps on flows whose sender never retransmitted: the mirror missed them. */
static void loss_split(const struct ct_snapshot *s, uint64_t *capture, uint64_t *network)
{
	*capture = *network = 0;
	for (size_t i = 0; i < s->n_flows; i++) {
		const struct ct_flow *f = &s->flows[i];

		if (f->key.transport != CT_TRANSPORT_ROCE || !f->cold.psn_gaps)
			continue;
		if (f->cold.retransmits)
			*network += f->cold.psn_missing;
		else
			*capture += f->cold.psn_missing;
	}
}

static struct json_object *mirror_section(struct mirror *m, const struct ct_snapshot *all,
					  int final)
{
	struct json_object *o = json_object_new_object(), *q = json_object_new_array();
	struct json_object *loss = json_object_new_object(), *iv = json_object_new_object();
	struct rte_eth_stats st;
	uint64_t rx = 0, dups = 0, ring_drops = 0, cap_loss, net_loss, now = rte_rdtsc();
	double secs;

	for (unsigned i = 0; i < m->n_workers; i++) {
		rx += m->workers[i].rx_packets;
		dups += m->workers[i].duplicates;
		ring_drops += m->workers[i].ring_drops;
	}
	memset(&st, 0, sizeof(st));
	rte_eth_stats_get(m->port, &st);
	json_object_object_add(o, "driver", json_object_new_string(m->driver));
	add_u64(o, "port", m->port);
	json_object_object_add(o, "mode", json_object_new_string(m->mode));
	add_u64(o, "workers", m->n_workers);
	json_object_object_add(o, "timestamps", json_object_new_string(m->clock));
	json_object_object_add(o, "final", json_object_new_boolean(final));
	add_u64(o, "rx_packets", rx);
	add_u64(o, "duplicates_dropped", dups);
	add_u64(o, "port_ipackets", st.ipackets);
	add_u64(o, "port_imissed", st.imissed);
	add_u64(o, "port_ierrors", st.ierrors);
	add_u64(o, "port_rx_nombuf", st.rx_nombuf);
	for (uint16_t i = 0; i < m->n_queues && i < RTE_ETHDEV_QUEUE_STAT_CNTRS; i++) {
		struct json_object *e = json_object_new_object();

		add_u64(e, "queue", i);
		add_u64(e, "packets", st.q_ipackets[i]);
		add_u64(e, "drops", st.q_errors[i]);
		json_object_array_add(q, e);
	}
	json_object_object_add(o, "queues", q);
	/* loss of the copies, apart from loss in the network the mirror watches */
	loss_split(all, &cap_loss, &net_loss);
	add_u64(loss, "imissed", st.imissed);
	add_u64(loss, "rx_nombuf", st.rx_nombuf);
	add_u64(loss, "ring_drops", ring_drops);
	add_u64(loss, "truncated_frames", all->counters.truncated);
	add_u64(loss, "psn_missing_without_retransmission", cap_loss);
	json_object_object_add(o, "capture_loss", loss);
	add_u64(o, "network_psn_missing_with_retransmission", net_loss);
	secs = (double)(now - m->prev_tsc) / (double)m->tsc_hz;
	json_object_object_add(iv, "seconds", json_object_new_double(secs));
	add_u64(iv, "packets", all->counters.packets - m->prev_packets);
	add_u64(iv, "bytes", all->counters.bytes - m->prev_bytes);
	json_object_object_add(
		iv, "pps",
		json_object_new_double(
			secs > 0 ? (double)(all->counters.packets - m->prev_packets) / secs : 0));
	json_object_object_add(
		iv, "gbps",
		json_object_new_double(secs > 0 ? (double)(all->counters.bytes - m->prev_bytes) *
							  8 / secs / 1e9
						: 0));
	json_object_object_add(o, "last_interval", iv);
	m->prev_packets = all->counters.packets;
	m->prev_bytes = all->counters.bytes;
	m->prev_tsc = now;
	return o;
}

int mirror_put_report(struct mirror *m, int final, int stopping)
{
	struct ct_snapshot all;
	struct ct_report r = {0};
	struct ct_burst_log bursts = {0};
	struct ct_report_input in = {.know = m->know,
				     .min_period_s = m->o.common.min_period_s,
				     .analysed = hang_watch_keep,
				     .ctx = &m->watch};
	struct json_object *section = NULL;
	int err = 0;

	ct_snapshot_init(&all);
	ct_flow_set_init(&r.flows);
	for (unsigned i = 0; i < m->n_workers && !err; i++)
		if (m->workers[i].engine)
			err = ct_snapshot_merge(&all, &m->workers[i].snap);
	err = err ?: ct_report_of_snapshot(&all, &r, &bursts, &in);
	if (err) {
		fprintf(stderr, "commtap-mirror: out of memory for a report\n");
		goto out;
	}
	r.source = m->driver;
	r.source_kind = "dpdk";
	r.clock = m->clock;
	ct_producer_options_nic(&m->o.common, &r);
	section = mirror_section(m, &all, final);
	ct_report_add_section(&r, "mirror", section);
	err = ct_report_sink_analyse(m->sink, &in, &r, final, final && stopping);
out:
	json_object_put(section);
	ct_burst_log_free(&bursts);
	ct_flow_set_free(&r.flows);
	ct_snapshot_free(&all);
	return err;
}

static struct mirror *tel_mirror;

/* /commtap/counters: live counters of every worker (read without locks). */
static int tel_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct ct_engine_counters c, sum;
	uint64_t rx = 0, dups = 0, ring_drops = 0;

	memset(&sum, 0, sizeof(sum));
	for (unsigned i = 0; i < tel_mirror->n_workers; i++) {
		struct mirror_worker *w = &tel_mirror->workers[i];

		rx += w->rx_packets;
		dups += w->duplicates;
		ring_drops += w->ring_drops;
		if (w->engine) {
			ct_engine_get_counters(w->engine, &c);
			ct_engine_counters_add(&sum, &c);
		}
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "workers", tel_mirror->n_workers);
	rte_tel_data_add_dict_u64(d, "rx_packets", rx);
	rte_tel_data_add_dict_u64(d, "duplicates_dropped", dups);
	rte_tel_data_add_dict_u64(d, "ring_drops", ring_drops);
	rte_tel_data_add_dict_u64(d, "packets", sum.packets);
	rte_tel_data_add_dict_u64(d, "bytes", sum.bytes);
	rte_tel_data_add_dict_u64(d, "roce_packets", sum.roce_packets);
	rte_tel_data_add_dict_u64(d, "tcp_packets", sum.tcp_packets);
	rte_tel_data_add_dict_u64(d, "malformed", sum.malformed);
	rte_tel_data_add_dict_u64(d, "truncated", sum.truncated);
	rte_tel_data_add_dict_u64(d, "live_flows", sum.table.live);
	rte_tel_data_add_dict_u64(d, "evicted_idle", sum.table.evicted_idle);
	rte_tel_data_add_dict_u64(d, "evicted_full", sum.table.evicted_full);
	return 0;
}

void mirror_telemetry_register(struct mirror *m)
{
	tel_mirror = m;
	rte_telemetry_register_cmd("/commtap/counters", tel_counters,
				   "commtap-mirror live counters, all workers summed");
}
