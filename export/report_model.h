/* SPDX-License-Identifier: MIT */
/*
 * A commtap.report/v1 document as C structures (docs/report-schema.md),
 * for the exporters: report_load.c reads the JSON once, every key spelled
 * there only, and the exporters read fields, so that a renamed key fails
 * to build rather than at run time. Classes, operations, anomaly kinds and
 * scopes are the enumerations of common/ and analysis/.
 *
 * Strings point into the JSON document the report holds a reference on;
 * a field absent (or null) reads as zero, NULL or false, and has_* says
 * whether it was there where the exporters tell the two apart.
 */
#ifndef COMMTAP_EXPORT_REPORT_MODEL_H
#define COMMTAP_EXPORT_REPORT_MODEL_H

#include <commtap/anomaly.h>
#include <commtap/traffic_class.h>

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_REP_CLASSES	  (CT_CLASS_OTHER + 1) /* TP PP DP EP EmbTableSyn Other */
#define CT_REP_PRIORITIES 8		       /* 802.1Qbb: eight priorities */

/* A reason and its count (capture.malformed.by_reason), in the document's order. */
struct ct_rep_count {
	const char *name;
	uint64_t count;
};

/* A distribution's summary ({"median": ...}); present: the report has it. */
struct ct_rep_dist {
	bool present;
	double median;
};

/* A vantage point of a merged report (capture.vantage_points). */
struct ct_rep_vantage {
	const char *report;
	uint64_t flows;
};

/* Hosts of one group of a class (classification.inferred_layout.groups). */
struct ct_rep_host_group {
	const char **hosts;
	size_t n_hosts;
};

/* A class's groups of hosts in the inferred layout. */
struct ct_rep_groups {
	const char *name;
	struct ct_rep_host_group *groups;
	size_t n_groups;
};

/* A name and a reason in words (anomalies.not_looked). */
struct ct_rep_reason {
	const char *name, *why;
};

struct ct_rep_capture {
	const char *file, *format, *error;
	uint64_t packets, bytes;
	uint64_t roce_packets, tcp_packets, other_ip_packets, other_l2_packets;
	uint64_t truncated_frames, encapsulated;
	uint64_t first_ts, last_ts, duration_ns;
	uint64_t kernel_drops; /* a live capture's; has_kernel_drops: in the report */
	bool has_kernel_drops;
	bool complete;
	struct ct_rep_count *malformed;
	size_t n_malformed;
	struct ct_rep_vantage *vantage_points;
	size_t n_vantage_points;
};

struct ct_rep_engine {
	uint64_t flow_capacity, flow_memory_bytes, flows_inserted;
	uint64_t evicted_idle, evicted_full, evicted_unreported;
	uint64_t bursts, bursts_dropped, read_overwrites;
};

/* The "job" section: the period of all traffic together. */
struct ct_rep_period {
	bool present, periodic;
	const char *reason; /* why no period is claimed */
	double iteration_period_s, period_confidence, duty_cycle, peak_gbps;
	struct ct_rep_dist on_s, off_s, burst_bytes;
	uint64_t iterations;
	uint64_t *iteration_starts; /* ns, as the report lists them */
	size_t n_iteration_starts;
};

/* One of a flow's first bursts (periodicity.first_bursts: [start, end, bytes, messages]). */
struct ct_rep_burst {
	uint64_t start, end, bytes, messages;
};

/* One of "jobs". */
struct ct_rep_job {
	const char *name;
	const char **hosts; /* in address order */
	size_t n_hosts;
	double iteration_period_s, period_confidence, iterations;
	uint64_t class_bytes[CT_REP_CLASSES];
	unsigned class_bytes_has; /* bit c: class_bytes[c] is in the report */
};

