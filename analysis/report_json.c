// SPDX-License-Identifier: MIT
/* commtap.report/v1 as JSON (json-c). The schema is in docs/report-schema.md. */
#include <commtap/report.h>
#include <commtap/roce_opcode.h>

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef COMMTAP_VERSION
#define COMMTAP_VERSION "0.0.0"
#endif

static void add_u64(json_object *o, const char *name, uint64_t v)
{
	json_object_object_add(o, name, json_object_new_uint64(v));
}

static json_object *addr_json(const struct ct_addr *a)
{
	char buf[64];

	return json_object_new_string(ct_addr_format(a, buf, sizeof(buf)));
}

static json_object *hist_json(const uint64_t *hist)
{
	json_object *o = json_object_new_object();
	char name[32];

	for (unsigned b = 0; b < CT_HIST_BUCKETS; b++) {
		if (!hist[b])
			continue;
		snprintf(name, sizeof(name), "%llu", (unsigned long long)ct_hist_bucket_floor(b));
		add_u64(o, name, hist[b]);
	}
	return o;
}

static json_object *opcodes_json(const struct ct_flow_summary *f)
{
	json_object *o = json_object_new_object();
	uint8_t order[CT_SUMMARY_OPS];
	unsigned n = f->n_ops;

	/* ascending opcode order, independent of arrival order */
	for (unsigned i = 0; i < n; i++)
		order[i] = (uint8_t)i;
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && f->op_id[order[j - 1]] > f->op_id[order[j]]; j--) {
			uint8_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (unsigned i = 0; i < n; i++) {
		const char *name = ct_opcode_name(f->op_id[order[i]]);

		add_u64(o, name ? name : "unknown", f->op_count[order[i]]);
	}
	if (f->op_other)
		add_u64(o, "other", f->op_other);
	return o;
}

static json_object *dist_json(const struct ct_dist *d)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "p10", json_object_new_double(d->p10));
	json_object_object_add(o, "median", json_object_new_double(d->median));
	json_object_object_add(o, "p90", json_object_new_double(d->p90));
	return o;
}

static json_object *onoff_json(json_object *o, const struct ct_onoff *oo)
{
	add_u64(o, "bursts", oo->bursts);
	json_object_object_add(o, "duty_cycle", json_object_new_double(oo->duty_cycle));
	json_object_object_add(o, "on_s", dist_json(&oo->on_s));
	json_object_object_add(o, "off_s", dist_json(&oo->off_s));
	json_object_object_add(o, "burst_bytes", dist_json(&oo->burst_bytes));
	json_object_object_add(o, "peak_gbps", json_object_new_double(oo->peak_gbps));
	return o;
}

static json_object *flow_periodicity_json(const struct ct_flow_periodicity *fp)
{
	json_object *o = onoff_json(json_object_new_object(), &fp->onoff);
	json_object *phase = json_object_new_object();

	json_object_object_add(o, "period_s",
			       fp->periodic ? json_object_new_double(fp->period_s) : NULL);
	json_object_object_add(phase, "first",
			       fp->phase_first >= 0 ? json_object_new_double(fp->phase_first) : NULL);
	json_object_object_add(phase, "last",
			       fp->phase_last >= 0 ? json_object_new_double(fp->phase_last) : NULL);
	json_object_object_add(o, "phase", phase);
	json_object_object_add(o, "job", fp->job >= 0 ? json_object_new_int(fp->job) : NULL);
	if (fp->n_bursts) {
		/* the first bursts, for timelines: [start_ns, end_ns, bytes, messages] */
		json_object *list = json_object_new_array();

		for (size_t k = 0; k < fp->n_bursts && k < CT_REPORT_BURSTS_PER_FLOW; k++) {
			json_object *e = json_object_new_array();

			json_object_array_add(e, json_object_new_uint64(fp->bursts[k].start));
			json_object_array_add(e, json_object_new_uint64(fp->bursts[k].end));
			json_object_array_add(e, json_object_new_uint64(fp->bursts[k].bytes));
			json_object_array_add(e, json_object_new_uint64(fp->bursts[k].messages));
			json_object_array_add(list, e);
		}
		json_object_object_add(o, "first_bursts", list);
	}
	if (fp->volumes.iterations) {
		json_object *it = json_object_new_object();
		json_object *bytes = json_object_new_array(), *msgs = json_object_new_array();

		for (size_t k = 0; k < fp->volumes.iterations; k++) {
			json_object_array_add(bytes, json_object_new_uint64((uint64_t)fp->volumes.bytes[k]));
			json_object_array_add(msgs,
					      json_object_new_uint64((uint64_t)fp->volumes.messages[k]));
		}
		json_object_object_add(it, "bytes", bytes);
		json_object_object_add(it, "messages", msgs);
		json_object_object_add(it, "bytes_cv", json_object_new_double(fp->volumes.bytes_cv));
		json_object_object_add(o, "per_iteration", it);
	}
	return o;
}

