// SPDX-License-Identifier: MIT
/*
 * The iteration period of a job from its flows' repetitions (see period.h):
 * each heavy flow's iterations are read from its bytes (period_repeat.c),
 * and the job's iteration is the period that most of the repeating bytes
 * divide: a flow with a nested rhythm (micro-batches) repeats k times an
 * iteration, a flow of the iteration once.
 */
#include "period_repeat.h"

#include <commtap/burst_sort.h>
#include <commtap/log.h>
#include <commtap/period.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/*
 * The heaviest flows are read, at most this many: the job's period is in
 * every one of its flows, and an FFT of the byte axis per flow stays cheap
 * (100,000 flows would cost seconds).
 */
#define MAX_FLOWS 64

static int burst_cmp(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

struct flow_run {
	size_t first, n;
	double bytes;
	struct ct_flow_repeat r[CT_REPEAT_CANDIDATES]; /* at the lags it repeats at */
	double votes[CT_REPEAT_CANDIDATES];	       /* 0: that one does not count */
};

static int by_bytes_desc(const void *a, const void *b)
{
	const struct flow_run *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/*
 * Iterations spread, nested rhythms and random arrivals spread more: the
 * anchors' intervals (standard deviation over mean) of the real runs'
 * iterations on the loaded 2-core machine 0.09-0.37 (whole captures,
 * warm-up included; 3-iteration cuts); of a nested rhythm taken for the
 * iteration 0.37-0.57 (ddp's buckets over 3 iterations, synthesized MoE's
 * all-to-all pairs); of waits drawn uniformly 0.55, of Poisson arrivals 1.
 * A candidate's vote falls linearly to 0 at this spread.
 */
#ifndef ITERATION_MAX_CV /* overridable for the sensitivity runs (docs/accuracy.md) */
#define ITERATION_MAX_CV 0.6
#endif

/*
 * The confidence is full while the anchors' spread is at most 1 - this
 * share of ITERATION_MAX_CV, and falls linearly to 0 at it (real runs'
 * whole captures: spreads 0.27-0.37 of 0.6; their confidence 0.71-1.00).
 */
#define CONFIDENT_SHARE 0.5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Whether period is k whole times a flow's period p, k >= 1 (k = 1 only: once). */
static int divides(double period, double p, int once)
{
	double k = round(period / p);

	return k >= 1 && (!once || k == 1) && fabs(period / p - k) <= CT_JOB_AGREE;
}

/*
 * Which of a flow's periods period is (once), or is k times (!once), the
 * one with the larger vote; -1 if none. *votes: with once, the matching
 * one's vote; with !once, the flow's largest vote over the smallest k that
 * matched (a flow counts once, as much for the iteration as for its
 * multiple; a nested rhythm k times an iteration counts 1 / k, so that
 * periods many times a flow's, which any period matches to a tenth of it
 * by chance, gain little).
 */
static int flow_vote(const struct flow_run *f, double period, int once, double *votes)
{
	int which = -1;
	double most = 0, k_min = INFINITY;

	*votes = 0;
	for (int i = 0; i < CT_REPEAT_CANDIDATES; i++) {
		most = fmax(most, f->votes[i]);
		if (f->votes[i] > 0 && divides(period, f->r[i].period_ns, once)) {
			k_min = fmin(k_min, round(period / f->r[i].period_ns));
			if (which < 0 || f->votes[i] > f->votes[which])
				which = i;
		}
	}
	if (which >= 0)
		*votes = once ? f->votes[which] : most / k_min;
	return which;
}

/*
 * The heaviest flows' bursts (of bursts, sorted by start), each flow's in a
 * run of *by_flow in start order: one pass to weigh the flows, one to
 * gather (no sort of every burst). Returns how many runs, the heaviest
 * first; 0 with *runs NULL when out of memory.
 */
static size_t heaviest_flows(const struct ct_burst *b, size_t n, struct ct_burst **by_flow,
			     struct flow_run **runs)
{
	uint32_t top = 0;
	size_t distinct = 0, nr = 0, total = 0;
	double *bytes;
	long *slot = NULL;
	size_t *at = NULL;

	*runs = NULL;
	*by_flow = NULL;
	for (size_t i = 0; i < n; i++)
		top = b[i].flow > top ? b[i].flow : top;
	bytes = calloc((size_t)top + 1, sizeof(*bytes));
	slot = malloc(((size_t)top + 1) * sizeof(*slot));
	*runs = calloc((size_t)top + 2, sizeof(**runs));
	if (!bytes || !slot || !*runs)
		goto fail;
	for (size_t i = 0; i < n; i++)
		bytes[b[i].flow] += (double)b[i].bytes;
	for (uint32_t f = 0; f <= top; f++)
		if (bytes[f] > 0)
			(*runs)[distinct++] = (struct flow_run){.first = f, .bytes = bytes[f]};
	qsort(*runs, distinct, sizeof(**runs), by_bytes_desc);
	nr = distinct < MAX_FLOWS ? distinct : MAX_FLOWS;
	for (uint32_t f = 0; f <= top; f++)
		slot[f] = -1;
	for (size_t r = 0; r < nr; r++)
		slot[(*runs)[r].first] = (long)r; /* .first holds the flow until gathered */
	for (size_t i = 0; i < n; i++)
		if (slot[b[i].flow] >= 0)
			(*runs)[slot[b[i].flow]].n++;
	at = malloc((nr + 1) * sizeof(*at));
	for (size_t r = 0; at && r < nr; r++) {
		at[r] = total;
		(*runs)[r].first = total;
		total += (*runs)[r].n;
	}
	*by_flow = malloc((total + 1) * sizeof(**by_flow));
	if (!at || !*by_flow)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (slot[b[i].flow] >= 0)
			(*by_flow)[at[slot[b[i].flow]]++] = b[i];
	free(bytes);
	free(slot);
	free(at);
	return nr;
fail:
	free(bytes);
	free(slot);
	free(at);
	free(*runs);
	free(*by_flow);
	*runs = NULL;
	*by_flow = NULL;
	return 0;
}

int ct_period_estimate(struct ct_burst *bursts, size_t n, double min_period_s,
		       struct ct_period *out)
{
	struct ct_burst *by_flow = NULL;
	struct flow_run *runs = NULL;
	const struct ct_flow_repeat *ref = NULL;
	double *ok = NULL; /* the periods that count */
	size_t ref_first = 0;
	size_t nr = 0, nok = 0;
	double weight = 0, period_ns;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (n < CT_PERIOD_MIN_ITERATIONS) {
		out->reason = "not periodic: fewer bursts than three iterations need";
		return 0;
	}
	if (ct_bursts_sort_by_start(bursts, n))
		qsort(bursts, n, sizeof(*bursts), burst_cmp); /* no memory for the radix sort */
	nr = heaviest_flows(bursts, n, &by_flow, &runs);
	ok = calloc(CT_REPEAT_CANDIDATES * nr + 1, sizeof(*ok));
	if (!runs || !ok) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct flow_run *f = &runs[i];
		double most = 0;

		err = ct_flow_repeat(by_flow + f->first, f->n, f->r);
		if (err)
			goto out;
		if (!f->r[0].bytes_per_iteration)
			ct_log(CT_LOG_DEBUG, "flow %u: %zu bursts, %.0f bytes: no repetition\n",
			       by_flow[f->first].flow, f->n, f->bytes);
		for (int c = 0; c < CT_REPEAT_CANDIDATES; c++) {
			const struct ct_flow_repeat *r = &f->r[c];

			if (!r->bytes_per_iteration)
				continue;
			ct_log(CT_LOG_DEBUG,
			       "flow %u: %zu bursts, %.0f bytes, repeats every %.0f bytes "
			       "(score %.3f): %zu iterations, period %.6f s, interval cv %.3f%s\n",
			       by_flow[f->first].flow, f->n, f->bytes, r->bytes_per_iteration,
			       r->repeat, r->anchors, r->period_ns / 1e9, r->interval_cv,
			       r->whole_last ? ", last iteration whole" : "");
			if (r->anchors < CT_PERIOD_MIN_ITERATIONS ||
			    r->interval_cv >= ITERATION_MAX_CV || r->period_ns < min_period_s * 1e9)
				continue;
			/*
			 * A flow votes with its bytes, times how clearly they
			 * repeat, times how steadily its iterations come (against
			 * ITERATION_MAX_CV): a nested rhythm taken for the
			 * iteration comes unevenly, the iteration's long wait
			 * falling between two of its repetitions.
			 */
			f->votes[c] =
				f->bytes * r->repeat * (1 - r->interval_cv / ITERATION_MAX_CV);
			most = fmax(most, f->votes[c]);
			ok[nok++] = r->period_ns;
		}
		weight += most;
	}
	if (!nok) {
		out->reason = "not periodic: no flow repeats over three iterations";
		goto out;
	}
	/*
	 * The iteration: of the flows' periods, the one that the most
	 * repeating bytes divide (k whole repetitions of theirs in it; each
	 * flow counted once, with its larger vote), the shortest of those as
	 * well supported. It is the mean of the flows that repeat once in it,
	 * the one with the largest vote giving the starts.
	 */
	qsort(ok, nok, sizeof(*ok), cmp_double);
	{
		double best = 0, best_period = 0, sum = 0, w = 0, v, most = 0;

		for (size_t i = 0; i < nok; i++) {
			double support = 0;

			for (size_t j = 0; j < nr; j++) {
				flow_vote(&runs[j], ok[i], 0, &v);
				support += v;
			}
			if (support > best) {
				best = support;
				best_period = ok[i];
			}
		}
		for (size_t j = 0; j < nr; j++) {
			int c = flow_vote(&runs[j], best_period, 1, &v);

			if (c < 0)
				continue;
			sum += v * runs[j].r[c].period_ns;
			w += v;
			if (v > most) {
				most = v;
				ref = &runs[j].r[c];
				ref_first = runs[j].first;
			}
		}
		period_ns = sum / w;
		/*
		 * Confidence: the share of the repeating bytes that agree, times
		 * how far the anchors' spread is from ITERATION_MAX_CV (full up
		 * to CONFIDENT_SHARE of the way).
		 */
		out->confidence =
			best / weight *
			fmin(1, (1 - ref->interval_cv / ITERATION_MAX_CV) / CONFIDENT_SHARE);
		ct_log(CT_LOG_DEBUG, "iteration %.6f s: %.0f of %.0f votes\n", best_period / 1e9,
		       best, weight);
	}
	out->period_s = period_ns / 1e9;
	out->acf_peak = ref->repeat;
	out->iterations = ref->anchors;
	out->starts = malloc(out->iterations * sizeof(*out->starts));
	if (!out->starts) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < out->iterations; i++)
		out->starts[i] = by_flow[ref_first + ref->idx[i]].start;
	ct_log(CT_LOG_DEBUG, "period %.6f s from flow %u, confidence %.3f, %zu iterations\n",
	       out->period_s, by_flow[ref_first].flow, out->confidence, out->iterations);
	if (out->confidence < CT_PERIOD_MIN_CONFIDENCE) {
		out->reason = "not periodic: the pattern does not repeat steadily enough";
		ct_period_free(out);
		out->iterations = 0;
		goto out;
	}
	out->periodic = 1;
	out->reason = NULL;
out:
	for (size_t i = 0; runs && i < nr; i++)
		for (int c = 0; c < CT_REPEAT_CANDIDATES; c++)
			ct_flow_repeat_free(&runs[i].r[c]);
	free(runs);
	free(ok);
	free(by_flow);
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
	return p->periodic ? ct_period_phase_in(p, ct_period_iteration(p, t), t) : -1;
}

double ct_period_phase_in(const struct ct_period *p, long k, uint64_t t)
{
	if (!p->periodic || k < 0)
		return -1;
	if ((size_t)k + 1 < p->iterations)
		return (double)(t - p->starts[k]) / (double)(p->starts[k + 1] - p->starts[k]);
	return (double)(t - p->starts[k]) / (p->period_s * 1e9);
}
