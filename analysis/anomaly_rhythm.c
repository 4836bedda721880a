// SPDX-License-Identifier: MIT
/*
 * Rhythm breaks: iterations much longer than the job's period, and which
 * phase grew: the time the job's collective traffic was on (communication)
 * or the time it was off (compute, data loading, a checkpoint), each
 * against its median over the iterations.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * An iteration is a break from this much longer than the median one:
 * clean synthesized jobs with --jitter 0.05 stay within 1.1x, clean real
 * gloo runs within 1.3x outside their first iteration (docs/accuracy.md).
 */
#define RHYTHM_MIN_EXCESS 0.5
/* and this many times the iterations' own spread (1.4826 x MAD) beyond it */
#define RHYTHM_SPREADS 6.0
/*
 * A break is an exception to the rhythm: where more than this share of the
 * whole iterations is over the bound, the period does not hold the job's
 * rhythm, and nothing is said of breaks. (An interval report whose window
 * held two of a synthesized job's 50 ms iterations read a period of 1.8 ms
 * and "24 of 53 iterations" over it, at confidence 1; a real pause is one
 * iteration in 15, a synthesized one one in 11.)
 */
#define RHYTHM_MAX_BROKEN_SHARE 0.25

static int burst_start_cmp(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Per iteration, the time the job's data bursts were on (their union), s. */
static int comm_time(const struct anom_ctx *c, double *on)
{
	const struct ct_periodicity *p = c->per;
	struct ct_burst *all;
	size_t n = 0;

	for (size_t f = 0; f < p->n_flows; f++)
		if (anom_job_data_flow(c, f))
			n += p->flows[f].n_bursts;
	all = malloc((n + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	n = 0;
	for (size_t f = 0; f < p->n_flows; f++)
		if (anom_job_data_flow(c, f)) {
			memcpy(all + n, p->flows[f].bursts, p->flows[f].n_bursts * sizeof(*all));
			n += p->flows[f].n_bursts;
		}
	qsort(all, n, sizeof(*all), burst_start_cmp);
	for (size_t i = 0; i < c->n_iter; i++)
		on[i] = 0;
	for (size_t i = 0; i < n;) {
		uint64_t s = all[i].start, e = all[i].end;
		long it;

		for (i++; i < n && all[i].start <= e; i++)
			if (all[i].end > e)
				e = all[i].end;
		it = anom_iteration(c, s);
		if (it >= 0)
			on[it] += (double)(e - s) / 1e9;
	}
	free(all);
	return 0;
}

int anom_rhythm(struct anom_ctx *c)
{
	size_t ni = c->n_iter, nl, seen = 0, worst = 0;
	double *len = NULL, *on = NULL, *tmp = NULL, med, spread, med_on, med_off, limit;
	struct ct_anomaly an = {.kind = CT_ANOMALY_RHYTHM,
				.scope = CT_ANOMALY_AT_JOB,
				.priority = -1,
				.cls = -1,
				.onset = -1};
	int err = 0;

	/* the last iteration's end is not seen: only whole ones are measured */
	if (ni < 4) {
		anom_not_looked(c, CT_ANOMALY_RHYTHM, "fewer than 3 whole iterations");
		return 0;
	}
	nl = ni - 1;
	len = malloc(nl * sizeof(*len));
	on = malloc(ni * sizeof(*on));
	tmp = malloc(nl * sizeof(*tmp));
	if (!len || !on || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nl; i++)
		len[i] = tmp[i] = (double)(c->bounds[i + 1] - c->bounds[i]) / 1e9;
	med = anom_median(tmp, nl);
	for (size_t i = 0; i < nl; i++)
		tmp[i] = fabs(len[i] - med);
	spread = 1.4826 * anom_median(tmp, nl);
	limit = fmax(med * (1 + RHYTHM_MIN_EXCESS), med + RHYTHM_SPREADS * spread);
	err = comm_time(c, on);
	if (err)
		goto out;
	for (size_t i = 0; i < nl; i++)
		tmp[i] = on[i];
	med_on = anom_median(tmp, nl);
	for (size_t i = 0; i < nl; i++)
		tmp[i] = len[i] - on[i];
	med_off = anom_median(tmp, nl);
	for (size_t i = 0; i < nl; i++) {
		if (len[i] <= limit)
			continue;
		if (!an.iters) {
			an.iters = malloc(nl * sizeof(*an.iters));
			if (!an.iters) {
				err = -ENOMEM;
				goto out;
			}
			an.onset = (long)i;
			an.onset_ns = c->bounds[i];
		}
		if (len[i] > len[worst] || !seen)
			worst = i;
		an.iters[seen++] = (struct ct_anomaly_iter){(uint32_t)i, len[i] - med};
	}
	if (!seen)
		goto out;
	if ((double)seen > RHYTHM_MAX_BROKEN_SHARE * (double)nl) {
		anom_not_looked(c, CT_ANOMALY_RHYTHM,
				"more than a quarter of the iterations are over the bound: the "
				"period does not hold the job's rhythm");
		goto out;
	}
	{
		double grew_on = on[worst] - med_on, grew_off = len[worst] - on[worst] - med_off;

		an.seen = (unsigned)seen;
		an.of = (unsigned)(nl - (size_t)an.onset);
		an.value = len[worst] - med;
		an.share = an.value / med;
		an.confidence = fmin(1, an.value / (limit - med) - 1 + 0.5);
		snprintf(an.evidence, sizeof(an.evidence),
			 "%zu of %zu whole iterations last over %.3g ms (median %.3g ms); the "
			 "longest, iteration %zu, %.3g ms: %s grew most (%+.3g ms with collective "
			 "traffic on, %+.3g ms without, against their medians)",
			 seen, nl, limit * 1e3, med * 1e3, worst, len[worst] * 1e3,
			 grew_on > grew_off ? "communication" : "compute (no collective traffic)",
			 grew_on * 1e3, grew_off * 1e3);
		err = anom_add(c, &an);
	}
out:
	free(an.iters);
	free(len);
	free(on);
	free(tmp);
	return err;
}
