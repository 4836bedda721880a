// SPDX-License-Identifier: MIT
/*
 * Onsets of the findings the flow counters make (loss, congestion): the
 * counters are totals over the capture, but every burst carries the loss
 * signals and marks of its own time (struct ct_flow_burst). Summed per
 * iteration over the finding's flows they say when it started and in how
 * many iterations since it recurs.
 *
 * The onset is a change point of a Poisson rate: the split of the
 * iterations into a quiet head and a signalling tail that explains the
 * counts best, kept where its likelihood beats one rate throughout by
 * ONSET_MIN_GAIN; otherwise the signals are of the whole capture (onset 0).
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/*
 * Log-likelihood a split must gain over one rate: 3, a likelihood ratio of
 * 20; twice it, 6, is past the 5% point (5.99) of a chi-square of two
 * degrees of freedom (the tail's rate and the split's place).
 */
#define ONSET_MIN_GAIN 3.0
/*
 * The bursts must carry this share of the finding's signals for an onset:
 * the eBPF probe's bursts carry none, and bursts the ring dropped are lost.
 */
#define ONSET_MIN_COVERAGE 0.5

static double xlogx_over(double s, double n)
{
	return s > 0 && n > 0 ? s * log(s / n) : 0;
}

static unsigned burst_count(const struct ct_burst *b, enum anom_burst_field field)
{
	switch (field) {
	case ANOM_BURST_LOSS:
		return b->loss;
	case ANOM_BURST_MARKS:
		return b->marks;
	default:
		return b->packets;
	}
}

int anom_burst_series(const struct anom_ctx *c, const double *flow_weight,
		      enum anom_burst_field field, double *per_iter, double *cut)
{
	*cut = 0;
	for (size_t i = 0; i < c->n_iter; i++)
		per_iter[i] = 0;
	if (!c->per || !c->n_iter)
		return -ENOENT;
	for (size_t f = 0; f < c->set->count && f < c->per->n_flows; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];

		if (!flow_weight[f])
			continue;
		for (size_t b = 0; b < fp->n_bursts; b++) {
			unsigned n = burst_count(&fp->bursts[b], field);
			long it;

			if (!n)
				continue;
			it = anom_iteration(c, fp->bursts[b].start);
			if (it < 0 || (size_t)it >= c->n_iter)
				continue;
			per_iter[it] += flow_weight[f] * n;
			if (field != ANOM_BURST_PACKETS && n == UINT8_MAX)
				*cut += flow_weight[f] * n;
		}
	}
	return 0;
}

long anom_change_point(const double *x, size_t n)
{
	double total = 0, head = 0, one, best = -INFINITY;
	long at = 0;

	for (size_t i = 0; i < n; i++)
		total += x[i];
	if (total <= 0)
		return -1;
	one = xlogx_over(total, (double)n);
	for (size_t k = 1; k < n; k++) {
		double ll;

		head += x[k - 1];
		ll = xlogx_over(head, (double)k) + xlogx_over(total - head, (double)(n - k));
		/* a rise only: the tail signals more per iteration than the head */
		if ((total - head) / (double)(n - k) > head / (double)k && ll > best) {
			best = ll;
			at = (long)k;
		}
	}
	return best - one >= ONSET_MIN_GAIN ? at : 0;
}

int anom_onset_of_series(const struct anom_ctx *c, struct ct_anomaly *an, const double *x,
			 double cut, double finding_total)
{
	double seen_total = 0;
	size_t seen = 0;
	long k;

	for (size_t i = 0; i < c->n_iter; i++)
		seen_total += x[i];
	/* saturated counts are cut, not missing: their bursts still tell when */
	if (!c->n_iter || (seen_total < ONSET_MIN_COVERAGE * finding_total &&
			   cut < ONSET_MIN_COVERAGE * seen_total))
		return 0; /* the whole capture, as the totals say */
	k = anom_change_point(x, c->n_iter);
	if (k < 0)
		return 0;
	for (size_t i = (size_t)k; i < c->n_iter; i++) {
		if (x[i] <= 0)
			continue;
		if (!seen && !an->iters) {
			an->iters = malloc((c->n_iter - (size_t)k) * sizeof(*an->iters));
			if (!an->iters)
				return -ENOMEM;
		}
		an->iters[seen++] = (struct ct_anomaly_iter){(uint32_t)i, x[i]};
	}
	an->onset = k;
	an->onset_ns = c->bounds[k];
	an->seen = (unsigned)seen;
	an->of = (unsigned)(c->n_iter - (size_t)k);
	return 0;
}
