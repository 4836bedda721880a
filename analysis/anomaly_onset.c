// SPDX-License-Identifier: MIT
/*
 * Onsets of the findings the flow counters make (loss, congestion): the
 * counters are totals over the capture, but every burst carries the loss
 * signals and marks of its own time (struct ct_flow_burst). Summed per
 * iteration over the finding's flows they say when it started and in how
 * many iterations since it recurs.
 *
 * The onset is a change point of a Poisson rate per packet: the split of
 * the iterations into a quiet head and a signalling tail that explains the
 * counts best, each iteration weighed by the packets its flows carried,
 * kept where its likelihood beats one rate throughout by a scan's bar;
 * otherwise the finding stays of the whole capture (no onset: where the
 * rate is steady the capture does not say when it began). Per packet, not
 * per iteration: a real lossy link (1 packet in 50 dropped throughout)
 * whose ranks moved twice the bytes in the capture's second half read as
 * loss starting there, at iteration 10 of 19.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Log-likelihood a split must gain over one rate: the best of all splits is
 * a scan, so the bar is that scan's own 99th percentile under one constant
 * rate, which grows with the iterations scanned. Simulated (Poisson, 0.5 to
 * 20 signals an iteration, 1,500 draws each): 4.2-4.5 over 12 iterations,
 * 4.5-4.7 over 19, 5.4-6.1 over 50, 5.8-6.0 over 200; ONSET_GAIN_BASE +
 * ONSET_GAIN_PER_LOG x ln(iterations) follows it within 0.8. (At a flat 3,
 * the 95th percentile, a real link dropping 1 packet in 50 throughout read
 * an onset at iteration 10 of 19.)
 */
#define ONSET_GAIN_BASE	   3.3
#define ONSET_GAIN_PER_LOG 0.5
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
	case ANOM_BURST_LOSS_EVENTS:
		return b->loss > 0;
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
			if ((field == ANOM_BURST_LOSS || field == ANOM_BURST_MARKS) &&
			    n == UINT8_MAX)
				*cut += flow_weight[f] * n;
		}
	}
	return 0;
}

/*
 * The wire's iterations are anchored on the job's idle edges, which need not
 * be where the fault began: a synthesized loss from the truth's iteration 4
 * (199.4 ms) read at the wire's iteration 3, which starts at 198.0 ms. The
 * first signal in it is the onset's time.
 */
void anom_onset_at_first_signal(const struct anom_ctx *c, struct ct_anomaly *an,
				const double *flow_weight, enum anom_burst_field field)
{
	uint64_t first = UINT64_MAX;

	if (an->onset < 0)
		return;
	for (size_t f = 0; f < c->set->count && f < c->per->n_flows; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];

		for (size_t b = 0; flow_weight[f] && b < fp->n_bursts; b++)
			if (fp->bursts[b].start < first && burst_count(&fp->bursts[b], field) &&
			    anom_iteration(c, fp->bursts[b].start) == an->onset)
				first = fp->bursts[b].start;
	}
	if (first != UINT64_MAX)
		an->onset_ns = first;
}

long anom_change_point(const double *x, const double *exposure, size_t n)
{
	double total = 0, head = 0, e_total = 0, e_head = 0, one, best = -INFINITY;
	long at = 0;

	for (size_t i = 0; i < n; i++) {
		total += x[i];
		e_total += exposure ? exposure[i] : 1;
	}
	if (total <= 0 || e_total <= 0)
		return -1;
	one = xlogx_over(total, e_total);
	for (size_t k = 1; k < n; k++) {
		double ll;

		head += x[k - 1];
		e_head += exposure ? exposure[k - 1] : 1;
		if (e_head <= 0 || e_total - e_head <= 0)
			continue;
		ll = xlogx_over(head, e_head) + xlogx_over(total - head, e_total - e_head);
		/* a rise only: the tail signals more per packet (iteration) than the head */
		if ((total - head) / (e_total - e_head) > head / e_head && ll > best) {
			best = ll;
			at = (long)k;
		}
	}
	return best - one >= ONSET_GAIN_BASE + ONSET_GAIN_PER_LOG * log((double)n) ? at : 0;
}

int anom_onset_of_series(const struct anom_ctx *c, struct ct_anomaly *an, const double *x,
			 const double *events, const double *exposure, double cut,
			 double finding_total)
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
	k = anom_change_point(events ? events : x, exposure, c->n_iter);
	if (k <= 0) { /* steady: the capture does not say when it began */
		size_t len = strlen(an->evidence);

		if (!k && len < sizeof(an->evidence))
			snprintf(an->evidence + len, sizeof(an->evidence) - len,
				 "; at a steady rate through the job's iterations (no onset)");
		return 0;
	}
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
