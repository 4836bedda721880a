// SPDX-License-Identifier: MIT
/* Period estimation from on-off bursts (see period.h for the method). */
#include <commtap/burst_sort.h>
#include <commtap/log.h>
#include <commtap/period.h>

#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define SERIES_BINS	    65536 /* bins of the byte series */
#define HARMONICS	    5	  /* multiples of a lag scored, at most */
#define PEAK_MIN	    0.1	  /* autocorrelation below this is not a candidate */
#define NEAR_BEST	    0.7	  /* candidates scoring this close to the best are strong */
#define HARMONIC_MIN	    0.25  /* a lag repeating this clearly makes its multiples harmonics */
#define JITTER_SHARE	    0.06  /* iteration-length jitter the smoothing covers */
#define SIDE_PEAK_SHARE	    0.15  /* a weaker peak this close to a stronger one is its side peak */
#define MAX_CANDIDATES	    512
#define CHAIN_TOLERANCE	    0.15  /* an anchor may arrive this fraction of a period early/late */
#define MAX_SKIPPED	    3	  /* iterations without traffic bridged by the anchor chain */
#define MAX_DIVISOR	    12	  /* a lag too long may be this many periods, at most */
#define SPAN_MIN_ITERATIONS 4	  /* the span estimate needs this many anchors */
#define SPAN_STEADY	    0.016 /* mean deviation of length-to-offset ratios it allows */
#define SPAN_WHOLE	    0.05  /* the last iteration's bytes within this share of the median */

static int burst_cmp(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Bytes per bin, each burst spread evenly over the bins it covers. */
static void bin_bursts(const struct ct_burst *b, size_t n, uint64_t t0, double bin_ns, double *x,
		       size_t bins)
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

/* Unbiased autocovariance of x (length n) into acf[0..n-1]. */
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
		acf[i] = in[i] / (double)(n - i);
	fftw_destroy_plan(fwd);
	fftw_destroy_plan(inv);
	fftw_free(in);
	fftw_free(spec);
	return 0;
}

/*
 * The autocovariance at every lag -(n-1)..(n-1) with two prefix sums, so
 * that a triangle-weighted sum around any lag costs O(1). Convolving the
 * autocovariance with a triangle of half-width w is the autocovariance of
 * the series smoothed by a box of width w: the iterations' jitter is
 * absorbed when w is a few percent of the lag.
 */
struct covariance {
	size_t n;
	double *p0, *p1; /* prefix sums of A[k] and k*A[k], k = lag + n - 1 */
};

static int covariance_init(struct covariance *c, const double *acov, size_t n)
{
	size_t m = 2 * n - 1;

	c->n = n;
	c->p0 = malloc((m + 1) * sizeof(double));
	c->p1 = malloc((m + 1) * sizeof(double));
	if (!c->p0 || !c->p1)
		return -ENOMEM;
	c->p0[0] = c->p1[0] = 0;
	for (size_t k = 0; k < m; k++) {
		long lag = (long)k - (long)(n - 1);
		double a = acov[lag < 0 ? -lag : lag];

		c->p0[k + 1] = c->p0[k] + a;
		c->p1[k + 1] = c->p1[k] + (double)k * a;
	}
	return 0;
}

static void covariance_free(struct covariance *c)
{
	free(c->p0);
	free(c->p1);
}

/* sum of (w + 1 - |k - center|) A[k] over |k - center| <= w, k inside the array */
static double triangle_sum(const struct covariance *c, long center, long w)
{
	long m = 2 * (long)c->n - 1, lo = center - w, hi = center + w;
	double left, right;

	if (lo < 0)
		lo = 0;
	if (hi > m - 1)
		hi = m - 1;
	if (center < lo || center > hi)
		return 0;
	/* k in [lo, center]: weight (w + 1 - center) + k */
	left = (double)(w + 1 - center) * (c->p0[center + 1] - c->p0[lo]) +
	       (c->p1[center + 1] - c->p1[lo]);
	/* k in (center, hi]: weight (w + 1 + center) - k */
	right = (double)(w + 1 + center) * (c->p0[hi + 1] - c->p0[center + 1]) -
		(c->p1[hi + 1] - c->p1[center + 1]);
	return left + right;
}

/* Autocorrelation at a lag of the series smoothed with half-width w. */
static double smoothed(const struct covariance *c, double lag, double w)
{
	long zero = (long)c->n - 1, wi = (long)w;
	double norm = triangle_sum(c, zero, wi);

	if (lag >= (double)c->n - 1 || norm <= 0)
		return 0;
	return triangle_sum(c, zero + (long)llround(lag), wi) / norm;
}

