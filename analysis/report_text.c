// SPDX-License-Identifier: MIT
/* The report as text: a table for people, one line per flow for golden tests. */
#include <commtap/anomaly.h>
#include <commtap/report.h>
#include <commtap/roce_opcode.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void human_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double d = (double)v;
	unsigned u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", v);
	else
		snprintf(buf, len, "%.1f %s", d, units[u]);
}

static void endpoint(const struct ct_flow_summary *f, char *buf, size_t len)
{
	char src[64], dst[64];

	ct_addr_format(&f->key.src, src, sizeof(src));
	ct_addr_format(&f->key.dst, dst, sizeof(dst));
	if (f->key.transport == CT_TRANSPORT_ROCE && CT_QPN_IS_CUT(f->key.id))
		snprintf(buf, len, "%s > %s qp cut (%s)", src, dst,
			 ct_malformed_name(CT_QPN_CUT_REASON(f->key.id)));
	else if (f->key.transport == CT_TRANSPORT_ROCE)
		snprintf(buf, len, "%s > %s qp 0x%06x", src, dst, f->key.id);
	else
		snprintf(buf, len, "%s:%u > %s:%u", src, f->key.id >> 16, dst, f->key.id & 0xffff);
}

static void write_periodicity_table(const struct ct_report *r, FILE *out);
static void write_class_table(const struct ct_report *r, FILE *out);
static void write_flow_table(const struct ct_report *r, FILE *out);

static void write_capture(const struct ct_report *r, FILE *out);
static void write_summary(const struct ct_report *r, FILE *out);

void ct_report_write_table(const struct ct_report *r, FILE *out)
{
	write_capture(r, out);
	if (!r->table_flows) {
		write_summary(r, out);
		return;
	}
	write_flow_table(r, out);
	if (r->classes)
		write_class_table(r, out);
	if (r->periodicity)
		write_periodicity_table(r, out);
}

/* The capture's line, and what went wrong reading it. */
static void write_capture(const struct ct_report *r, FILE *out)
{
	const struct ct_engine_counters *c = &r->counters;
	char total[32];

	human_bytes(c->bytes, total, sizeof(total));
	fprintf(out, "capture %s: %" PRIu64 " packets, %s, %.6f s, %zu flows", r->source,
		c->packets, total, c->packets ? (double)(c->last_ts - c->first_ts) / 1e9 : 0.0,
		r->flows.count);
	fprintf(out,
		" (RoCE %" PRIu64 " pkts, TCP %" PRIu64 " pkts, other %" PRIu64
		", malformed %" PRIu64 ")\n",
		c->roce_packets, c->tcp_packets, c->other_ip + c->other_l2, c->malformed);
	if (c->malformed) {
		fprintf(out, "malformed:");
		for (unsigned i = 1; i < CT_MAL_COUNT; i++)
			if (c->malformed_by_reason[i])
				fprintf(out, " %s=%" PRIu64, ct_malformed_name(i),
					c->malformed_by_reason[i]);
		fprintf(out, "\n");
	}
	if (c->roce_cut[CT_CUT_ROCE_EXT] || c->roce_cut[CT_CUT_AFTER_QPN] ||
	    c->roce_cut[CT_CUT_BEFORE_QPN])
		fprintf(out,
			"RoCE copies cut inside their headers, counted: extension headers %" PRIu64
			", after the QPN %" PRIu64 ", before the QPN %" PRIu64
			" (address-pair flows); %" PRIu64 " message sizes inferred\n",
			c->roce_cut[CT_CUT_ROCE_EXT], c->roce_cut[CT_CUT_AFTER_QPN],
			c->roce_cut[CT_CUT_BEFORE_QPN], c->messages_size_inferred);
	if (c->pfc.pfc_frames || c->pfc.pause_frames)
		fprintf(out, "pfc: %" PRIu64 " PFC frames, %" PRIu64 " PAUSE frames\n",
			c->pfc.pfc_frames, c->pfc.pause_frames);
	if (r->error)
		fprintf(out, "incomplete: %s\n", r->error);
}

