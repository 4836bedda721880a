// SPDX-License-Identifier: MIT
/*
 * commtap.report/v1 as JSON (json-c). The schema is in docs/report-schema.md.
 *
 * Every json-c allocation is checked: a value that could not be made, or
 * not be added, marks the builder (struct jb), and ct_report_document
 * returns NULL instead of a document with holes (json-c asserts when given
 * a NULL object to add to).
 */
#include <commtap/advice.h>
#include <commtap/anomaly.h>
#include <commtap/report.h>
#include <commtap/roce_opcode.h>

#include <errno.h>
#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A streamed document's print buffer goes to the file past this many bytes. */
#define FLUSH_AT (1 << 20)

#ifndef COMMTAP_VERSION
#define COMMTAP_VERSION "0.0.0"
#endif

/* The document being built: set once any allocation failed. */
struct jb {
	int oom;
};

/* A new value (NULL: out of memory, marked). */
static json_object *made(struct jb *b, json_object *v)
{
	if (!v)
		b->oom = 1;
	return v;
}

#define OBJ(b)	   made(b, json_object_new_object())
#define ARR(b)	   made(b, json_object_new_array())
#define STR(b, s)  made(b, json_object_new_string(s))
#define U64(b, v)  made(b, json_object_new_uint64(v))
#define I64(b, v)  made(b, json_object_new_int64(v))
#define INT(b, v)  made(b, json_object_new_int(v))
#define DBL(b, v)  made(b, json_object_new_double(v))
#define BOOL(b, v) made(b, json_object_new_boolean(v))

/*
 * o.name = v (v NULL: JSON null). When o could not be made or v cannot be
 * added, v is released and the builder marked.
 */
static void add(struct jb *b, json_object *o, const char *name, json_object *v)
{
	if (o && !json_object_object_add(o, name, v))
		return;
	json_object_put(v);
	b->oom = 1;
}

static void push(struct jb *b, json_object *a, json_object *v)
{
	if (a && v && !json_object_array_add(a, v))
		return;
	json_object_put(v);
	b->oom = 1;
}

static void add_u64(struct jb *b, json_object *o, const char *name, uint64_t v)
{
	add(b, o, name, U64(b, v));
}

static json_object *addr_json(struct jb *b, const struct ct_addr *a)
{
	char buf[64];

	return STR(b, ct_addr_format(a, buf, sizeof(buf)));
}

static json_object *hist_json(struct jb *b, const uint64_t *hist)
{
	json_object *o = OBJ(b);
	char name[32];

	for (unsigned k = 0; k < CT_HIST_BUCKETS; k++) {
		if (!hist[k])
			continue;
		snprintf(name, sizeof(name), "%llu", (unsigned long long)ct_hist_bucket_floor(k));
		add_u64(b, o, name, hist[k]);
	}
	return o;
}

static json_object *opcodes_json(struct jb *b, const struct ct_flow_summary *f)
{
	json_object *o = OBJ(b);
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

		add_u64(b, o, name ? name : "unknown", f->op_count[order[i]]);
	}
	if (f->op_other)
		add_u64(b, o, "other", f->op_other);
	return o;
}

static json_object *dist_json(struct jb *b, const struct ct_dist *d)
{
	json_object *o = OBJ(b);

	add(b, o, "p10", DBL(b, d->p10));
	add(b, o, "median", DBL(b, d->median));
	add(b, o, "p90", DBL(b, d->p90));
	return o;
}

static json_object *onoff_json(struct jb *b, json_object *o, const struct ct_onoff *oo)
{
	add_u64(b, o, "bursts", oo->bursts);
	add(b, o, "duty_cycle", DBL(b, oo->duty_cycle));
	add(b, o, "on_s", dist_json(b, &oo->on_s));
	add(b, o, "off_s", dist_json(b, &oo->off_s));
	add(b, o, "burst_bytes", dist_json(b, &oo->burst_bytes));
	add(b, o, "peak_gbps", DBL(b, oo->peak_gbps));
	return o;
}