/* Smoothing half-width at a lag: the jitter an iteration may have. */
static double jitter_width(double lag)
{
	double w = JITTER_SHARE * lag;

	return w < 1 ? 1 : w;
}

/*
 * The smoothed autocorrelation at a lag's first multiples, averaged: the
 * iteration's multiples all meet a repetition of the whole pattern, a
 * nested rhythm's (micro-batches) soon fall between iterations.
 */
static double harmonic_score(const struct covariance *c, size_t n, double lag)
{
	double sum = 0;
	unsigned used = 0;

	for (unsigned k = 1; k <= HARMONICS && (k == 1 || k * lag <= (double)n / 2); k++) {
		sum += smoothed(c, k * lag, jitter_width(lag) * sqrt((double)k));
		used++;
	}
	return used ? sum / used : 0;
}

struct candidate {
	double lag;
	double score;
	int harmonic; /* 1: a multiple of a shorter lag; 2: a side peak of a stronger one */
};

/*
 * A peak of the single-lag curve is where adjacent iterations line up best,
 * which the pattern inside them can pull a few percent off the mean. The
 * lag whose first multiples line up best (searched within the jitter width)
 * is the better estimate: the multiples average many pairs of iterations.
 */
static struct candidate comb_refine(const struct covariance *c, size_t n, double lag)
{
	double w = jitter_width(lag), step = w / 64, best_lag = lag;
	double best = harmonic_score(c, n, lag);

	for (double l = lag - w; l <= lag + w; l += step) {
		double s = harmonic_score(c, n, l);

		if (l >= 1 && s > best) {
			best = s;
			best_lag = l;
		}
	}
	return (struct candidate){best_lag, best, 0};
}

/*
 * Whether a lag repeats at its multiples up to k: at the lag itself and at
 * three quarters of the multiples (jitter and noise blur a few). An
 * iteration's multiples meet the whole pattern again; a nested rhythm's
 * (micro-batches) mostly fall between iterations, so it cannot claim the
 * iteration as its multiple.
 */
static int comb_holds(const struct covariance *c, double lag, unsigned k)
{
	unsigned held = 0;

	for (unsigned m = 1; m <= k; m++) {
		int holds =
			smoothed(c, m * lag, jitter_width(lag) * sqrt((double)m)) >= HARMONIC_MIN;

		if (m == 1 && !holds)
			return 0;
		held += (unsigned)holds;
	}
	return 4 * held >= 3 * k;
}

/*
 * The iteration's lag (in bins), or 0. Candidates are the peaks of the
 * smoothed autocorrelation, each scored by its first multiples.
 */
static double pick_lag(const double *acf, size_t n, size_t min_lag, double *score)
{
	/*
	 * Lags up to three quarters of the series: with three iterations the
	 * traffic may span little more than two periods. The anchors must still
	 * show three iterations.
	 */
	size_t max_lag = n * 3 / 4, nc = 0;
	double *curve = NULL, best = 0, best_lag = 0;
	struct candidate *cand = NULL;
	struct covariance cov = {0};

	*score = 0;
	curve = malloc(n * sizeof(double));
	cand = malloc(MAX_CANDIDATES * sizeof(*cand));
	if (!curve || !cand || covariance_init(&cov, acf, n))
		goto out;
	for (size_t l = min_lag; l < max_lag; l++)
		curve[l] = smoothed(&cov, (double)l, jitter_width((double)l));
	/* skip the lobe around lag 0 (a burst resembles itself): up to its first minimum */
	while (min_lag + 1 < max_lag && curve[min_lag + 1] <= curve[min_lag])
		min_lag++;
	for (size_t l = min_lag; l < max_lag && nc < MAX_CANDIDATES; l++) {
		size_t w = (size_t)jitter_width((double)l), lo = l > w ? l - w : min_lag,
		       hi = l + w;
		int peak = curve[l] >= PEAK_MIN && hi < max_lag; /* not at the edge */

		/* a peak: the highest point within its own smoothing width */
		for (size_t j = lo < min_lag ? min_lag : lo; peak && j <= hi && j < max_lag; j++)
			if (curve[j] > curve[l] || (curve[j] == curve[l] && j < l))
				peak = 0;
		if (peak)
			cand[nc++] = comb_refine(&cov, n, (double)l);
	}
	/*
	 * A candidate near a multiple of a shorter candidate that clearly
	 * repeats is its harmonic. (Longer lags score higher, being smoothed
	 * wider, so strengths are not compared.)
	 */
	for (size_t i = 0; i < nc; i++) {
		for (size_t j = 0; j < i && !cand[i].harmonic; j++) {
			double k = round(cand[i].lag / cand[j].lag);

			cand[i].harmonic = k >= 2 && !cand[j].harmonic &&
					   cand[j].score >= HARMONIC_MIN &&
					   fabs(cand[i].lag - k * cand[j].lag) <
						   jitter_width(cand[j].lag) * sqrt(k) &&
					   comb_holds(&cov, cand[j].lag, (unsigned)k);
		}
	}
	/*
	 * Near the iteration's lag the autocorrelation repeats its shape around
	 * lag 0: side peaks a nested rhythm's step away (one DDP bucket more or
	 * less). A weaker peak that close to a stronger one is such a side peak.
	 */
	for (size_t i = 0; i < nc; i++) {
		for (size_t j = 0; j < nc && !cand[i].harmonic; j++)
			if (j != i && !cand[j].harmonic && cand[j].score > cand[i].score &&
			    fabs(cand[i].lag - cand[j].lag) <
				    SIDE_PEAK_SHARE * fmax(cand[i].lag, cand[j].lag))
				cand[i].harmonic = 2;
		if (!cand[i].harmonic && cand[i].score > best)
			best = cand[i].score;
	}
	/*
	 * Of the rest, the longest strong one is the iteration: a nested rhythm
	 * (micro-batches, buckets) repeats inside it, at a shorter lag.
	 */
	for (size_t i = 0; i < nc; i++) {
		ct_log(CT_LOG_DEBUG, "candidate lag %.1f score %.3f%s\n", cand[i].lag,
		       cand[i].score,
		       cand[i].harmonic == 1 ? " (harmonic)"
		       : cand[i].harmonic    ? " (side peak)"
					     : "");
		if (!cand[i].harmonic && cand[i].score >= NEAR_BEST * best) {
			best_lag = cand[i].lag;
			*score = cand[i].score;
		}
	}
out:
	covariance_free(&cov);
	free(curve);
	free(cand);
	return best_lag;
}

