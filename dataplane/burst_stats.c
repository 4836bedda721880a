// SPDX-License-Identifier: MIT
#include <commtap/burst_stats.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline void swap_doubles(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/*
 * Quickselect with a three-way partition (equal values, common in burst
 * durations, stay linear): v[k] becomes the k-th smallest, smaller ones
 * before it, larger or equal after.
 */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* [lo, hi) */

	while (hi - lo > 1) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t lt = lo, i = lo, gt = hi;

		/* [lo, lt) < pivot, [lt, i) == pivot, [gt, hi) > pivot */
		while (i < gt) {
			if (v[i] < pivot)
				swap_doubles(&v[lt++], &v[i++]);
			else if (v[i] > pivot)
				swap_doubles(&v[i], &v[--gt]);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return; /* v[k] == pivot */
	}
}

/* The q-quantile by linear interpolation between closest ranks, without a full sort. */
static double quantile(double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1), lo;
	size_t i = (size_t)pos;

	select_kth(v, n, i);
	lo = v[i];
	if (i + 1 >= n || pos == (double)i)
		return lo;
	double next = v[i + 1];

	for (size_t j = i + 2; j < n; j++) /* the smallest above the k-th */
		if (v[j] < next)
			next = v[j];
	return lo + (pos - (double)i) * (next - lo);
}

void ct_dist_of(double *v, size_t n, struct ct_dist *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	out->p10 = quantile(v, n, 0.1);
	out->median = quantile(v, n, 0.5);
	out->p90 = quantile(v, n, 0.9);
}

struct interval {
	uint64_t start, end, bytes;
	uint64_t messages;
	double rate_gbps; /* the highest rate of the bursts joined into it */
};

/*
 * A burst's rate: start and end are its first and last packet's arrival, so
 * the time covers every packet but the last: count (n-1)/n of the bytes.
 * Unknown with one packet.
 */
static double burst_rate_gbps(const struct ct_burst *b)
{
	double dur = (double)(b->end - b->start);
	double share = b->packets > 1 ? (double)(b->packets - 1) / b->packets : 1;

	if (dur <= 0 || b->packets == 1)
		return 0;
	return (double)b->bytes * share * 8 / dur; /* bits per ns = Gb/s */
}

/* Join bursts (sorted by start) that overlap into intervals; returns how many. */
static size_t join_overlaps(const struct ct_burst *b, size_t n, struct interval *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		double rate = burst_rate_gbps(&b[i]);

		if (k && b[i].start <= out[k - 1].end) {
			out[k - 1].bytes += b[i].bytes;
			out[k - 1].messages += b[i].messages;
			if (b[i].end > out[k - 1].end)
				out[k - 1].end = b[i].end;
			if (rate > out[k - 1].rate_gbps)
				out[k - 1].rate_gbps = rate;
			continue;
		}
		out[k++] = (struct interval){b[i].start, b[i].end, b[i].bytes, b[i].messages, rate};
	}
	return k;
}

int ct_onoff_of(const struct ct_burst *b, size_t n, struct ct_onoff *out)
{
	/* one block: the joined intervals, then three arrays of doubles */
	size_t sz = (n + 1) * (sizeof(struct interval) + 3 * sizeof(double));
	struct interval *iv = malloc(sz);
	double *on, *off, *bytes, total_on = 0;
	size_t k;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!iv) {
		err = -ENOMEM;
		goto out;
	}
	on = (double *)(iv + n + 1);
	off = on + n + 1;
	bytes = off + n + 1;
	k = join_overlaps(b, n, iv);
	for (size_t i = 0; i < k; i++) {
		double dur = (double)(iv[i].end - iv[i].start) / 1e9;

		on[i] = dur;
		bytes[i] = (double)iv[i].bytes;
		if (i)
			off[i - 1] = (double)(iv[i].start - iv[i - 1].end) / 1e9;
		total_on += dur;
		if (iv[i].rate_gbps > out->peak_gbps)
			out->peak_gbps = iv[i].rate_gbps;
	}
	out->bursts = k;
	out->total_on_s = total_on;
	if (k) {
		double span = (double)(iv[k - 1].end - iv[0].start) / 1e9;

		out->duty_cycle = span > 0 ? total_on / span : 1;
	}
	ct_dist_of(on, k, &out->on_s);
	ct_dist_of(off, k ? k - 1 : 0, &out->off_s);
	ct_dist_of(bytes, k, &out->burst_bytes);
out:
	free(iv);
	return err;
}

static long iteration_of(const struct ct_period *p, uint64_t t)
{
	return ct_period_iteration(p, t);
}

