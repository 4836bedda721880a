// SPDX-License-Identifier: MIT
/*
 * The union in time of many flows' bursts, each flow's already by start
 * (ct_flow_periodicity.bursts): a k-way merge through a binary heap of the
 * flows, O(bursts x log flows) and no copy of the bursts, so the advice
 * adds nothing per burst to a report's peak memory.
 */
#include "advice_internal.h"

/* A burst's part inside [w0, w1): 0 when none. */
static int clip(const struct ct_burst *b, uint64_t w0, uint64_t w1, uint64_t *a, uint64_t *e)
{
	if (b->start >= w1 || b->end < w0 || (b->end == w0 && b->start < w0))
		return 0;
	*a = b->start > w0 ? b->start : w0;
	*e = b->end < w1 ? b->end : w1;
	if (*e < *a)
		*e = *a;
	return 1;
}

/* Move r->cur to its next burst inside the window (from cur itself); 0 when none is left. */
static int settle(struct ct_advice_run *r, uint64_t w0, uint64_t w1)
{
	uint64_t a, e;

	for (; r->cur < r->last; r->cur++) {
		if (r->cur->start >= w1)
			break; /* by start: none after it is inside either */
		if (clip(r->cur, w0, w1, &a, &e))
			return 1;
	}
	r->cur = r->last;
	return 0;
}

/* A union being built in start order: the open interval and what is closed. */
struct acc {
	uint64_t total, open_start, open_end;
	int open;
};

static void acc_add(struct acc *u, uint64_t a, uint64_t e)
{
	if (u->open && a <= u->open_end) {
		if (e > u->open_end)
			u->open_end = e;
		return;
	}
	if (u->open)
		u->total += u->open_end - u->open_start;
	*u = (struct acc){u->total, a, e, 1};
}

static uint64_t acc_len(const struct acc *u)
{
	return u->open ? u->total + u->open_end - u->open_start : u->total;
}

static void sift_down(struct ct_advice_heap *heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct ct_advice_heap t;

		if (l < n && heap[l].key < heap[m].key)
			m = l;
		if (l + 1 < n && heap[l + 1].key < heap[m].key)
			m = l + 1;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

void ct_advice_runs_union(struct ct_advice_run *runs, size_t n, uint64_t w0, uint64_t w1,
			  struct ct_advice_heap *heap, uint64_t *now_ns, uint64_t *at_nic_ns)
{
	struct acc now = {0}, nic = {0};
	size_t live = 0;

	for (size_t i = 0; i < n; i++) {
		runs[i].cur = runs[i].first;
		if (settle(&runs[i], w0, w1))
			heap[live++] = (struct ct_advice_heap){
				runs[i].cur->start > w0 ? runs[i].cur->start : w0, i};
	}
	for (size_t i = live / 2; i-- > 0;)
		sift_down(heap, live, i);
	while (live) {
		struct ct_advice_run *r = &runs[heap[0].run];
		uint64_t a = 0, e = 0;

		clip(r->cur, w0, w1, &a, &e);
		acc_add(&now, a, e);
		acc_add(&nic, a, r->util < 1 ? a + (uint64_t)((double)(e - a) * r->util) : e);
		r->cur++;
		if (settle(r, w0, w1))
			heap[0].key = r->cur->start > w0 ? r->cur->start : w0;
		else
			heap[0] = heap[--live];
		sift_down(heap, live, 0);
	}
	*now_ns = acc_len(&now);
	if (at_nic_ns)
		*at_nic_ns = acc_len(&nic);
}

double ct_advice_run_bytes(const struct ct_advice_run *r, uint64_t w0, uint64_t w1)
{
	double bytes = 0;

	for (const struct ct_burst *b = r->first; b < r->last && b->start < w1; b++) {
		uint64_t a, e;

		if (!clip(b, w0, w1, &a, &e))
			continue;
		/* a burst cut by the window keeps the bytes of the part inside */
		bytes += b->end > b->start
				 ? (double)b->bytes * (double)(e - a) / (double)(b->end - b->start)
				 : (double)b->bytes;
	}
	return bytes;
}
