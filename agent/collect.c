// SPDX-License-Identifier: MIT
#include "collect.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdma.h"

#define BATCH	 4096
#define PSN_MASK 0xffffffu

_Static_assert(sizeof(struct ctp_flow_key) == sizeof(struct ct_flow_key),
	       "the probe's IPv6 (and record) flow key is the engine's");
_Static_assert(sizeof(struct ctp_flow_key4) == 16, "the probe's IPv4 flow key is 16 bytes");

struct ctp_totals_value {
	uint64_t t[CTP_T_COUNT];
	uint64_t sample_ctr;
};

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct ct_flow_summary *hist_of(struct ct_collect *c, const struct ct_flow_key *key)
{
	struct ct_flow_summary s = {0};
	int64_t i = ct_flow_set_find(&c->hist, key);

	if (i >= 0)
		return &c->hist.flows[i];
	s.key = *key;
	s.reverse = -1;
	if (ct_flow_set_add_summary(&c->hist, &s)) {
		c->oom++;
		return NULL;
	}
	return &c->hist.flows[ct_flow_set_find(&c->hist, key)];
}

static void hist_add(struct ct_collect *c, const struct ct_flow_key *key, uint64_t size)
{
	struct ct_flow_summary *h = hist_of(c, key);

	if (h)
		h->msg_hist[ct_hist_bucket(size)]++;
}

static void burst_add(struct ct_collect *c, const struct ct_flow_burst *b)
{
	if (ct_burst_log_add(&c->bursts, b))
		c->oom++;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct ct_collect *c = ctx;
	const struct ctp_record *r = data;
	struct ct_flow_burst b;

	if (size < sizeof(*r))
		return 0;
	c->records++;
	if (r->type == CTP_REC_MESSAGE) {
		hist_add(c, (const struct ct_flow_key *)&r->key, r->bytes);
	} else if (r->type == CTP_REC_BURST) {
		memcpy(&b.key, &r->key, sizeof(b.key));
		b.start = r->start + c->clock_offset;
		b.end = r->end + c->clock_offset;
		b.bytes = r->bytes;
		b.messages = r->messages;
		b.packets = r->packets;
		b.loss = r->loss;
		b.marks = r->marks;
		burst_add(c, &b);
	}
	return 0;
}

int ct_collect_init(struct ct_collect *c, struct ct_probe **probes, unsigned n, uint64_t window_ns,
		    char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->probes = probes;
	c->n_probes = n;
	c->window_ns = window_ns;
	c->clock_offset = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	ct_flow_set_init(&c->retired);
	ct_flow_set_init(&c->live);
	ct_flow_set_init(&c->hist);
	for (unsigned i = 0; i < n; i++) {
		int fd = ct_probe_events_fd(probes[i]);
		int rc = i ? ring_buffer__add(c->ring, fd, on_record, c) : 0;

		if (!i) {
			c->ring = ring_buffer__new(fd, on_record, c, NULL);
			rc = c->ring ? 0 : -errno;
		}
		if (rc) {
			snprintf(err, errlen, "%s: cannot read the probe's ring buffer: %s",
				 ct_probe_ifname(probes[i]), strerror(-rc));
			return rc;
		}
	}
	return 0;
}

void ct_collect_free(struct ct_collect *c)
{
	ring_buffer__free(c->ring);
	ct_flow_set_free(&c->retired);
	ct_flow_set_free(&c->live);
	ct_flow_set_free(&c->hist);
	ct_burst_log_free(&c->bursts);
}

int ct_collect_poll(struct ct_collect *c, int timeout_ms)
{
	int rc = ring_buffer__poll(c->ring, timeout_ms);

	return rc == -EINTR ? 0 : rc;
}