static json_object *flow_json(const struct ct_report *r, size_t i)
{
	const struct ct_flow_set *s = &r->flows;
	const struct ct_flow_summary *f = &s->flows[i];
	json_object *o = json_object_new_object();
	int roce = f->key.transport == CT_TRANSPORT_ROCE;

	add_u64(o, "id", i);
	json_object_object_add(o, "transport", json_object_new_string(roce ? "roce" : "tcp"));
	json_object_object_add(o, "src", addr_json(&f->key.src));
	json_object_object_add(o, "dst", addr_json(&f->key.dst));
	if (roce && CT_QPN_IS_CUT(f->key.id)) { /* copies cut before their QPN */
		json_object_object_add(o, "qpn", NULL);
		json_object_object_add(
			o, "qpn_cut",
			json_object_new_string(ct_malformed_name(CT_QPN_CUT_REASON(f->key.id))));
	} else if (roce) {
		add_u64(o, "qpn", f->key.id);
	} else {
		add_u64(o, "sport", f->key.id >> 16);
		add_u64(o, "dport", f->key.id & 0xffff);
	}
	add_u64(o, "packets", f->packets);
	add_u64(o, "bytes", f->bytes);
	add_u64(o, "messages", f->messages);
	add_u64(o, "message_bytes", f->message_bytes);
	json_object_object_add(o, "msg_size_hist", hist_json(f->msg_hist));
	if (roce)
		json_object_object_add(o, "opcodes", opcodes_json(f));
	add_u64(o, "retransmits", f->retransmits);
	if (roce) {
		json_object *psn = json_object_new_object();
		json_object *naks = json_object_new_object();
		json_object *reads = json_object_new_object();

		add_u64(psn, "gaps", f->psn_gaps);
		add_u64(psn, "missing", f->psn_missing);
		add_u64(psn, "duplicates", f->duplicates);
		add_u64(psn, "go_back_n", f->go_back_n);
		if (f->seen & CT_SEEN_REQ_PSN) {
			add_u64(psn, "request_first", f->req_first_psn);
			add_u64(psn, "request_last", f->req_last_psn);
		}
		if (f->seen & CT_SEEN_RESP_PSN) {
			add_u64(psn, "response_first", f->resp_first_psn);
			add_u64(psn, "response_last", f->resp_last_psn);
		}
		json_object_object_add(o, "psn", psn);
		add_u64(naks, "sequence", f->naks_seq);
		add_u64(naks, "rnr", f->naks_rnr);
		add_u64(naks, "other", f->naks_other);
		json_object_object_add(o, "naks", naks);
		add_u64(reads, "requests", f->read_requests);
		add_u64(reads, "bytes_requested", f->read_bytes_requested);
		add_u64(reads, "responses_matched", f->reads_matched);
		add_u64(reads, "length_mismatch", f->read_len_mismatch);
		json_object_object_add(o, "reads", reads);
		add_u64(o, "partial_messages", f->partial_messages);
		add_u64(o, "messages_size_inferred", f->size_inferred);
		json_object_object_add(o, "pmtu", f->pmtu ? json_object_new_int(f->pmtu) : NULL);
	}
	add_u64(o, "cnp", f->cnp);
	add_u64(o, "ecn_ce", f->ecn_ce);
	json_object_object_add(o, "dscp", json_object_new_int(f->dscp));
	json_object_object_add(o, "pcp", f->pcp == 0xff ? NULL : json_object_new_int(f->pcp));
	json_object_object_add(o, "reverse",
			       f->reverse >= 0 ? json_object_new_int64(f->reverse) : NULL);
	json_object_object_add(
		o, "reverse_evidence",
		f->reverse >= 0 ? json_object_new_string(ct_pair_evidence_name(f->reverse_evidence))
				: NULL);
	add_u64(o, "first_ts", f->first_ts);
	add_u64(o, "last_ts", f->last_ts);
	if (r->classes && i < r->classes->n) {
		const struct ct_flow_class *fc = &r->classes->flows[i];
		static const char *const sources[] = {"signature", "profile", "label", "connection"};

		json_object_object_add(o, "class", json_object_new_string(ct_class_name(fc->cls)));
		json_object_object_add(o, "class_confidence",
				       json_object_new_double(round(fc->confidence * 100) / 100));
		json_object_object_add(o, "class_source",
				       json_object_new_string(sources[fc->source]));
		json_object_object_add(o, "class_evidence", json_object_new_string(fc->evidence));
	}
	if (r->periodicity && i < r->periodicity->n_flows)
		json_object_object_add(o, "periodicity",
				       flow_periodicity_json(&r->periodicity->flows[i]));
	return o;
}

