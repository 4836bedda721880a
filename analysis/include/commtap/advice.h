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

/*
 * Interleaving for shared links (CASSINI, NSDI'24; docs/advice.md): jobs
 * whose traffic crosses one NIC link (a sender's uplink, a receiver's
 * downlink) compete there when their on-periods overlap; a phase shift of
 * a job's iterations can move its on-periods into the others' off-periods.
 */
#define CT_INTERLEAVE_BINS	1024 /* phase bins of an iteration */
#define CT_INTERLEAVE_MAX_CYCLE 16  /* iterations of a job in the two jobs' common cycle */

/* One job's on-periods on one link, folded onto its iteration. */
struct ct_interleave_profile {
	double period_s;
	double on[CT_INTERLEAVE_BINS]; /* share of its iterations with this phase bin on */
};

/* A link two jobs share, in one direction. */
struct ct_interleave_link {
	struct ct_addr addr;
	int rx;		     /* 0: the address's uplink (it sends), 1: its downlink */
	size_t job_a, job_b; /* job_a < job_b */
	double now;	     /* share of the common window both are on: measured from the bursts */
	double now_model;    /* the same from the folded profiles at the jobs' phases now */
	double after;	     /* from the profiles with the advised shifts */
};

struct ct_advice_interleave {
	const char *reason; /* why no shift is advised (NULL: shifts given) */
	struct ct_interleave_link *links;
	size_t n_links;
	double *shift_s; /* per job: delay its iterations by this much (the first: 0) */
	double *cycle_s; /* per job: its common cycle with the first job, 0 none */
	size_t n_jobs;
	double now, now_model, after; /* summed over the links */
};

/*
 * The common cycle of two periods: the shortest q_a·ta within 1% of the
 * shorter period of some q_b·tb, q_a, q_b <= CT_INTERLEAVE_MAX_CYCLE; 0
 * when none (their phases drift against each other and no shift holds).
 */
double ct_interleave_cycle(double ta, double tb);

/*
 * Share of the cycle both are on, b's iterations delayed by shift_s against
 * a's (a's phase 0 at time 0): the mean of a's on times b's over the cycle.
 * cycle_s 0: the periods are unrelated and it is the product of the means.
 */
double ct_interleave_overlap(const struct ct_interleave_profile *a,
			     const struct ct_interleave_profile *b, double cycle_s, double shift_s);

struct ct_advice {
	double nic_gbps;	/* the rate measured against; 0: unknown */
	const char *nic_source; /* "option", "profile", NULL: unknown */
	struct ct_advice_gpu gpu;
	struct ct_advice_job *jobs; /* one per periodicity job */
	size_t n_jobs;
	struct ct_advice_interleave interleave;
};

/* The interleaving of r's jobs (advice_interleave.c). Returns 0 or -ENOMEM. */
int ct_advice_interleave(const struct ct_report *r, struct ct_advice_interleave *out);
void ct_advice_interleave_free(struct ct_advice_interleave *il);

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
