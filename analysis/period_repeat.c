// SPDX-License-Identifier: MIT
/*
 * One flow's iterations, read where a training job's traffic is exact: in
 * its bytes, not its times. Every iteration moves the same tensors, so a
 * flow's sequence of messages repeats byte for byte while the compute
 * between them jitters (5-40% per iteration on loaded CPU ranks). Along
 * the flow's cumulative bytes, the idle time before each burst is a series
 * that repeats with the flow's bytes per iteration, whatever the jitter;
 * the iteration's boundary is where that series has its longest idle time
 * (the forward pass, the pipeline's bubble, the optimizer step).
 */
#include "period_repeat.h"

#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Bins of the byte axis. A DDP flow of 19 iterations in a 4096-bin axis has
 * about 200 bins an iteration; the real runs' bytes per iteration vary by
 * under 0.2% (retransmissions), well inside a bin.
 */
#ifndef BYTE_BINS /* overridable for the sensitivity runs (docs/accuracy.md) */
#define BYTE_BINS 4096
#endif
/*
 * A divisor's own binning (divisor_score) makes its bins at least 3/4 of
 * BYTE_BINS' (lags[0] / k is 2 bins or more, rounded): this many hold it.
 */
#define DIVISOR_BINS (BYTE_BINS * 4 / 3 + 2)

/* Unbiased autocovariance of x (length n) into acov[0..n-1], by FFT. */
static int autocovariance(const double *x, size_t n, double *acov)
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
		acov[i] = in[i] / (double)(n - i);
	fftw_destroy_plan(fwd);
	fftw_destroy_plan(inv);
	fftw_free(in);
	fftw_free(spec);
	return 0;
}

/*
 * A flow whose bytes do not repeat still has a highest autocorrelation
 * over its lags. Its bursts' waits at random give correlations of about
 * 1 / sqrt(bursts) at each lag, and over the bursts / 2 lags that can show
 * two repetitions the largest of them reaches sqrt(2 ln(bursts / 2)) times
 * that (the expected maximum of so many normal deviates). A repetition must
 * stand above that floor, and two correlations closer than sqrt(2) times it
 * are as good as equal. (Real runs: ring and DP flows score 0.33-0.76 over
 * 150-300 bursts, floor 0.18-0.23; MoE's token-routed flows 0.11-0.21 over
 * 250, floor 0.20; a DP flow over three iterations 0.55-0.64 over 20-22
 * bursts, floor 0.47; 60 bursts at random times 0.30, floor 0.34.)
 */
static double repeat_floor(size_t bursts)
{
	double n = (double)bursts;

	return n > 2 ? sqrt(2 * log(n / 2)) / sqrt(n) : 1;
}

/*
 * The bursts along the flow's bytes: where each starts (pos, bytes before
 * it) and its idle time before, on a log scale and centred (w; w[0] is
 * unknown: the capture began in it).
 */
struct idle_axis {
	const double *pos, *w;
	size_t n;
	double total;
};

/* How many bins of bin bytes hold the axis. */
static size_t axis_bins(const struct idle_axis *a, double bin)
{
	return (size_t)(a->total / bin) + 1;
}

/*
 * The idle-time series of the axis in nb bins of bin bytes into x. A burst
 * may start a bin early or late (retransmitted bytes): each is spread
 * [1 2 1] over its bin and the two beside it.
 */
static void bin_axis(const struct idle_axis *a, double bin, size_t nb, double *x)
{
	double prev = 0;

	memset(x, 0, nb * sizeof(*x));
	for (size_t i = 1; i < a->n; i++) {
		size_t k = (size_t)(a->pos[i] / bin);

		x[k < nb ? k : nb - 1] += a->w[i];
	}
	for (size_t i = 0; i < nb; i++) {
		double cur = x[i], next = i + 1 < nb ? x[i + 1] : 0;

		x[i] = prev / 4 + cur / 2 + next / 4;
		prev = cur;
	}
}

/*
 * The autocorrelation of x[0..n) at lag (the estimator of autocovariance()),
 * its mean and lag-0 sum of squares given.
 */
static double correlation_at(const double *x, size_t n, double mean, double c0, size_t lag)
{
	double c = 0;

	if (lag >= n || c0 <= 0)
		return 0;
	for (size_t i = 0; i + lag < n; i++)
		c += (x[i] - mean) * (x[i + lag] - mean);
	return c / (double)(n - lag) / (c0 / (double)n);
}

