// SPDX-License-Identifier: MIT
/* The Prometheus exposition of a report (see prom.h). */
#include "prom.h"
#include "prom_advice.h"
#include "prom_anomaly.h"
#include "report_model.h"

#include <commtap/traffic_class.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OTHER		"_other"
#define NO_JOB		"none"
#define CT_PROM_CLASSES CT_REP_CLASSES
#define JOB_LABELS	(CT_PROM_TOP_JOBS + 2) /* the top jobs, _other, none */
#define JOB_ID_LEN	96		       /* a profile's name, or "j" and 8 hex digits; "-N" */

struct pair {
	int job;	   /* index into job_ids */
	int cls, src, dst; /* src/dst: index into the host list, -1 for the aggregate */
	uint64_t bytes, messages;
};

struct prom {
	FILE *out;
	const struct ct_rep *rep;
	struct ct_prom_opts o;
	const char **hosts; /* distinct addresses, in first-seen order */
	size_t n_hosts;
	char vantage[160];		      /* where this probe sees from */
	char job_ids[JOB_LABELS][JOB_ID_LEN]; /* ct_job of jobs[i]; then _other, none */
	size_t n_jobs;			      /* jobs with their own label */
};

/* A label value, escaped as the format asks (backslash, quote, newline). */
static void label_value(FILE *out, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n') {
			fputs("\\n", out);
			continue;
		}
		fputc(*v, out);
	}
}

