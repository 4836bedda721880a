/* SPDX-License-Identifier: MIT */
/* Inside the advice (advice.c, advice_pushpull.c). */
#ifndef COMMTAP_ANALYSIS_ADVICE_INTERNAL_H
#define COMMTAP_ANALYSIS_ADVICE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/advice.h>

enum { CT_ADVICE_PUSH = 1, CT_ADVICE_PULL = 2 };

/*
 * Per flow of r (dir: r->flows.count entries): CT_ADVICE_PUSH toward a
 * parameter server, CT_ADVICE_PULL from one, 0 for a flow carrying no
 * PushPull (or between ends alike). Returns 0 or -ENOMEM.
 */
int ct_advice_pushpull_dirs(const struct ct_report *r, uint8_t *dir);

/*
 * One flow's bursts (by start) as the advice walks them: a run of the
 * k-way merge (advice_runs.c).
 */
struct ct_advice_run {
	const struct ct_burst *first, *last, *cur;
	double bytes; /* inside the iterations */
	double util;  /* its sender's utilization: at the NIC rate a burst lasts this share */
	uint32_t flow;
	uint8_t cls, dir;
};

/* A run in the merge's heap, keyed by its next burst's start inside the window. */
struct ct_advice_heap {
	uint64_t key;
	size_t run;
};

/*
 * The union's length (ns) of the runs' bursts cut to [w0, w1) as they are
 * (now_ns) and each shortened to its run's util, start kept (at_nic_ns,
 * may be NULL), in one pass. heap: n entries of scratch. Moves the runs'
 * cursors.
 */
void ct_advice_runs_union(struct ct_advice_run *runs, size_t n, uint64_t w0, uint64_t w1,
			  struct ct_advice_heap *heap, uint64_t *now_ns, uint64_t *at_nic_ns);

/* The bytes of a run's bursts inside [w0, w1), a cut burst's in proportion to the part inside. */
double ct_advice_run_bytes(const struct ct_advice_run *r, uint64_t w0, uint64_t w1);

#endif