static json_object *job_json(const struct ct_periodicity *p)
{
	json_object *o = json_object_new_object(), *starts = json_object_new_array();
	const struct ct_period *j = &p->job;

	json_object_object_add(o, "periodic", json_object_new_boolean(j->periodic));
	json_object_object_add(o, "iteration_period_s",
			       j->periodic ? json_object_new_double(j->period_s) : NULL);
	json_object_object_add(o, "period_confidence", json_object_new_double(j->confidence));
	add_u64(o, "iterations", j->periodic ? j->iterations : 0);
	for (size_t k = 0; j->periodic && k < j->iterations; k++)
		json_object_array_add(starts, json_object_new_uint64(j->starts[k]));
	json_object_object_add(o, "iteration_starts", starts);
	json_object_object_add(o, "reason", j->reason ? json_object_new_string(j->reason) : NULL);
	add_u64(o, "bursts", p->bursts);
	onoff_json(o, &p->job_onoff);
	return o;
}

/* The jobs on the fabric: hosts, period and bytes per class of each. */
static json_object *jobs_json(const struct ct_report *r)
{
	const struct ct_periodicity *p = r->periodicity;
	json_object *list = json_object_new_array();

	for (size_t j = 0; j < p->n_jobs; j++) {
		const struct ct_job *job = &p->jobs[j];
		const struct ct_period *period = ct_periodicity_job_period(p, j);
		json_object *o = json_object_new_object(), *hosts = json_object_new_array();
		uint64_t by_class[CT_CLASS_COUNT + 1] = {0}; /* Other last */

		for (size_t h = 0; h < job->n_hosts; h++)
			json_object_array_add(hosts, addr_json(&job->hosts[h]));
		json_object_object_add(o, "hosts", hosts);
		json_object_object_add(o, "iteration_period_s",
				       json_object_new_double(period->period_s));
		json_object_object_add(o, "period_confidence",
				       json_object_new_double(period->confidence));
		add_u64(o, "iterations", period->iterations);
		add_u64(o, "flows", job->flows);
		add_u64(o, "bytes", job->bytes);
		if (r->classes) {
			json_object *classes = json_object_new_object();

			for (size_t f = 0; f < r->flows.count && f < p->n_flows; f++)
				if (p->flows[f].job == (int)j && f < r->classes->n)
					by_class[r->classes->flows[f].cls] += r->flows.flows[f].bytes;
			for (int c = 0; c <= CT_CLASS_COUNT; c++)
				if (by_class[c])
					add_u64(classes, ct_class_name(c), by_class[c]);
			json_object_object_add(o, "class_bytes", classes);
		}
		json_object_array_add(list, o);
	}
	return list;
}