/*
 * A divisor of the best lag falls between bins: lags[0] / k is rarely
 * whole, and a series of sparse bursts correlates at the nearest whole lag
 * only with the share of its bursts that land in the same bin (a flow of
 * 3,551 bursts repeating every 1,024 bins, its iteration a third of it:
 * 0.88 at 341 bins, 0.78 at 342, where the iteration repeats byte for byte,
 * synthesized p4t2d1). Its score is read on the axis binned afresh, in
 * bins that make the divisor m whole ones: *bin_k bytes each, m returned
 * and its score in *r (the best of m - 1..m + 1, as for lags[0]).
 */
static size_t divisor_score(const struct idle_axis *a, double bin, size_t lag0, size_t k, double *x,
			    double *bin_k, double *r)
{
	size_t m = (size_t)llround((double)lag0 / (double)k), nb, best = m;
	double mean = 0, c0 = 0;

	*bin_k = bin * (double)lag0 / (double)(k * m);
	nb = axis_bins(a, *bin_k);
	bin_axis(a, *bin_k, nb, x);
	for (size_t i = 0; i < nb; i++)
		mean += x[i] / (double)nb;
	for (size_t i = 0; i < nb; i++)
		c0 += (x[i] - mean) * (x[i] - mean);
	*r = -1;
	for (size_t l = m - 1; l <= m + 1; l++) {
		double c = correlation_at(x, nb, mean, c0, l);

		if (c > *r) {
			*r = c;
			best = l;
		}
	}
	return best;
}

/* Keeps divisor l (score r, bins of bin_k bytes) among lags[1..] if it scores among the best. */
static void keep_divisor(size_t lags[CT_REPEAT_CANDIDATES], double score[CT_REPEAT_CANDIDATES],
			 double bins[CT_REPEAT_CANDIDATES], size_t l, double r, double bin_k,
			 size_t *found)
{
	for (size_t i = 1; i < CT_REPEAT_CANDIDATES; i++)
		if (!lags[i] || r > score[i]) {
			memmove(lags + i + 1, lags + i,
				(CT_REPEAT_CANDIDATES - i - 1) * sizeof(*lags));
			memmove(score + i + 1, score + i,
				(CT_REPEAT_CANDIDATES - i - 1) * sizeof(*score));
			memmove(bins + i + 1, bins + i,
				(CT_REPEAT_CANDIDATES - i - 1) * sizeof(*bins));
			lags[i] = l;
			score[i] = r;
			bins[i] = bin_k;
			*found += *found < CT_REPEAT_CANDIDATES;
			return;
		}
}

/*
 * The lags at which the flow's bytes repeat, in bins: lags[0] the highest
 * peak of the idle-time series' autocorrelation, then the lags that divide
 * it (lags[0] / k) and score as well up to noise, the best-scoring first
 * (0 where there are fewer). The iteration's multiples repeat it as
 * exactly as the iteration itself, and score as high up to noise; a nested
 * rhythm (buckets, micro-batches) repeats its short waits but not the
 * iteration's long one, and scores lower, but over few iterations the noise
 * can hide the difference: each lag is tried, and the job's other flows
 * decide (period.c). Lags up to half the series: at least two iterations
 * to compare (three iterations span little more than two). score[i] is the
 * correlation at lags[i], bins[i] the bytes of a bin it counts in (a
 * divisor's own binning, see divisor_score). x: scratch for DIVISOR_BINS
 * bins. Returns 0 when nothing repeats.
 */