/*
 * The anchors' steps, each against the period: how steady the rhythm is, as
 * a fraction of the period. (The anchors' span alone is no better a period:
 * it misses the last iteration's length; span_period() adds it.)
 */
static double anchor_cv(const struct ct_burst *b, const size_t *idx, const long *num, size_t len,
			double period)
{
	double var = 0;

	for (size_t i = 1; i < len; i++) {
		double k = (double)(num[i] - num[i - 1]);
		double d = (double)(b[idx[i]].start - b[idx[i - 1]].start) / k - period;

		var += d * d;
	}
	return len > 1 ? sqrt(var / (double)(len - 1)) / period : 1;
}

/*
 * A lag that divides lag and repeats clearly, or 0. With only a few
 * iterations in the capture, the one pair of iterations two apart can line
 * up better than the jittered neighbours; over many, the autocorrelation
 * smoothed wider at long lags can favour a multiple whose shorter divisors
 * the harmonic test missed (the first peak sits a few percent off the mean
 * period, and its multiples drift further). The shortest lag / k whose
 * first multiples score at least HARMONIC_MIN, and every lag / d for d
 * dividing k as well (a true period's multiples all repeat; a nested
 * rhythm's rarely do), is taken.
 */
static double divisor_lag(const double *acf, size_t n, double lag, size_t min_lag, double *score)
{
	double lags[MAX_DIVISOR + 1] = {0}, scores[MAX_DIVISOR + 1] = {0}, best = 0;
	struct covariance cov = {0};

	if (covariance_init(&cov, acf, n))
		goto out;
	for (unsigned k = 2; k <= MAX_DIVISOR && lag / k >= (double)min_lag; k++) {
		struct candidate c = comb_refine(&cov, n, lag / k);

		lags[k] = c.lag;
		scores[k] = c.score;
	}
	for (unsigned k = MAX_DIVISOR; k >= 2 && !best; k--) {
		int holds = scores[k] >= HARMONIC_MIN;

		for (unsigned d = 2; holds && d < k; d++)
			if (k % d == 0 && scores[d] < HARMONIC_MIN)
				holds = 0;
		if (holds) {
			best = lags[k];
			*score = scores[k];
		}
	}
out:
	covariance_free(&cov);
	return best;
}

/* The median of x[0..n) (reorders x; n > 0). */
static double median_of(double *x, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && x[j - 1] > x[j]; j--) {
			double t = x[j];

			x[j] = x[j - 1];
			x[j - 1] = t;
		}
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/*
 * The last anchor may be the tail of the last iteration (its gradients'
 * all-reduce after the longest idle gap), not a new one: an anchor after
 * which the capture holds less than a quarter of an iteration's usual bytes
 * starts no iteration. Returns the chain's length without such an anchor.
 */