static json_object *flow_periodicity_json(struct jb *b, const struct ct_flow_periodicity *fp)
{
	json_object *o = onoff_json(b, OBJ(b), &fp->onoff);
	json_object *phase = OBJ(b);

	add(b, o, "period_s", fp->periodic ? DBL(b, fp->period_s) : NULL);
	add(b, phase, "first", fp->phase_first >= 0 ? DBL(b, fp->phase_first) : NULL);
	add(b, phase, "last", fp->phase_last >= 0 ? DBL(b, fp->phase_last) : NULL);
	add(b, o, "phase", phase);
	add(b, o, "job", fp->job >= 0 ? INT(b, fp->job) : NULL);
	if (fp->n_bursts) {
		/* the first bursts, for timelines: [start_ns, end_ns, bytes, messages] */
		json_object *list = ARR(b);

		for (size_t k = 0; k < fp->n_bursts && k < CT_REPORT_BURSTS_PER_FLOW; k++) {
			json_object *e = ARR(b);

			push(b, e, U64(b, fp->bursts[k].start));
			push(b, e, U64(b, fp->bursts[k].end));
			push(b, e, U64(b, fp->bursts[k].bytes));
			push(b, e, U64(b, fp->bursts[k].messages));
			push(b, list, e);
		}
		add(b, o, "first_bursts", list);
	}
	if (fp->volumes.iterations) {
		json_object *it = OBJ(b);
		json_object *bytes = ARR(b), *msgs = ARR(b);

		for (size_t k = 0; k < fp->volumes.iterations; k++) {
			push(b, bytes, U64(b, (uint64_t)fp->volumes.bytes[k]));
			push(b, msgs, U64(b, (uint64_t)fp->volumes.messages[k]));
		}
		add(b, it, "bytes", bytes);
		add(b, it, "messages", msgs);
		add(b, it, "bytes_cv", DBL(b, fp->volumes.bytes_cv));
		add(b, o, "per_iteration", it);
	}
	return o;
}

/* A flow's key: transport, addresses, and its QPN (or why it has none) or ports. */
static void flow_key_json(struct jb *b, json_object *o, const struct ct_flow_key *k)
{
	int roce = k->transport == CT_TRANSPORT_ROCE;

	add(b, o, "transport", STR(b, roce ? "roce" : "tcp"));
	add(b, o, "src", addr_json(b, &k->src));
	add(b, o, "dst", addr_json(b, &k->dst));
	if (roce && CT_QPN_IS_CUT(k->id)) { /* copies cut before their QPN */
		add(b, o, "qpn", NULL);
		add(b, o, "qpn_cut", STR(b, ct_malformed_name(CT_QPN_CUT_REASON(k->id))));
	} else if (roce) {
		add_u64(b, o, "qpn", k->id);
	} else {
		add_u64(b, o, "sport", k->id >> 16);
		add_u64(b, o, "dport", k->id & 0xffff);
	}
}