static int repeat_lags(const double *acov, size_t n, const struct idle_axis *a, double bin,
		       double *x, size_t lags[CT_REPEAT_CANDIDATES],
		       double score[CT_REPEAT_CANDIDATES], double bins[CT_REPEAT_CANDIDATES])
{
	size_t max_lag = n / 2, lo = 1, found = 1, split[CT_REPEAT_CANDIDATES - 1], n_split = 0;
	double best = 0, noise = repeat_floor(a->n), floor_r, mass[CT_REPEAT_CANDIDATES - 1];

	memset(lags, 0, CT_REPEAT_CANDIDATES * sizeof(*lags));
	if (acov[0] <= 0)
		return 0;
	/* past the lobe around lag 0 (a burst's idle time resembles itself) */
	while (lo + 1 < max_lag && acov[lo + 1] <= acov[lo])
		lo++;
	for (size_t l = lo + 1; l + 1 < max_lag; l++)
		if (acov[l] >= acov[l - 1] && acov[l] >= acov[l + 1] && acov[l] > best) {
			best = acov[l];
			lags[0] = l;
		}
	best /= acov[0];
	if (!lags[0] || best < noise)
		return 0;
	score[0] = best;
	bins[0] = bin;
	floor_r = fmax(noise, best - M_SQRT2 * noise);
	for (size_t k = 2; lags[0] / k > lo; k++) {
		/* the divisor's peak: the highest bin next to lags[0] / k */
		size_t c = (size_t)llround((double)lags[0] / (double)k), l = c, at;
		double m;

		for (size_t j = c - 1; j <= c + 1; j++)
			if (acov[j] > acov[l])
				l = j;
		if (acov[l] / acov[0] >= floor_r) {
			keep_divisor(lags, score, bins, l, acov[l] / acov[0], bin, &found);
			continue;
		}
		/*
		 * Below the floor, its peak's two bins together may reach it:
		 * a peak split between them, read afresh below. At most as
		 * many as there is room for, the heaviest first: on a series
		 * that repeats at every lag (4 M equal bursts 200 us apart,
		 * test_burst_memory.py's) every divisor's peak is split, and
		 * reading each afresh took 24% more time.
		 */
		m = (acov[l] + fmax(0, fmax(acov[l - 1], acov[l + 1]))) / acov[0];
		if (m < floor_r)
			continue;
		for (at = n_split; at && mass[at - 1] < m; at--)
			;
		if (at == CT_REPEAT_CANDIDATES - 1)
			continue;
		n_split += n_split < CT_REPEAT_CANDIDATES - 1;
		memmove(split + at + 1, split + at, (n_split - 1 - at) * sizeof(*split));
		memmove(mass + at + 1, mass + at, (n_split - 1 - at) * sizeof(*mass));
		split[at] = k;
		mass[at] = m;
	}
	for (size_t i = 0; i < n_split; i++) {
		double bin_k, r;
		size_t l = divisor_score(a, bin, lags[0], split[i], x, &bin_k, &r);

		if (r >= floor_r)
			keep_divisor(lags, score, bins, l, r, bin_k, &found);
	}
	return (int)found;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of x[0..n) (reorders x; n > 0). */
static double median_of(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/*
 * Anchors: the burst that starts at the boundary's byte, every iteration.
 * The boundary is at the same byte of every iteration (phase + m q, known
 * to a bin), the first after its longest wait, so a burst starts there: of
 * the bursts starting within a bin of it the one after the longest wait,
 * else the nearest within half an iteration. Each is expected one
 * iteration's bytes after the last found (retransmitted bytes do not
 * accumulate). Writes burst indices into idx; returns how many. A boundary
 * within EDGE_SHARE of an iteration of either end of the flow's bytes, or
 * outside, is not one of its iterations: the capture began or ended inside
 * it (a stray acknowledgement after the last iteration would otherwise be
 * one).
 */
/*
 * A boundary this share of an iteration from either end of the flow's
 * bytes is not one of its iterations (see anchors_of). (Real runs: a stray
 * acknowledgement after the last iteration sat 0.05 of an iteration past
 * the last boundary, ptd; a cut capture's first boundary within 0.01 of the
 * flow's first byte.)
 */
#define EDGE_SHARE 0.25

/*
 * An interval is k iterations with no traffic only beyond this many robust
 * standard deviations of one iteration (see iterations_at). (Synthesized
 * 5% jitter: a skipped iteration is 30 deviations out; real ddp's slowest
 * iteration, 1.6 medians, 1.9.)
 */
#define BRIDGE_SIGMAS 3

static size_t anchors_of(size_t n, const double *pos, const double *gap, double q, double bin,
			 double phase, double total, size_t *idx)
{
	size_t len = 0, i = 0;
	double expect = phase + ceil((-EDGE_SHARE * q - phase) / q) * q;

	for (; expect <= total - EDGE_SHARE * q; expect += q) {
		size_t best = SIZE_MAX, near = SIZE_MAX;

		while (i < n && pos[i] < expect - q / 2)
			i++;
		for (size_t j = i; j < n && pos[j] < expect + q / 2; j++) {
			double d = fabs(pos[j] - expect);

			if (d <= bin && (best == SIZE_MAX || gap[j] > gap[best]))
				best = j;
			if (near == SIZE_MAX || d < fabs(pos[near] - expect))
				near = j;
		}
		if (best == SIZE_MAX)
			best = near;
		if (best == SIZE_MAX || (len && best == idx[len - 1]))
			continue;
		idx[len++] = best;
		expect = pos[best];
	}
	return len;
}

/*
 * An interval this many times the median is a pause (set-up before the
 * first iteration, a stall), not an iteration: anchors beyond one at
 * either end are dropped. (Real runs: the longest iteration 1.6 times the
 * median, loaded ddp; the set-up pause 8.7 times, ptd.)
 */
#ifndef PAUSE_FACTOR /* overridable for the sensitivity runs (docs/accuracy.md) */
#define PAUSE_FACTOR 2
#endif

/* Intervals between the anchors into d[0..len-1); returns their median (reorders nothing). */
static double intervals_of(const struct ct_burst *b, const size_t *idx, size_t len, double *d,
			   double *scratch)
{
	for (size_t i = 0; i + 1 < len; i++)
		scratch[i] = d[i] = (double)(b[idx[i + 1]].start - b[idx[i]].start);
	return median_of(scratch, len - 1);
}

/*
 * The iterations at one lag (in bins of bin bytes) of the idle-time series
 * x of nb bins: the boundary phase, the anchors, their intervals, the
 * period. gap[] and pos[] are the bursts' idle times and byte positions;
 * tmp has n doubles.
 */
static int iterations_at(const struct ct_burst *b, size_t n, const double *x, size_t nb, size_t lag,
			 double bin, const double *pos, double *gap, double *tmp,
			 struct ct_flow_repeat *out)
{
	double q = (double)lag * bin, total = pos[n - 1] + (double)b[n - 1].bytes;
	double fold_best = -1, phase = 0, iterations, stall = 0;
	double *fold = calloc(lag + 1, sizeof(*fold));
	double *d = malloc(n * sizeof(*d));
	size_t *idx = malloc(n * sizeof(*idx)), len, lo = 0, hi;

	if (!fold || !d || !idx) {
		free(fold);
		free(d);
		free(idx);
		return -ENOMEM;
	}
	if (!lag) { /* one burst an iteration */
		out->bytes_per_iteration = total / (double)n;
		for (len = 0; len < n; len++)
			idx[len] = len;
		goto anchored;
	}
	out->bytes_per_iteration = q;
	/* the boundary phase: the idle times folded onto one iteration's bins */
	for (size_t k = 0; k < nb; k++)
		fold[k % lag] += x[k];
	for (size_t k = 0; k < lag; k++)
		if (fold[k] > fold_best) {
			fold_best = fold[k];
			phase = ((double)k + 0.5) * bin;
		}
	if (phase > q / 2)
		phase -= q; /* the boundary at the flow's first byte: phase about 0 */
	phase -= bin / 2;   /* the bin's first byte (the [1 2 1] spread keeps a peak in its bin) */
	/* the first burst counts as a boundary when it sits on the phase */
	gap[0] = INFINITY; /* the flow's first burst starts an iteration if any does there */
	len = anchors_of(n, pos, gap, q, bin, phase, total, idx);
	gap[0] = 0;
anchored:
	if (len < 2)
		goto out;
	/* pauses at either end are no iterations */
	{
		double med = intervals_of(b, idx, len, d, tmp), dev = 0;

		hi = len - 1;
		while (lo < hi && d[lo] > PAUSE_FACTOR * med)
			lo++;
		while (hi > lo && d[hi - 1] > PAUSE_FACTOR * med)
			hi--;
		memmove(idx, idx + lo, (hi - lo + 1) * sizeof(*idx));
		len = hi - lo + 1;
		if (len < 2)
			goto out;
		/*
		 * The spread: the standard deviation of the intervals over their
		 * mean (a nested rhythm's one long interval an iteration shows in
		 * it). An interval of k >= 2 median ones, beyond three robust
		 * standard deviations (1.4826 median absolute deviations) of one
		 * iteration and within JOB_AGREE of k, bridges iterations with no
		 * traffic of this flow. One interval of more than PAUSE_FACTOR
		 * medians that bridges nothing is a stall (a checkpoint, a stalled
		 * input pipeline): it counts as one median iteration in the spread,
		 * not in the period, which stays the anchors' mean as the
		 * framework's is (four host agents of one job whose stalls were
		 * taken out of their periods read them 5.8% apart, some having seen
		 * one stall and some two). Only one: a nested rhythm's long
		 * intervals recur every iteration, two or more of them in any
		 * capture of two iterations or more.
		 */
		{
			double span = (double)(b[idx[len - 1]].start - b[idx[0]].start), mean,
			       sigma;
			size_t stalls = 0;

			med = intervals_of(b, idx, len, d, tmp);
			for (size_t i = 0; i + 1 < len; i++)
				tmp[i] = fabs(d[i] - med);
			sigma = 1.4826 * median_of(tmp, len - 1) / med;
			out->interval_rsd = sigma;
			iterations = 0;
			for (size_t i = 0; i + 1 < len; i++) {
				double k = round(d[i] / med);
				int bridged = k >= 2 && d[i] / med - 1 > BRIDGE_SIGMAS * sigma &&
					      fabs(d[i] / med - k) <= CT_JOB_AGREE;

				if (!bridged && d[i] > PAUSE_FACTOR * med) {
					stalls++;
					stall = d[i] - med;
				}
				iterations += bridged ? k : 1;
			}
			if (stalls != 1)
				stall = 0;
			mean = (span - stall) / (double)(len - 1);
			for (size_t i = 0; i + 1 < len; i++) {
				double v = stall > 0 && d[i] > PAUSE_FACTOR * med ? med : d[i];

				dev += (v - mean) * (v - mean);
			}
			out->interval_cv = len > 2 ? sqrt(dev / (double)(len - 1)) / mean : 0;
			out->period_ns = span / iterations;
		}
	}
	out->anchors = len;
	/*
	 * The anchors span all iterations but the last. When the flow begins
	 * on a boundary and its last iteration is whole (as many bytes as the
	 * smallest whole one), that last iteration counts too: from the first
	 * anchor to the flow's last byte, plus the median idle time before a
	 * boundary (the one after the last byte the capture does not show).
	 */
	if (idx[0] == 0) {
		double min_whole = INFINITY, last = total - pos[idx[len - 1]];
		uint64_t end = 0;

		for (size_t i = 0; i + 1 < len; i++)
			min_whole = fmin(min_whole, pos[idx[i + 1]] - pos[idx[i]]);
		for (size_t i = 1; i < len; i++)
			tmp[i - 1] = gap[idx[i]];
		for (size_t i = idx[len - 1]; i < n; i++)
			if (b[i].end > end)
				end = b[i].end;
		if (last >= min_whole) {
			double idle = median_of(tmp, len - 1);

			out->period_ns =
				((double)(end - b[idx[0]].start) + idle) / (iterations + 1);
			out->whole_last = 1;
		}
	}
	/* kept for each candidate of each flow: as many as the anchors, not the bursts */
	{
		size_t *fit = realloc(idx, len * sizeof(*idx));

		out->idx = fit ? fit : idx;
	}
	idx = NULL;
out:
	free(fold);
	free(d);
	free(idx);
	return 0;
}

/*
 * A flow that sends once an iteration shows its iterations by its times
 * alone: their intervals must be steadier than random ones. (Waits drawn
 * uniformly from 5-205 ms: cv 0.55, robust spread 0.71; exponential waits:
 * 1 and 1.0; a synthesized job with 5% jitter: 0.03; the real runs' flows
 * send several bursts an iteration and never come here.) The robust spread
 * is judged: one stall of the whole job (a checkpoint) is one long
 * interval, which takes a 12-iteration capture's cv from 0.03 to 0.28 and
 * leaves its robust spread where it was.
 */
#ifndef ONCE_MAX_CV /* overridable for the sensitivity runs (docs/accuracy.md) */
#define ONCE_MAX_CV 0.25
#endif

int ct_flow_repeat(const struct ct_burst *b, size_t n,
		   struct ct_flow_repeat out[CT_REPEAT_CANDIDATES])
{
	double *x = NULL, *xk = NULL, *acov = NULL, *pos = NULL, *gap = NULL, *w = NULL;
	double *tmp = NULL, total = 0, bin, median, mean = 0;
	double score[CT_REPEAT_CANDIDATES] = {0}, bins[CT_REPEAT_CANDIDATES];
	size_t lags[CT_REPEAT_CANDIDATES];
	struct idle_axis axis;
	int err = 0;

	memset(out, 0, CT_REPEAT_CANDIDATES * sizeof(*out));
	if (n < 3)
		return 0;
	x = calloc(BYTE_BINS, sizeof(*x));
	xk = calloc(DIVISOR_BINS, sizeof(*xk));
	acov = calloc(BYTE_BINS, sizeof(*acov));
	pos = calloc(n, sizeof(*pos));
	gap = calloc(n, sizeof(*gap));
	w = calloc(n, sizeof(*w));
	tmp = calloc(n, sizeof(*tmp));
	if (!x || !xk || !acov || !pos || !gap || !w || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		pos[i] = total;
		total += (double)b[i].bytes;
		/* the first burst's idle time is unknown: the capture began in it */
		gap[i] = i && b[i].start > b[i - 1].end ? (double)(b[i].start - b[i - 1].end) : 0;
	}
	if (total <= 0)
		goto out;
	bin = total / BYTE_BINS;
	/*
	 * Each idle time on a log scale against the flow's median one: one
	 * pause of seconds (set-up, a stall) would otherwise be the whole
	 * series and repeat with nothing, while ranks would weigh a bucket's
	 * short wait like the iteration's long one.
	 */
	memcpy(tmp, gap, n * sizeof(*tmp));
	median = median_of(tmp, n);
	if (median <= 0)
		median = 1; /* mostly back-to-back bursts: against 1 ns */
	/*
	 * Centred over the bursts, not the bins: bursts of one size sit at
	 * regular byte positions whatever their times, and a series of their
	 * raw waits would repeat there (random arrivals included).
	 */
	for (size_t i = 1; i < n; i++)
		mean += log1p(gap[i] / median) / (double)(n - 1);
	for (size_t i = 1; i < n; i++)
		w[i] = log1p(gap[i] / median) - mean;
	axis = (struct idle_axis){.pos = pos, .w = w, .n = n, .total = total};
	bin_axis(&axis, bin, BYTE_BINS, x);
	err = autocovariance(x, BYTE_BINS, acov);
	if (err)
		goto out;
	if (!repeat_lags(acov, BYTE_BINS, &axis, bin, xk, lags, score, bins)) {
		/*
		 * No repetition inside the flow's bytes: it may send once an
		 * iteration (a DP all-reduce as one burst), every burst alike.
		 * How alike their sizes are is its score (1 - their cv); the
		 * times decide, as for any lag (random arrivals: cv 1).
		 */
		double mean_bytes = total / (double)n, var = 0;

		for (size_t i = 0; i < n; i++)
			var += ((double)b[i].bytes - mean_bytes) *
			       ((double)b[i].bytes - mean_bytes);
		out[0].repeat = fmax(0, 1 - sqrt(var / (double)n) / mean_bytes);
		if (out[0].repeat > 0)
			err = iterations_at(b, n, x, BYTE_BINS, 0, bin, pos, gap, tmp, &out[0]);
		if (!err && out[0].interval_rsd > ONCE_MAX_CV) {
			ct_flow_repeat_free(&out[0]);
			out[0].anchors = 0;
		}
		goto out;
	}
	for (int i = 0; i < CT_REPEAT_CANDIDATES && !err; i++) {
		const double *series = x;
		size_t nb = BYTE_BINS;

		if (!lags[i])
			continue;
		out[i].repeat = score[i];
		if (bins[i] != bin) { /* a divisor read in bins of its own */
			nb = axis_bins(&axis, bins[i]);
			bin_axis(&axis, bins[i], nb, xk);
			series = xk;
		}
		err = iterations_at(b, n, series, nb, lags[i], bins[i], pos, gap, tmp, &out[i]);
	}
out:
	free(x);
	free(xk);
	free(acov);
	free(pos);
	free(gap);
	free(w);
	free(tmp);
	return err;
}

void ct_flow_repeat_free(struct ct_flow_repeat *r)
{
	free(r->idx);
	r->idx = NULL;
}
