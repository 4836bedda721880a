/* SPDX-License-Identifier: MIT */
/*
 * From measurement to advice (docs/advice.md): per job, how much of an
 * iteration each class is on the wire and how much of the NIC it uses
 * while on; the iteration perfect overlap of computation and
 * communication could reach (the scheduling bound); and the iteration
 * if every class's transfers ran at the NIC's rate (the network bound),
 * with the receivers whose congestion figures stand in the way.
 */
#ifndef COMMTAP_ADVICE_H
#define COMMTAP_ADVICE_H

#include <stddef.h>

#include <commtap/report.h>

struct json_object;

#define CT_ADVICE_CLASSES  (CT_CLASS_OTHER + 1) /* TP PP DP EP EmbTableSyn Other */
#define CT_ADVICE_BLOCKERS 4			/* receivers named per class, the worst first */

/* A receiver whose cc figures say its senders cannot go faster. */
struct ct_advice_blocker {
	struct ct_addr host;
	double ecn_ce_fraction, cnp_per_s_on;
	double peak_over_nic; /* < 0: the NIC's rate is unknown */
	unsigned incast_degree;
	uint64_t retransmits;
};

struct ct_advice_class {
	int present;	    /* the job has bursts of this class inside its iterations */
	double on_s;	    /* per iteration: the union of the class's bursts */
	double comm_ratio;  /* on_s over the iteration */
	double bytes;	    /* per iteration, every sender */
	double gbps;	    /* effective bandwidth: a sender's bytes over its own on-time */
	double util;	    /* gbps over the NIC rate; < 0: the rate is unknown */
	double on_s_at_nic; /* on_s with every sender at the NIC rate; < 0 unknown */
	struct ct_advice_blocker blockers[CT_ADVICE_BLOCKERS];
	unsigned n_blockers;
};

/* The GPU side's medians over its iterations (the agent's "gpu" section), seconds. */
struct ct_advice_gpu {
	int present;
	size_t iterations;
	double t_iter, t_comp, t_comm, overlap;
};

struct ct_advice_job {
	int present;	   /* two iterations at least: else nothing is said */
	double period_s;   /* the iteration measured on the wire */
	size_t iterations; /* whole iterations measured */
	struct ct_advice_class cls[CT_ADVICE_CLASSES];
	double comm_s;	   /* per iteration: the union of every class's bursts */
	double comm_ratio; /* comm_s over the iteration */
	/* scheduling: two resources, computation and communication */
	const char *source; /* "wire" or "gpu": where t_comp, t_comm, overlap come from */
	double t_iter, t_comp, t_comm, overlap;
	double best_s;	      /* max(t_comp, t_comm): perfect overlap and ordering */
	double speedup_bound; /* (t_comp + t_comm - overlap) / best_s, at most 2 */
	double comp_to_comm;  /* t_comp / t_comm: where the job sits on the curve; < 0 n/a */
	const char *regime;   /* "communication-bound", "balanced", "compute-bound" */
	/*
	 * A parameter server (PushPull nearly all its communication): push
	 * (toward the servers) and pull (back) on the links' two directions
	 * are resources of their own beside computation, per iteration on the
	 * wire: best3_s = max(t_comp, push_s, pull_s), speedup_bound3 the busy
	 * time over it, at most 3.
	 */
	int push_pull;
	double push_s, pull_s, best3_s, speedup_bound3;
	/* network: every class at the NIC rate (< 0: the rate is unknown) */
	double comm_s_at_nic, iter_s_at_nic, network_speedup;
};

struct ct_advice {
	double nic_gbps;	/* the rate measured against; 0: unknown */
	const char *nic_source; /* "option", "profile", NULL: unknown */
	struct ct_advice_gpu gpu;
	struct ct_advice_job *jobs; /* one per periodicity job */
	size_t n_jobs;
};

/*
 * The advice of a report (r->periodicity set; classes may be NULL: every
 * flow then counts as Other). The GPU side's figures are read from the
 * report's "gpu" section where a producer added one. Returns 0 or -ENOMEM.
 */
int ct_advice_compute(const struct ct_report *r, struct ct_advice *out);
void ct_advice_free(struct ct_advice *a);

/* The GPU section's medians (advice_gpu.c); gpu NULL or without iterations: none. */
void ct_advice_gpu_read(struct json_object *gpu, struct ct_advice_gpu *out);

/* The report's "advice" section (advice_json.c): NULL when out of memory. */
struct json_object *ct_advice_json(const struct ct_advice *a);

/* Compute and write in one: what report_json.c calls. NULL when out of memory. */
struct json_object *ct_report_advice_json(const struct ct_report *r);

#endif
