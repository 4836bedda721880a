// SPDX-License-Identifier: MIT
#include <commtap/burst_stats.h>
#include <commtap/merge_runs.h>
#include <commtap/slow_alloc.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SORT_UP_TO	32	   /* percentiles of this few values by sorting them */
#define PHASES_ON_STACK 64	   /* iterations whose phases need no allocation */

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

/* The same from values in order. */
static double sorted_quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;

	if (i + 1 >= n || pos == (double)i)
		return v[i];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

void ct_dist_of(double *v, size_t n, struct ct_dist *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	if (n <= SORT_UP_TO) {
		/* a flow's few bursts: one insertion sort beats three selections */
		for (size_t i = 1; i < n; i++) {
			double t = v[i];
			size_t j = i;

			for (; j > 0 && v[j - 1] > t; j--)
				v[j] = v[j - 1];
			v[j] = t;
		}
		out->p10 = sorted_quantile(v, n, 0.1);
		out->median = sorted_quantile(v, n, 0.5);
		out->p90 = sorted_quantile(v, n, 0.9);
		return;
	}
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

/*
 * ct_period_phase() of a time in iteration k (ct_period_iteration()): the
 * same quotients, without the walk over the iterations to find k.
 */
static double phase_in(const struct ct_period *p, long k, uint64_t t)
{
	if ((size_t)k + 1 < p->iterations)
		return (double)(t - p->starts[k]) / (double)(p->starts[k + 1] - p->starts[k]);
	double into = (double)(t - p->starts[k]) / (p->period_s * 1e9);

	return into < 1 ? into : -1;
}

/* The volumes into bytes and messages (p->iterations each, zeroed); -ENOMEM or 0. */
static int volumes(const struct ct_burst *b, size_t n, const struct ct_period *p,
		   struct ct_iteration_volumes *out, double *bytes, double *messages)
{
	size_t it = p->iterations;
	double room[2 * PHASES_ON_STACK], *first = room, *last, mean = 0, var = 0;

	if (it > PHASES_ON_STACK) {
		first = malloc(2 * it * sizeof(double));
		if (!first)
			return -ENOMEM;
	}
	last = first + it;
	out->bytes = bytes;
	out->messages = messages;
	for (size_t i = 0; i < it; i++)
		first[i] = last[i] = -1;
	for (size_t i = 0; i < n; i++) {
		long k = iteration_of(p, b[i].start);
		double phase;

		if (k < 0)
			continue;
		out->bytes[k] += (double)b[i].bytes;
		out->messages[k] += b[i].messages;
		phase = phase_in(p, k, b[i].start);
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
	if (first != room)
		free(first);
	return 0;
}

int ct_iteration_volumes_of(const struct ct_burst *b, size_t n, const struct ct_period *p,
			    struct ct_iteration_volumes *out)
{
	size_t it = p->iterations;
	double *bytes, *messages;

	memset(out, 0, sizeof(*out));
	if (!p->periodic || !it)
		return 0;
	bytes = calloc(it, sizeof(double));
	messages = calloc(it, sizeof(double));
	if (!bytes || !messages || volumes(b, n, p, out, bytes, messages)) {
		free(bytes);
		free(messages);
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	return 0;
}

int ct_iteration_volumes_in(const struct ct_burst *b, size_t n, const struct ct_period *p,
			    struct ct_iteration_volumes *out, double *room)
{
	size_t it = p->iterations;

	memset(out, 0, sizeof(*out));
	if (!p->periodic || !it)
		return 0;
	memset(room, 0, 2 * it * sizeof(*room));
	if (volumes(b, n, p, out, room, room + it)) {
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	return 0;
}

void ct_iteration_volumes_free(struct ct_iteration_volumes *v)
{
	free(v->bytes);
	free(v->messages);
	v->bytes = v->messages = NULL;
	v->iterations = 0;
}

/* Small numbers for the .flow values of bursts (senders, flows), in order of first sight. */
struct id_map {
	uint32_t *key, *id; /* id UINT32_MAX: empty */
	size_t mask, n;
};

static int id_map_init(struct id_map *m, size_t n)
{
	size_t slots = 16;

	while (slots < 2 * n)
		slots *= 2;
	m->key = malloc(slots * sizeof(*m->key));
	m->id = malloc(slots * sizeof(*m->id));
	m->mask = slots - 1;
	m->n = 0;
	if (!m->key || !m->id) {
		free(m->key);
		free(m->id);
		return -ENOMEM;
	}
	memset(m->id, 0xff, slots * sizeof(*m->id));
	return 0;
}

static uint32_t id_map_get(struct id_map *m, uint32_t key)
{
	size_t j = (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ull) >> 32) & m->mask;

	while (m->id[j] != UINT32_MAX && m->key[j] != key)
		j = (j + 1) & m->mask;
	if (m->id[j] == UINT32_MAX) {
		m->key[j] = key;
		m->id[j] = (uint32_t)m->n++;
	}
	return m->id[j];
}

static void id_map_free(struct id_map *m)
{
	free(m->key);
	free(m->id);
}

struct edge {
	uint64_t t;
	int delta;	 /* +1 start, -1 end */
	uint32_t sender; /* numbered from 0 */
	double rate;
};

/*
 * Stable sort of edges by time, merging the runs they come in (starts of
 * bursts sorted by start are one run; their ends, a few).
 */
CT_DEFINE_MERGE_RUNS(edges_sort, struct edge, t)

/*
 * A sweep over the bursts' edges in time order, ends before starts at the
 * same instant, each kind in the bursts' order.
 */
int ct_incast_of(const struct ct_burst *b, size_t n, unsigned *max_senders, double *peak_gbps)
{
	struct edge *up = malloc(3 * n * sizeof(*up) + 1), *down = up + n, *tmp = down + n;
	size_t *runs = malloc((n + 1) * sizeof(*runs));
	uint32_t *active = calloc(n + 1, sizeof(*active));
	struct id_map senders = {0};
	unsigned distinct = 0;
	double rate = 0;
	int err = 0;

	*max_senders = 0;
	*peak_gbps = 0;
	if (!up || !runs || !active || id_map_init(&senders, n)) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		double r = burst_rate_gbps(&b[i]);
		uint32_t s = id_map_get(&senders, b[i].flow);

		up[i] = (struct edge){b[i].start, +1, s, r};
		down[i] = (struct edge){b[i].end, -1, s, r};
	}
	edges_sort(up, n, tmp, runs);
	edges_sort(down, n, tmp, runs);
	for (size_t i = 0, j = 0; i < n || j < n;) {
		const struct edge *e =
			j < n && (i == n || down[j].t <= up[i].t) ? &down[j++] : &up[i++];

		if (e->delta > 0) {
			if (!active[e->sender]++)
				distinct++;
			rate += e->rate;
		} else {
			if (!--active[e->sender])
				distinct--;
			rate -= e->rate;
		}
		if (distinct > *max_senders)
			*max_senders = distinct;
		if (rate > *peak_gbps)
			*peak_gbps = rate;
	}
	id_map_free(&senders);
out:
	free(up);
	free(runs);
	free(active);
	return err;
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

/*
 * Bursts in start order: the iterations come one after the other, and a
 * flow's first start in one is where the flow is first seen in it.
 */
static size_t spreads_in_order(const struct ct_burst *b, size_t n, const struct ct_period *p,
			       double *spreads)
{
	/* per flow: 1 + the last iteration it was seen in */
	long *seen = calloc(n, sizeof(*seen)), cur = -1;
	struct id_map flows;
	uint64_t lo = 0, hi = 0;
	size_t m = 0, count = 0;

	if (!seen || id_map_init(&flows, n)) {
		free(seen);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < n; i++) {
		long it = iteration_of(p, b[i].start);
		uint32_t f;

		if (it < 0)
			continue;
		if (it != cur) {
			if (count >= 2)
				spreads[m++] = (double)(hi - lo) / 1e9;
			cur = it;
			lo = UINT64_MAX;
			hi = count = 0;
		}
		f = id_map_get(&flows, b[i].flow);
		if (seen[f] == it + 1)
			continue; /* not the flow's first burst */
		seen[f] = it + 1;
		count++;
		lo = b[i].start < lo ? b[i].start : lo;
		hi = b[i].start > hi ? b[i].start : hi;
	}
	if (count >= 2)
		spreads[m++] = (double)(hi - lo) / 1e9;
	id_map_free(&flows);
	free(seen);
	return m;
}

/* Any order: sorted by (iteration, flow, start), a flow's first start heads its run. */
static size_t spreads_by_sort(const struct ct_burst *b, size_t n, const struct ct_period *p,
			      double *spreads)
{
	struct first_start *fs = malloc(n * sizeof(*fs));
	size_t m = 0, k = 0;

	if (!fs)
		return SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		long it = iteration_of(p, b[i].start);

		if (it >= 0)
			fs[k++] = (struct first_start){it, b[i].flow, b[i].start};
	}
	qsort(fs, k, sizeof(*fs), first_start_cmp);
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
	free(fs);
	return m;
}

double ct_start_spread_s(const struct ct_burst *b, size_t n, const struct ct_period *p)
{
	double *spreads, result = -1;
	int sorted = 1;
	size_t m;

	if (!p->periodic || !p->iterations || !n)
		return -1;
	spreads = malloc(p->iterations * sizeof(double));
	if (!spreads)
		return -1;
	/* per iteration: the spread of each flow's first start */
	for (size_t i = 1; i < n && sorted; i++)
		sorted = b[i].start >= b[i - 1].start;
	m = sorted ? spreads_in_order(b, n, p, spreads) : spreads_by_sort(b, n, p, spreads);
	if (m && m != SIZE_MAX) {
		struct ct_dist d;

		ct_dist_of(spreads, m, &d);
		result = d.median;
	}
	free(spreads);
	return result;
}
