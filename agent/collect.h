/* SPDX-License-Identifier: MIT */
/*
 * From the probes' maps and rings to flow summaries, bursts and counters:
 * the input of the same analysis `commtap analyze` runs (commtap/analysis.h).
 *
 * The kernel evicts LRU entries silently, so each read keeps the last copy
 * of every live flow; a flow gone from the map (or re-created, told by its
 * first packet's time) keeps its last copy in the report. What arrived
 * between that read and the eviction is still in the totals.
 */
#ifndef COMMTAP_AGENT_COLLECT_H
#define COMMTAP_AGENT_COLLECT_H

#include <json-c/json.h>

#include <commtap/flow_set.h>
#include <commtap/periodicity.h>
#include <commtap/report.h>

#include "../ebpf/probe_abi.h"
#include "probe.h"

struct ring_buffer;

struct ct_collect {
	struct ct_probe **probes;
	unsigned n_probes;
	struct ring_buffer *ring;
	int64_t clock_offset;	    /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	uint64_t window_ns;	    /* bursts older than this are dropped (0 keeps all) */
	struct ct_flow_set retired; /* flows gone from the maps: their last copy */
	struct ct_flow_set live;    /* the last read of the maps */
	struct ct_flow_set hist;    /* message-size histograms from the ring, by key */
	struct ct_burst_log bursts;
	uint64_t totals[CTP_T_COUNT];
	uint64_t live_entries;
	uint64_t capacity;
	uint64_t table_bytes; /* the flow maps' keys and records at capacity */
	uint64_t newest_ts;
	uint64_t records, oom;
	int batch_unsupported;
};

int ct_collect_init(struct ct_collect *c, struct ct_probe **probes, unsigned n, uint64_t window_ns,
		    char *err, size_t errlen);
void ct_collect_free(struct ct_collect *c);

/* Drain the rings: wait up to timeout_ms for records. Returns records or -errno. */
int ct_collect_poll(struct ct_collect *c, int timeout_ms);

/*
 * Read every probe's maps. With final, messages and bursts still open are
 * closed as `commtap analyze` closes them at the end of a capture.
 */
int ct_collect_read(struct ct_collect *c, int final);

/*
 * Fill r (flows unsorted, counters) from the last read, and *host with the
 * report's "host" section (probe and RDMA counters; json_object_put() it).
 */
int ct_collect_report(struct ct_collect *c, struct ct_report *r, struct json_object **host);

#endif