static json_object *flow_json(struct jb *b, const struct ct_report *r, size_t i)
{
	const struct ct_flow_set *s = &r->flows;
	const struct ct_flow_summary *f = &s->flows[i];
	json_object *o = OBJ(b);
	int roce = f->key.transport == CT_TRANSPORT_ROCE;

	add_u64(b, o, "id", i);
	flow_key_json(b, o, &f->key);
	add_u64(b, o, "packets", f->packets);
	add_u64(b, o, "bytes", f->bytes);
	add_u64(b, o, "messages", f->messages);
	add_u64(b, o, "message_bytes", f->message_bytes);
	add(b, o, "msg_size_hist", hist_json(b, f->msg_hist));
	if (roce)
		add(b, o, "opcodes", opcodes_json(b, f));
	add_u64(b, o, "retransmits", f->retransmits);
	if (!roce) {
		add_u64(b, o, "reordered", f->reordered);
		add(b, o, "closed", BOOL(b, f->closed));
	}
	if (roce) {
		json_object *psn = OBJ(b);
		json_object *naks = OBJ(b);
		json_object *reads = OBJ(b);

		add_u64(b, psn, "gaps", f->psn_gaps);
		add_u64(b, psn, "missing", f->psn_missing);
		add_u64(b, psn, "duplicates", f->duplicates);
		add_u64(b, psn, "go_back_n", f->go_back_n);
		if (f->seen & CT_SEEN_REQ_PSN) {
			add_u64(b, psn, "request_first", f->req_first_psn);
			add_u64(b, psn, "request_last", f->req_last_psn);
		}
		if (f->seen & CT_SEEN_RESP_PSN) {
			add_u64(b, psn, "response_first", f->resp_first_psn);
			add_u64(b, psn, "response_last", f->resp_last_psn);
		}
		add(b, o, "psn", psn);
		add_u64(b, naks, "sequence", f->naks_seq);
		add_u64(b, naks, "rnr", f->naks_rnr);
		add_u64(b, naks, "other", f->naks_other);
		add(b, o, "naks", naks);
		add_u64(b, reads, "requests", f->read_requests);
		add_u64(b, reads, "bytes_requested", f->read_bytes_requested);
		add_u64(b, reads, "responses_matched", f->reads_matched);
		add_u64(b, reads, "length_mismatch", f->read_len_mismatch);
		add(b, o, "reads", reads);
		add_u64(b, o, "partial_messages", f->partial_messages);
		add_u64(b, o, "messages_size_inferred", f->size_inferred);
		add(b, o, "pmtu", f->pmtu ? INT(b, f->pmtu) : NULL);
	}
	add_u64(b, o, "cnp", f->cnp);
	add_u64(b, o, "ecn_ce", f->ecn_ce);
	add(b, o, "dscp", INT(b, f->dscp));
	add(b, o, "pcp", f->pcp == 0xff ? NULL : INT(b, f->pcp));
	add(b, o, "reverse", f->reverse >= 0 ? I64(b, f->reverse) : NULL);
	add(b, o, "reverse_evidence",
	    f->reverse >= 0 ? STR(b, ct_pair_evidence_name(f->reverse_evidence)) : NULL);
	add_u64(b, o, "first_ts", f->first_ts);
	add_u64(b, o, "last_ts", f->last_ts);
	if (r->classes && i < r->classes->n) {
		const struct ct_flow_class *fc = &r->classes->flows[i];
		static const char *const sources[] = {"signature", "profile", "label",
						      "connection"};

		add(b, o, "class", STR(b, ct_class_name(fc->cls)));
		add(b, o, "class_confidence", DBL(b, round(fc->confidence * 100) / 100));
		add(b, o, "class_source", STR(b, sources[fc->source]));
		add(b, o, "class_evidence", STR(b, fc->evidence));
		add(b, o, "operation", STR(b, ct_op_name(fc->op)));
	}
	if (r->periodicity && i < r->periodicity->n_flows)
		add(b, o, "periodicity", flow_periodicity_json(b, &r->periodicity->flows[i]));
	return o;
}

/*
 * A flow as the summaries of flows read it (prom.c: addresses, ids, class,
 * job and shape, volumes): what a streamed document keeps in memory for
 * /metrics. Names and values as flow_json writes them; a field prom.c
 * starts to read is added here too.
 */
static json_object *flow_brief_json(struct jb *b, const struct ct_report *r, size_t i)
{
	const struct ct_flow_summary *f = &r->flows.flows[i];
	json_object *o = OBJ(b);

	flow_key_json(b, o, &f->key);
	add_u64(b, o, "bytes", f->bytes);
	add_u64(b, o, "messages", f->messages);
	add_u64(b, o, "retransmits", f->retransmits);
	add_u64(b, o, "cnp", f->cnp);
	add_u64(b, o, "ecn_ce", f->ecn_ce);
	if (r->classes && i < r->classes->n) {
		add(b, o, "class", STR(b, ct_class_name(r->classes->flows[i].cls)));
		add(b, o, "operation", STR(b, ct_op_name(r->classes->flows[i].op)));
	}
	if (r->periodicity && i < r->periodicity->n_flows) {
		const struct ct_flow_periodicity *fp = &r->periodicity->flows[i];
		json_object *per = OBJ(b);

		add(b, per, "duty_cycle", DBL(b, fp->onoff.duty_cycle));
		add(b, per, "period_s", fp->periodic ? DBL(b, fp->period_s) : NULL);
		add(b, per, "job", fp->job >= 0 ? INT(b, fp->job) : NULL);
		add(b, o, "periodicity", per);
	}
	return o;
}