static size_t trim_tail(const struct ct_burst *b, size_t n, const size_t *idx, size_t len)
{
	double *bytes, tail = 0, median;
	size_t k = len - 1;

	if (len <= CT_PERIOD_MIN_ITERATIONS)
		return len;
	bytes = calloc(len, sizeof(*bytes));
	if (!bytes)
		return len;
	for (size_t i = 0; i + 1 < len; i++)
		for (size_t j = idx[i]; j < idx[i + 1]; j++)
			bytes[i] += (double)b[j].bytes;
	for (size_t j = idx[k]; j < n; j++)
		tail += (double)b[j].bytes;
	median = median_of(bytes, k); /* of the whole iterations */
	free(bytes);
	return tail < 0.25 * median ? len - 1 : len;
}

/*
 * The mean period, in bins. Around each multiple k of the lag, pairs of
 * iterations k apart meet: the centroid of the positive autocovariance
 * there, over k, averages their lengths. Multiples from a quarter to three
 * quarters of the series are averaged: short ones are pulled by the pattern
 * inside an iteration, long ones rest on few pairs, and each weighs the
 * middle iterations most in its own way.
 */
static double centroid_at(const double *acov, size_t n, double lag, double k)
{
	double w = jitter_width(lag) * sqrt(k), mass = 0, moment = 0;
	double lo = fmax(1, k * lag - w), hi = fmin((double)(n - 1), k * lag + w);

	for (size_t j = (size_t)ceil(lo); (double)j <= hi; j++) {
		if (acov[j] <= 0)
			continue;
		mass += acov[j];
		moment += (double)j * acov[j];
	}
	return mass > 0 ? moment / mass / k : 0;
}

