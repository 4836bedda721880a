/* SPDX-License-Identifier: MIT */
/*
 * Engine snapshots: what an engine has seen so far, copied out for a report,
 * and merged with the snapshots of other engines (one per core).
 *
 * A snapshot is slow-path state owned by the caller. Taking one drains the
 * engine's rings (evicted flows and finished bursts accumulate in the
 * snapshot, so a snapshot stays cumulative from the engine's creation), and
 * copies the flows still live in the table without touching them. Take it on
 * the thread that feeds the engine, between bursts: the engine has no locks.
 * Snapshots allocate (realloc); ct_engine_feed never does.
 */
#ifndef COMMTAP_SNAPSHOT_H
#define COMMTAP_SNAPSHOT_H

#include <stddef.h>

#include <commtap/dataplane.h>

struct ct_snapshot {
	struct ct_engine_counters counters;
	/* flows[0, n_ended) left the engine; flows[n_ended, n_flows) are live copies */
	struct ct_flow *flows;
	size_t n_flows, n_ended, flows_cap;
	struct ct_flow_burst *bursts; /* finished bursts, oldest first per engine */
	size_t n_bursts, bursts_cap;
	struct ct_cm_event *cm; /* CM messages logged */
	size_t n_cm, cm_cap;
	uint64_t lost; /* flows or bursts dropped for want of memory */
};

void ct_snapshot_init(struct ct_snapshot *s);
void ct_snapshot_free(struct ct_snapshot *s);

/*
 * Bring s up to date with e: counters, flows ended since the last take,
 * bursts, CM log, and fresh copies of the live flows. Returns 0 or -ENOMEM
 * (what did not fit is counted in s->lost; s stays usable).
 */
int ct_snapshot_take(struct ct_engine *e, struct ct_snapshot *s);

/*
 * End of input for e (ct_engine_finish): every flow ends and lands in s,
 * open bursts close. The table is empty afterwards.
 */
int ct_snapshot_finish(struct ct_engine *e, struct ct_snapshot *s);

/*
 * Add src to dst: counters summed (first_ts the earliest, last_ts the latest),
 * flows, bursts and CM messages appended. Merge into an empty snapshot first
 * to combine several engines; dst is then for reporting only (not for
 * ct_snapshot_take). Returns 0 or -ENOMEM.
 */
int ct_snapshot_merge(struct ct_snapshot *dst, const struct ct_snapshot *src);

/* Sum b into a (as ct_snapshot_merge does for counters). */
void ct_engine_counters_add(struct ct_engine_counters *a, const struct ct_engine_counters *b);

#endif
