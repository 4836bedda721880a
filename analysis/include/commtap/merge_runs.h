/* SPDX-License-Identifier: MIT */
/*
 * The slow path's one merge sort, for elements that come in runs already in
 * order (a flow's bursts by start, a sender's; burst edges by time): the
 * runs are found, then merged pairwise, O(n log runs), stable (ties: the
 * left run first). Defined per element type so the key comparison is
 * inlined:
 *
 *   CT_DEFINE_MERGE_RUNS(name, type, key)
 *
 * defines static void name(type *v, size_t n, type *tmp, size_t *runs),
 * sorting v by its field key; tmp holds n elements, runs n + 1 offsets.
 */
#ifndef COMMTAP_MERGE_RUNS_H
#define COMMTAP_MERGE_RUNS_H

#include <stddef.h>
#include <string.h>

#define CT_DEFINE_MERGE_RUNS(name, type, key)                                                      \
	static void name(type *v, size_t n, type *tmp, size_t *runs)                               \
	{                                                                                          \
		type *src = v, *dst = tmp;                                                         \
		size_t nr = 0;                                                                     \
                                                                                                   \
		if (n < 2)                                                                         \
			return;                                                                    \
		runs[nr++] = 0;                                                                    \
		for (size_t i = 1; i < n; i++)                                                     \
			if (v[i].key < v[i - 1].key)                                               \
				runs[nr++] = i;                                                    \
		runs[nr] = n; /* run r is [runs[r], runs[r + 1]) */                                \
		while (nr > 1) {                                                                   \
			size_t k = 0;                                                              \
                                                                                                   \
			for (size_t r = 0; r < nr; r += 2) {                                       \
				size_t lo = runs[r], mid = runs[r + 1];                            \
				size_t hi = r + 1 < nr ? runs[r + 2] : mid;                        \
				size_t i = lo, j = mid, o = lo;                                    \
                                                                                                   \
				while (i < mid && j < hi)                                          \
					dst[o++] = src[j].key < src[i].key ? src[j++] : src[i++];  \
				memcpy(dst + o, src + i, (mid - i) * sizeof(*dst));                \
				o += mid - i;                                                      \
				memcpy(dst + o, src + j, (hi - j) * sizeof(*dst));                 \
				runs[k++] = lo;                                                    \
			}                                                                          \
			runs[k] = n;                                                               \
			nr = k;                                                                    \
			type *t = src;                                                             \
                                                                                                   \
			src = dst;                                                                 \
			dst = t;                                                                   \
		}                                                                                  \
		if (src != v)                                                                      \
			memcpy(v, src, n * sizeof(*v));                                            \
	}

#endif