/* The flows a limit on the flows in detail summed (flow_set.h): only when there are some. */
static json_object *flows_summed_json(struct jb *b, const struct ct_flow_set *s)
{
	json_object *o = OBJ(b);

	add_u64(b, o, "limit", s->limit);
	add_u64(b, o, "flows", s->rest.flows);
	add_u64(b, o, "records", s->rest.records);
	add_u64(b, o, "packets", s->rest.packets);
	add_u64(b, o, "bytes", s->rest.bytes);
	add_u64(b, o, "messages", s->rest.messages);
	add_u64(b, o, "message_bytes", s->rest.message_bytes);
	add_u64(b, o, "bursts", s->rest.bursts);
	return o;
}

/*
 * The flows of a streamed document: no tree of them is kept; each flow is
 * made, printed and freed when the document is printed, and while
 * ct_report_document_write prints it, the print buffer goes to the file
 * in pieces of about FLUSH_AT bytes. The text is json-c's own array
 * printer's, byte for byte (json_object.c, json_object_array_to_json_string).
 */
struct flows_stream {
	const struct ct_report *r;
	FILE *out; /* while ct_report_document_write prints */
	int err;   /* its first write error */
};

static void indent(struct printbuf *pb, int level, int flags)
{
	if (flags & JSON_C_TO_STRING_PRETTY)
		printbuf_memset(pb, -1, flags & JSON_C_TO_STRING_PRETTY_TAB ? '\t' : ' ',
				flags & JSON_C_TO_STRING_PRETTY_TAB ? level : 2 * level);
}

/* A value printed at level 0, appended as if printed at level (its lines indented). */
static void append_at(struct printbuf *pb, const char *text, int level, int flags)
{
	const char *nl;

	while ((nl = strchr(text, '\n'))) {
		printbuf_memappend(pb, text, (int)(nl - text + 1));
		indent(pb, level, flags);
		text = nl + 1;
	}
	printbuf_memappend(pb, text, (int)strlen(text));
}

static int flush(struct flows_stream *st, struct printbuf *pb)
{
	if (fwrite(pb->buf, 1, (size_t)pb->bpos, st->out) != (size_t)pb->bpos) {
		st->err = -EIO;
		return -1;
	}
	printbuf_reset(pb);
	return 0;
}

static int flows_print(json_object *jso, struct printbuf *pb, int level, int flags)
{
	struct flows_stream *st = json_object_get_userdata(jso);
	int spaced = (flags & JSON_C_TO_STRING_SPACED) && !(flags & JSON_C_TO_STRING_PRETTY);

	printbuf_strappend(pb, "[");
	if (flags & JSON_C_TO_STRING_PRETTY)
		printbuf_strappend(pb, "\n");
	for (size_t i = 0; i < st->r->flows.count; i++) {
		struct jb jb = {0};
		json_object *f = flow_json(&jb, st->r, i);
		const char *text = jb.oom ? NULL : json_object_to_json_string_ext(f, flags);

		if (!text) {
			json_object_put(f);
			return -1;
		}
		if (i) {
			printbuf_strappend(pb, ",");
			if (flags & JSON_C_TO_STRING_PRETTY)
				printbuf_strappend(pb, "\n");
		}
		if (spaced)
			printbuf_strappend(pb, " ");
		indent(pb, level + 1, flags);
		append_at(pb, text, level + 1, flags);
		json_object_put(f);
		if (st->out && pb->bpos >= FLUSH_AT && flush(st, pb))
			return -1;
	}
	if (flags & JSON_C_TO_STRING_PRETTY) {
		if (st->r->flows.count)
			printbuf_strappend(pb, "\n");
		indent(pb, level, flags);
	}
	if (spaced)
		return printbuf_strappend(pb, " ]");
	return printbuf_strappend(pb, "]");
}

