// SPDX-License-Identifier: MIT
/* The report as text: a table for people, one line per flow for golden tests. */
#include <commtap/report.h>
#include <commtap/roce_opcode.h>

#include <inttypes.h>
#include <stdio.h>
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
	if (f->key.transport == CT_TRANSPORT_ROCE)
		snprintf(buf, len, "%s > %s qp 0x%06x", src, dst, f->key.id);
	else
		snprintf(buf, len, "%s:%u > %s:%u", src, f->key.id >> 16, dst, f->key.id & 0xffff);
}

static void write_periodicity_table(const struct ct_report *r, FILE *out);
static void write_class_table(const struct ct_report *r, FILE *out);

void ct_report_write_table(const struct ct_report *r, FILE *out)
{
	const struct ct_engine_counters *c = &r->counters;
	char total[32];

	human_bytes(c->bytes, total, sizeof(total));
	fprintf(out, "capture %s: %" PRIu64 " packets, %s, %.6f s, %zu flows", r->source,
		c->packets, total, c->packets ? (double)(c->last_ts - c->first_ts) / 1e9 : 0.0,
		r->flows.count);
	fprintf(out, " (RoCE %" PRIu64 " pkts, TCP %" PRIu64 " pkts, other %" PRIu64
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
	if (c->pfc.pfc_frames || c->pfc.pause_frames)
		fprintf(out, "pfc: %" PRIu64 " PFC frames, %" PRIu64 " PAUSE frames\n",
			c->pfc.pfc_frames, c->pfc.pause_frames);
	if (r->error)
		fprintf(out, "incomplete: %s\n", r->error);
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
			i, ep, f->packets, bytes, f->messages, avg, f->retransmits, f->cnp, f->ecn_ce,
			rev);
	}
	if (r->classes)
		write_class_table(r, out);
	if (r->periodicity)
		write_periodicity_table(r, out);
}

static void write_class_table(const struct ct_report *r, FILE *out)
{
	const struct ct_classification *c = r->classes;

	fprintf(out, "\nclasses (by %s", c->method);
	if (!strcmp(c->method, "signatures"))
		fprintf(out, "; layout seen: %u hosts, pipeline of %u, DP ring of %u, all-to-all "
			     "among %u",
			c->layout.hosts, c->layout.pp_stages, c->layout.dp_ring, c->layout.ep_group);
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
		fprintf(out, "  job %zu: %zu hosts (%s .. %s), period %.6f s (confidence %.2f), %zu flows, %.1f MiB\n",
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
		fprintf(out, "iteration period %.6f s (confidence %.2f) over %zu iterations, duty cycle %.2f\n",
			j->period_s, j->confidence, j->iterations, p->job_onoff.duty_cycle);
	else
		fprintf(out, "%s (%zu bursts)\n", j->reason ? j->reason : "not periodic", p->bursts);
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
		if (f->key.transport == CT_TRANSPORT_ROCE)
			fprintf(out, "%zu roce %s > %s qpn=0x%06x", i, src, dst, f->key.id);
		else
			fprintf(out, "%zu tcp %s:%u > %s:%u", i, src, f->key.id >> 16, dst,
				f->key.id & 0xffff);
		fprintf(out, " packets=%" PRIu64 " bytes=%" PRIu64 " messages=%" PRIu64
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
				" gaps=%" PRIu64 " missing=%" PRIu64 " dup=%" PRIu64
				" gbn=%" PRIu64 " naks=%" PRIu64 "/%" PRIu64 "/%" PRIu64
				" partial=%" PRIu64 " reads=%" PRIu64 "/%" PRIu64 "/%" PRIu64
				" pmtu=%u",
				f->psn_gaps, f->psn_missing, f->duplicates, f->go_back_n,
				f->naks_seq, f->naks_rnr, f->naks_other, f->partial_messages,
				f->read_requests, f->read_bytes_requested, f->reads_matched,
				f->pmtu);
		}
		fprintf(out, " retx=%" PRIu64 " cnp=%" PRIu64 " ce=%" PRIu64 " dscp=%u pcp=", f->retransmits,
			f->cnp, f->ecn_ce, f->dscp);
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

			fprintf(out, " bursts=%zu duty=%.3f", fp->onoff.bursts, fp->onoff.duty_cycle);
		}
		if (r->classes && i < r->classes->n)
			fprintf(out, " class=%s", ct_class_name(r->classes->flows[i].cls));
		fprintf(out, " first=%" PRIu64 " last=%" PRIu64 "\n", f->first_ts, f->last_ts);
	}
}
