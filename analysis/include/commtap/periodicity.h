/* SPDX-License-Identifier: MIT */
/*
 * The periodicity of a report's flows (slow path, per report): the job's
 * iteration period from all bursts, each flow's on-off shape, phase and
 * per-iteration volumes, and the per-receiver figures congestion control is
 * tuned from.
 */
#ifndef COMMTAP_PERIODICITY_H
#define COMMTAP_PERIODICITY_H

#include <commtap/burst_stats.h>
#include <commtap/dataplane.h>
#include <commtap/flow_set.h>
#include <commtap/period.h>

struct ct_flow_periodicity {
	int periodic;	    /* the flow's bursts recur every job iteration */
	double period_s;    /* from its own burst starts, one job period apart */
	struct ct_onoff onoff;
	struct ct_iteration_volumes volumes; /* per job iteration (not to be freed alone) */
	double phase_first, phase_last;	     /* where in the iteration its bursts start */
	const struct ct_burst *bursts;	     /* its bursts by start, in ct_periodicity.by_flow */
	size_t n_bursts;
	int job; /* its job in ct_periodicity.jobs; -1 none (figures against the first) */
};

#define CT_MAX_JOBS 8

/*
 * A training job: hosts that exchange traffic with a shared iteration
 * period. A fabric carries several; the first is the one with the most
 * bytes, whose period is ct_periodicity.job.
 */
struct ct_job {
	struct ct_period period; /* of jobs after the first (the first's is .job) */
	struct ct_addr *hosts;	 /* in address order */
	size_t n_hosts;
	size_t flows;
	uint64_t bytes; /* of its flows */
};

/* What one receiving host sees (all classes together until flows are classified). */
struct ct_receiver_cc {
	struct ct_addr host;
	int cls; /* enum ct_class of the flows counted, -1 all */
	unsigned senders;	 /* distinct sending hosts */
	unsigned incast_degree;	 /* most senders on toward it at once */
	double peak_gbps;	 /* highest aggregate rate toward it */
	struct ct_onoff onoff;	 /* of all traffic toward it */
	double start_spread_s;	 /* median spread of the flows' first bursts per iteration, -1 n/a */
	double cnp_per_s_on;	 /* CNPs it sent per second of on time */
	double ecn_ce_fraction;	 /* CE-marked share of the packets toward it */
	uint64_t retransmits;	 /* in flows toward it */
};

struct ct_periodicity {
	struct ct_period job;
	struct ct_onoff job_onoff;
	struct ct_flow_periodicity *flows; /* one per flow of the set */
	size_t n_flows;
	struct ct_receiver_cc *receivers; /* all classes together, by host address */
	size_t n_receivers;
	struct ct_receiver_cc *class_receivers; /* per class, then host (after classification) */
	size_t n_class_receivers;
	size_t bursts;
	struct ct_burst *by_flow; /* every burst, grouped by flow, each group by start */
	double *volume_room;	  /* the flows' volumes point into it */
	struct ct_job *jobs;	  /* none when the capture has no period */
	size_t n_jobs;
	double *job_room; /* volumes of the flows of further jobs */
};

/* The period of job j, and the one flow i's figures refer to. */
const struct ct_period *ct_periodicity_job_period(const struct ct_periodicity *p, size_t j);
const struct ct_period *ct_periodicity_period_of(const struct ct_periodicity *p, size_t flow);

/*
 * Bursts gathered from engines, for a report: grows as needed up to
 * CT_BURST_LOG_MAX, then keeps the newest. At that bound a report's peak
 * memory is at most CT_BURST_PEAK_BYTES per burst (the log and the
 * periodicity's copies of it, docs/performance.md): 2^21 bursts, 512 MiB.
 * The periodicity then covers the newest bursts only (the older
 * iterations of a long capture); flows' totals are not affected.
 */
#define CT_BURST_LOG_MAX    (1u << 21)
#define CT_BURST_PEAK_BYTES 256
struct ct_burst_log {
	struct ct_flow_burst *b;
	size_t n, cap;
	uint64_t dropped; /* the oldest, dropped at the bound */
};

/* Append b; at CT_BURST_LOG_MAX the oldest quarter is dropped first
 * (counted in dropped). 0 or -ENOMEM. */
int ct_burst_log_add(struct ct_burst_log *log, const struct ct_flow_burst *b);
/*
 * Drop the bursts of these n flows (a flow set's lightest, summed: no
 * report analyses them); keys is sorted in place. Returns the bursts dropped.
 */
size_t ct_burst_log_drop(struct ct_burst_log *log, struct ct_flow_key *keys, size_t n);
void ct_burst_log_free(struct ct_burst_log *log);

/*
 * Compute the periodicity of the flows in set (sorted; burst keys are looked
 * up in it). No iteration shorter than min_period_s is claimed (rhythms
 * inside one iteration — messages of a transfer — repeat too). Returns 0 or
 * -ENOMEM.
 */
int ct_periodicity_compute(const struct ct_flow_set *set, const struct ct_burst_log *log,
			   double min_period_s, struct ct_periodicity *out);
/*
 * After classification (flow_class: an enum ct_class per flow of set): the
 * receivers' figures again for each class alone, into p->class_receivers.
 * Returns 0 or -ENOMEM.
 */
int ct_periodicity_cc_by_class(struct ct_periodicity *p, const struct ct_flow_set *set,
			       const uint8_t *flow_class);
void ct_periodicity_free(struct ct_periodicity *p);

#endif
