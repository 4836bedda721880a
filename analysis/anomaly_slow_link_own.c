// SPDX-License-Identifier: MIT
/*
 * Slow link, judged against itself: a pair with no peers of its class (the
 * embedding-table synchronisation between a pipeline's first and last
 * stage is one pair each way) has no median to fall below; what it has is
 * its own rate in the iterations before. A link that slows steps down and
 * stays down: the iterations split in two at the point that leaves each
 * side closest to its own median, and the later side's median is below
 * SLOW_RATIO of the earlier's, below every earlier iteration's rate (a
 * pair that was as slow before jitters, a median absolute deviation misses
 * a rate that alternates between two values), and by more than
 * SLOW_SPREAD_Z of the sides' own spread about their medians.
 */
#include "anomaly_slow_link.h"

#include <commtap/traffic_class.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Median of v[0..n) and the mean absolute deviation about it; tmp: n doubles. */
static double side(const double *v, size_t n, double *tmp, double *dev)
{
	double m;

	for (size_t i = 0; i < n; i++)
		tmp[i] = v[i];
	m = anom_median(tmp, n);
	*dev = 0;
	for (size_t i = 0; i < n; i++)
		*dev += fabs(v[i] - m);
	return m;
}

/* The robust spread of both sides about their own medians, relative to them. */
static double side_spread(const double *v, size_t n, size_t cut, double mb, double ma, double *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = fabs(v[i] - (i < cut ? mb : ma)) / (i < cut ? mb : ma);
	return 1.4826 * anom_median(tmp, n);
}

int anom_slow_link_own(struct anom_ctx *c, const struct ct_addr *src, const struct ct_addr *dst,
		       int cls, const double *rate, const double *on)
{
	size_t ni = c->n_iter, n = 0, cut = 0, seen = 0, len;
	size_t *at = malloc((ni + 1) * sizeof(*at));
	double *v = malloc((ni + 1) * sizeof(*v)), *tmp = malloc((ni + 1) * sizeof(*tmp));
	double best = INFINITY, mb = 0, ma = 0, spread, sum = 0;
	struct ct_anomaly an = {.kind = CT_ANOMALY_SLOW_LINK,
				.scope = CT_ANOMALY_AT_LINK,
				.priority = -1,
				.cls = (int8_t)cls,
				.host = *src,
				.peer = *dst,
				.onset = -1};
	int err = 0;

	if (!at || !v || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t it = 0; it < ni; it++)
		if (rate[it] > 0) {
			at[n] = it;
			v[n++] = rate[it];
		}
	/* the split that leaves both sides closest to their own medians */
	for (size_t k = SLOW_MIN_BEFORE; k + SLOW_MIN_ITERATIONS <= n; k++) {
		double db, da, b = side(v, k, tmp, &db), a = side(v + k, n - k, tmp, &da);

		if (db + da < best) {
			best = db + da;
			cut = k;
			mb = b;
			ma = a;
		}
	}
	if (!cut || mb <= 0 || ma >= SLOW_RATIO * mb)
		goto out;
	/* slower than in any iteration before, and beyond both sides' spread */
	for (size_t i = 0; i < cut; i++)
		if (v[i] <= ma)
			goto out;
	spread = side_spread(v, n, cut, mb, ma, tmp);
	if (1 - ma / mb < SLOW_SPREAD_Z * spread)
		goto out;
	for (size_t i = cut; i < n && !err; i++)
		if (v[i] < SLOW_RATIO * mb) {
			err = anom_seen_in(c, &an, &seen, ni, at[i], v[i] / mb);
			sum += v[i];
		}
	an.of = seen ? (unsigned)(ni - (size_t)an.onset) : 0;
	if (err || seen < SLOW_MIN_ITERATIONS || seen < SLOW_MIN_STEADY * an.of) {
		free(an.iters);
		goto out;
	}
	an.seen = (unsigned)seen;
	an.value = ma / mb;
	an.confidence = (double)seen / an.of * fmin(1, 0.5 + (SLOW_RATIO - an.value) / SLOW_RATIO);
	len = (size_t)snprintf(
		an.evidence, sizeof(an.evidence),
		"%s bursts on this link move %.3g Gbit/s while sending from iteration %ld, "
		"%.0f%% of its own %.3g Gbit/s before (no peers of its class to compare "
		"with; flagged below %.0f%% and by %.0f times its own spread of %.0f%%), "
		"in %zu of %u iterations",
		ct_class_name(cls), sum / (double)seen * 8 / 1e9, an.onset, an.value * 100,
		mb * 8 / 1e9, SLOW_RATIO * 100, SLOW_SPREAD_Z, spread * 100, seen, an.of);
	anom_slow_step_felt(c, &an, on, 1, len, tmp);
	err = anom_add(c, &an);
out:
	free(at);
	free(v);
	free(tmp);
	return err;
}
