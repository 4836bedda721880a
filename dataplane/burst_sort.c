// SPDX-License-Identifier: MIT
/*
 * Radix sorts for bursts: a report sorts millions of 40-byte bursts several
 * ways, where a comparison sort spends most of its time moving records.
 */
#include <commtap/period.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS  11
#define BUCKETS	    (1u << DIGIT_BITS)
#define RADIX_FROM  2048 /* below this, a comparison sort is cheaper than the passes */

typedef uint64_t (*key_fn)(const struct ct_burst *b);

static uint64_t key_start(const struct ct_burst *b)
{
	return b->start;
}

static uint64_t key_flow(const struct ct_burst *b)
{
	return b->flow;
}

/* One stable counting pass on the digit at shift; returns 0 if it was skipped. */
static int pass(const struct ct_burst *src, struct ct_burst *dst, size_t n, key_fn key,
		unsigned shift)
{
	size_t count[BUCKETS] = {0}, pos = 0;

	for (size_t i = 0; i < n; i++)
		count[(key(&src[i]) >> shift) & (BUCKETS - 1)]++;
	for (unsigned d = 0; d < BUCKETS; d++) {
		size_t c = count[d];

		if (c == n)
			return 0; /* every burst has this digit: nothing to do */
		count[d] = pos;
		pos += c;
	}
	for (size_t i = 0; i < n; i++)
		dst[count[(key(&src[i]) >> shift) & (BUCKETS - 1)]++] = src[i];
	return 1;
}

/* Sort by each key in turn (least significant first), all stable. */
static int radix(struct ct_burst *b, size_t n, const key_fn *keys, const unsigned *bits,
		 unsigned nkeys)
{
	struct ct_burst *tmp, *src = b, *dst;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	for (unsigned k = 0; k < nkeys; k++)
		for (unsigned shift = 0; shift < bits[k]; shift += DIGIT_BITS)
			if (pass(src, dst, n, keys[k], shift)) {
				struct ct_burst *t = src;

				src = dst;
				dst = t;
			}
	if (src != b)
		memcpy(b, src, n * sizeof(*b));
	free(tmp);
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

int ct_bursts_sort_by_start(struct ct_burst *b, size_t n)
{
	static const key_fn keys[] = {key_start};
	static const unsigned bits[] = {64};

	if (n < RADIX_FROM) {
		qsort(b, n, sizeof(*b), cmp_start);
		return 0;
	}
	return radix(b, n, keys, bits, 1);
}

int ct_bursts_sort_by_flow(struct ct_burst *b, size_t n)
{
	static const key_fn keys[] = {key_start, key_flow};
	static const unsigned bits[] = {64, 32};

	if (n < RADIX_FROM) {
		qsort(b, n, sizeof(*b), cmp_flow_start);
		return 0;
	}
	return radix(b, n, keys, bits, 2);
}

int ct_bursts_sort_stable_by_flow(struct ct_burst *b, size_t n)
{
	static const key_fn keys[] = {key_flow};
	static const unsigned bits[] = {32};

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
	return radix(b, n, keys, bits, 1);
}