static void flows_stream_free(json_object *jso, void *userdata)
{
	(void)jso;
	free(userdata);
}

/*
 * The document's flows: every flow's tree (the whole document in memory),
 * or, streamed, printed from the report when the document is, with a tree
 * of each flow's brief (CT_REPORT_DOC_BRIEF_FLOWS) or of none.
 */
static json_object *flows_json(struct jb *b, const struct ct_report *r, unsigned flags)
{
	json_object *flows;
	struct flows_stream *st;

	if (!(flags & CT_REPORT_DOC_STREAM_FLOWS)) {
		flows = made(b, json_object_new_array_ext((int)r->flows.count));
		for (size_t i = 0; i < r->flows.count; i++)
			push(b, flows, flow_json(b, r, i));
		return flows;
	}
	flows = ARR(b);
	st = calloc(1, sizeof(*st));
	if (!flows || !st) {
		free(st);
		b->oom = 1;
		return flows;
	}
	st->r = r;
	json_object_set_serializer(flows, flows_print, st, flows_stream_free);
	for (size_t i = 0; (flags & CT_REPORT_DOC_BRIEF_FLOWS) && i < r->flows.count; i++)
		push(b, flows, flow_brief_json(b, r, i));
	return flows;
}

static json_object *job_json(struct jb *b, const struct ct_periodicity *p)
{
	json_object *o = OBJ(b), *starts = ARR(b);
	const struct ct_period *j = &p->job;

	add(b, o, "periodic", BOOL(b, j->periodic));
	add(b, o, "iteration_period_s", j->periodic ? DBL(b, j->period_s) : NULL);
	add(b, o, "period_confidence", DBL(b, j->confidence));
	add_u64(b, o, "iterations", j->periodic ? j->iterations : 0);
	for (size_t k = 0; j->periodic && k < j->iterations; k++)
		push(b, starts, U64(b, j->starts[k]));
	add(b, o, "iteration_starts", starts);
	add(b, o, "reason", j->reason ? STR(b, j->reason) : NULL);
	add_u64(b, o, "bursts", p->bursts);
	onoff_json(b, o, &p->job_onoff);
	return o;
}

/* The jobs on the fabric: hosts, period and bytes per class of each. */
static json_object *jobs_json(struct jb *b, const struct ct_report *r)
{
	const struct ct_periodicity *p = r->periodicity;
	json_object *list = ARR(b);

	for (size_t j = 0; j < p->n_jobs; j++) {
		const struct ct_job *job = &p->jobs[j];
		const struct ct_period *period = ct_periodicity_job_period(p, j);
		json_object *o = OBJ(b), *hosts = ARR(b);
		uint64_t by_class[CT_CLASS_COUNT + 1] = {0}; /* Other last */

		for (size_t h = 0; h < job->n_hosts; h++)
			push(b, hosts, addr_json(b, &job->hosts[h]));
		/* the job's name as its flows' labels give it (the fleet's ct_job) */
		if (r->classes && j < r->classes->n_job_names && r->classes->job_names[j][0])
			add(b, o, "name", STR(b, r->classes->job_names[j]));
		add(b, o, "hosts", hosts);
		add(b, o, "iteration_period_s", DBL(b, period->period_s));
		add(b, o, "period_confidence", DBL(b, period->confidence));
		add_u64(b, o, "iterations", period->iterations);
		add_u64(b, o, "flows", job->flows);
		add_u64(b, o, "bytes", job->bytes);
		if (r->classes) {
			json_object *classes = OBJ(b);

			for (size_t f = 0; f < r->flows.count && f < p->n_flows; f++)
				if (p->flows[f].job == (int)j && f < r->classes->n)
					by_class[r->classes->flows[f].cls] +=
						r->flows.flows[f].bytes;
			for (int c = 0; c <= CT_CLASS_COUNT; c++)
				if (by_class[c])
					add_u64(b, classes, ct_class_name(c), by_class[c]);
			add(b, o, "class_bytes", classes);
		}
		push(b, list, o);
	}
	return list;
}