static void family(struct prom *p, const char *name, const char *type, const char *help)
{
	fprintf(p->out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void u64(struct prom *p, const char *name, uint64_t v)
{
	fprintf(p->out, "%s %" PRIu64 "\n", name, v);
}

static void num(struct prom *p, const char *name, double v)
{
	fprintf(p->out, "%s %.17g\n", name, v);
}

static void counter(struct prom *p, const char *name, const char *help, uint64_t v)
{
	family(p, name, "counter", help);
	u64(p, name, v);
}

static void gauge(struct prom *p, const char *name, const char *help, double v)
{
	family(p, name, "gauge", help);
	num(p, name, v);
}

/*
 * The fleet's name for a job (jobs[index]): the same on every probe that
 * sees the job, so that rules can join their views. First the name its
 * flows' labels give (jobs[].name: the host agents name the jobs of their
 * own processes, and a mirror reads their labels), then the profile's name
 * (it describes the busiest job, jobs[0]); otherwise the job's hosts
 * (jobs[].hosts, in address order) hashed (FNV-1a, 32 bits): probes that
 * see every host sending in the job's iterations agree (a view split by
 * hosts of a job whose hosts all talk across the split, a mirror), a host
 * in a large ring sees only its neighbours.
 */
static void job_identity(const struct ct_rep *rep, size_t index, char *id, size_t len)
{
	const struct ct_rep_job *job = &rep->jobs[index];
	const char *profile = rep->profile, *name = job->name;
	uint32_t h = 2166136261u;

	if (name && *name) {
		snprintf(id, len, "%s", name);
		return;
	}
	if (index == 0 && profile && *profile) {
		snprintf(id, len, "%s", profile);
		return;
	}
	for (size_t i = 0; i < job->n_hosts; i++) {
		const char *a = job->hosts[i];

		for (; a && *a; a++)
			h = (h ^ (unsigned char)*a) * 16777619u;
		h = (h ^ ',') * 16777619u;
	}
	snprintf(id, len, "j%08" PRIx32, h);
}

/*
 * Where the probe sees from, its kind by the report's reader: a host agent
 * (eBPF, its interfaces), a mirror port (DPDK, its driver), a capture
 * replayed (pcap, the file's name) or a merge of reports.
 */
static void vantage_of(struct prom *p)
{
	const char *format = p->rep->capture.format, *file = p->rep->capture.file;
	const char *kind = format ? format : "pcap", *base;

	if (!strcmp(kind, "ebpf"))
		kind = "host";
	else if (!strcmp(kind, "dpdk"))
		kind = "mirror";
	base = file ? strrchr(file, '/') : NULL;
	base = base ? base + 1 : file;
	if (!strcmp(kind, "merge") || !base || !*base)
		snprintf(p->vantage, sizeof(p->vantage), "%s", kind);
	else
		snprintf(p->vantage, sizeof(p->vantage), "%s:%s", kind, base);
}

/* ct_job of the top jobs (a second job with the same hash gets "-N"). */
static void job_ids(struct prom *p)
{
	size_t n = p->rep->n_jobs;

	p->n_jobs = n < CT_PROM_TOP_JOBS ? n : CT_PROM_TOP_JOBS;
	for (size_t j = 0; j < p->n_jobs; j++) {
		char *id = p->job_ids[j];

		job_identity(p->rep, j, id, JOB_ID_LEN - 8);
		for (size_t k = 0; k < j; k++)
			if (!strcmp(p->job_ids[k], id))
				snprintf(id + strlen(id), 8, "-%d", (int)j);
	}
	snprintf(p->job_ids[p->n_jobs], JOB_ID_LEN, "%s", OTHER);
	snprintf(p->job_ids[p->n_jobs + 1], JOB_ID_LEN, "%s", NO_JOB);
}

/* Index into job_ids of a flow's job (periodicity.job). */
static int job_of(const struct prom *p, const struct ct_rep_flow *flow)
{
	int64_t k = flow->job;

	if (!flow->has_job)
		return (int)p->n_jobs + 1;
	return k >= 0 && (uint64_t)k < p->n_jobs ? (int)k : (int)p->n_jobs;
}

static void job_labels_to(FILE *out, const struct prom *p, int job)
{
	fputs("ct_job=\"", out);
	label_value(out, p->job_ids[job]);
	fputs("\",vantage=\"", out);
	label_value(out, p->vantage);
	fputc('"', out);
}

static void job_labels(struct prom *p, int job)
{
	job_labels_to(p->out, p, job);
}

static void capture_engine(struct prom *p)
{
	const struct ct_rep_capture *cap = &p->rep->capture;
	const struct ct_rep_engine *eng = &p->rep->engine;
	const struct {
		const char *label;
		uint64_t packets;
	} kinds[] = {{"roce", cap->roce_packets},
		     {"tcp", cap->tcp_packets},
		     {"other_ip", cap->other_ip_packets},
		     {"other_l2", cap->other_l2_packets}};

	counter(p, "commtap_packets_total", "Frames read at this vantage point.", cap->packets);
	counter(p, "commtap_bytes_total", "Wire bytes of the frames read.", cap->bytes);
	family(p, "commtap_kind_packets_total", "counter", "Frames read, by kind.");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		fprintf(p->out, "commtap_kind_packets_total{kind=\"%s\"} %" PRIu64 "\n",
			kinds[i].label, kinds[i].packets);
	family(p, "commtap_malformed_packets_total", "counter",
	       "Frames not analysed, by reason (only reasons seen).");
	for (size_t i = 0; i < cap->n_malformed; i++) {
		fputs("commtap_malformed_packets_total{reason=\"", p->out);
		label_value(p->out, cap->malformed[i].name);
		fprintf(p->out, "\"} %" PRIu64 "\n", cap->malformed[i].count);
	}
	counter(p, "commtap_truncated_frames_total",
		"Frames captured shorter than their wire length.", cap->truncated_frames);
	counter(p, "commtap_encapsulated_frames_total", "GRE/ERSPAN mirror copies unwrapped.",
		cap->encapsulated);
	if (cap->has_kernel_drops)
		counter(p, "commtap_kernel_drops_total",
			"Packets the kernel dropped before commtap read them (live capture).",
			cap->kernel_drops);
	gauge(p, "commtap_capture_complete", "1 when the report covers its whole input.",
	      cap->complete);
	gauge(p, "commtap_last_packet_timestamp_seconds",
	      "Time of the last packet in the report (Unix seconds).", (double)cap->last_ts / 1e9);
	gauge(p, "commtap_flow_table_capacity", "Flows the engine's table holds.",
	      (double)eng->flow_capacity);
	gauge(p, "commtap_flow_table_memory_bytes", "Memory of the engine's flow table.",
	      (double)eng->flow_memory_bytes);
	counter(p, "commtap_flows_inserted_total", "Flows the engine started tracking.",
		eng->flows_inserted);
	family(p, "commtap_flow_evictions_total", "counter",
	       "Flows evicted from the engine's table: idle, or the table full.");
	fprintf(p->out, "commtap_flow_evictions_total{reason=\"idle\"} %" PRIu64 "\n",
		eng->evicted_idle);
	fprintf(p->out, "commtap_flow_evictions_total{reason=\"full\"} %" PRIu64 "\n",
		eng->evicted_full);
	counter(p, "commtap_evicted_flows_dropped_total",
		"Evicted flows the slow path had no room for (ring drops).",
		eng->evicted_unreported);
	counter(p, "commtap_bursts_total", "Bursts the engine finished.", eng->bursts);
	counter(p, "commtap_bursts_dropped_total",
		"Finished bursts the engine's ring had no room for (ring drops).",
		eng->bursts_dropped);
	counter(p, "commtap_read_overwrites_total",
		"RDMA READ requests forgotten before their response.", eng->read_overwrites);
	gauge(p, "commtap_flows", "Flows in the report.", (double)p->rep->n_flows);
	/* past --report-flows: in no per-flow or per-class series, so that sums stay exact */
	counter(p, "commtap_flows_summed_total",
		"Flows past the limit on flows in detail, summed (in no per-flow or class series).",
		p->rep->summed_flows);
	counter(p, "commtap_flows_summed_bytes_total", "Wire bytes of the summed flows.",
		p->rep->summed_bytes);
}

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/* Per class: volumes, congestion signals and the medians of the flows' shape. */
/*
 * Bytes by collective operation within each class (the operation layer's
 * reading; a bounded family: 6 classes x 10 operations, the pairs with
 * bytes only).
 */
static void operations(struct prom *p)
{
	uint64_t bytes[CT_PROM_CLASSES][CT_OP_COUNT] = {{0}};

	for (size_t i = 0; i < p->rep->n_flows; i++) {
		const struct ct_rep_flow *f = &p->rep->flows[i];

		bytes[f->cls][f->op] += f->bytes;
	}
	family(p, "commtap_operation_bytes_total", "counter",
	       "Bytes of the flows carrying each collective operation, by class.");
	for (int c = 0; c < CT_PROM_CLASSES; c++)
		for (int op = 0; op < CT_OP_COUNT; op++)
			if (bytes[c][op])
				fprintf(p->out,
					"commtap_operation_bytes_total{class=\"%s\",operation=\"%"
					"s\"} "
					"%" PRIu64 "\n",
					ct_class_name(c), ct_op_name(op), bytes[c][op]);
}

static int classes(struct prom *p)
{
	const struct ct_rep_flow *flows = p->rep->flows;
	size_t n = p->rep->n_flows;
	uint64_t sums[5][CT_PROM_CLASSES] = {{0}};
	size_t count[CT_PROM_CLASSES] = {0};
	double *period = calloc(n + 1, sizeof(double)), *duty = calloc(n + 1, sizeof(double));
	static const char *const names[5][2] = {
		{"commtap_class_bytes_total", "Wire bytes of the class's flows."},
		{"commtap_class_messages_total", "Verbs messages of the class's flows."},
		{"commtap_cnp_total", "RoCE congestion notification packets, by class."},
		{"commtap_ecn_ce_packets_total", "Packets marked ECN CE, by class."},
		{"commtap_retransmitted_packets_total", "Retransmitted packets, by class."},
	};

	if (!period || !duty) {
		free(period);
		free(duty);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ct_rep_flow *f = &flows[i];
		const uint64_t v[5] = {f->bytes, f->messages, f->cnp, f->ecn_ce, f->retransmits};

		for (int k = 0; k < 5; k++)
			sums[k][f->cls] += v[k];
		count[f->cls]++;
	}
	for (int k = 0; k < 5; k++) {
		family(p, names[k][0], "counter", names[k][1]);
		for (int c = 0; c < CT_PROM_CLASSES; c++)
			fprintf(p->out, "%s{class=\"%s\"} %" PRIu64 "\n", names[k][0],
				ct_class_name(c), sums[k][c]);
	}
	operations(p);
	family(p, "commtap_class_flows", "gauge", "Flows of each class.");
	for (int c = 0; c < CT_PROM_CLASSES; c++)
		fprintf(p->out, "commtap_class_flows{class=\"%s\"} %zu\n", ct_class_name(c),
			count[c]);
	family(p, "commtap_class_period_seconds", "gauge",
	       "Median of the class's flows' own periods (classes with a periodic flow).");
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			family(p, "commtap_class_duty_cycle_ratio", "gauge",
			       "Median of the class's flows' duty cycles (time on / span).");
		for (int c = 0; c < CT_PROM_CLASSES; c++) {
			size_t m = 0;

			for (size_t i = 0; i < n; i++) {
				const struct ct_rep_flow *f = &flows[i];

				if (f->cls == (enum ct_class)c &&
				    (pass ? f->has_duty : f->has_period))
					(pass ? duty : period)[m++] =
						pass ? f->duty_cycle : f->period_s;
			}
			if (!m)
				continue;
			qsort(pass ? duty : period, m, sizeof(double), dbl_cmp);
			fprintf(p->out, "%s{class=\"%s\"} %.17g\n",
				pass ? "commtap_class_duty_cycle_ratio"
				     : "commtap_class_period_seconds",
				ct_class_name(c), (pass ? duty : period)[m / 2]);
		}
	}
	free(period);
	free(duty);
	return 0;
}

static void job(struct prom *p)
{
	const struct ct_rep_period *j = &p->rep->job;

	gauge(p, "commtap_job_periodic", "1 when an iteration period is claimed.", j->periodic);
	family(p, "commtap_iteration_period_seconds", "gauge",
	       "The job's mean iteration period (absent when none is claimed).");
	if (j->periodic)
		num(p, "commtap_iteration_period_seconds", j->iteration_period_s);
	gauge(p, "commtap_iteration_period_confidence", "Confidence of the period, 0..1.",
	      j->period_confidence);
	gauge(p, "commtap_iterations", "Iterations found in the report's window.",
	      (double)j->iterations);
	gauge(p, "commtap_job_duty_cycle_ratio", "Time all traffic together is on / its span.",
	      j->duty_cycle);
	gauge(p, "commtap_job_peak_bytes_per_second", "Highest rate of one burst of all traffic.",
	      j->peak_gbps * 1e9 / 8);
}

/*
 * The job as this probe sees it, labelled for the fleet: ct_job (the same
 * on every probe) and vantage (which probe). Jobs past the top are summed
 * into ct_job="_other" (bytes) and left out (period figures).
 */
static void fleet(struct prom *p)
{
	const struct ct_rep_capture *cap = &p->rep->capture;
	const struct ct_rep_job *jobs = p->rep->jobs;
	size_t n = p->rep->n_jobs;
	uint64_t rest[CT_PROM_CLASSES] = {0};
	static const char *const g[4][2] = {
		{"commtap_job_hosts", "Hosts of the job seen sending at this vantage."},
		{"commtap_job_period_seconds",
		 "The job's iteration period as this vantage estimates it."},
		{"commtap_job_period_confidence",
		 "Confidence of the job's period at this vantage, 0..1."},
		{"commtap_job_iterations", "Iterations of the job found in the report's window."},
	};

	family(p, "commtap_probe_info", "gauge",
	       "Always 1: the probe's vantage (host, mirror, pcap, merge) and reader.");
	fputs("commtap_probe_info{vantage=\"", p->out);
	label_value(p->out, p->vantage);
	fputs("\",format=\"", p->out);
	label_value(p->out, cap->format ?: "pcap");
	fputs("\",source=\"", p->out);
	label_value(p->out, cap->file);
	fputs("\"} 1\n", p->out);
	for (int k = 0; k < 4; k++) {
		family(p, g[k][0], "gauge", g[k][1]);
		for (size_t j = 0; j < p->n_jobs; j++) {
			const double v[4] = {(double)jobs[j].n_hosts, jobs[j].iteration_period_s,
					     jobs[j].period_confidence, jobs[j].iterations};

			fprintf(p->out, "%s{", g[k][0]);
			job_labels(p, (int)j);
			fprintf(p->out, "} %.17g\n", v[k]);
		}
	}
	family(p, "commtap_job_class_bytes_total", "counter",
	       "Wire bytes of the job's flows by class at this vantage (top jobs; the rest "
	       "_other).");
	for (size_t j = 0; j < n; j++) {
		for (int c = 0; c < CT_PROM_CLASSES; c++) {
			uint64_t v = jobs[j].class_bytes[c];

			if (j >= p->n_jobs) {
				rest[c] += v;
				continue;
			}
			if (!(jobs[j].class_bytes_has & 1u << c))
				continue;
			fputs("commtap_job_class_bytes_total{", p->out);
			job_labels(p, (int)j);
			fprintf(p->out, ",class=\"%s\"} %" PRIu64 "\n", ct_class_name(c), v);
		}
	}
	for (int c = 0; c < CT_PROM_CLASSES && n > p->n_jobs; c++) {
		fputs("commtap_job_class_bytes_total{", p->out);
		job_labels(p, (int)p->n_jobs);
		fprintf(p->out, ",class=\"%s\"} %" PRIu64 "\n", ct_class_name(c), rest[c]);
	}
}

static void pfc(struct prom *p)
{
	static const char *const fields[3][2] = {
		{"commtap_pfc_frames_total", "802.1Qbb PFC frames enabling the priority."},
		{"commtap_pfc_xoff_frames_total", "PFC frames pausing the priority."},
		{"commtap_pfc_pause_quanta_total", "Summed pause quanta per priority."},
	};

	counter(p, "commtap_pause_frames_total", "802.3x pause frames.", p->rep->pause_frames);
	for (int k = 0; k < 3; k++) {
		family(p, fields[k][0], "counter", fields[k][1]);
		for (size_t i = 0; i < p->rep->n_priorities; i++) {
			const struct ct_rep_pfc_priority *pr = &p->rep->priorities[i];
			const uint64_t v[3] = {pr->frames, pr->xoff, pr->quanta};

			fprintf(p->out, "%s{priority=\"%zu\"} %" PRIu64 "\n", fields[k][0], i,
				v[k]);
		}
	}
}

static int host_index(struct prom *p, const char *addr)
{
	for (size_t i = 0; i < p->n_hosts; i++)
		if (!strcmp(p->hosts[i], addr))
			return (int)i;
	p->hosts[p->n_hosts] = addr;
	return (int)p->n_hosts++;
}

static int pair_cmp(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->job != b->job)
		return a->job - b->job;
	if (a->cls != b->cls)
		return a->cls - b->cls;
	return a->src != b->src ? a->src - b->src : a->dst - b->dst;
}