/* One kernel flow record as a summary; with final, open messages and bursts close. */
static void summary_of(struct ct_collect *c, const struct ctp_flow_key *k, const struct ctp_flow *f,
		       int final, struct ct_flow_summary *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(&s->key, k, sizeof(s->key));
	s->packets = f->packets;
	s->bytes = f->bytes;
	s->first_ts = f->first_ts + c->clock_offset;
	s->last_ts = f->last_ts + c->clock_offset;
	s->messages = f->messages;
	s->message_bytes = f->message_bytes;
	s->cnp = f->cnp;
	s->ecn_ce = f->ecn_ce;
	s->retransmits = f->retransmits;
	s->psn_gaps = f->psn_gaps;
	s->psn_missing = f->psn_missing;
	s->naks_seq = f->naks_seq;
	s->naks_rnr = f->naks_rnr;
	s->naks_other = f->naks_other;
	s->partial_messages = f->partial_messages;
	s->seen = f->seen;
	s->closed = k->transport == CTP_TRANSPORT_TCP && (f->state & CTP_FS_TCP_CLOSED);
	if (k->transport == CTP_TRANSPORT_ROCE) {
		s->req_first_psn = f->req_first_psn;
		s->req_last_psn = (f->next_psn - 1) & PSN_MASK;
		s->resp_first_psn = f->resp_first_psn;
		s->resp_last_psn = (f->resp_next_psn - 1) & PSN_MASK;
	}
	s->pmtu = f->pmtu;
	s->dscp = f->dscp;
	s->pcp = f->pcp;
	s->ecn_seen = f->ecn_seen;
	s->records = 1;
	s->reverse = -1;
	if (s->last_ts > c->newest_ts)
		c->newest_ts = s->last_ts;
	if (!final)
		return;
	/* as ct_engine_finish: a TCP message in progress is complete, a RoCE one partial */
	if (k->transport == CTP_TRANSPORT_TCP && f->msg_bytes) {
		s->messages++;
		s->message_bytes += f->msg_bytes;
		hist_add(c, &s->key, f->msg_bytes);
	} else if (k->transport == CTP_TRANSPORT_ROCE) {
		s->partial_messages +=
			!!(f->state & CTP_FS_REQ_IN_MSG) + !!(f->state & CTP_FS_RESP_IN_MSG);
	}
	struct ct_flow_burst b = {
		.key = s->key,
		.start = f->burst_start_ts + c->clock_offset,
		.end = s->last_ts,
		.bytes = f->bytes - f->burst_start_bytes,
		.messages = (uint32_t)s->messages - f->burst_start_messages,
		.packets = (uint32_t)f->packets - f->burst_start_packets,
		.loss = ctp_burst_count(ctp_flow_loss(f), f->burst_start_loss),
		.marks = ctp_burst_count(ctp_flow_marks(f), f->burst_start_marks),
	};
	burst_add(c, &b);
}

static int add_flows(struct ct_collect *c, struct ct_flow_set *set, const struct ctp_flow_key *keys,
		     const struct ctp_flow *vals, uint32_t n, int final)
{
	struct ct_flow_summary s;

	for (uint32_t i = 0; i < n; i++) {
		summary_of(c, &keys[i], &vals[i], final, &s);
		if (ct_flow_set_add_summary(set, &s))
			return -ENOMEM;
	}
	c->live_entries += n;
	return 0;
}

/* An IPv4 flow's key as the engine's: the addresses as ::ffff:a.b.c.d. */
static void key_of4(const struct ctp_flow_key4 *k4, struct ctp_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->src[10] = k->src[11] = k->dst[10] = k->dst[11] = 0xff;
	memcpy(k->src + 12, k4->src, 4);
	memcpy(k->dst + 12, k4->dst, 4);
	k->id = k4->id;
	k->transport = k4->transport;
}

/* Keys as read from a map (IPv4 maps: 16-byte keys) into engine keys. */
static void keys_of(const void *raw, int v4, struct ctp_flow_key *out, uint32_t n)
{
	if (!v4) {
		memcpy(out, raw, n * sizeof(*out));
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		key_of4((const struct ctp_flow_key4 *)raw + i, &out[i]);
}

/*
 * Every entry of one flow map (v4: the IPv4 map's short keys), in batches
 * (one key at a time where unsupported).
 */
static int read_flows(struct ct_collect *c, int fd, int v4, struct ct_flow_set *set, int final)
{
	static struct ctp_flow_key raw[BATCH], keys[BATCH];
	static struct ctp_flow vals[BATCH];
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct ctp_flow_key in = {0}, out = {0}; /* batch cursors: room for either key */
	uint32_t n;
	int rc, first = 1;

	while (!c->batch_unsupported) {
		n = BATCH;
		rc = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, raw, vals, &n, &opts);
		if (rc && errno != ENOENT) {
			if (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP) {
				c->batch_unsupported = 1;
				break;
			}
			return -errno;
		}
		keys_of(raw, v4, keys, n);
		if (add_flows(c, set, keys, vals, n, final))
			return -ENOMEM;
		if (rc) /* ENOENT: that was the last batch */
			return 0;
		in = out;
		first = 0;
	}
	/* kernels without batch lookups */
	struct ctp_flow_key key, next;
	int have = 0;

	while (!bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
		key = next;
		have = 1;
		if (!bpf_map_lookup_elem(fd, &key, &vals[0])) {
			keys_of(&key, v4, keys, 1);
			if (add_flows(c, set, keys, &vals[0], 1, final))
				return -ENOMEM;
		}
	}
	return 0;
}