static json_object *cc_json(const struct ct_report *r)
{
	const struct ct_periodicity *p = r->periodicity;
	json_object *o = json_object_new_object(), *list = json_object_new_array();

	for (size_t i = 0; i < p->n_receivers + p->n_class_receivers; i++) {
		const struct ct_receiver_cc *c = i < p->n_receivers
							 ? &p->receivers[i]
							 : &p->class_receivers[i - p->n_receivers];
		json_object *e = json_object_new_object();

		json_object_object_add(e, "receiver", addr_json(&c->host));
		json_object_object_add(e, "class",
				       json_object_new_string(c->cls < 0 ? "all" : ct_class_name(c->cls)));
		add_u64(e, "senders", c->senders);
		add_u64(e, "incast_degree", c->incast_degree);
		json_object_object_add(e, "peak_gbps", json_object_new_double(c->peak_gbps));
		json_object_object_add(e, "nic_gbps", json_object_new_double(r->nic_gbps));
		json_object_object_add(e, "peak_over_nic",
				       json_object_new_double(r->nic_gbps > 0 ? c->peak_gbps / r->nic_gbps
									      : 0));
		onoff_json(e, &c->onoff);
		json_object_object_add(e, "start_spread_s",
				       c->start_spread_s >= 0 ? json_object_new_double(c->start_spread_s)
							      : NULL);
		json_object_object_add(e, "cnp_per_s_on", json_object_new_double(c->cnp_per_s_on));
		json_object_object_add(e, "ecn_ce_fraction",
				       json_object_new_double(c->ecn_ce_fraction));
		add_u64(e, "retransmits", c->retransmits);
		json_object_array_add(list, e);
	}
	json_object_object_add(o, "receivers", list);
	return o;
}

static json_object *capture_json(const struct ct_report *r)
{
	const struct ct_engine_counters *c = &r->counters;
	json_object *o = json_object_new_object();
	json_object *mal = json_object_new_object();
	json_object *reasons = json_object_new_object();
	json_object *cut = json_object_new_object();

	json_object_object_add(o, "file", json_object_new_string(r->source ? r->source : ""));
	json_object_object_add(o, "format",
			       json_object_new_string(r->source_kind ? r->source_kind : "pcap"));
	add_u64(o, "packets", c->packets);
	add_u64(o, "bytes", c->bytes);
	add_u64(o, "first_ts", c->first_ts);
	add_u64(o, "last_ts", c->last_ts);
	add_u64(o, "duration_ns", c->packets ? c->last_ts - c->first_ts : 0);
	add_u64(o, "roce_packets", c->roce_packets);
	add_u64(o, "tcp_packets", c->tcp_packets);
	add_u64(o, "other_ip_packets", c->other_ip);
	add_u64(o, "other_l2_packets", c->other_l2);
	add_u64(o, "encapsulated", c->encapsulated);
	add_u64(o, "truncated_frames", c->truncated);
	add_u64(cut, "extension_headers", c->roce_cut[CT_CUT_ROCE_EXT]);
	add_u64(cut, "after_qpn", c->roce_cut[CT_CUT_AFTER_QPN]);
	add_u64(cut, "before_qpn", c->roce_cut[CT_CUT_BEFORE_QPN]);
	json_object_object_add(o, "roce_headers_cut", cut);
	add_u64(o, "messages_size_inferred", c->messages_size_inferred);
	add_u64(mal, "total", c->malformed);
	for (unsigned i = 1; i < CT_MAL_COUNT; i++)
		if (c->malformed_by_reason[i])
			add_u64(reasons, ct_malformed_name(i), c->malformed_by_reason[i]);
	json_object_object_add(mal, "by_reason", reasons);
	json_object_object_add(o, "malformed", mal);
	json_object_object_add(o, "complete", json_object_new_boolean(!r->error && !r->interval));
	json_object_object_add(o, "error", r->error ? json_object_new_string(r->error) : NULL);
	return o;
}

static json_object *engine_json(const struct ct_report *r)
{
	const struct ct_engine_counters *c = &r->counters;
	json_object *o = json_object_new_object();

	add_u64(o, "flow_capacity", c->table.capacity);
	add_u64(o, "flow_memory_bytes", c->table.memory_bytes);
	add_u64(o, "flows_inserted", c->table.inserts);
	add_u64(o, "evicted_idle", c->table.evicted_idle);
	add_u64(o, "evicted_full", c->table.evicted_full);
	add_u64(o, "evicted_unreported", c->evicted_unreported);
	add_u64(o, "cm_messages", c->cm_messages);
	add_u64(o, "read_overwrites", c->read_overwrites);
	add_u64(o, "bursts", c->bursts);
	add_u64(o, "bursts_dropped", c->bursts_dropped);
	return o;
}