static void pair_labels(struct prom *p, const struct pair *x)
{
	fputc('{', p->out);
	job_labels(p, x->job);
	fputs(",src=\"", p->out);
	label_value(p->out, x->src < 0 ? OTHER : p->hosts[x->src]);
	fputs("\",dst=\"", p->out);
	label_value(p->out, x->dst < 0 ? OTHER : p->hosts[x->dst]);
	fprintf(p->out, "\",class=\"%s\"}", ct_class_name(x->cls));
}

/*
 * Host pairs per job and class: the top N by bytes, the rest summed per job
 * and class. A pair's bytes are the same at every vantage that sees its
 * traffic, so the fleet's rules take the max over probes, then the sum.
 */
static int host_pairs(struct prom *p)
{
	size_t n = p->rep->n_flows, np = 0, top = p->o.top_pairs;
	struct pair *pairs = calloc(n + CT_PROM_CLASSES + 1, sizeof(*pairs));
	struct pair rest[JOB_LABELS][CT_PROM_CLASSES];

	p->hosts = calloc(2 * n + 1, sizeof(*p->hosts));
	if (!pairs || !p->hosts) {
		free(pairs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ct_rep_flow *f = &p->rep->flows[i];
		struct pair x = {job_of(p, f),
				 f->cls,
				 host_index(p, f->src ? f->src : "?"),
				 host_index(p, f->dst ? f->dst : "?"),
				 f->bytes,
				 f->messages};
		size_t k;

		for (k = 0; k < np; k++)
			if (pairs[k].job == x.job && pairs[k].cls == x.cls &&
			    pairs[k].src == x.src && pairs[k].dst == x.dst)
				break;
		if (k == np) {
			pairs[np++] = x;
		} else {
			pairs[k].bytes += x.bytes;
			pairs[k].messages += x.messages;
		}
	}
	qsort(pairs, np, sizeof(*pairs), pair_cmp);
	for (int j = 0; j < JOB_LABELS; j++)
		for (int c = 0; c < CT_PROM_CLASSES; c++)
			rest[j][c] = (struct pair){j, c, -1, -1, 0, 0};
	for (size_t k = top; k < np; k++) {
		rest[pairs[k].job][pairs[k].cls].bytes += pairs[k].bytes;
		rest[pairs[k].job][pairs[k].cls].messages += pairs[k].messages;
	}
	for (int m = 0; m < 2; m++) {
		const char *name =
			m ? "commtap_host_pair_messages_total" : "commtap_host_pair_bytes_total";

		family(p, name, "counter",
		       m ? "Messages from src to dst in a class (top pairs; the rest as _other)."
			 : "Wire bytes from src to dst in a class (top pairs; the rest as "
			   "_other).");
		for (size_t k = 0; k < np && k < top; k++) {
			fputs(name, p->out);
			pair_labels(p, &pairs[k]);
			fprintf(p->out, " %" PRIu64 "\n", m ? pairs[k].messages : pairs[k].bytes);
		}
		for (int j = 0; j < JOB_LABELS && np > top; j++) {
			for (int c = 0; c < CT_PROM_CLASSES; c++) {
				const struct pair *r = &rest[j][c];

				if (j > (int)p->n_jobs + 1 || (!r->bytes && !r->messages))
					continue;
				fputs(name, p->out);
				pair_labels(p, r);
				fprintf(p->out, " %" PRIu64 "\n", m ? r->messages : r->bytes);
			}
		}
	}
	gauge(p, "commtap_host_pairs_aggregated", "Host pairs summed into the _other series.",
	      (double)(np > top ? np - top : 0));
	free(pairs);
	return 0;
}

/* Flows by bytes, the most first, then in the report's order. */
static int flow_bytes_desc(const void *pa, const void *pb)
{
	const struct ct_rep_flow *a = *(const struct ct_rep_flow *const *)pa;
	const struct ct_rep_flow *b = *(const struct ct_rep_flow *const *)pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return a < b ? -1 : 1;
}

static void flow_labels(struct prom *p, const struct ct_rep_flow *f)
{
	char id[48];

	if (!f) {
		fprintf(p->out, "{transport=\"%s\",src=\"%s\",dst=\"%s\",id=\"%s\",class=\"%s\"}",
			OTHER, OTHER, OTHER, OTHER, OTHER);
		return;
	}
	if (f->has_qpn)
		snprintf(id, sizeof(id), "qp%" PRIu64, f->qpn);
	else
		snprintf(id, sizeof(id), "%" PRIu64 "-%" PRIu64, f->sport, f->dport);
	fputs("{transport=\"", p->out);
	label_value(p->out, f->transport);
	fputs("\",src=\"", p->out);
	label_value(p->out, f->src);
	fputs("\",dst=\"", p->out);
	label_value(p->out, f->dst);
	fprintf(p->out, "\",id=\"%s\",class=\"%s\"}", id, ct_class_name(f->cls));
}

/* The busiest flows with their own shape; the rest summed into one series. */
static int top_flows(struct prom *p)
{
	size_t n = p->rep->n_flows, top = p->o.top_flows < n ? p->o.top_flows : n;
	const struct ct_rep_flow **order = calloc(n + 1, sizeof(*order));
	static const char *const counters[2][2] = {
		{"commtap_flow_bytes_total", "Wire bytes of the busiest flows (the rest: _other)."},
		{"commtap_flow_messages_total",
		 "Messages of the busiest flows (the rest: _other)."},
	};

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = &p->rep->flows[i];
	qsort(order, n, sizeof(*order), flow_bytes_desc);
	for (int k = 0; k < 2; k++) {
		uint64_t rest = 0;

		family(p, counters[k][0], "counter", counters[k][1]);
		for (size_t r = 0; r < n; r++) {
			uint64_t v = k ? order[r]->messages : order[r]->bytes;

			if (r >= top) {
				rest += v;
				continue;
			}
			fputs(counters[k][0], p->out);
			flow_labels(p, order[r]);
			fprintf(p->out, " %" PRIu64 "\n", v);
		}
		if (n > top) {
			fputs(counters[k][0], p->out);
			flow_labels(p, NULL);
			fprintf(p->out, " %" PRIu64 "\n", rest);
		}
	}
	for (int k = 0; k < 2; k++) {
		const char *name =
			k ? "commtap_flow_period_seconds" : "commtap_flow_duty_cycle_ratio";

		family(p, name, "gauge",
		       k ? "Own period of the busiest flows (when periodic)."
			 : "Duty cycle of the busiest flows (time on / span).");
		for (size_t r = 0; r < top; r++) {
			const struct ct_rep_flow *f = order[r];

			if (!(k ? f->has_period : f->has_duty))
				continue;
			fputs(name, p->out);
			flow_labels(p, f);
			fprintf(p->out, " %.17g\n", k ? f->period_s : f->duty_cycle);
		}
	}
	free((void *)order);
	return 0;
}

static int peak_desc(const void *pa, const void *pb)
{
	double a = (*(const struct ct_rep_receiver *const *)pa)->peak_gbps;
	double b = (*(const struct ct_rep_receiver *const *)pb)->peak_gbps;

	return a < b ? 1 : a > b ? -1 : 0;
}

/*
 * Per receiver, the figures cc is tuned from, for all its traffic and for
 * each class alone: the top (receiver, class) entries by peak rate.
 */
static int receivers(struct prom *p)
{
	size_t n = p->rep->n_receivers, top = p->o.top_receivers < n ? p->o.top_receivers : n;
	const struct ct_rep_receiver **r = calloc(n + 1, sizeof(*r));
	static const char *const g[4][2] = {
		{"commtap_receiver_incast_degree",
		 "Most senders whose bursts toward the receiver overlap."},
		{"commtap_receiver_peak_over_nic_ratio",
		 "Highest summed burst rate toward the receiver over its NIC rate."},
		{"commtap_receiver_ecn_ce_ratio",
		 "CE-marked share of the packets toward the receiver."},
		{"commtap_receiver_cnp_per_on_second",
		 "CNPs the receiver sent per second of on time."},
	};

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = &p->rep->receivers[i];
	qsort(r, n, sizeof(*r), peak_desc);
	for (int k = 0; k < 4; k++) {
		family(p, g[k][0], "gauge", g[k][1]);
		for (size_t i = 0; i < top; i++) {
			const double v[4] = {r[i]->incast_degree, r[i]->peak_over_nic,
					     r[i]->ecn_ce_fraction, r[i]->cnp_per_s_on};

			fprintf(p->out, "%s{receiver=\"", g[k][0]);
			label_value(p->out, r[i]->receiver);
			fputs("\",class=\"", p->out);
			label_value(p->out, r[i]->class_name ? r[i]->class_name : "all");
			fprintf(p->out, "\"} %.17g\n", v[k]);
		}
	}
	free((void *)r);
	return 0;
}

/*
 * The anomaly families, labelled for the fleet: the findings are of the
 * report's busiest job (jobs[0], whose iterations the detectors read), so
 * they carry its ct_job ("none" without a job) and this probe's vantage.
 */
static int anomalies(struct prom *p)
{
	char *labels = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&labels, &len);
	int bad;

	if (!ms)
		return -ENOMEM;
	job_labels_to(ms, p, p->n_jobs ? 0 : (int)p->n_jobs + 1);
	bad = fclose(ms);
	if (!bad)
		ct_prom_anomalies(p->out, &p->rep->anomalies, labels);
	free(labels);
	return bad ? -ENOMEM : 0;
}

