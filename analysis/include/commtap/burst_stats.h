/* SPDX-License-Identifier: MIT */
/*
 * On-off statistics of bursts (slow path): distributions of on time, off
 * time and burst bytes, duty cycle, peak rate, per-iteration volumes, and
 * the figures congestion control is tuned from (incast degree, aggregate
 * peak rate, start-time spread).
 */
#ifndef COMMTAP_BURST_STATS_H
#define COMMTAP_BURST_STATS_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/period.h>

/* median and the 10th/90th percentiles */
struct ct_dist {
	double p10, median, p90;
	size_t n;
};

/* Percentiles of v (sorted in place); n == 0 gives zeros. */
void ct_dist_of(double *v, size_t n, struct ct_dist *out);

struct ct_onoff {
	struct ct_dist on_s, off_s, burst_bytes;
	double duty_cycle;  /* time on / time from the first burst's start to the last's end */
	double total_on_s;  /* time on */
	double peak_gbps;   /* the highest burst rate (bytes / on time) */
	size_t bursts;
};

/* bursts of one flow (or aggregate), sorted by start; overlapping ones are joined. */
int ct_onoff_of(const struct ct_burst *b, size_t n, struct ct_onoff *out);

/* Bytes and messages per iteration of the period, and their variation. */
struct ct_iteration_volumes {
	size_t iterations;
	double *bytes;	  /* per iteration; free() */
	double *messages; /* per iteration; free() */
	double bytes_cv;  /* coefficient of variation: stdev / mean of bytes */
	double phase_first, phase_last; /* median phase of the first / last burst in an iteration */
};

/*
 * Split bursts by the period's iteration starts (a burst counts where it
 * starts); bursts before the first start or after the last iteration's end
 * are left out. Returns 0 or -ENOMEM.
 */
int ct_iteration_volumes_of(const struct ct_burst *b, size_t n, const struct ct_period *p,
			    struct ct_iteration_volumes *out);
void ct_iteration_volumes_free(struct ct_iteration_volumes *v);
/*
 * The same into the caller's room for 2 * p->iterations doubles (bytes,
 * then messages): nothing to free, no allocation for each of many flows.
 */
int ct_iteration_volumes_in(const struct ct_burst *b, size_t n, const struct ct_period *p,
			    struct ct_iteration_volumes *out, double *room);

/*
 * Incast toward one receiver: b holds the bursts of the flows into it, with
 * .flow naming the sender. Returns the most distinct senders on at once and
 * the highest aggregate rate (sum of the concurrent bursts' rates, Gb/s).
 */
int ct_incast_of(const struct ct_burst *b, size_t n, unsigned *max_senders, double *peak_gbps);

/*
 * Start-time synchronization: for each iteration, the spread (max - min) of
 * the first burst start of each flow (.flow) in it; the median over
 * iterations, in seconds. -1 when fewer than two flows share an iteration.
 */
double ct_start_spread_s(const struct ct_burst *b, size_t n, const struct ct_period *p);

#endif