struct ct_rep_flow {
	const char *transport, *src, *dst;
	const char *class_source; /* "label", "profile", ... */
	const char *qpn_cut;	  /* copies cut before their QPN: why */
	uint64_t id, qpn, sport, dport;
	bool has_id, has_qpn;
	enum ct_class cls;	/* CT_CLASS_OTHER when the report names none */
	enum ct_op op;		/* CT_OP_UNKNOWN when the report names none */
	bool has_class, has_op; /* a class (operation) this version knows is named */
	const char *op_name;	/* the operation as written */
	uint64_t bytes, messages, packets, cnp, ecn_ce, retransmits, first_ts;
	double class_confidence;
	bool has_class_confidence;
	/* periodicity */
	bool has_periodicity, has_job, has_period, has_duty, has_peak, has_bytes_cv;
	int64_t job; /* index into jobs */
	double period_s, duty_cycle, peak_gbps;
	struct ct_rep_dist on_s, off_s, burst_bytes;
	double bytes_cv; /* per_iteration.bytes_cv */
	struct ct_rep_burst *first_bursts;
	size_t n_first_bursts;
	struct ct_rep_count *msg_size_hist; /* name: the bucket's lower bound, in bytes */
	size_t n_msg_size_hist;
};

/* One of cc.receivers: a receiver, for all its traffic or one class. */
struct ct_rep_receiver {
	const char *receiver;
	const char *class_name; /* a class's name, "all" (or NULL: the same) */
	uint64_t bursts, senders, retransmits;
	double peak_gbps, incast_degree, peak_over_nic, ecn_ce_fraction, cnp_per_s_on, duty_cycle;
	bool has_start_spread;
	double start_spread_s;
};

struct ct_rep_pfc_priority {
	uint64_t frames, xoff, quanta;
};

/* An iteration a finding was seen in (its report's numbering), and its figure there. */
struct ct_rep_seen {
	uint64_t iteration;
	double value;
	uint64_t at_ns; /* straggler: when the host entered there; 0 not said */
};

struct ct_rep_finding {
	enum ct_anomaly_kind kind;
	enum ct_anomaly_scope scope; /* host when the report names none */
	const char *host, *src, *dst, *evidence;
	uint64_t priority;
	bool has_priority;
	double value; /* the kind's figure (ct_rep_finding_unit names it) */
	double share; /* share_of_iteration: straggler, rhythm */
	double confidence;
	bool has_onset;
	int64_t onset_iteration, iterations_seen, iterations_since_onset;
	uint64_t onset_ns;
	bool has_per_iteration;
	struct ct_rep_seen *per_iteration;
	size_t n_per_iteration;
	json_object *json; /* the finding as written, for the merge to carry */
};

struct ct_rep_anomalies {
	bool present, has_jitter;
	uint64_t iterations, findings_dropped;
	uint64_t findings_unknown; /* of kinds this version does not know: left out */
	double period_s, straggler_jitter_s, straggler_threshold_s;
	struct ct_rep_reason *not_looked; /* per kind that could not look, why */
	size_t n_not_looked;
	struct ct_rep_finding *findings;
	size_t n_findings;
};

/* One of gpu.iterations (commtap.gpu/v1): seconds, per class where the section has it. */
struct ct_rep_gpu_iteration {
	uint64_t start_ns;
	double t_iter, t_comp, overlap, bubble, r_comm;
	double t_class[CT_REP_CLASSES]; /* t_TP, t_PP, ... */
	unsigned t_class_has;		/* bit c: t_class[c] is in the section */
};

/* The "gpu" section (docs/gpu.md), what the exporters draw of it. */
struct ct_rep_gpu {
	bool present, has_communicator, has_joined;
	uint64_t rank, pid; /* communicators[0] */
	struct ct_rep_gpu_iteration *iterations;
	size_t n_iterations;
	uint64_t joined_wire_bytes[CT_REP_CLASSES]; /* operations_joined.CLASS.wire_bytes */
	json_object *sync;			    /* clocks.sync, passed on as written */
};

/* A receiver in the way of a class's rate (advice.jobs[].classes.C.blocking_receivers). */
struct ct_rep_advice_blocker {
	const char *receiver;
	double ecn_ce_fraction, cnp_per_s_on, peak_over_nic;
	bool has_peak; /* peak_over_nic: the NIC's rate is known */
	uint64_t retransmits, incast_degree;
};

