// SPDX-License-Identifier: MIT
/* The Prometheus exposition of a report (see prom.h). */
#include "prom.h"
#include "prom_anomaly.h"
#include "report_doc.h"

#include <commtap/traffic_class.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OTHER		"_other"
#define NO_JOB		"none"
#define CT_PROM_CLASSES (CT_CLASS_OTHER + 1)   /* TP PP DP EP EmbTableSyn Other */
#define JOB_LABELS	(CT_PROM_TOP_JOBS + 2) /* the top jobs, _other, none */
#define JOB_ID_LEN	96		       /* a profile's name, or "j" and 8 hex digits; "-N" */

struct pair {
	int job;	   /* index into job_ids */
	int cls, src, dst; /* src/dst: index into the host list, -1 for the aggregate */
	uint64_t bytes, messages;
};

struct prom {
	FILE *out;
	json_object *doc;
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
static void job_identity(json_object *doc, size_t index, char *id, size_t len)
{
	json_object *job = ct_doc_at(ct_doc_get(doc, "jobs"), index);
	json_object *hosts = ct_doc_get(job, "hosts");
	const char *profile = ct_doc_str(ct_doc_get(doc, "classification"), "profile");
	const char *name = ct_doc_str(job, "name");
	uint32_t h = 2166136261u;

	if (name && *name) {
		snprintf(id, len, "%s", name);
		return;
	}
	if (index == 0 && profile && *profile) {
		snprintf(id, len, "%s", profile);
		return;
	}
	for (size_t i = 0; i < ct_doc_len(hosts); i++) {
		const char *a = json_object_get_string(ct_doc_at(hosts, i));

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
	json_object *cap = ct_doc_get(p->doc, "capture");
	const char *format = ct_doc_str(cap, "format"), *file = ct_doc_str(cap, "file");
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
	json_object *jobs = ct_doc_get(p->doc, "jobs");
	size_t n = ct_doc_len(jobs);

	p->n_jobs = n < CT_PROM_TOP_JOBS ? n : CT_PROM_TOP_JOBS;
	for (size_t j = 0; j < p->n_jobs; j++) {
		char *id = p->job_ids[j];

		job_identity(p->doc, j, id, JOB_ID_LEN - 8);
		for (size_t k = 0; k < j; k++)
			if (!strcmp(p->job_ids[k], id))
				snprintf(id + strlen(id), 8, "-%d", (int)j);
	}
	snprintf(p->job_ids[p->n_jobs], JOB_ID_LEN, "%s", OTHER);
	snprintf(p->job_ids[p->n_jobs + 1], JOB_ID_LEN, "%s", NO_JOB);
}

/* Index into job_ids of a flow's job (periodicity.job). */
static int job_of(const struct prom *p, json_object *flow)
{
	json_object *j = ct_doc_get(ct_doc_get(flow, "periodicity"), "job");
	int64_t k;

	if (!j || !json_object_is_type(j, json_type_int))
		return (int)p->n_jobs + 1;
	k = json_object_get_int64(j);
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

static int class_of(json_object *flow)
{
	const char *c = ct_doc_str(flow, "class");
	int k = c ? ct_class_from_name(c) : CT_CLASS_OTHER;

	return k < 0 ? CT_CLASS_OTHER : k;
}

static void capture_engine(struct prom *p)
{
	json_object *cap = ct_doc_get(p->doc, "capture"), *eng = ct_doc_get(p->doc, "engine");
	json_object *reasons = ct_doc_get(ct_doc_get(cap, "malformed"), "by_reason");
	static const char *const kinds[][2] = {{"roce", "roce_packets"},
					       {"tcp", "tcp_packets"},
					       {"other_ip", "other_ip_packets"},
					       {"other_l2", "other_l2_packets"}};

	counter(p, "commtap_packets_total", "Frames read at this vantage point.",
		ct_doc_u64(cap, "packets"));
	counter(p, "commtap_bytes_total", "Wire bytes of the frames read.",
		ct_doc_u64(cap, "bytes"));
	family(p, "commtap_kind_packets_total", "counter", "Frames read, by kind.");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		fprintf(p->out, "commtap_kind_packets_total{kind=\"%s\"} %" PRIu64 "\n",
			kinds[i][0], ct_doc_u64(cap, kinds[i][1]));
	family(p, "commtap_malformed_packets_total", "counter",
	       "Frames not analysed, by reason (only reasons seen).");
	if (json_object_is_type(reasons, json_type_object)) {
		json_object_object_foreach(reasons, reason, count)
		{
			fputs("commtap_malformed_packets_total{reason=\"", p->out);
			label_value(p->out, reason);
			fprintf(p->out, "\"} %" PRIu64 "\n", json_object_get_uint64(count));
		}
	}
	counter(p, "commtap_truncated_frames_total",
		"Frames captured shorter than their wire length.",
		ct_doc_u64(cap, "truncated_frames"));
	counter(p, "commtap_encapsulated_frames_total", "GRE/ERSPAN mirror copies unwrapped.",
		ct_doc_u64(cap, "encapsulated"));
	gauge(p, "commtap_capture_complete", "1 when the report covers its whole input.",
	      ct_doc_bool(cap, "complete"));
	gauge(p, "commtap_last_packet_timestamp_seconds",
	      "Time of the last packet in the report (Unix seconds).",
	      (double)ct_doc_u64(cap, "last_ts") / 1e9);
	gauge(p, "commtap_flow_table_capacity", "Flows the engine's table holds.",
	      (double)ct_doc_u64(eng, "flow_capacity"));
	gauge(p, "commtap_flow_table_memory_bytes", "Memory of the engine's flow table.",
	      (double)ct_doc_u64(eng, "flow_memory_bytes"));
	counter(p, "commtap_flows_inserted_total", "Flows the engine started tracking.",
		ct_doc_u64(eng, "flows_inserted"));
	family(p, "commtap_flow_evictions_total", "counter",
	       "Flows evicted from the engine's table: idle, or the table full.");
	fprintf(p->out, "commtap_flow_evictions_total{reason=\"idle\"} %" PRIu64 "\n",
		ct_doc_u64(eng, "evicted_idle"));
	fprintf(p->out, "commtap_flow_evictions_total{reason=\"full\"} %" PRIu64 "\n",
		ct_doc_u64(eng, "evicted_full"));
	counter(p, "commtap_evicted_flows_dropped_total",
		"Evicted flows the slow path had no room for (ring drops).",
		ct_doc_u64(eng, "evicted_unreported"));
	counter(p, "commtap_bursts_total", "Bursts the engine finished.",
		ct_doc_u64(eng, "bursts"));
	counter(p, "commtap_bursts_dropped_total",
		"Finished bursts the engine's ring had no room for (ring drops).",
		ct_doc_u64(eng, "bursts_dropped"));
	counter(p, "commtap_read_overwrites_total",
		"RDMA READ requests forgotten before their response.",
		ct_doc_u64(eng, "read_overwrites"));
	gauge(p, "commtap_flows", "Flows in the report.",
	      (double)ct_doc_len(ct_doc_get(p->doc, "flows")));
	/* past --report-flows: in no per-flow or per-class series, so that sums stay exact */
	counter(p, "commtap_flows_summed_total",
		"Flows past the limit on flows in detail, summed (in no per-flow or class series).",
		ct_doc_u64(ct_doc_get(p->doc, "flows_summed"), "flows"));
	counter(p, "commtap_flows_summed_bytes_total", "Wire bytes of the summed flows.",
		ct_doc_u64(ct_doc_get(p->doc, "flows_summed"), "bytes"));
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
static void operations(struct prom *p, json_object *flows, size_t n)
{
	uint64_t bytes[CT_PROM_CLASSES][CT_OP_COUNT] = {{0}};

	for (size_t i = 0; i < n; i++) {
		json_object *f = ct_doc_at(flows, i);
		const char *name = ct_doc_str(f, "operation");
		int op = name ? ct_op_from_name(name) : -1;

		bytes[class_of(f)][op < 0 ? CT_OP_UNKNOWN : op] += ct_doc_u64(f, "bytes");
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
	json_object *flows = ct_doc_get(p->doc, "flows");
	size_t n = ct_doc_len(flows);
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
	static const char *const fields[5] = {"bytes", "messages", "cnp", "ecn_ce", "retransmits"};

	if (!period || !duty) {
		free(period);
		free(duty);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *f = ct_doc_at(flows, i);
		int c = class_of(f);

		for (int k = 0; k < 5; k++)
			sums[k][c] += ct_doc_u64(f, fields[k]);
		count[c]++;
	}
	for (int k = 0; k < 5; k++) {
		family(p, names[k][0], "counter", names[k][1]);
		for (int c = 0; c < CT_PROM_CLASSES; c++)
			fprintf(p->out, "%s{class=\"%s\"} %" PRIu64 "\n", names[k][0],
				ct_class_name(c), sums[k][c]);
	}
	operations(p, flows, n);
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
				json_object *f = ct_doc_at(flows, i);
				json_object *per = ct_doc_get(f, "periodicity");
				json_object *v = ct_doc_get(per, pass ? "duty_cycle" : "period_s");

				if (class_of(f) == c && v)
					(pass ? duty : period)[m++] = json_object_get_double(v);
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
	json_object *j = ct_doc_get(p->doc, "job");

	gauge(p, "commtap_job_periodic", "1 when an iteration period is claimed.",
	      ct_doc_bool(j, "periodic"));
	family(p, "commtap_iteration_period_seconds", "gauge",
	       "The job's mean iteration period (absent when none is claimed).");
	if (ct_doc_bool(j, "periodic"))
		num(p, "commtap_iteration_period_seconds", ct_doc_num(j, "iteration_period_s"));
	gauge(p, "commtap_iteration_period_confidence", "Confidence of the period, 0..1.",
	      ct_doc_num(j, "period_confidence"));
	gauge(p, "commtap_iterations", "Iterations found in the report's window.",
	      (double)ct_doc_u64(j, "iterations"));
	gauge(p, "commtap_job_duty_cycle_ratio", "Time all traffic together is on / its span.",
	      ct_doc_num(j, "duty_cycle"));
	gauge(p, "commtap_job_peak_bytes_per_second", "Highest rate of one burst of all traffic.",
	      ct_doc_num(j, "peak_gbps") * 1e9 / 8);
}

/*
 * The job as this probe sees it, labelled for the fleet: ct_job (the same
 * on every probe) and vantage (which probe). Jobs past the top are summed
 * into ct_job="_other" (bytes) and left out (period figures).
 */
static void fleet(struct prom *p)
{
	json_object *cap = ct_doc_get(p->doc, "capture"), *jobs = ct_doc_get(p->doc, "jobs");
	size_t n = ct_doc_len(jobs);
	uint64_t rest[CT_PROM_CLASSES] = {0};
	static const char *const g[4][3] = {
		{"commtap_job_hosts", "hosts", "Hosts of the job seen sending at this vantage."},
		{"commtap_job_period_seconds", "iteration_period_s",
		 "The job's iteration period as this vantage estimates it."},
		{"commtap_job_period_confidence", "period_confidence",
		 "Confidence of the job's period at this vantage, 0..1."},
		{"commtap_job_iterations", "iterations",
		 "Iterations of the job found in the report's window."},
	};

	family(p, "commtap_probe_info", "gauge",
	       "Always 1: the probe's vantage (host, mirror, pcap, merge) and reader.");
	fputs("commtap_probe_info{vantage=\"", p->out);
	label_value(p->out, p->vantage);
	fputs("\",format=\"", p->out);
	label_value(p->out, ct_doc_str(cap, "format") ?: "pcap");
	fputs("\",source=\"", p->out);
	label_value(p->out, ct_doc_str(cap, "file"));
	fputs("\"} 1\n", p->out);
	for (int k = 0; k < 4; k++) {
		family(p, g[k][0], "gauge", g[k][2]);
		for (size_t j = 0; j < p->n_jobs; j++) {
			json_object *job = ct_doc_at(jobs, j);
			double v = k ? ct_doc_num(job, g[k][1])
				     : (double)ct_doc_len(ct_doc_get(job, "hosts"));

			fprintf(p->out, "%s{", g[k][0]);
			job_labels(p, (int)j);
			fprintf(p->out, "} %.17g\n", v);
		}
	}
	family(p, "commtap_job_class_bytes_total", "counter",
	       "Wire bytes of the job's flows by class at this vantage (top jobs; the rest "
	       "_other).");
	for (size_t j = 0; j < n; j++) {
		json_object *cb = ct_doc_get(ct_doc_at(jobs, j), "class_bytes");

		for (int c = 0; c < CT_PROM_CLASSES; c++) {
			uint64_t v = ct_doc_u64(cb, ct_class_name(c));

			if (j >= p->n_jobs) {
				rest[c] += v;
				continue;
			}
			if (!ct_doc_get(cb, ct_class_name(c)))
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
	json_object *pf = ct_doc_get(p->doc, "pfc"), *prios = ct_doc_get(pf, "priorities");
	static const char *const fields[3][3] = {
		{"commtap_pfc_frames_total", "frames",
		 "802.1Qbb PFC frames enabling the priority."},
		{"commtap_pfc_xoff_frames_total", "xoff", "PFC frames pausing the priority."},
		{"commtap_pfc_pause_quanta_total", "quanta", "Summed pause quanta per priority."},
	};

	counter(p, "commtap_pause_frames_total", "802.3x pause frames.",
		ct_doc_u64(pf, "pause_frames"));
	for (int k = 0; k < 3; k++) {
		family(p, fields[k][0], "counter", fields[k][2]);
		for (size_t i = 0; i < ct_doc_len(prios) && i < 8; i++)
			fprintf(p->out, "%s{priority=\"%zu\"} %" PRIu64 "\n", fields[k][0], i,
				ct_doc_u64(ct_doc_at(prios, i), fields[k][1]));
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
	json_object *flows = ct_doc_get(p->doc, "flows");
	size_t n = ct_doc_len(flows), np = 0, top = p->o.top_pairs;
	struct pair *pairs = calloc(n + CT_PROM_CLASSES + 1, sizeof(*pairs));
	struct pair rest[JOB_LABELS][CT_PROM_CLASSES];

	p->hosts = calloc(2 * n + 1, sizeof(*p->hosts));
	if (!pairs || !p->hosts) {
		free(pairs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *f = ct_doc_at(flows, i);
		const char *s = ct_doc_str(f, "src"), *d = ct_doc_str(f, "dst");
		struct pair x = {job_of(p, f),
				 class_of(f),
				 host_index(p, s ? s : "?"),
				 host_index(p, d ? d : "?"),
				 ct_doc_u64(f, "bytes"),
				 ct_doc_u64(f, "messages")};
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

static const struct prom *flow_sort_ctx;

static int flow_bytes_desc(const void *pa, const void *pb)
{
	json_object *fl = ct_doc_get(flow_sort_ctx->doc, "flows");
	uint64_t a = ct_doc_u64(ct_doc_at(fl, *(const size_t *)pa), "bytes");
	uint64_t b = ct_doc_u64(ct_doc_at(fl, *(const size_t *)pb), "bytes");

	if (a != b)
		return a < b ? 1 : -1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static void flow_labels(struct prom *p, json_object *f)
{
	char id[48];

	if (!f) {
		fprintf(p->out, "{transport=\"%s\",src=\"%s\",dst=\"%s\",id=\"%s\",class=\"%s\"}",
			OTHER, OTHER, OTHER, OTHER, OTHER);
		return;
	}
	if (ct_doc_get(f, "qpn"))
		snprintf(id, sizeof(id), "qp%" PRIu64, ct_doc_u64(f, "qpn"));
	else
		snprintf(id, sizeof(id), "%" PRIu64 "-%" PRIu64, ct_doc_u64(f, "sport"),
			 ct_doc_u64(f, "dport"));
	fputs("{transport=\"", p->out);
	label_value(p->out, ct_doc_str(f, "transport"));
	fputs("\",src=\"", p->out);
	label_value(p->out, ct_doc_str(f, "src"));
	fputs("\",dst=\"", p->out);
	label_value(p->out, ct_doc_str(f, "dst"));
	fprintf(p->out, "\",id=\"%s\",class=\"%s\"}", id, ct_class_name(class_of(f)));
}

/* The busiest flows with their own shape; the rest summed into one series. */
static int top_flows(struct prom *p)
{
	json_object *flows = ct_doc_get(p->doc, "flows");
	size_t n = ct_doc_len(flows), top = p->o.top_flows < n ? p->o.top_flows : n;
	size_t *order = calloc(n + 1, sizeof(*order));
	static const char *const counters[2][3] = {
		{"commtap_flow_bytes_total", "bytes",
		 "Wire bytes of the busiest flows (the rest: _other)."},
		{"commtap_flow_messages_total", "messages",
		 "Messages of the busiest flows (the rest: _other)."},
	};

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	flow_sort_ctx = p;
	qsort(order, n, sizeof(*order), flow_bytes_desc);
	for (int k = 0; k < 2; k++) {
		uint64_t rest = 0;

		family(p, counters[k][0], "counter", counters[k][2]);
		for (size_t r = 0; r < n; r++) {
			json_object *f = ct_doc_at(flows, order[r]);

			if (r >= top) {
				rest += ct_doc_u64(f, counters[k][1]);
				continue;
			}
			fputs(counters[k][0], p->out);
			flow_labels(p, f);
			fprintf(p->out, " %" PRIu64 "\n", ct_doc_u64(f, counters[k][1]));
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
			json_object *f = ct_doc_at(flows, order[r]);
			json_object *v = ct_doc_get(ct_doc_get(f, "periodicity"),
						    k ? "period_s" : "duty_cycle");

			if (!v)
				continue;
			fputs(name, p->out);
			flow_labels(p, f);
			fprintf(p->out, " %.17g\n", json_object_get_double(v));
		}
	}
	free(order);
	return 0;
}

static int peak_desc(const void *pa, const void *pb)
{
	double a = ct_doc_num(*(json_object *const *)pa, "peak_gbps");
	double b = ct_doc_num(*(json_object *const *)pb, "peak_gbps");

	return a < b ? 1 : a > b ? -1 : 0;
}

/*
 * Per receiver, the figures cc is tuned from, for all its traffic and for
 * each class alone: the top (receiver, class) entries by peak rate.
 */
static int receivers(struct prom *p)
{
	json_object *list = ct_doc_get(ct_doc_get(p->doc, "cc"), "receivers");
	size_t n = ct_doc_len(list), top = p->o.top_receivers < n ? p->o.top_receivers : n;
	json_object **r = calloc(n + 1, sizeof(*r));
	static const char *const g[4][3] = {
		{"commtap_receiver_incast_degree", "incast_degree",
		 "Most senders whose bursts toward the receiver overlap."},
		{"commtap_receiver_peak_over_nic_ratio", "peak_over_nic",
		 "Highest summed burst rate toward the receiver over its NIC rate."},
		{"commtap_receiver_ecn_ce_ratio", "ecn_ce_fraction",
		 "CE-marked share of the packets toward the receiver."},
		{"commtap_receiver_cnp_per_on_second", "cnp_per_s_on",
		 "CNPs the receiver sent per second of on time."},
	};

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = ct_doc_at(list, i);
	qsort(r, n, sizeof(*r), peak_desc);
	for (int k = 0; k < 4; k++) {
		family(p, g[k][0], "gauge", g[k][2]);
		for (size_t i = 0; i < top; i++) {
			const char *cls = ct_doc_str(r[i], "class");

			fprintf(p->out, "%s{receiver=\"", g[k][0]);
			label_value(p->out, ct_doc_str(r[i], "receiver"));
			fputs("\",class=\"", p->out);
			label_value(p->out, cls ? cls : "all");
			fprintf(p->out, "\"} %.17g\n", ct_doc_num(r[i], g[k][1]));
		}
	}
	free(r);
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
		ct_prom_anomalies(p->out, p->doc, labels);
	free(labels);
	return bad ? -ENOMEM : 0;
}

int ct_prom_render(json_object *report, const struct ct_prom_opts *opts, char **text, size_t *len)
{
	struct prom p = {.doc = report};
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