static json_object *pfc_json(const struct ct_pfc_counters *p)
{
	json_object *o = json_object_new_object();
	json_object *prios = json_object_new_array();

	add_u64(o, "pause_frames", p->pause_frames);
	add_u64(o, "pause_quanta", p->pause_quanta);
	add_u64(o, "pfc_frames", p->pfc_frames);
	for (int i = 0; i < 8; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "priority", json_object_new_int(i));
		add_u64(e, "frames", p->frames[i]);
		add_u64(e, "quanta", p->quanta[i]);
		add_u64(e, "xoff", p->xoff[i]);
		json_object_array_add(prios, e);
	}
	json_object_object_add(o, "priorities", prios);
	return o;
}

/* How the flows were classified, and the layout the signatures suggest. */
static json_object *classification_json(const struct ct_classification *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "method", json_object_new_string(c->method));
	if (!strcmp(c->method, "signatures")) {
		json_object *l = json_object_new_object();

		json_object_object_add(l, "hosts", json_object_new_int((int)c->layout.hosts));
		json_object_object_add(l, "pp_stages", json_object_new_int((int)c->layout.pp_stages));
		json_object_object_add(l, "dp_ring", json_object_new_int((int)c->layout.dp_ring));
		json_object_object_add(l, "ep_group", json_object_new_int((int)c->layout.ep_group));
		json_object_object_add(o, "inferred_layout", l);
	}
	return o;
}

int ct_report_add_section(struct ct_report *r, const char *name, struct json_object *value)
{
	if (r->n_sections == CT_REPORT_MAX_SECTIONS)
		return -ENOSPC;
	r->sections[r->n_sections++] = (struct ct_report_section){name, value};
	return 0;
}

/* Where an interval report stands among its producer's reports. */
static json_object *report_json(const struct ct_report *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "kind", json_object_new_string("interval"));
	add_u64(o, "seq", r->seq);
	return o;
}

json_object *ct_report_document(const struct ct_report *r)
{
	json_object *root = json_object_new_object();
	json_object *clock = json_object_new_object();
	json_object *flows = json_object_new_array_ext((int)r->flows.count);

	json_object_object_add(root, "schema", json_object_new_string(CT_REPORT_SCHEMA));
	json_object_object_add(root, "generator",
			       json_object_new_string("commtap " COMMTAP_VERSION));
	json_object_object_add(clock, "source",
			       json_object_new_string(r->source_kind ? r->source_kind : "pcap"));
	json_object_object_add(clock, "description", json_object_new_string(r->clock));
	json_object_object_add(clock, "unit", json_object_new_string("ns since the Unix epoch"));
	json_object_object_add(root, "clock", clock);
	if (r->interval)
		json_object_object_add(root, "report", report_json(r));
	if (r->cut_short)
		json_object_object_add(root, "analysis_cut_short",
				       json_object_new_string(r->cut_short));
	json_object_object_add(root, "capture", capture_json(r));
	json_object_object_add(root, "engine", engine_json(r));
	for (size_t i = 0; i < r->flows.count; i++)
		json_object_array_add(flows, flow_json(r, i));
	if (r->periodicity) {
		json_object_object_add(root, "job", job_json(r->periodicity));
		json_object_object_add(root, "jobs", jobs_json(r));
	}
	if (r->classes)
		json_object_object_add(root, "classification", classification_json(r->classes));
	json_object_object_add(root, "flows", flows);
	json_object_object_add(root, "pfc", pfc_json(&r->counters.pfc));
	if (r->periodicity)
		json_object_object_add(root, "cc", cc_json(r));
	for (unsigned i = 0; i < r->n_sections; i++)
		if (r->sections[i].value)
			json_object_object_add(root, r->sections[i].name,
					       json_object_get(r->sections[i].value));
	return root;
}

int ct_report_document_write(json_object *doc, FILE *out)
{
	const char *text = json_object_to_json_string_ext(
		doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!text || fputs(text, out) < 0 || fputc('\n', out) < 0)
		return -EIO;
	return 0;
}

int ct_report_write_json(const struct ct_report *r, FILE *out)
{
	json_object *doc = ct_report_document(r);
	int err = doc ? ct_report_document_write(doc, out) : -ENOMEM;

	json_object_put(doc);
	return err;
}