int ct_iteration_volumes_of(const struct ct_burst *b, size_t n, const struct ct_period *p,
			    struct ct_iteration_volumes *out)
{
	size_t it = p->iterations;
	double *first = NULL, *last = NULL, mean = 0, var = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!p->periodic || !it)
		return 0;
	out->bytes = calloc(it, sizeof(double));
	out->messages = calloc(it, sizeof(double));
	first = malloc(it * sizeof(double));
	last = malloc(it * sizeof(double));
	if (!out->bytes || !out->messages || !first || !last) {
		err = -ENOMEM;
		ct_iteration_volumes_free(out);
		goto out;
	}
	for (size_t i = 0; i < it; i++)
		first[i] = last[i] = -1;
	for (size_t i = 0; i < n; i++) {
		long k = iteration_of(p, b[i].start);
		double phase;

		if (k < 0)
			continue;
		out->bytes[k] += (double)b[i].bytes;
		out->messages[k] += b[i].messages;
		phase = ct_period_phase(p, b[i].start);
		if (first[k] < 0 || phase < first[k])
			first[k] = phase;
		if (phase > last[k])
			last[k] = phase;
	}
	out->iterations = it;
	for (size_t i = 0; i < it; i++)
		mean += out->bytes[i];
	mean /= (double)it;
	for (size_t i = 0; i < it; i++)
		var += (out->bytes[i] - mean) * (out->bytes[i] - mean);
	out->bytes_cv = mean > 0 && it > 1 ? sqrt(var / (double)(it - 1)) / mean : 0;
	{
		struct ct_dist d;
		size_t m = 0;

		for (size_t i = 0; i < it; i++)
			if (first[i] >= 0)
				first[m++] = first[i];
		ct_dist_of(first, m, &d);
		out->phase_first = m ? d.median : -1;
		m = 0;
		for (size_t i = 0; i < it; i++)
			if (last[i] >= 0)
				last[m++] = last[i];
		ct_dist_of(last, m, &d);
		out->phase_last = m ? d.median : -1;
	}
out:
	free(first);
	free(last);
	return err;
}

void ct_iteration_volumes_free(struct ct_iteration_volumes *v)
{
	free(v->bytes);
	free(v->messages);
	v->bytes = v->messages = NULL;
	v->iterations = 0;
}

struct edge {
	uint64_t t;
	int delta; /* +1 start, -1 end */
	uint32_t sender;
	double rate;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta - y->delta; /* ends before starts at the same instant */
}

int ct_incast_of(const struct ct_burst *b, size_t n, unsigned *max_senders, double *peak_gbps)
{
	struct edge *e = malloc(2 * n * sizeof(*e) + 1);
	uint32_t *senders = NULL, *active = NULL;
	size_t n_senders = 0;
	double rate = 0;
	unsigned distinct = 0;

	*max_senders = 0;
	*peak_gbps = 0;
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		double r = burst_rate_gbps(&b[i]);

		e[2 * i] = (struct edge){b[i].start, +1, b[i].flow, r};
		e[2 * i + 1] = (struct edge){b[i].end, -1, b[i].flow, r};
	}
	qsort(e, 2 * n, sizeof(*e), edge_cmp);
	/* senders are compacted to indices for the per-sender activity count */
	senders = malloc((n + 1) * sizeof(*senders));
	active = calloc(n + 1, sizeof(*active));
	if (!senders || !active) {
		free(e);
		free(senders);
		free(active);
		return -ENOMEM;
	}
	for (size_t i = 0; i < 2 * n; i++) {
		size_t s;

		for (s = 0; s < n_senders && senders[s] != e[i].sender; s++)
			;
		if (s == n_senders)
			senders[n_senders++] = e[i].sender;
		if (e[i].delta > 0) {
			if (!active[s]++)
				distinct++;
			rate += e[i].rate;
		} else {
			if (!--active[s])
				distinct--;
			rate -= e[i].rate;
		}
		if (distinct > *max_senders)
			*max_senders = distinct;
		if (rate > *peak_gbps)
			*peak_gbps = rate;
	}
	free(e);
	free(senders);
	free(active);
	return 0;
}

struct first_start {
	long iteration;
	uint32_t flow;
	uint64_t start;
};

static int first_start_cmp(const void *a, const void *b)
{
	const struct first_start *x = a, *y = b;

	if (x->iteration != y->iteration)
		return x->iteration < y->iteration ? -1 : 1;
	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

double ct_start_spread_s(const struct ct_burst *b, size_t n, const struct ct_period *p)
{
	struct first_start *fs;
	double *spreads, result = -1;
	size_t m = 0, k = 0;

	if (!p->periodic || !p->iterations || !n)
		return -1;
	fs = malloc(n * sizeof(*fs));
	spreads = malloc(p->iterations * sizeof(double));
	if (!fs || !spreads)
		goto out;
	for (size_t i = 0; i < n; i++) {
		long it = iteration_of(p, b[i].start);

		if (it >= 0)
			fs[k++] = (struct first_start){it, b[i].flow, b[i].start};
	}
	qsort(fs, k, sizeof(*fs), first_start_cmp);
	/* per iteration: the spread of each flow's first start */
	for (size_t i = 0; i < k;) {
		long it = fs[i].iteration;
		uint64_t lo = UINT64_MAX, hi = 0;
		size_t flows = 0;

		for (; i < k && fs[i].iteration == it; i++) {
			if (i && fs[i - 1].iteration == it && fs[i - 1].flow == fs[i].flow)
				continue; /* not the flow's first burst */
			flows++;
			lo = fs[i].start < lo ? fs[i].start : lo;
			hi = fs[i].start > hi ? fs[i].start : hi;
		}
		if (flows >= 2)
			spreads[m++] = (double)(hi - lo) / 1e9;
	}
	if (m) {
		struct ct_dist d;

		ct_dist_of(spreads, m, &d);
		result = d.median;
	}
out:
	free(fs);
	free(spreads);
	return result;
}
