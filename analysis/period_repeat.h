/* SPDX-License-Identifier: MIT */
/* One flow's iterations from the repetition of its bytes (period_repeat.c). */
#ifndef COMMTAP_PERIOD_REPEAT_H
#define COMMTAP_PERIOD_REPEAT_H

#include <commtap/period.h>

/*
 * Flows of one job measure the same iterations from different places in
 * them: a flow's period times k agrees with the iteration to this share of
 * the flow's period (real runs: 3.5% between ptd's DP and pipeline flows
 * over 12 iterations, 1% among ddp's ring flows). Counted in the flow's
 * period, not the iteration's, so that a long lag is not a multiple of
 * every short one.
 */
#ifndef CT_JOB_AGREE /* overridable for the sensitivity runs (docs/accuracy.md) */
#define CT_JOB_AGREE 0.1
#endif

/*
 * Lags tried per flow, at most: the best and the best-scoring divisors as
 * good. Room for them all, not a threshold: a real 40-iteration ring of 8
 * repeats best at 20 iterations and as well at 10, 5, 4, 2 and 1; with
 * room for 3 divisors its one iteration was crowded out.
 */
#define CT_REPEAT_CANDIDATES 8

struct ct_flow_repeat {
	double repeat;		    /* autocorrelation at the repetition, 0..1; 0: none */
	double bytes_per_iteration; /* the flow's */
	double period_ns;	    /* the mean iteration of the anchors (and the last one) */
	double interval_cv;	    /* spread of the anchors' intervals over their mean */
	double interval_rsd; /* robust: 1.4826 median absolute deviations over their median */
	size_t anchors;		    /* iterations' first bursts found */
	size_t *idx;		    /* their indices into the flow's bursts; free() */
	int whole_last;		    /* the last iteration was counted from its bytes */
};

/*
 * The iterations of one flow's bursts (sorted by start), at the lags its
 * bytes repeat best at (out[0]; then divisors of it as good, if any: see
 * period_repeat.c). Returns 0 or -ENOMEM; out[i].bytes_per_iteration is 0
 * where there is no such lag, out[i].anchors 0 where it finds no iterations.
 */
int ct_flow_repeat(const struct ct_burst *b, size_t n,
		   struct ct_flow_repeat out[CT_REPEAT_CANDIDATES]);
void ct_flow_repeat_free(struct ct_flow_repeat *r);

#endif
