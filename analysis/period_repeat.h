/* SPDX-License-Identifier: MIT */
/* One flow's iterations from the repetition of its bytes (period_repeat.c). */
#ifndef COMMTAP_PERIOD_REPEAT_H
#define COMMTAP_PERIOD_REPEAT_H

#include <commtap/period.h>

struct ct_flow_repeat {
	double repeat;		    /* autocorrelation at the repetition, 0..1; 0: none */
	double bytes_per_iteration; /* the flow's */
	double period_ns;	    /* the mean iteration of the anchors (and the last one) */
	double interval_cv;	    /* spread of the anchors' intervals over their mean */
	size_t anchors;		    /* iterations' first bursts found */
	size_t *idx;		    /* their indices into the flow's bursts; free() */
	int whole_last; /* the last iteration was counted from its bytes */
};

/*
 * The iterations of one flow's bursts (sorted by start), at the two lags
 * its bytes repeat best at (out[1]: a shorter one as good, if any; see
 * period_repeat.c). Returns 0 or -ENOMEM; out[i].anchors is 0 where the
 * bytes do not repeat.
 */
int ct_flow_repeat(const struct ct_burst *b, size_t n, struct ct_flow_repeat out[2]);
void ct_flow_repeat_free(struct ct_flow_repeat *r);

#endif
