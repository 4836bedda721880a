// SPDX-License-Identifier: MIT
/*
 * The GPU host's clock against the wire's, from what a report holds: the GPU
 * section's iterations end where the iteration's last data-parallel
 * collective ends (host_gpu/correlate), and on the wire that collective's
 * bursts end a moment before. The median of the differences over the
 * iterations is the offset, their largest deviation its uncertainty.
 */
#include "trace_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The class whose collectives close the GPU section's iterations: DP, else the busiest. */
static int boundary_class(const struct ct_rep_gpu *gpu)
{
	double t[TR_CLASSES] = {0};
	int best = -1;

	for (size_t i = 0; i < gpu->n_iterations; i++)
		for (int c = 0; c < TR_CLASSES - 1; c++)
			t[c] += gpu->iterations[i].t_class[c];
	if (t[CT_CLASS_DP] > 0)
		return CT_CLASS_DP;
	for (int c = 0; c < TR_CLASSES - 1; c++)
		if (t[c] > 0 && (best < 0 || t[c] > t[best]))
			best = c;
	return best;
}

/*
 * Flows the GPU host's correlation labelled (its own, joined to its
 * communicators) stand for its traffic; without labels, every flow of the class.
 */
static int use_flow(const struct tr_flow *t, int cls, int labelled_only)
{
	const char *src = t->flow->class_source;

	return t->cls == cls && (!labelled_only || (src && !strcmp(src, "label")));
}

/* Per wire iteration, the last end of the class's bursts that start in it. */
static size_t wire_ends(const struct ct_rep_period *job, const struct tr_flow *flows, size_t n,
			int cls, int labelled_only, uint64_t *ends)
{
	size_t ns = job->n_iteration_starts, m = 0;
	uint64_t *starts = calloc(ns + 1, sizeof(*starts));

	if (!starts)
		return 0;
	for (size_t i = 0; i < ns; i++)
		starts[i] = job->iteration_starts[i];
	qsort(starts, ns, sizeof(*starts), cmp_u64);
	for (size_t j = 0; j < ns; j++) {
		uint64_t lo = starts[j], hi = j + 1 < ns ? starts[j + 1] : UINT64_MAX, end = 0;

		for (size_t f = 0; f < n; f++) {
			if (!use_flow(&flows[f], cls, labelled_only))
				continue;
			for (size_t k = 0; k < flows[f].nb; k++) {
				const struct tr_burst *b = &flows[f].b[k];

				if (b->start >= lo && b->start < hi && b->end > end)
					end = b->end;
			}
		}
		if (end)
			ends[m++] = end;
	}
	free(starts);
	return m;
}

void tr_clock_estimate(const struct ct_rep *rep, const struct tr_flow *flows, size_t n,
		       struct tr_clock *c)
{
	const struct ct_rep_gpu *gpu = &rep->gpu;
	size_t ni = gpu->n_iterations, nw, np = 0;
	uint64_t *wire = NULL;
	int64_t *d = NULL, spread = 0;
	double period = rep->job.iteration_period_s;
	int cls, labelled = 0;

	memset(c, 0, sizeof(*c));
	if (ni < 2) {
		snprintf(
			c->why, sizeof(c->why),
			"not estimated: the gpu section has %zu iterations, two or more are needed",
			ni);
		return;
	}
	cls = boundary_class(gpu);
	if (cls < 0) {
		snprintf(c->why, sizeof(c->why),
			 "not estimated: the gpu section's iterations spend no time in any class");
		return;
	}
	c->boundary_class = tr_class_name(cls);
	if (!strcmp(rep->clock_source ?: "", "ebpf")) {
		c->estimated = c->same_clock = 1;
		snprintf(c->why, sizeof(c->why),
			 "one clock: the report's flows were timed on the GPU host itself (the "
			 "agent's probe, CLOCK_MONOTONIC moved to CLOCK_REALTIME at its start), so "
			 "the offset is 0; its uncertainty, the realtime clock's slew since the "
			 "agent "
			 "started, is not measured (gpu_host_sync bounds the clock's error)");
		return;
	}
	if (gpu->has_joined && !gpu->joined_wire_bytes[cls]) {
		snprintf(c->why, sizeof(c->why),
			 "not estimated: the %s collectives that end the gpu section's iterations "
			 "put no bytes on the wire (operations_joined), so the wire cannot show "
			 "where they end",
			 tr_class_name(cls));
		return;
	}
	for (size_t f = 0; f < n && !labelled; f++)
		labelled = use_flow(&flows[f], cls, 1);
	wire = calloc(rep->job.n_iteration_starts + 1, sizeof(*wire));
	d = calloc(ni, sizeof(*d));
	if (!wire || !d) {
		snprintf(c->why, sizeof(c->why), "not estimated: out of memory");
		goto out;
	}
	nw = wire_ends(&rep->job, flows, n, cls, labelled, wire);
	if (nw < 2 || !(period > 0)) {
		snprintf(c->why, sizeof(c->why),
			 "not estimated: the wire shows %s bursts in %zu iterations%s; two or more "
			 "iterations of a periodic job are needed",
			 tr_class_name(cls), nw, period > 0 ? "" : " and no iteration period");
		goto out;
	}
	/* Each GPU iteration end against the nearest wire end of its class. */
	for (size_t i = 0; i < ni; i++) {
		const struct ct_rep_gpu_iteration *it = &gpu->iterations[i];
		uint64_t e = it->start_ns + llround(it->t_iter * 1e9);
		int64_t best = 0;
		int have = 0;

		for (size_t j = 0; j < nw; j++) {
			int64_t x = (int64_t)(e - wire[j]);

			if (!have || llabs(x) < llabs(best)) {
				best = x;
				have = 1;
			}
		}
		d[np++] = best;
	}
	qsort(d, np, sizeof(*d), cmp_i64);
	c->offset_ns = np % 2 ? d[np / 2] : d[np / 2 - 1] + (d[np / 2] - d[np / 2 - 1]) / 2;
	for (size_t i = 0; i < np; i++)
		if (llabs(d[i] - c->offset_ns) > spread)
			spread = llabs(d[i] - c->offset_ns);
	c->pairs = (unsigned)np;
	if (spread > (int64_t)(period * 1e9 / 4)) {
		snprintf(c->why, sizeof(c->why),
			 "not estimated: the gpu section's iteration ends do not line up with the "
			 "wire's %s burst ends (they scatter by %.3f ms, over a quarter of the "
			 "%.3f ms "
			 "iteration)",
			 tr_class_name(cls), spread / 1e6, period * 1e3);
		goto out;
	}
	c->estimated = 1;
	c->uncertainty_ns = spread;
	snprintf(c->why, sizeof(c->why),
		 "median over %u GPU iterations of (iteration end on the GPU host, where its last "
		 "%s collective ends) minus (end of the %s bursts of %s in the nearest wire "
		 "iteration); uncertainty: the largest deviation from the median. Assumes the "
		 "clocks "
		 "differ by less than half an iteration (%.3f ms): more is ambiguous by whole "
		 "iterations. The lag from a collective's last wire byte to its completion on the "
		 "GPU "
		 "is inside the estimate",
		 c->pairs, tr_class_name(cls), tr_class_name(cls),
		 labelled ? "the flows labelled from the GPU host's communicators"
			  : "every flow of the class (the report has no labels)",
		 period * 1e3 / 2);
out:
	free(wire);
	free(d);
}
