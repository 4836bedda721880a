// SPDX-License-Identifier: MIT
/*
 * Slow link: whether the job can feel a pair's step down (declared, with
 * its measure, in anomaly_slow_link.h), for both judgements, against the
 * peers (anomaly_slow_link.c) and against itself (anomaly_slow_link_own.c).
 */
#include "anomaly_slow_link.h"

#include <math.h>
#include <stdio.h>

/*
 * The job's own swing in iteration time: 1.4826 MAD of its whole
 * iterations' lengths (the last one's end is extrapolated, left out), s;
 * NAN with fewer than SLOW_MIN_BEFORE.
 */
static double iteration_spread(const struct anom_ctx *c, double *tmp)
{
	size_t n = c->n_iter ? c->n_iter - 1 : 0;
	double m;

	if (n < SLOW_MIN_BEFORE)
		return NAN;
	for (size_t i = 0; i < n; i++)
		tmp[i] = (double)(c->bounds[i + 1] - c->bounds[i]) / 1e9;
	m = anom_median(tmp, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = fabs((double)(c->bounds[i + 1] - c->bounds[i]) / 1e9 - m);
	return 1.4826 * anom_median(tmp, n);
}

void anom_slow_step_felt(const struct anom_ctx *c, struct ct_anomaly *an, const double *on,
			 double before, size_t at, double *tmp)
{
	double cost, swing;

	for (size_t k = 0; k < an->seen; k++)
		tmp[k] = on[an->iters[k].iteration] * (1 - an->iters[k].value / before);
	cost = anom_median(tmp, an->seen);
	swing = iteration_spread(c, tmp);
	if (isnan(swing) || cost > SLOW_SPREAD_Z * swing)
		return;
	an->confidence = fmin(an->confidence, SLOW_UNDECIDED_CONFIDENCE);
	snprintf(an->evidence + at, sizeof(an->evidence) - at,
		 "; it costs an iteration %.2f ms at most, within the job's own swing "
		 "(%.0f x %.2f ms): below an alarm",
		 cost * 1e3, SLOW_SPREAD_Z, swing * 1e3);
}