static int read_totals(struct ct_collect *c, int fd)
{
	int ncpu = libbpf_num_possible_cpus();
	struct ctp_totals_value *v;
	uint32_t zero = 0;

	if (ncpu <= 0)
		return ncpu;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		free(v);
		return -errno;
	}
	for (int cpu = 0; cpu < ncpu; cpu++)
		for (int i = 0; i < CTP_T_COUNT; i++)
			c->totals[i] += v[cpu].t[i];
	free(v);
	return 0;
}

int ct_collect_read(struct ct_collect *c, int final)
{
	struct ct_flow_set cur;
	int rc = 0;

	ring_buffer__consume(c->ring);
	ct_flow_set_init(&cur);
	memset(c->totals, 0, sizeof(c->totals));
	c->live_entries = 0;
	c->capacity = 0;
	c->table_bytes = 0;
	for (unsigned i = 0; i < c->n_probes && !rc; i++) {
		uint64_t e4 = ct_probe_flow_entries(c->probes[i]);
		uint64_t e6 = ct_probe_flow_entries6(c->probes[i]);

		rc = read_flows(c, ct_probe_flows_fd(c->probes[i]), 1, &cur, final);
		rc = rc ?: read_flows(c, ct_probe_flows6_fd(c->probes[i]), 0, &cur, final);
		rc = rc ?: read_totals(c, ct_probe_totals_fd(c->probes[i]));
		c->capacity += e4 + e6;
		c->table_bytes += e4 * (sizeof(struct ctp_flow_key4) + sizeof(struct ctp_flow)) +
				  e6 * (sizeof(struct ctp_flow_key) + sizeof(struct ctp_flow));
	}
	if (rc) {
		ct_flow_set_free(&cur);
		return rc;
	}
	/* flows the kernel evicted (or evicted and began again) since the last read */
	for (size_t i = 0; i < c->live.count; i++) {
		const struct ct_flow_summary *old = &c->live.flows[i];
		int64_t j = ct_flow_set_find(&cur, &old->key);

		if ((j < 0 || cur.flows[j].first_ts != old->first_ts) &&
		    ct_flow_set_add_summary(&c->retired, old))
			c->oom++;
	}
	ct_flow_set_free(&c->live);
	c->live = cur;
	/* the periodicity looks at a window of recent bursts */
	if (c->window_ns && c->newest_ts > c->window_ns) {
		size_t keep = 0;

		for (size_t i = 0; i < c->bursts.n; i++)
			if (c->bursts.b[i].end + c->window_ns >= c->newest_ts)
				c->bursts.b[keep++] = c->bursts.b[i];
		c->bursts.n = keep;
	}
	return 0;
}