/* Every flow (--flows). */
static void write_flow_table(const struct ct_report *r, FILE *out)
{
	fprintf(out, "\n%3s  %-46s %9s %11s %8s %10s %5s %5s %5s %7s\n", "id", "flow", "packets",
		"bytes", "messages", "avg msg", "retx", "cnp", "ce", "reverse");
	for (size_t i = 0; i < r->flows.count; i++) {
		const struct ct_flow_summary *f = &r->flows.flows[i];
		char ep[160], bytes[32], avg[32], rev[24];

		endpoint(f, ep, sizeof(ep));
		human_bytes(f->bytes, bytes, sizeof(bytes));
		if (f->messages)
			human_bytes(f->message_bytes / f->messages, avg, sizeof(avg));
		else
			snprintf(avg, sizeof(avg), "-");
		if (f->reverse >= 0)
			snprintf(rev, sizeof(rev), "%" PRId64, f->reverse);
		else
			snprintf(rev, sizeof(rev), "-");
		fprintf(out,
			"%3zu  %-46s %9" PRIu64 " %11s %8" PRIu64 " %10s %5" PRIu64 " %5" PRIu64
			" %5" PRIu64 " %7s\n",
			i, ep, f->packets, bytes, f->messages, avg, f->retransmits, f->cnp,
			f->ecn_ce, rev);
	}
}

static void write_class_table(const struct ct_report *r, FILE *out)
{
	const struct ct_classification *c = r->classes;

	fprintf(out, "\nclasses (by %s", c->method);
	if (!strcmp(c->method, "signatures"))
		fprintf(out,
			"; layout seen: %u hosts, pipeline of %u, DP ring of %u, all-to-all "
			"among %u",
			c->layout.hosts, c->layout.pp_stages, c->layout.dp_ring,
			c->layout.ep_group);
	fprintf(out, "):\n%3s  %-11s %5s  %s\n", "id", "class", "conf", "evidence");
	for (size_t i = 0; i < c->n; i++)
		fprintf(out, "%3zu  %-11s %5.2f  %s\n", i, ct_class_name(c->flows[i].cls),
			c->flows[i].confidence, c->flows[i].evidence);
}

/* Several jobs on the fabric: one line each (the first is the table's period). */
static void write_jobs(const struct ct_periodicity *p, FILE *out)
{
	if (p->n_jobs < 2)
		return;
	for (size_t j = 0; j < p->n_jobs; j++) {
		const struct ct_job *job = &p->jobs[j];
		const struct ct_period *period = ct_periodicity_job_period(p, j);
		char first[64] = "none", last[64] = "none";

		if (job->n_hosts)
			ct_addr_format(&job->hosts[0], first, sizeof(first));
		if (job->n_hosts)
			ct_addr_format(&job->hosts[job->n_hosts - 1], last, sizeof(last));
		fprintf(out,
			"  job %zu: %zu hosts (%s .. %s), period %.6f s (confidence %.2f), %zu "
			"flows, %.1f MiB\n",
			j, job->n_hosts, first, last, period->period_s, period->confidence,
			job->flows, (double)job->bytes / 1048576.0);
	}
}