/* One class of a job's advice (advice.jobs[].classes.CLASS). */
struct ct_rep_advice_class {
	bool present, has_util, has_on_at_nic;
	double on_s, comm_ratio, bytes_per_iteration, effective_gbps, bw_utilization, on_s_at_nic;
	struct ct_rep_advice_blocker *blockers;
	size_t n_blockers;
};

/* One of advice.jobs (docs/advice.md): seconds, shares of the iteration, ratios. */
struct ct_rep_advice_job {
	uint64_t job, iterations;
	const char *reason; /* why nothing is said (then nothing else is there) */
	double iteration_s, comm_s, comm_ratio;
	struct ct_rep_advice_class cls[CT_REP_CLASSES];
	/* scheduling */
	const char *source, *regime;
	double t_iter, t_comp, t_comm, overlap, best_iteration_s, speedup_bound, comp_to_comm;
	bool has_comp_to_comm;
	/* scheduling.push_pull: a parameter server's three resources (has_push_pull) */
	double push_s, pull_s, best3_s, speedup_bound3;
	bool has_push_pull;
	/* network: every class at the NIC rate (has_network: the rate is known) */
	double comm_s_at_nic, iteration_s_at_nic, network_speedup;
	bool has_network;
};

/* The "advice" section. */
struct ct_rep_advice {
	bool present, has_nic;
	double nic_gbps;
	const char *nic_source;
	struct ct_rep_advice_job *jobs;
	size_t n_jobs;
};

struct ct_rep {
	json_object *doc; /* the document read (a reference held) */
	const char *schema, *generator, *clock_source; /* clock.source */
	struct ct_rep_capture capture;
	struct ct_rep_engine engine;
	struct ct_rep_period job;
	struct ct_rep_job *jobs;
	size_t n_jobs;
	const char *profile, *method; /* classification.profile, .method */
	/* classification.inferred_layout: p, t, d, ep (has: known) and each class's groups */
	bool has_layout, has_layout_check, layout_agrees;
	uint64_t layout_degree[4];
	unsigned layout_degree_has; /* bit k: layout_degree[k] is known */
	struct ct_rep_groups *layout_groups;
	size_t n_layout_groups;
	const char *layout_summary; /* classification.layout_check.summary */
	struct ct_rep_flow *flows;
	size_t n_flows;
	bool has_flows_summed;
	uint64_t summed_flows, summed_bytes, summed_limit; /* flows_summed */
	struct ct_rep_receiver *receivers;
	size_t n_receivers;
	uint64_t pause_frames, pause_quanta, pfc_frames;
	struct ct_rep_pfc_priority priorities[CT_REP_PRIORITIES];
	size_t n_priorities;
	struct ct_rep_anomalies anomalies;
	struct ct_rep_gpu gpu;
	struct ct_rep_advice advice;
};

/*
 * Read a parsed document into rep (name: its file, for errors). Returns 0,
 * or a negative errno with a one-line reason naming the file and the
 * field in err; rep is then empty. No schema check: the document is one
 * the report sink built, or one ct_rep_load checked.
 */
int ct_rep_read(json_object *doc, const char *name, struct ct_rep *rep, char *err, size_t errlen);

/* Read, check (commtap.report/v1) and load one report file, as ct_rep_read. */
int ct_rep_load(const char *path, struct ct_rep *rep, char *err, size_t errlen);

void ct_rep_free(struct ct_rep *rep);

/*
 * Only the anomalies section of a document, as ct_rep_read (the findings'
 * json point into doc, which must outlive a).
 */
int ct_rep_read_anomalies(json_object *doc, const char *name, struct ct_rep_anomalies *a, char *err,
			  size_t errlen);
void ct_rep_anomalies_free(struct ct_rep_anomalies *a);

/* A flow's identity as text: "roce SRC DST qpn" or "tcp SRC DST sport dport". */
void ct_rep_flow_key(const struct ct_rep_flow *f, char *buf, size_t len);

/* A finding's kind as the report names it: "straggler", "slow_link", ... */
const char *ct_rep_kind_name(enum ct_anomaly_kind k);

/* The key a kind's figure has in a finding: "delay_s", "rate_ratio", ... */
const char *ct_rep_finding_unit(enum ct_anomaly_kind k);

#endif
