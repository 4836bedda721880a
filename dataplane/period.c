// SPDX-License-Identifier: MIT
/* Period estimation from on-off bursts (see period.h for the method). */
#include <commtap/period.h>

#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define SERIES_BINS	 65536 /* bins of the byte series */
#define HARMONICS	 5     /* multiples of a lag scored */
#define PEAK_MIN	 0.1   /* autocorrelation below this is not a candidate */
#define NEAR_BEST	 0.85  /* the smallest lag scoring this close to the best wins */
#define CHAIN_TOLERANCE	 0.15  /* an anchor may arrive this fraction of a period early/late */
#define MAX_SKIPPED	 3     /* iterations without traffic bridged by the anchor chain */

static int burst_cmp(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Bytes per bin, each burst spread evenly over the bins it covers. */
static void bin_bursts(const struct ct_burst *b, size_t n, uint64_t t0, double bin_ns,
		       double *x, size_t bins)
{
	for (size_t i = 0; i < n; i++) {
		size_t first = (size_t)((double)(b[i].start - t0) / bin_ns);
		size_t last = (size_t)((double)(b[i].end - t0) / bin_ns);

		if (first >= bins)
			first = bins - 1;
		if (last >= bins)
			last = bins - 1;
		double share = (double)b[i].bytes / (double)(last - first + 1);

		for (size_t k = first; k <= last; k++)
			x[k] += share;
	}
}

/* Normalised, unbiased autocorrelation of x (length n) into acf[0..n-1]. */
static int autocorrelation(double *x, size_t n, double *acf)
{
	size_t m = 2 * n;
	double *in = fftw_malloc(sizeof(double) * m), mean = 0;
	fftw_complex *spec = fftw_malloc(sizeof(fftw_complex) * (m / 2 + 1));
	fftw_plan fwd, inv;

	if (!in || !spec) {
		fftw_free(in);
		fftw_free(spec);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		mean += x[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		in[i] = x[i] - mean;
	memset(in + n, 0, sizeof(double) * n); /* zero padding: linear, not circular */
	fwd = fftw_plan_dft_r2c_1d((int)m, in, spec, FFTW_ESTIMATE);
	inv = fftw_plan_dft_c2r_1d((int)m, spec, in, FFTW_ESTIMATE);
	fftw_execute(fwd);
	for (size_t k = 0; k <= m / 2; k++) {
		spec[k][0] = spec[k][0] * spec[k][0] + spec[k][1] * spec[k][1];
		spec[k][1] = 0;
	}
	fftw_execute(inv);
	for (size_t i = 0; i < n; i++)
		acf[i] = in[0] > 0 ? in[i] / in[0] * (double)n / (double)(n - i) : 0;
	fftw_destroy_plan(fwd);
	fftw_destroy_plan(inv);
	fftw_free(in);
	fftw_free(spec);
	return 0;
}

/* The best autocorrelation near each of a lag's first multiples, averaged. */
static double harmonic_score(const double *acf, size_t n, size_t lag)
{
	double sum = 0;
	unsigned k, used = 0;

	for (k = 1; k <= HARMONICS && k * lag < n * 2 / 3; k++) {
		size_t c = k * lag, w = (size_t)(0.05 * (double)lag * sqrt((double)k)) + 1;
		double best = -1;

		for (size_t j = c > w ? c - w : 1; j <= c + w && j < n; j++)
			if (acf[j] > best)
				best = acf[j];
		sum += best;
		used++;
	}
	return used ? sum / used : 0;
}

/* The lag (in bins) of the iteration, or 0; its score in *score. */
static size_t pick_lag(const double *acf, size_t n, size_t min_lag, double *score)
{
	/* two repetitions in the series; the anchors must still show three iterations */
	size_t max_lag = n / 2, best_lag = 0;
	double best = 0;

	*score = 0;
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t l = min_lag; l < max_lag; l++) {
			if (acf[l] < PEAK_MIN || acf[l] < acf[l - 1] || acf[l] < acf[l + 1])
				continue;
			double s = harmonic_score(acf, n, l);

			if (!pass) {
				if (s > best)
					best = s;
			} else if (s >= NEAR_BEST * best) {
				/* the smallest lag close to the best: not a multiple of it */
				*score = s;
				return l;
			}
		}
		if (best <= 0)
			return best_lag;
	}
	return best_lag;
}

/* Idle time in the aggregate before each burst (bursts sorted by start). */
static void preceding_gaps(const struct ct_burst *b, size_t n, double *gap)
{
	uint64_t busy_until = b[0].end;

	gap[0] = INFINITY;
	for (size_t i = 1; i < n; i++) {
		gap[i] = b[i].start > busy_until ? (double)(b[i].start - busy_until) : 0;
		if (b[i].end > busy_until)
			busy_until = b[i].end;
	}
}

/*
 * Anchors: bursts after a long idle gap, chained one period apart (missing
 * iterations bridged). Writes the longest chain's burst indices and
 * iteration numbers; returns its length.
 */
static size_t anchor_chain(const struct ct_burst *b, size_t n, const double *gap, double period,
			   size_t *best_idx, long *best_num)
{
	double *window_max, thr;
	size_t windows = (size_t)((double)(b[n - 1].start - b[0].start) / period) + 1;
	size_t best_len = 0, *idx = malloc(n * sizeof(*idx));
	long *num = malloc(n * sizeof(*num));

	window_max = calloc(windows, sizeof(*window_max));
	if (!idx || !num || !window_max)
		goto out;
	for (size_t i = 1; i < n; i++) {
		size_t w = (size_t)((double)(b[i].start - b[0].start) / period);

		if (w < windows && gap[i] > window_max[w])
			window_max[w] = gap[i];
	}
	/* threshold: half the median of the windows' largest gaps */
	for (size_t i = 1; i < windows; i++)
		for (size_t j = i; j > 0 && window_max[j - 1] > window_max[j]; j--) {
			double t = window_max[j];

			window_max[j] = window_max[j - 1];
			window_max[j - 1] = t;
		}
	thr = 0.5 * window_max[windows / 2];

	/* try every candidate in the first period and a half as the chain's start */
	for (size_t s = 0; s < n && (double)(b[s].start - b[0].start) < 1.5 * period; s++) {
		size_t len = 0, cur = s;
		long k = 0;

		if (gap[s] < thr)
			continue;
		idx[len] = s;
		num[len++] = 0;
		for (;;) {
			size_t next = SIZE_MAX;
			double best_err = INFINITY;
			long next_k = 0;

			for (size_t i = cur + 1; i < n; i++) {
				double dt = (double)(b[i].start - b[cur].start);

				if (dt > (MAX_SKIPPED + 1 + CHAIN_TOLERANCE) * period)
					break;
				if (gap[i] < thr)
					continue;
				double steps = round(dt / period);
				double err = fabs(dt - steps * period) / period;

				/* drift grows with the iterations bridged */
				if (steps < 1 || err > CHAIN_TOLERANCE * sqrt(steps))
					continue;
				/* prefer the nearest iteration, then the best-fitting burst */
				err += steps - 1;
				if (err < best_err) {
					best_err = err;
					next = i;
					next_k = (long)steps;
				}
			}
			if (next == SIZE_MAX)
				break;
			k += next_k;
			idx[len] = next;
			num[len++] = k;
			cur = next;
		}
		if (len > best_len) {
			best_len = len;
			memcpy(best_idx, idx, len * sizeof(*idx));
			memcpy(best_num, num, len * sizeof(*num));
		}
	}
out:
	free(idx);
	free(num);
	free(window_max);
	return best_len;
}

int ct_period_estimate(struct ct_burst *bursts, size_t n, double min_period_s,
		       struct ct_period *out)
{
	double *x = NULL, *acf = NULL, *gap = NULL, bin_ns, score, period;
	size_t *idx = NULL, len, lag, min_lag;
	long *num = NULL;
	uint64_t t0, t1 = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (n < CT_PERIOD_MIN_ITERATIONS) {
		out->reason = "not periodic: fewer bursts than three iterations need";
		return 0;
	}
	qsort(bursts, n, sizeof(*bursts), burst_cmp);
	t0 = bursts[0].start;
	for (size_t i = 0; i < n; i++)
		if (bursts[i].end > t1)
			t1 = bursts[i].end;
	if (t1 <= t0) {
		out->reason = "not periodic: all bursts at one instant";
		return 0;
	}
	bin_ns = (double)(t1 - t0 + 1) / SERIES_BINS;
	x = calloc(SERIES_BINS, sizeof(*x));
	acf = calloc(SERIES_BINS, sizeof(*acf));
	gap = calloc(n, sizeof(*gap));
	idx = calloc(n, sizeof(*idx));
	num = calloc(n, sizeof(*num));
	if (!x || !acf || !gap || !idx || !num) {
		err = -ENOMEM;
		goto out;
	}
	bin_bursts(bursts, n, t0, bin_ns, x, SERIES_BINS);
	err = autocorrelation(x, SERIES_BINS, acf);
	if (err)
		goto out;
	min_lag = (size_t)(min_period_s * 1e9 / bin_ns);
	if (min_lag < 4)
		min_lag = 4;
	lag = pick_lag(acf, SERIES_BINS, min_lag, &score);
	if (!lag) {
		out->reason = "not periodic: no repeating pattern in the byte series";
		goto out;
	}
	period = (double)lag * bin_ns;
	out->acf_peak = acf[lag];

	/* refine on the bursts: anchors one period apart, least-squares slope */
	preceding_gaps(bursts, n, gap);
	len = anchor_chain(bursts, n, gap, period, idx, num);
	if (len < CT_PERIOD_MIN_ITERATIONS) {
		out->reason = "not periodic: fewer than three iterations seen";
		goto out;
	}
	{
		/*
		 * Iteration lengths vary independently, so the starts are a random
		 * walk: the mean period is the span between the first and last
		 * anchor over the iterations between them. The spread of the
		 * single steps measures how steady the rhythm is.
		 */
		double span = (double)(bursts[idx[len - 1]].start - bursts[idx[0]].start);
		double steps = (double)(num[len - 1] - num[0]), var = 0;

		period = span / steps;
		for (size_t i = 1; i < len; i++) {
			double k = (double)(num[i] - num[i - 1]);
			double d = (double)(bursts[idx[i]].start - bursts[idx[i - 1]].start) / k -
				   period;

			var += d * d;
		}
		double cv = sqrt(var / (double)(len - 1)) / period;

		out->period_s = period / 1e9;
		/* a harmonic score of 0.5 is already a clear repetition */
		out->confidence = fmin(1, score / 0.5) * fmax(0, 1 - 4 * cv);
		if (getenv("COMMTAP_PERIOD_DEBUG"))
			fprintf(stderr, "period %.6f s score %.3f cv %.4f anchors %zu\n",
				out->period_s, score, cv, len);
	}
	out->iterations = len;
	out->starts = malloc(len * sizeof(*out->starts));
	if (!out->starts) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < len; i++)
		out->starts[i] = bursts[idx[i]].start;
	if (out->confidence < CT_PERIOD_MIN_CONFIDENCE) {
		out->reason = "not periodic: the pattern does not repeat steadily enough";
		ct_period_free(out);
		out->iterations = 0;
		goto out;
	}
	out->periodic = 1;
	out->reason = NULL;
out:
	free(x);
	free(acf);
	free(gap);
	free(idx);
	free(num);
	return err;
}

void ct_period_free(struct ct_period *p)
{
	free(p->starts);
	p->starts = NULL;
}

long ct_period_iteration(const struct ct_period *p, uint64_t t)
{
	size_t lo = 0, hi = p->iterations;

	if (!p->iterations || t < p->starts[0])
		return -1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (p->starts[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	if (lo + 1 == p->iterations && (double)(t - p->starts[lo]) >= p->period_s * 1e9)
		return -1;
	return (long)lo;
}

double ct_period_phase(const struct ct_period *p, uint64_t t)
{
	if (!p->periodic || !p->iterations || t < p->starts[0])
		return -1;
	for (size_t i = 0; i + 1 < p->iterations; i++)
		if (t < p->starts[i + 1])
			return (double)(t - p->starts[i]) / (double)(p->starts[i + 1] - p->starts[i]);
	double into = (double)(t - p->starts[p->iterations - 1]) / (p->period_s * 1e9);

	return into < 1 ? into : -1;
}
