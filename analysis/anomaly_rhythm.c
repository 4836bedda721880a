// SPDX-License-Identifier: MIT
/*
 * Rhythm breaks: iterations much longer than the job's period, by the
 * phase that grew: its longest silence (none of the job's flows sending: a
 * stall, compute, data loading, a checkpoint) or the time its collective
 * traffic was on (communication), each against its own median and spread
 * over the iterations. An iteration that is long by its bounds alone, its
 * silence and its collective traffic as usual, is not judged a break: the
 * job's other traffic went on in its rhythm there (clean real pp4-1: 1.53 s
 * between two anchors against a median of 522 ms, read at 0.83; the ranks'
 * own clocks say 1.00 s, and its longest silence was 229 ms against a
 * median of 26 ms). A job that is on the wire all through its iteration has
 * no idle edge to anchor its iterations on either (gpt-p1t8d1 at matrix
 * scale: bounds 22-64 ms apart for 50 ms iterations), while a stall is a
 * silence the wire shows whole.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A phase is a break from this share of the median iteration over its own
 * median: clean synthesized jobs with --jitter 0.05 stay within 1.1x, clean
 * real gloo runs within 1.3x outside their first iteration (docs/accuracy.md).
 */
#define RHYTHM_MIN_EXCESS 0.5
/* and this many times its own spread (1.4826 x MAD) over the median */
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

/*
 * A span of the job's traffic on, [s, e), counted in the iterations it
 * overlaps, each its own part: counted whole in the one it starts in, a
 * span that runs on through the next (a job never idle, whose traffic the
 * capture's end cuts) made an iteration of 51 ms "on" for 75 ms in a clean
 * synthesized gpt-p4t2d1 (with its period read right, as a trial of the
 * period's byte bins read it), a break of its communication at confidence 1.
 */
static void on_time(const struct anom_ctx *c, uint64_t s, uint64_t e, double *on)
{
	long it = anom_iteration(c, s);

	if (it < 0 && s < c->bounds[0])
		it = 0;
	for (; it >= 0 && (size_t)it < c->n_iter; it++) {
		uint64_t from = s > c->bounds[it] ? s : c->bounds[it];
		uint64_t to =
			(size_t)it + 1 < c->n_iter && c->bounds[it + 1] < e ? c->bounds[it + 1] : e;

		if (to > from)
			on[it] += (double)(to - from) / 1e9;
		if (to == e)
			break;
	}
}

/*
 * Per iteration, the time the job's data bursts were on (their union) and
 * the longest silence of all its flows that starts in it, s.
 */
static int comm_time(const struct anom_ctx *c, double *on, double *silence)
{
	struct ct_burst *all;
	size_t n;
	int err;

	for (size_t i = 0; i < c->n_iter; i++)
		on[i] = silence[i] = 0;
	for (int data = 1; data >= 0; data--) {
		err = anom_job_bursts(c, data, &all, &n);
		if (err)
			return err;
		for (size_t i = 0; i < n;) {
			uint64_t s = all[i].start, e = all[i].end;
			long it;

			for (i++; i < n && all[i].start <= e; i++)
				if (all[i].end > e)
					e = all[i].end;
			if (data) {
				on_time(c, s, e, on);
				continue;
			}
			it = anom_iteration(c, e);
			if (it >= 0 && i < n && (double)(all[i].start - e) / 1e9 > silence[it])
				silence[it] = (double)(all[i].start - e) / 1e9;
		}
		free(all);
	}
	return 0;
}

/* The bound a phase goes over in a break: its median + the larger of floor and its spreads. */
static double phase_bound(const double *x, size_t n, double floor, double *tmp, double *median)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = x[i];
	*median = anom_median(tmp, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = fabs(x[i] - *median);
	return *median + fmax(floor, RHYTHM_SPREADS * 1.4826 * anom_median(tmp, n));
}

int anom_rhythm(struct anom_ctx *c)
{
	size_t ni = c->n_iter, nl, seen = 0, worst = 0;
	double *len = NULL, *on = NULL, *sil = NULL, *tmp = NULL, med, med_on, med_sil;
	double on_limit, sil_limit, worst_ratio = 0;
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
	sil = malloc(ni * sizeof(*sil));
	tmp = malloc(nl * sizeof(*tmp));
	if (!len || !on || !sil || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nl; i++)
		len[i] = tmp[i] = (double)(c->bounds[i + 1] - c->bounds[i]) / 1e9;
	med = anom_median(tmp, nl);
	err = comm_time(c, on, sil);
	if (err)
		goto out;
	sil_limit = phase_bound(sil, nl, RHYTHM_MIN_EXCESS * med, tmp, &med_sil);
	on_limit = phase_bound(on, nl, RHYTHM_MIN_EXCESS * med, tmp, &med_on);
	for (size_t i = 0; i < nl; i++) {
		/* how far over its bound, in shares of the bound's excess */
		double ratio = fmax((sil[i] - med_sil) / (sil_limit - med_sil),
				    (on[i] - med_on) / (on_limit - med_on));

		if (ratio <= 1)
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
		if (ratio > worst_ratio) {
			worst = i;
			worst_ratio = ratio;
		}
		an.iters[seen++] = (struct ct_anomaly_iter){(uint32_t)i,
							    fmax(sil[i] - med_sil, on[i] - med_on)};
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
		double grew_on = on[worst] - med_on, grew_sil = sil[worst] - med_sil;

		an.seen = (unsigned)seen;
		an.of = (unsigned)(nl - (size_t)an.onset);
		an.value = fmax(grew_sil, grew_on);
		an.share = an.value / med;
		an.confidence = fmin(1, worst_ratio - 1 + 0.5);
		snprintf(an.evidence, sizeof(an.evidence),
			 "%zu of %zu whole iterations silent over %.3g ms (median %.3g) or with "
			 "collective traffic on over %.3g ms (median %.3g); the worst, iteration "
			 "%zu, %.3g ms long: %s grew, %+.3g ms silent, %+.3g ms on",
			 seen, nl, sil_limit * 1e3, med_sil * 1e3, on_limit * 1e3, med_on * 1e3,
			 worst, len[worst] * 1e3,
			 grew_on > grew_sil ? "communication" : "a silence", grew_sil * 1e3,
			 grew_on * 1e3);
		err = anom_add(c, &an);
	}
out:
	free(an.iters);
	free(len);
	free(on);
	free(sil);
	free(tmp);
	return err;
}
