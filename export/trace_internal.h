/* SPDX-License-Identifier: MIT */
/* What the trace writer (trace.c) and its GPU clock estimate (trace_clock.c) share. */
#ifndef COMMTAP_EXPORT_TRACE_INTERNAL_H
#define COMMTAP_EXPORT_TRACE_INTERNAL_H

#include "report_model.h"

#include <stddef.h>
#include <stdint.h>

#include <commtap/traffic_class.h>

/* The report's classes (ct_class_name's, Other last), then flows without a known class. */
#define TR_UNCLASSIFIED (CT_CLASS_OTHER + 1)
#define TR_CLASSES	(TR_UNCLASSIFIED + 1)

static inline const char *tr_class_name(int c)
{
	return c == TR_UNCLASSIFIED ? "unclassified" : ct_class_name((enum ct_class)c);
}

struct tr_burst {
	uint64_t start, end, bytes, messages;
};

struct tr_flow {
	const struct ct_rep_flow *flow;
	uint64_t id, bytes, burst_bytes;
	const char *src;
	int cls;
	struct tr_burst *b; /* sorted by start */
	size_t nb;
};

/*
 * The GPU host's clock against the wire's: offset = GPU time - wire time of
 * the same instant. estimated is 0 when the report's data does not allow it;
 * why then says what is missing, else how it was estimated.
 */
struct tr_clock {
	int estimated, same_clock;
	int64_t offset_ns, uncertainty_ns;
	unsigned pairs;
	const char *boundary_class;
	char why[640];
};

/*
 * Estimate the offset from the GPU section's iteration ends (the end of the
 * iteration's last data-parallel collective) against the ends of that
 * class's bursts in each wire iteration.
 */
void tr_clock_estimate(const struct ct_rep *rep, const struct tr_flow *flows, size_t n,
		       struct tr_clock *c);

/*
 * An anomaly as an instant event on the job's track (trace_anomaly.c): at
 * the start of each iteration it was seen in, or, said of the whole
 * capture, at its first packet.
 */
struct tr_instant {
	uint64_t ts; /* ns, the wire's clock */
	const struct ct_rep_finding *finding; /* in the report's anomalies */
	char name[96];	      /* "straggler 198.18.0.2" */
	long iteration;	      /* -1: the whole capture */
};

/*
 * The report's anomalies as instants, in time order (*out: free()). iters:
 * the job's iteration starts (n_iter of them, from the report). Returns
 * how many, or -1 when out of memory.
 */
long tr_anomaly_instants(const struct ct_rep *rep, const uint64_t *iters, size_t n_iter,
			 struct tr_instant **out);

#endif