static void write_periodicity_table(const struct ct_report *r, FILE *out)
{
	const struct ct_periodicity *p = r->periodicity;
	const struct ct_period *j = &p->job;

	fprintf(out, "\nperiodicity: ");
	if (j->periodic)
		fprintf(out,
			"iteration period %.6f s (confidence %.2f) over %zu iterations, duty cycle "
			"%.2f\n",
			j->period_s, j->confidence, j->iterations, p->job_onoff.duty_cycle);
	else
		fprintf(out, "%s (%zu bursts)\n", j->reason ? j->reason : "not periodic",
			p->bursts);
	write_jobs(p, out);
	fprintf(out, "%3s  %12s %6s %6s %6s %8s %10s %10s %10s %9s\n", "id", "period (s)", "phase",
		"duty", "bursts", "on (ms)", "off (ms)", "burst", "iter CV", "peak Gb/s");
	for (size_t i = 0; i < p->n_flows && i < r->flows.count; i++) {
		const struct ct_flow_periodicity *fp = &p->flows[i];
		char period[24], phase[16], burst[32], cv[16];

		if (fp->periodic)
			snprintf(period, sizeof(period), "%.6f", fp->period_s);
		else
			snprintf(period, sizeof(period), "-");
		if (fp->phase_first >= 0)
			snprintf(phase, sizeof(phase), "%.2f", fp->phase_first);
		else
			snprintf(phase, sizeof(phase), "-");
		human_bytes((uint64_t)fp->onoff.burst_bytes.median, burst, sizeof(burst));
		if (fp->volumes.iterations)
			snprintf(cv, sizeof(cv), "%.3f", fp->volumes.bytes_cv);
		else
			snprintf(cv, sizeof(cv), "-");
		fprintf(out, "%3zu  %12s %6s %6.2f %6zu %8.3f %10.3f %10s %10s %9.2f\n", i, period,
			phase, fp->onoff.duty_cycle, fp->onoff.bursts, fp->onoff.on_s.median * 1e3,
			fp->onoff.off_s.median * 1e3, burst, cv, fp->onoff.peak_gbps);
	}
	fprintf(out, "\ncongestion control, per receiver (all classes, then each class alone):\n");
	fprintf(out, "%-32s %-11s %7s %6s %9s %9s %10s %10s %9s %9s %5s\n", "receiver", "class",
		"senders", "incast", "peak Gb/s", "on (ms)", "burst", "spread ms", "CNP/s on",
		"CE frac", "retx");
	for (size_t i = 0; i < p->n_receivers + p->n_class_receivers; i++) {
		const struct ct_receiver_cc *c = i < p->n_receivers
							 ? &p->receivers[i]
							 : &p->class_receivers[i - p->n_receivers];
		char host[64], burst[32], spread[24];

		ct_addr_format(&c->host, host, sizeof(host));
		human_bytes((uint64_t)c->onoff.burst_bytes.median, burst, sizeof(burst));
		if (c->start_spread_s >= 0)
			snprintf(spread, sizeof(spread), "%.3f", c->start_spread_s * 1e3);
		else
			snprintf(spread, sizeof(spread), "-");
		fprintf(out, "%-32s %-11s %7u %6u %9.2f %9.3f %10s %10s %9.1f %9.4f %5llu\n", host,
			c->cls < 0 ? "all" : ct_class_name(c->cls), c->senders, c->incast_degree,
			c->peak_gbps, c->onoff.on_s.median * 1e3, burst, spread, c->cnp_per_s_on,
			c->ecn_ce_fraction, (unsigned long long)c->retransmits);
	}
}

/*
 * The summary a person reads first (the default table): the capture, each
 * job (hosts, period, layout, bytes of each class an iteration), the
 * findings, the receivers whose cc figures matter, then the heaviest flows.
 * --flows gives every flow, its class and periodicity, as before.
 */
#define SUMMARY_FLOWS	  10 /* the heaviest flows shown */
#define SUMMARY_RECEIVERS 5  /* receivers shown, those with signs of congestion first */
#define SUMMARY_FINDINGS  8
#define SUMMARY_EVIDENCE  110 /* characters of a finding's evidence shown */