static json_object *cc_json(struct jb *b, const struct ct_report *r)
{
	const struct ct_periodicity *p = r->periodicity;
	json_object *o = OBJ(b), *list = ARR(b);

	for (size_t i = 0; i < p->n_receivers + p->n_class_receivers; i++) {
		const struct ct_receiver_cc *c = i < p->n_receivers
							 ? &p->receivers[i]
							 : &p->class_receivers[i - p->n_receivers];
		json_object *e = OBJ(b);

		add(b, e, "receiver", addr_json(b, &c->host));
		add(b, e, "class", STR(b, c->cls < 0 ? "all" : ct_class_name(c->cls)));
		add_u64(b, e, "senders", c->senders);
		add_u64(b, e, "incast_degree", c->incast_degree);
		add(b, e, "peak_gbps", DBL(b, c->peak_gbps));
		add(b, e, "nic_gbps", DBL(b, r->nic_gbps));
		add(b, e, "peak_over_nic",
		    DBL(b, r->nic_gbps > 0 ? c->peak_gbps / r->nic_gbps : 0));
		onoff_json(b, e, &c->onoff);
		add(b, e, "start_spread_s",
		    c->start_spread_s >= 0 ? DBL(b, c->start_spread_s) : NULL);
		add(b, e, "cnp_per_s_on", DBL(b, c->cnp_per_s_on));
		add(b, e, "ecn_ce_fraction", DBL(b, c->ecn_ce_fraction));
		add_u64(b, e, "retransmits", c->retransmits);
		push(b, list, e);
	}
	add(b, o, "receivers", list);
	return o;
}

static json_object *capture_json(struct jb *b, const struct ct_report *r)
{
	const struct ct_engine_counters *c = &r->counters;
	json_object *o = OBJ(b);
	json_object *mal = OBJ(b);
	json_object *reasons = OBJ(b);
	json_object *cut = OBJ(b);

	add(b, o, "file", STR(b, r->source ? r->source : ""));
	add(b, o, "format", STR(b, r->source_kind ? r->source_kind : "pcap"));
	add_u64(b, o, "packets", c->packets);
	add_u64(b, o, "bytes", c->bytes);
	add_u64(b, o, "first_ts", c->first_ts);
	add_u64(b, o, "last_ts", c->last_ts);
	add_u64(b, o, "duration_ns", c->packets ? c->last_ts - c->first_ts : 0);
	add_u64(b, o, "roce_packets", c->roce_packets);
	add_u64(b, o, "tcp_packets", c->tcp_packets);
	add_u64(b, o, "other_ip_packets", c->other_ip);
	add_u64(b, o, "other_l2_packets", c->other_l2);
	add_u64(b, o, "encapsulated", c->encapsulated);
	add_u64(b, o, "truncated_frames", c->truncated);
	if (r->has_kernel_drops)
		add_u64(b, o, "kernel_drops", r->kernel_drops);
	add_u64(b, cut, "extension_headers", c->roce_cut[CT_CUT_ROCE_EXT]);
	add_u64(b, cut, "after_qpn", c->roce_cut[CT_CUT_AFTER_QPN]);
	add_u64(b, cut, "before_qpn", c->roce_cut[CT_CUT_BEFORE_QPN]);
	add(b, o, "roce_headers_cut", cut);
	add_u64(b, o, "messages_size_inferred", c->messages_size_inferred);
	add_u64(b, mal, "total", c->malformed);
	for (unsigned i = 1; i < CT_MAL_COUNT; i++)
		if (c->malformed_by_reason[i])
			add_u64(b, reasons, ct_malformed_name(i), c->malformed_by_reason[i]);
	add(b, mal, "by_reason", reasons);
	add(b, o, "malformed", mal);
	add(b, o, "complete", BOOL(b, !r->error && !r->interval));
	add(b, o, "error", r->error ? STR(b, r->error) : NULL);
	return o;
}

