// SPDX-License-Identifier: MIT
/*
 * Sorts of bursts. Radix sorts: a report sorts millions of 40-byte bursts several
 * ways, where a comparison sort spends most of its time moving records.
 *
 * LSD, stable. A first pass finds each key's range (and returns at once if
 * the bursts are in order already); keys are sorted relative to their
 * minimum, in as few digits of at most 11 bits as the range needs (100,000
 * flows: two passes of 9 bits; starts within a second: three of 10). A
 * second pass counts every digit at once, then one pass per digit moves the
 * bursts.
 */
#include <commtap/burst_sort.h>
#include <commtap/merge_runs.h>
#include <commtap/slow_alloc.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIGIT_BITS 11
#define BUCKETS	       (1u << MAX_DIGIT_BITS)
#define MAX_DIGITS     9    /* 64-bit start, then 32-bit flow */
#define RADIX_FROM     2048 /* below this, a comparison sort is cheaper than the passes */

enum key { KEY_START, KEY_FLOW };

static inline uint64_t key_of(const struct ct_burst *b, enum key k)
{
	return k == KEY_START ? b->start : b->flow;
}

struct digit {
	enum key key;
	uint64_t min; /* the key's smallest value */
	unsigned shift;
	uint64_t mask;
	size_t *count; /* BUCKETS */
};

static inline size_t digit_of(const struct ct_burst *b, const struct digit *d)
{
	return (size_t)(((key_of(b, d->key) - d->min) >> d->shift) & d->mask);
}

/* One stable pass on a digit (its counts already made); 0 if every burst has the same digit. */
static int pass(const struct ct_burst *src, struct ct_burst *dst, size_t n, const struct digit *d)
{
	size_t *count = d->count, pos = 0;

	for (unsigned v = 0; v <= d->mask; v++) {
		size_t c = count[v];

		if (c == n)
			return 0;
		count[v] = pos;
		pos += c;
	}
	/* the key is a constant per loop, so each loop is the plain field's */
	if (d->key == KEY_START)
		for (size_t i = 0; i < n; i++)
			dst[count[((src[i].start - d->min) >> d->shift) & d->mask]++] = src[i];
	else
		for (size_t i = 0; i < n; i++)
			dst[count[((src[i].flow - d->min) >> d->shift) & d->mask]++] = src[i];
	return 1;
}

/* b sorted by keys[nkeys - 1], then ..., then keys[0]? */
static int in_order(const struct ct_burst *a, const struct ct_burst *b, const enum key *keys,
		    unsigned nkeys)
{
	for (unsigned k = nkeys; k-- > 0;) {
		uint64_t x = key_of(a, keys[k]), y = key_of(b, keys[k]);

		if (x != y)
			return x < y;
	}
	return 1;
}

/* Sort by each key in turn (least significant first), all stable; tmp: n bursts or NULL. */
static int radix(struct ct_burst *b, size_t n, const enum key *keys, unsigned nkeys,
		 struct ct_burst *tmp)
{
	struct digit d[MAX_DIGITS];
	uint64_t min[2] = {UINT64_MAX, UINT64_MAX}, max[2] = {0, 0};
	struct ct_burst *own = NULL, *src = b, *dst;
	size_t *counts;
	unsigned nd = 0;
	int sorted = 1;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		for (unsigned k = 0; k < nkeys; k++) {
			uint64_t v = key_of(&b[i], keys[k]);

			min[k] = v < min[k] ? v : min[k];
			max[k] = v > max[k] ? v : max[k];
		}
		if (sorted && i && !in_order(&b[i - 1], &b[i], keys, nkeys))
			sorted = 0;
	}
	if (sorted)
		return 0;
	for (unsigned k = 0; k < nkeys; k++) {
		uint64_t range = max[k] - min[k];
		unsigned bits = range ? 64 - (unsigned)__builtin_clzll(range) : 0;
		unsigned passes = (bits + MAX_DIGIT_BITS - 1) / MAX_DIGIT_BITS;
		unsigned width = passes ? (bits + passes - 1) / passes : 0;

		for (unsigned p = 0; p < passes; p++)
			d[nd++] = (struct digit){keys[k], min[k], p * width, (1ull << width) - 1,
						 NULL};
	}
	if (!tmp)
		tmp = own = ct_slow_alloc(n * sizeof(*tmp));
	counts = calloc((size_t)nd * BUCKETS, sizeof(*counts));
	if (!tmp || !counts) {
		free(own);
		free(counts);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nd; i++)
		d[i].count = counts + (size_t)i * BUCKETS;
	/* every digit's counts in one pass */
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < nd; j++)
			d[j].count[digit_of(&b[i], &d[j])]++;
	dst = tmp;
	for (unsigned j = 0; j < nd; j++)
		if (pass(src, dst, n, &d[j])) {
			struct ct_burst *t = src;

			src = dst;
			dst = t;
		}
	if (src != b)
		memcpy(b, src, n * sizeof(*b));
	free(own);
	free(counts);
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_flow_start(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	return cmp_start(a, b);
}

int ct_bursts_sort_by_start_using(struct ct_burst *b, size_t n, struct ct_burst *tmp)
{
	static const enum key keys[] = {KEY_START};

	if (n < RADIX_FROM) {
		qsort(b, n, sizeof(*b), cmp_start);
		return 0;
	}
	return radix(b, n, keys, 1, tmp);
}

int ct_bursts_sort_by_start(struct ct_burst *b, size_t n)
{
	return ct_bursts_sort_by_start_using(b, n, NULL);
}

int ct_bursts_sort_stable_by_flow_using(struct ct_burst *b, size_t n, struct ct_burst *tmp)
{
	static const enum key keys[] = {KEY_FLOW};

	if (n < RADIX_FROM) {
		/* insertion sort: stable, and small inputs are nearly in order */
		for (size_t i = 1; i < n; i++) {
			struct ct_burst t = b[i];
			size_t j = i;

			for (; j > 0 && b[j - 1].flow > t.flow; j--)
				b[j] = b[j - 1];
			b[j] = t;
		}
		return 0;
	}
	return radix(b, n, keys, 1, tmp);
}

CT_DEFINE_MERGE_RUNS(merge_bursts_by_start, struct ct_burst, start)

void ct_bursts_merge_runs_by_start(struct ct_burst *b, size_t n, struct ct_burst *tmp, size_t *runs)
{
	merge_bursts_by_start(b, n, tmp, runs);
}

int ct_bursts_sort_by_flow_then_start(struct ct_burst *b, size_t n, struct ct_burst *tmp)
{
	if (tmp && !ct_bursts_sort_stable_by_flow_using(b, n, tmp))
		return 0;
	qsort(b, n, sizeof(*b), cmp_flow_start); /* no room for the radix sort */
	return 0;
}