/* The advice's gauges, each job's labelled with its ct_job (jobs without one are left out). */
static int advice(struct prom *p)
{
	char *labels[JOB_LABELS] = {0};
	size_t len, n = p->rep->advice.n_jobs < p->n_jobs ? p->rep->advice.n_jobs : p->n_jobs;
	int bad = 0;

	for (size_t j = 0; j < n && !bad; j++) {
		FILE *ms = open_memstream(&labels[j], &len);

		if (!ms) {
			bad = 1;
			break;
		}
		job_labels_to(ms, p, (int)j);
		bad = fclose(ms);
	}
	if (!bad)
		ct_prom_advice(p->out, &p->rep->advice, labels, n);
	for (size_t j = 0; j < n; j++)
		free(labels[j]);
	return bad ? -ENOMEM : 0;
}

int ct_prom_render_report(const struct ct_rep *rep, const struct ct_prom_opts *opts, char **text,
			  size_t *len)
{
	struct prom p = {.rep = rep};
	int rc;

	if (opts)
		p.o = *opts;
	p.o.top_flows = p.o.top_flows ? p.o.top_flows : CT_PROM_TOP_FLOWS;
	p.o.top_pairs = p.o.top_pairs ? p.o.top_pairs : CT_PROM_TOP_PAIRS;
	p.o.top_receivers = p.o.top_receivers ? p.o.top_receivers : CT_PROM_TOP_RECEIVERS;
	*text = NULL;
	*len = 0;
	p.out = open_memstream(text, len);
	if (!p.out)
		return -ENOMEM;
	vantage_of(&p);
	job_ids(&p);
	capture_engine(&p);
	job(&p);
	fleet(&p);
	rc = classes(&p);
	rc = rc ?: host_pairs(&p);
	rc = rc ?: top_flows(&p);
	rc = rc ?: receivers(&p);
	if (!rc) {
		pfc(&p);
		rc = anomalies(&p);
		rc = rc ?: advice(&p);
	}
	free(p.hosts);
	if (fclose(p.out) || rc) {
		free(*text);
		*text = NULL;
		*len = 0;
		return rc ? rc : -ENOMEM;
	}
	return 0;
}

int ct_prom_render(json_object *report, const struct ct_prom_opts *opts, char **text, size_t *len)
{
	struct ct_rep rep;
	char err[256];
	int rc = ct_rep_read(report, "report", &rep, err, sizeof(err));

	*text = NULL;
	*len = 0;
	if (rc)
		return rc;
	rc = ct_prom_render_report(&rep, opts, text, len);
	ct_rep_free(&rep);
	return rc;
}