static json_object *engine_json(struct jb *b, const struct ct_report *r)
{
	const struct ct_engine_counters *c = &r->counters;
	json_object *o = OBJ(b);

	add_u64(b, o, "flow_capacity", c->table.capacity);
	add_u64(b, o, "flow_memory_bytes", c->table.memory_bytes);
	add_u64(b, o, "flows_inserted", c->table.inserts);
	add_u64(b, o, "evicted_idle", c->table.evicted_idle);
	add_u64(b, o, "evicted_full", c->table.evicted_full);
	add_u64(b, o, "evicted_unreported", c->evicted_unreported);
	add_u64(b, o, "cm_messages", c->cm_messages);
	add_u64(b, o, "read_overwrites", c->read_overwrites);
	add_u64(b, o, "bursts", c->bursts);
	add_u64(b, o, "bursts_dropped", c->bursts_dropped);
	return o;
}

static json_object *pfc_json(struct jb *b, const struct ct_pfc_counters *p)
{
	json_object *o = OBJ(b);
	json_object *prios = ARR(b);

	add_u64(b, o, "pause_frames", p->pause_frames);
	add_u64(b, o, "pause_quanta", p->pause_quanta);
	add_u64(b, o, "pfc_frames", p->pfc_frames);
	for (int i = 0; i < 8; i++) {
		json_object *e = OBJ(b);

		add(b, e, "priority", INT(b, i));
		add_u64(b, e, "frames", p->frames[i]);
		add_u64(b, e, "quanta", p->quanta[i]);
		add_u64(b, e, "xoff", p->xoff[i]);
		push(b, prios, e);
	}
	add(b, o, "priorities", prios);
	return o;
}

/*
 * p, t, d, ep (null: no flow of that class reaches a NIC, so the wire
 * cannot tell) and the groups of hosts each class joins.
 */
static void layout_degrees_json(struct jb *b, json_object *l, const struct ct_layout *lay)
{
	static const char *const names[] = {"p", "t", "d", "ep"};
	const unsigned degree[] = {lay->p, lay->t, lay->d, lay->ep};
	json_object *groups = OBJ(b);

	for (int k = 0; k < 4; k++)
		add(b, l, names[k], degree[k] ? INT(b, (int)degree[k]) : NULL);
	for (size_t g = 0; g < lay->n_groups; g++) {
		const struct ct_layout_group *grp = &lay->groups[g];
		const char *cls = ct_class_name((enum ct_class)grp->cls);
		json_object *list = NULL, *hosts = ARR(b);

		if (!json_object_object_get_ex(groups, cls, &list)) {
			list = ARR(b);
			add(b, groups, cls, list);
		}
		for (size_t h = 0; h < grp->n; h++)
			push(b, hosts, addr_json(b, &lay->group_hosts[grp->first + h]));
		push(b, list, hosts);
	}
	add(b, l, "groups", groups);
}