static double refine_lag(const double *acov, size_t n, double lag)
{
	double k_lo = fmax(1, floor((double)n / 4 / lag));
	double k_hi = fmax(1, floor((double)n * 3 / 4 / lag)), sum = 0;
	unsigned used = 0;

	for (double k = k_lo; k <= k_hi; k++) {
		double c = centroid_at(acov, n, lag, k);

		if (c > 0) {
			sum += c;
			used++;
		}
	}
	return used ? sum / used : lag;
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
	double *window_max, thr, best_dev = 0;
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
			double best_gap = -1;
			long next_k = 0, want = 0;

			/*
			 * The next iteration's boundary: within the tolerance of the
			 * nearest iteration that has a candidate, the burst after the
			 * longest idle gap (the same kind of burst every time).
			 */
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
				if (want && (long)steps > want)
					break; /* a candidate in a nearer iteration was found */
				want = (long)steps;
				/* the longest gap, the nearer the expected time the better */
				double fit =
					gap[i] *
					(1 -
					 err * err / (CHAIN_TOLERANCE * CHAIN_TOLERANCE * steps));

				if (fit > best_gap) {
					best_gap = fit;
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
		/* the longest chain; of chains as long, the steadiest */
		double dev = 0;

		for (size_t i = 1; i < len; i++) {
			double step = (double)(b[idx[i]].start - b[idx[i - 1]].start) /
				      (double)(num[i] - num[i - 1]);

			dev += (step - period) * (step - period);
		}
		if (len > best_len || (len == best_len && dev < best_dev)) {
			best_dev = dev;
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

/*
 * The mean period from the iteration boundaries, in ns, or 0 when they do
 * not tell it well. The anchors span every iteration but the last, whose
 * length only its own traffic shows: an iteration's byte-weighted burst
 * start, measured from its anchor, moves with its length (a slower
 * iteration is slower throughout), so the last one's offset times the
 * whole iterations' median ratio of length to offset is its length. Used
 * only when that ratio is steady (the bursts keep their places in the
 * iteration, as in DDP and all-to-all; a pipeline's shift with the other
 * stages), the last iteration is whole (its bytes near the median: an
 * anchor that is not the iteration's first burst leaves the last window
 * short), and no iteration was bridged.
 */
static double span_period(const struct ct_burst *b, size_t n, const size_t *idx, const long *num,
			  size_t len)
{
	double *bytes = NULL, *offset = NULL, *ratio = NULL, median_bytes, median_ratio;
	double last_bytes, deviation = 0, anchors_ns, period = 0;

	if (len < SPAN_MIN_ITERATIONS || num[len - 1] != (long)len - 1)
		return 0;
	bytes = calloc(len, sizeof(*bytes));
	offset = calloc(len, sizeof(*offset));
	ratio = calloc(len, sizeof(*ratio));
	if (!bytes || !offset || !ratio)
		goto out;
	for (size_t i = 0; i < len; i++) {
		size_t end = i + 1 < len ? idx[i + 1] : n;

		for (size_t j = idx[i]; j < end; j++) {
			bytes[i] += (double)b[j].bytes;
			offset[i] += (double)b[j].bytes * (double)(b[j].start - b[idx[i]].start);
		}
		if (bytes[i] <= 0 || offset[i] <= 0)
			goto out; /* a lone burst: no offset to scale */
		offset[i] /= bytes[i];
	}
	for (size_t i = 0; i + 1 < len; i++)
		ratio[i] = (double)(b[idx[i + 1]].start - b[idx[i]].start) / offset[i];
	last_bytes = bytes[len - 1];
	median_bytes = median_of(bytes, len - 1);
	median_ratio = median_of(ratio, len - 1); /* ratio[] is sorted now */
	for (size_t i = 0; i + 1 < len; i++)
		deviation += fabs(ratio[i] / median_ratio - 1);
	deviation /= (double)(len - 1);
	anchors_ns = (double)(b[idx[len - 1]].start - b[idx[0]].start);
	ct_log(CT_LOG_DEBUG,
	       "span: last iteration's bytes %+.3f of the median, "
	       "ratio deviation %.4f\n",
	       last_bytes / median_bytes - 1, deviation);
	if (deviation <= SPAN_STEADY &&
	    fabs(last_bytes - median_bytes) <= SPAN_WHOLE * median_bytes)
		period = (anchors_ns + median_ratio * offset[len - 1]) / (double)len;
out:
	free(bytes);
	free(offset);
	free(ratio);
	return period;
}

int ct_period_estimate(struct ct_burst *bursts, size_t n, double min_period_s,
		       struct ct_period *out)
{
	double *x = NULL, *acf = NULL, *gap = NULL, bin_ns, score, period, lag;
	size_t *idx = NULL, len, min_lag;
	long *num = NULL;
	uint64_t t0, t1 = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (n < CT_PERIOD_MIN_ITERATIONS) {
		out->reason = "not periodic: fewer bursts than three iterations need";
		return 0;
	}
	if (ct_bursts_sort_by_start(bursts, n))
		qsort(bursts, n, sizeof(*bursts), burst_cmp); /* no memory for the radix sort */
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
	if (lag <= 0) {
		out->reason = "not periodic: no repeating pattern in the byte series";
		goto out;
	}
	period = refine_lag(acf, SERIES_BINS, lag) * bin_ns;
	out->acf_peak = score;

	/* iteration boundaries: anchors one period apart */
	preceding_gaps(bursts, n, gap);
	len = anchor_chain(bursts, n, gap, period, idx, num);
	len = trim_tail(bursts, n, idx, len);
	/* a lag too long for three iterations' anchors may be a multiple of the period */
	if (len < CT_PERIOD_MIN_ITERATIONS) {
		/* the lag may be a multiple of the period */
		double shorter = divisor_lag(acf, SERIES_BINS, lag, min_lag, &score);

		if (shorter > 0) {
			period = refine_lag(acf, SERIES_BINS, shorter) * bin_ns;
			len = anchor_chain(bursts, n, gap, period, idx, num);
			len = trim_tail(bursts, n, idx, len);
			out->acf_peak = score;
		}
	}
	if (len < CT_PERIOD_MIN_ITERATIONS) {
		out->reason = "not periodic: fewer than three iterations seen";
		goto out;
	}
	{
		double cv = anchor_cv(bursts, idx, num, len, period);
		double span = span_period(bursts, n, idx, num, len);

		if (span > 0)
			period = span;
		out->period_s = period / 1e9;
		/* a harmonic score of 0.5 is already a clear repetition */
		out->confidence = fmin(1, score / 0.5) * fmax(0, 1 - 4 * cv);
		ct_log(CT_LOG_DEBUG, "period %.6f s score %.3f cv %.4f anchors %zu\n",
		       out->period_s, score, cv, len);
		for (size_t i = 0; ct_log_enabled(CT_LOG_DEBUG) && i < len; i++)
			ct_log(CT_LOG_DEBUG,
			       "anchor %ld: at %.6f s after a gap of %.6f s, flow %u\n", num[i],
			       (double)(bursts[idx[i]].start - t0) / 1e9, gap[idx[i]] / 1e9,
			       bursts[idx[i]].flow);
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
			return (double)(t - p->starts[i]) /
			       (double)(p->starts[i + 1] - p->starts[i]);
	double into = (double)(t - p->starts[p->iterations - 1]) / (p->period_s * 1e9);

	return into < 1 ? into : -1;
}