static void write_job_lines(const struct ct_report *r, FILE *out)
{
	const struct ct_periodicity *p = r->periodicity;
	const struct ct_classification *c = r->classes;
	uint64_t by_class[CT_CLASS_COUNT + 1] = {0}, all = 0;
	size_t iters;

	if (!p) {
		fprintf(out, "job: not looked for\n");
		return;
	}
	if (!p->job.periodic) {
		fprintf(out, "job: %s (%zu bursts)\n",
			p->job.reason ? p->job.reason : "not periodic", p->bursts);
	} else if (p->n_jobs < 2) {
		fprintf(out,
			"job: iteration %.3f ms (confidence %.2f) over %zu iterations, duty cycle "
			"%.2f\n",
			p->job.period_s * 1e3, p->job.confidence, p->job.iterations,
			p->job_onoff.duty_cycle);
	} else {
		fprintf(out, "jobs: %zu on the fabric\n", p->n_jobs);
		write_jobs(p, out);
	}
	if (c && c->layout.hosts)
		fprintf(out,
			"  layout (%s): %u hosts; pipeline of %u, largest DP ring %u, all-to-all "
			"among %u%s\n",
			c->method, c->layout.hosts, c->layout.pp_stages, c->layout.dp_ring,
			c->layout.ep_group, c->layout.sharded ? "; DP sharded (ZeRO/FSDP)" : "");
	if (!c)
		return;
	for (size_t i = 0; i < c->n && i < r->flows.count; i++) {
		by_class[c->flows[i].cls <= CT_CLASS_COUNT ? c->flows[i].cls : 0] +=
			r->flows.flows[i].bytes;
		all += r->flows.flows[i].bytes;
	}
	iters = p->job.periodic && p->job.iterations ? p->job.iterations : 0;
	fprintf(out, "  bytes %s:", iters ? "an iteration" : "in the capture");
	for (unsigned k = 0; k <= CT_CLASS_COUNT; k++) {
		char b[32];

		if (!by_class[k])
			continue;
		human_bytes(iters ? by_class[k] / iters : by_class[k], b, sizeof(b));
		fprintf(out, " %s %s (%.0f%%)", ct_class_name(k), b,
			100.0 * (double)by_class[k] / (double)(all ? all : 1));
	}
	fprintf(out, "\n");
}

static void write_finding_lines(const struct ct_report *r, FILE *out)
{
	const struct ct_anomalies *a = r->anomalies;
	size_t sure = 0, shown = 0;

	if (!a) {
		fprintf(out, "anomalies: not looked for\n");
		return;
	}
	for (size_t i = 0; i < a->n; i++)
		sure += a->list[i].confidence >= 0.5;
	fprintf(out, "anomalies: %zu at confidence 0.5 or more, %zu below\n", sure, a->n - sure);
	for (size_t i = 0; i < a->n && shown < SUMMARY_FINDINGS; i++) {
		const struct ct_anomaly *x = &a->list[i];
		char where[140] = "", h[64], q[64];

		if (x->confidence < 0.5)
			continue;
		ct_addr_format(&x->host, h, sizeof(h));
		ct_addr_format(&x->peer, q, sizeof(q));
		if (x->scope == CT_ANOMALY_AT_LINK)
			snprintf(where, sizeof(where), "%s > %s", h, q);
		else if (x->scope == CT_ANOMALY_AT_PRIORITY)
			snprintf(where, sizeof(where), "priority %d", x->priority);
		else if (x->scope == CT_ANOMALY_AT_HOST || x->scope == CT_ANOMALY_AT_RECEIVER)
			snprintf(where, sizeof(where), "%s", h);
		else
			snprintf(where, sizeof(where), "%s", ct_anomaly_scope_name(x->scope));
		fprintf(out, "  %-10s %-34s %.2f  %.*s%s\n", ct_anomaly_kind_name(x->kind), where,
			x->confidence, SUMMARY_EVIDENCE, x->evidence,
			strlen(x->evidence) > SUMMARY_EVIDENCE ? "..." : "");
		shown++;
	}
}

/* Receivers with signs of congestion (CE, CNPs, retransmissions, incast) first, then by peak. */
static int receiver_rank(const struct ct_receiver_cc *c)
{
	return (c->ecn_ce_fraction > 0) + (c->cnp_per_s_on > 0) + (c->retransmits > 0) +
	       (c->incast_degree > 1);
}

static int receiver_cmp(const void *pa, const void *pb, void *arg)
{
	const struct ct_receiver_cc *rc = arg;
	const struct ct_receiver_cc *a = &rc[*(const size_t *)pa];
	const struct ct_receiver_cc *b = &rc[*(const size_t *)pb];
	int d = receiver_rank(b) - receiver_rank(a);

	if (d)
		return d;
	return (a->peak_gbps < b->peak_gbps) - (a->peak_gbps > b->peak_gbps);
}