/* How the flows were classified, and the layout the signatures suggest. */
static json_object *classification_json(struct jb *b, const struct ct_classification *c)
{
	json_object *o = OBJ(b);

	add(b, o, "method", STR(b, c->method));
	if (c->profile)
		add(b, o, "profile", STR(b, c->profile));
	if (!strcmp(c->method, "signatures")) {
		json_object *l = OBJ(b);

		add(b, l, "hosts", INT(b, (int)c->layout.hosts));
		add(b, l, "pp_stages", INT(b, (int)c->layout.pp_stages));
		add(b, l, "dp_ring", INT(b, (int)c->layout.dp_ring));
		add(b, l, "ep_group", INT(b, (int)c->layout.ep_group));
		layout_degrees_json(b, l, &c->layout);
		add(b, l, "sharded", BOOL(b, (int)c->layout.sharded));
		add(b, o, "inferred_layout", l);
	}
	if (c->check.done) {
		json_object *k = OBJ(b), *per_class = OBJ(b);

		add(b, k, "agree", BOOL(b, c->check.agree));
		add(b, k, "summary", STR(b, c->check.summary));
		for (int cls = 0; cls < CT_CLASS_COUNT; cls++) {
			json_object *e;

			if (!c->check.profile_groups[cls] && !c->check.wire_groups[cls])
				continue;
			e = OBJ(b);
			add(b, e, "profile_groups", INT(b, (int)c->check.profile_groups[cls]));
			add(b, e, "wire_groups", INT(b, (int)c->check.wire_groups[cls]));
			add(b, e, "alike", INT(b, (int)c->check.same[cls]));
			add(b, per_class, ct_class_name((enum ct_class)cls), e);
		}
		add(b, k, "classes", per_class);
		add(b, o, "layout_check", k);
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
static json_object *report_json(struct jb *b, const struct ct_report *r)
{
	json_object *o = OBJ(b);

	add(b, o, "kind", STR(b, "interval"));
	add_u64(b, o, "seq", r->seq);
	return o;
}

json_object *ct_report_document_ext(const struct ct_report *r, unsigned flags)
{
	struct jb jb = {0}, *b = &jb;
	json_object *root = OBJ(b);
	json_object *clock = OBJ(b);
	json_object *flows = flows_json(b, r, flags);

	add(b, root, "schema", STR(b, CT_REPORT_SCHEMA));
	add(b, root, "generator", STR(b, "commtap " COMMTAP_VERSION));
	add(b, clock, "source", STR(b, r->source_kind ? r->source_kind : "pcap"));
	add(b, clock, "description", STR(b, r->clock));
	add(b, clock, "unit", STR(b, "ns since the Unix epoch"));
	add(b, root, "clock", clock);
	if (r->interval)
		add(b, root, "report", report_json(b, r));
	if (r->cut_short)
		add(b, root, "analysis_cut_short", STR(b, r->cut_short));
	add(b, root, "capture", capture_json(b, r));
	add(b, root, "engine", engine_json(b, r));
	if (r->periodicity) {
		add(b, root, "job", job_json(b, r->periodicity));
		add(b, root, "jobs", jobs_json(b, r));
	}
	if (r->classes)
		add(b, root, "classification", classification_json(b, r->classes));
	if (r->anomalies)
		add(b, root, "anomalies", ct_anomalies_json(r->anomalies));
	add(b, root, "flows", flows);
	if (r->flows.rest.flows)
		add(b, root, "flows_summed", flows_summed_json(b, &r->flows));
	add(b, root, "pfc", pfc_json(b, &r->counters.pfc));
	if (r->periodicity) {
		add(b, root, "cc", cc_json(b, r));
		/* the advice reads the whole analysis: none in a report the deadline cut short */
		if (!r->cut_short)
			add(b, root, "advice", made(b, ct_report_advice_json(r)));
	}
	for (unsigned i = 0; i < r->n_sections; i++)
		if (r->sections[i].value)
			add(b, root, r->sections[i].name, json_object_get(r->sections[i].value));
	if (jb.oom) {
		/* never a document with holes: the caller keeps the previous report */
		json_object_put(root);
		return NULL;
	}
	return root;
}

json_object *ct_report_document(const struct ct_report *r)
{
	return ct_report_document_ext(r, 0);
}

int ct_report_document_write(json_object *doc, FILE *out)
{
	json_object *flows = NULL;
	struct flows_stream *st = NULL;
	const char *text;
	int err = 0;

	/* a streamed document's flows write the buffer out as they go */
	if (json_object_object_get_ex(doc, "flows", &flows))
		st = json_object_get_userdata(flows); /* only a streamed document's has any */
	if (st)
		*st = (struct flows_stream){st->r, out, 0};
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (st) {
		err = st->err;
		st->out = NULL;
	}
	if (err)
		return err;
	if (!text)
		return -ENOMEM; /* json-c's print buffer, or a flow's tree */
	if (fputs(text, out) < 0 || fputc('\n', out) < 0)
		return -EIO;
	return 0;
}

int ct_report_write_json(const struct ct_report *r, FILE *out)
{
	json_object *doc = ct_report_document_ext(r, CT_REPORT_DOC_STREAM_FLOWS);
	int err = doc ? ct_report_document_write(doc, out) : -ENOMEM;

	json_object_put(doc);
	return err;
}
