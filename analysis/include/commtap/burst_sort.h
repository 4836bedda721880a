/* SPDX-License-Identifier: MIT */
/*
 * Every sort of bursts the slow path does, in one place: stable LSD radix
 * sorts by start or by flow, and a merge of runs already in order.
 */
#ifndef COMMTAP_BURST_SORT_H
#define COMMTAP_BURST_SORT_H

#include <stddef.h>

#include <commtap/period.h>

/*
 * Stable LSD radix sort of bursts by start, O(n) passes over 11-bit digits,
 * skipping digits all bursts share. tmp: the caller's room for n bursts, for
 * one that sorts the same bursts more than once (a fresh 80 MB buffer is
 * 20,000 page faults), or NULL. Return 0 or -ENOMEM (then b is unchanged).
 */
int ct_bursts_sort_by_start(struct ct_burst *b, size_t n);
int ct_bursts_sort_by_start_using(struct ct_burst *b, size_t n, struct ct_burst *tmp);
/* By flow only, keeping the order inside a flow (by start, if it was); as above. */
int ct_bursts_sort_stable_by_flow_using(struct ct_burst *b, size_t n, struct ct_burst *tmp);
/*
 * By flow, each flow's bursts by start: the radix sort in tmp when there is
 * room (tmp not NULL, the counts allocated), else a comparison sort. Returns 0.
 */
int ct_bursts_sort_by_flow_then_start(struct ct_burst *b, size_t n, struct ct_burst *tmp);

/*
 * Stable sort by start of bursts that come in runs already in order (a
 * flow's, a sender's): the runs are merged pairwise, O(n log runs). tmp
 * holds n bursts, runs n + 1 offsets.
 */
void ct_bursts_merge_runs_by_start(struct ct_burst *b, size_t n, struct ct_burst *tmp,
				   size_t *runs);

#endif