/* The indices 0..n-1 in the order cmp gives their items (arg); NULL without memory. */
static size_t *sorted_index(size_t n, int (*cmp)(const void *, const void *, void *), void *arg)
{
	size_t *idx = malloc((n + 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp, arg);
	return idx;
}

static void write_receiver_lines(const struct ct_report *r, FILE *out)
{
	const struct ct_periodicity *p = r->periodicity;
	size_t n = p ? p->n_receivers : 0, *idx;

	if (!n)
		return;
	idx = sorted_index(n, receiver_cmp, p->receivers);
	if (!idx)
		return;
	fprintf(out,
		"receivers (%zu of %zu, congestion signs first; --flows gives each class's):\n",
		n < SUMMARY_RECEIVERS ? n : SUMMARY_RECEIVERS, n);
	fprintf(out, "  %-30s %7s %6s %9s %9s %9s %5s\n", "receiver", "senders", "incast",
		"peak Gb/s", "CNP/s on", "CE frac", "retx");
	for (size_t k = 0; k < n && k < SUMMARY_RECEIVERS; k++) {
		const struct ct_receiver_cc *c = &p->receivers[idx[k]];
		char host[64];

		ct_addr_format(&c->host, host, sizeof(host));
		fprintf(out, "  %-30s %7u %6u %9.2f %9.1f %9.4f %5llu\n", host, c->senders,
			c->incast_degree, c->peak_gbps, c->cnp_per_s_on, c->ecn_ce_fraction,
			(unsigned long long)c->retransmits);
	}
	free(idx);
}

static int heavier(const void *pa, const void *pb, void *arg)
{
	const struct ct_flow_summary *fl = arg;
	const struct ct_flow_summary *a = &fl[*(const size_t *)pa];
	const struct ct_flow_summary *b = &fl[*(const size_t *)pb];

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static void write_top_flows(const struct ct_report *r, FILE *out)
{
	size_t n = r->flows.count, *idx, shown = n < SUMMARY_FLOWS ? n : SUMMARY_FLOWS;

	if (!n)
		return;
	idx = sorted_index(n, heavier, (void *)r->flows.flows);
	if (!idx)
		return;
	fprintf(out, "heaviest flows (%zu of %zu; --flows lists every flow):\n", shown, n);
	fprintf(out, "  %3s  %-46s %11s %8s %10s %-11s %5s\n", "id", "flow", "bytes", "messages",
		"avg msg", "class", "conf");
	for (size_t k = 0; k < shown; k++) {
		const struct ct_flow_summary *f = &r->flows.flows[idx[k]];
		char ep[160], bytes[32], avg[32] = "-";

		endpoint(f, ep, sizeof(ep));
		human_bytes(f->bytes, bytes, sizeof(bytes));
		if (f->messages)
			human_bytes(f->message_bytes / f->messages, avg, sizeof(avg));
		fprintf(out, "  %3zu  %-46s %11s %8" PRIu64 " %10s", idx[k], ep, bytes, f->messages,
			avg);
		if (r->classes && idx[k] < r->classes->n)
			fprintf(out, " %-11s %5.2f\n", ct_class_name(r->classes->flows[idx[k]].cls),
				r->classes->flows[idx[k]].confidence);
		else
			fprintf(out, " %-11s %5s\n", "-", "-");
	}
	free(idx);
}

static void write_summary(const struct ct_report *r, FILE *out)
{
	fprintf(out, "\n");
	write_job_lines(r, out);
	write_finding_lines(r, out);
	write_receiver_lines(r, out);
	write_top_flows(r, out);
}

void ct_report_write_lines(const struct ct_report *r, FILE *out)
{
	const struct ct_engine_counters *c = &r->counters;

	fprintf(out,
		"# capture packets=%" PRIu64 " bytes=%" PRIu64 " roce=%" PRIu64 " tcp=%" PRIu64
		" other=%" PRIu64 " malformed=%" PRIu64 " flows=%zu complete=%s\n",
		c->packets, c->bytes, c->roce_packets, c->tcp_packets, c->other_ip + c->other_l2,
		c->malformed, r->flows.count, r->error ? "no" : "yes");
	if (r->periodicity) {
		const struct ct_period *j = &r->periodicity->job;

		if (j->periodic)
			fprintf(out, "# job period=%.6f iterations=%zu bursts=%zu\n", j->period_s,
				j->iterations, r->periodicity->bursts);
		else
			fprintf(out, "# job period=none bursts=%zu (%s)\n", r->periodicity->bursts,
				j->reason ? j->reason : "not periodic");
	}
	for (size_t i = 0; i < r->flows.count; i++) {
		const struct ct_flow_summary *f = &r->flows.flows[i];
		char src[64], dst[64];

		ct_addr_format(&f->key.src, src, sizeof(src));
		ct_addr_format(&f->key.dst, dst, sizeof(dst));
		if (f->key.transport == CT_TRANSPORT_ROCE && CT_QPN_IS_CUT(f->key.id))
			fprintf(out, "%zu roce %s > %s qpn=cut:%s", i, src, dst,
				ct_malformed_name(CT_QPN_CUT_REASON(f->key.id)));
		else if (f->key.transport == CT_TRANSPORT_ROCE)
			fprintf(out, "%zu roce %s > %s qpn=0x%06x", i, src, dst, f->key.id);
		else
			fprintf(out, "%zu tcp %s:%u > %s:%u", i, src, f->key.id >> 16, dst,
				f->key.id & 0xffff);
		fprintf(out,
			" packets=%" PRIu64 " bytes=%" PRIu64 " messages=%" PRIu64
			" message_bytes=%" PRIu64 " hist=",
			f->packets, f->bytes, f->messages, f->message_bytes);
		const char *sep = "";

		for (unsigned b = 0; b < CT_HIST_BUCKETS; b++) {
			if (!f->msg_hist[b])
				continue;
			fprintf(out, "%s%" PRIu64 ":%" PRIu64, sep, ct_hist_bucket_floor(b),
				f->msg_hist[b]);
			sep = ",";
		}
		if (!*sep)
			fprintf(out, "-");
		if (f->key.transport == CT_TRANSPORT_ROCE) {
			fprintf(out, " ops=");
			sep = "";
			/* ascending opcode order */
			for (unsigned op = 0; op < 256; op++)
				for (unsigned k = 0; k < f->n_ops; k++)
					if (f->op_id[k] == op) {
						const char *name = ct_opcode_name((uint8_t)op);

						fprintf(out, "%s%s:%" PRIu64, sep,
							name ? name : "unknown", f->op_count[k]);
						sep = ",";
					}
			fprintf(out,
				" gaps=%" PRIu64 " missing=%" PRIu64 " dup=%" PRIu64 " gbn=%" PRIu64
				" naks=%" PRIu64 "/%" PRIu64 "/%" PRIu64 " partial=%" PRIu64
				" reads=%" PRIu64 "/%" PRIu64 "/%" PRIu64 " pmtu=%u",
				f->psn_gaps, f->psn_missing, f->duplicates, f->go_back_n,
				f->naks_seq, f->naks_rnr, f->naks_other, f->partial_messages,
				f->read_requests, f->read_bytes_requested, f->reads_matched,
				f->pmtu);
			/* only with cut copies: other lines stay as they were */
			if (f->size_inferred)
				fprintf(out, " size_inferred=%" PRIu64, f->size_inferred);
		}
		fprintf(out, " retx=%" PRIu64 " cnp=%" PRIu64 " ce=%" PRIu64 " dscp=%u pcp=",
			f->retransmits, f->cnp, f->ecn_ce, f->dscp);
		if (f->pcp == 0xff)
			fprintf(out, "-");
		else
			fprintf(out, "%u", f->pcp);
		if (f->reverse >= 0)
			fprintf(out, " reverse=%" PRId64 "(%s)", f->reverse,
				ct_pair_evidence_name(f->reverse_evidence));
		else
			fprintf(out, " reverse=-");
		if (r->periodicity && i < r->periodicity->n_flows) {
			const struct ct_flow_periodicity *fp = &r->periodicity->flows[i];

			fprintf(out, " bursts=%zu duty=%.3f", fp->onoff.bursts,
				fp->onoff.duty_cycle);
		}
		if (r->classes && i < r->classes->n)
			fprintf(out, " class=%s", ct_class_name(r->classes->flows[i].cls));
		fprintf(out, " first=%" PRIu64 " last=%" PRIu64 "\n", f->first_ts, f->last_ts);
	}
}