static json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static json_object *host_json(struct ct_collect *c, uint64_t evictions)
{
	json_object *root = json_object_new_object();
	json_object *probe = json_object_new_object();
	json_object *ifaces = json_object_new_array();
	const uint64_t *t = c->totals;

	for (unsigned i = 0; i < c->n_probes; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name",
				       json_object_new_string(ct_probe_ifname(c->probes[i])));
		json_object_object_add(o, "xdp_mode",
				       json_object_new_string(ct_probe_xdp_mode(c->probes[i])));
		json_object_object_add(o, "xdp_dispatcher",
				       json_object_new_boolean(ct_probe_dispatcher(c->probes[i])));
		json_object_object_add(
			o, "xdp_dispatcher_note",
			ct_probe_dispatcher_note(c->probes[i])
				? json_object_new_string(ct_probe_dispatcher_note(c->probes[i]))
				: NULL);
		json_object_object_add(o, "resumed",
				       json_object_new_boolean(ct_probe_resumed(c->probes[i])));
		json_object_object_add(o, "pause",
				       ct_rdma_pause_json(ct_probe_ifname(c->probes[i])));
		json_object_array_add(ifaces, o);
	}
	json_object_object_add(probe, "interfaces", ifaces);
	json_object_object_add(probe, "packets", u64(t[CTP_T_PACKETS]));
	json_object_object_add(probe, "bytes", u64(t[CTP_T_BYTES]));
	json_object_object_add(probe, "messages", u64(t[CTP_T_MESSAGES]));
	json_object_object_add(probe, "message_bytes", u64(t[CTP_T_MESSAGE_BYTES]));
	json_object_object_add(probe, "cnp", u64(t[CTP_T_CNP]));
	json_object_object_add(probe, "ecn_ce", u64(t[CTP_T_ECN_CE]));
	json_object_object_add(probe, "retransmits", u64(t[CTP_T_RETRANSMITS]));
	json_object_object_add(probe, "gso_packets", u64(t[CTP_T_GSO_PACKETS]));
	json_object_object_add(probe, "sampled_out", u64(t[CTP_T_SAMPLED_OUT]));
	json_object_object_add(probe, "flows_inserted", u64(t[CTP_T_FLOWS_INSERTED]));
	json_object_object_add(probe, "flow_insert_failed", u64(t[CTP_T_FLOW_INSERT_FAILED]));
	json_object_object_add(probe, "flows_live", u64(c->live_entries));
	json_object_object_add(probe, "flow_capacity", u64(c->capacity));
	json_object_object_add(probe, "evictions", u64(evictions));
	json_object_object_add(probe, "flows_retired", u64(c->retired.count));
	json_object_object_add(probe, "ring_records", u64(c->records));
	json_object_object_add(probe, "ring_drops", u64(t[CTP_T_RING_DROPS]));
	json_object_object_add(probe, "ring_drops_bursts", u64(t[CTP_T_RING_DROPS_BURST]));
	json_object_object_add(root, "probe", probe);
	json_object_object_add(root, "rdma", ct_rdma_json());
	return root;
}

int ct_collect_report(struct ct_collect *c, struct ct_report *r, json_object **host)
{
	struct ct_engine_counters *k = &r->counters;
	const uint64_t *t = c->totals;
	uint64_t evictions;

	ct_flow_set_init(&r->flows);
	for (size_t i = 0; i < c->retired.count; i++)
		if (ct_flow_set_add_summary(&r->flows, &c->retired.flows[i]))
			return -ENOMEM;
	for (size_t i = 0; i < c->live.count; i++)
		if (ct_flow_set_add_summary(&r->flows, &c->live.flows[i]))
			return -ENOMEM;
	for (size_t i = 0; i < r->flows.count; i++) {
		struct ct_flow_summary *s = &r->flows.flows[i];
		int64_t h = ct_flow_set_find(&c->hist, &s->key);

		if (h >= 0)
			memcpy(s->msg_hist, c->hist.flows[h].msg_hist, sizeof(s->msg_hist));
		if (!k->first_ts || s->first_ts < k->first_ts)
			k->first_ts = s->first_ts;
		if (s->last_ts > k->last_ts)
			k->last_ts = s->last_ts;
	}
	k->packets = t[CTP_T_PACKETS];
	k->bytes = t[CTP_T_BYTES];
	k->roce_packets = t[CTP_T_ROCE_PACKETS];
	k->roce_bytes = t[CTP_T_ROCE_BYTES];
	k->tcp_packets = t[CTP_T_TCP_PACKETS];
	k->tcp_bytes = t[CTP_T_TCP_BYTES];
	k->other_l2 = t[CTP_T_OTHER_L2];
	k->other_ip = t[CTP_T_OTHER_IP];
	k->malformed = t[CTP_T_MALFORMED];
	k->bursts = t[CTP_T_BURSTS];
	k->bursts_dropped = t[CTP_T_RING_DROPS_BURST];
	/* evictions are derived: the kernel evicts silently */
	evictions = t[CTP_T_FLOWS_INSERTED] > c->live_entries
			    ? t[CTP_T_FLOWS_INSERTED] - c->live_entries
			    : 0;
	k->table.inserts = t[CTP_T_FLOWS_INSERTED];
	k->table.evicted_full = evictions;
	k->table.live = (uint32_t)c->live_entries;
	k->table.capacity = (uint32_t)c->capacity;
	k->table.memory_bytes = c->table_bytes;
	*host = host_json(c, evictions);
	return *host ? 0 : -ENOMEM;
}
