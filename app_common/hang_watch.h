/* SPDX-License-Identifier: MIT */
/*
 * The hang watch of a producer that reports at intervals (analyze
 * --interval, live or not, commtap-mirror, commtap agent): where the job's
 * data flows, as the last report's analysis named them, have been silent
 * as long as the hang detector pages at (ct_anomalies.hang_after_s), a
 * report is due then, not at the interval's end (issue 30: a hang reported
 * within 2 periods; with --interval 1 a real DDP job of 75 ms iterations
 * was told 7.8 to 16.1 iterations after its rank stopped).
 */
#ifndef COMMTAP_APP_HANG_WATCH_H
#define COMMTAP_APP_HANG_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/dataplane.h>
#include <commtap/flow_set.h>
#include <commtap/report.h>
#include <commtap/snapshot.h>

/*
 * Reports due for one silence at most: at the silence that pages, and half
 * of it later where the report's own reading of the job (its period moves
 * from report to report: 74.5 to 74.8 ms in a real ddp-hang) put the
 * threshold just past it.
 */
#define HANG_WATCH_TRIES 2

struct hang_watch {
	struct ct_flow_key *keys; /* the job's data flows */
	size_t n;
	uint64_t after_ns; /* their silence that pages */
	uint64_t due;	   /* input time to look again; 0: nothing to watch */
	uint64_t last;	   /* their last packet, as last looked at */
	uint64_t told;	   /* the last packet of the silence a report said was a hang */
	unsigned tries;	   /* reports due for the silence since last */
};

/*
 * An analysed report's watch (struct ct_report_input's analysed callback,
 * ctx the watch): its job's data flows and the silence that pages, looked
 * at from the next packet on; where it says a hang, the silence is told.
 */
void hang_watch_keep(struct ct_report *r, void *ctx);

/*
 * 1 where at input time now the watched flows, last seen at last (0: none
 * of them seen), have been silent as long as a hang pages and no report
 * has told it yet (HANG_WATCH_TRIES at most); else 0, and when to look
 * again (w->due).
 */
int hang_watch_judge(struct hang_watch *w, uint64_t last, uint64_t now);

/*
 * A worker's snapshot s: the watched flows' last packet in it, and its last
 * packet of all (the silence is timed to that, as the report's hang
 * detector times it), each raised into *last and *now.
 */
void hang_watch_snapshot(const struct hang_watch *w, const struct ct_snapshot *s, uint64_t *last,
			 uint64_t *now);

/* The watched flows' last packet in a set of flow summaries (the agent's reads), 0: none. */
uint64_t hang_watch_last_in_set(const struct hang_watch *w, const struct ct_flow_set *s);

/*
 * hang_watch_judge on an engine's live flows and those already evicted
 * from it (gone).
 */
int hang_watch_look(struct hang_watch *w, struct ct_engine *e, const struct ct_flow_set *gone,
		    uint64_t now);

/* hang_watch_look once the watch is due: a comparison a packet until then. */
static inline int hang_watch_due(struct hang_watch *w, struct ct_engine *e,
				 const struct ct_flow_set *gone, uint64_t now)
{
	return w->due && now >= w->due && hang_watch_look(w, e, gone, now);
}

void hang_watch_free(struct hang_watch *w);

#endif
