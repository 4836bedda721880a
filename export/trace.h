/* SPDX-License-Identifier: MIT */
/*
 * A report as a timeline in the Trace Event Format (JSON object form, the
 * `traceEvents` array) that Perfetto (ui.perfetto.dev) and chrome://tracing
 * open: a process per sending host, a track per busy flow with its bursts as
 * complete slices, one counter per class (bytes on the wire per time bin,
 * every flow included), the job's iterations, and the GPU section's
 * iterations placed on the wire's clock where an offset can be estimated.
 * docs/trace.md describes the layout.
 */
#ifndef COMMTAP_EXPORT_TRACE_H
#define COMMTAP_EXPORT_TRACE_H

#include "report_model.h"

#include <json-c/json.h>
#include <stdio.h>

#define CT_TRACE_DEFAULT_FLOWS 64
#define CT_TRACE_DEFAULT_BINS  2000

struct ct_trace_opts {
	unsigned flows; /* busiest flows drawn as tracks (0: the default) */
	unsigned bins;	/* most counter bins over the time span (0: the default) */
};

/*
 * Write the trace of one report. Returns 0 or a negative errno; err then
 * says what in the report is wrong (empty for I/O errors).
 */
int ct_trace_write_report(const struct ct_rep *rep, const struct ct_trace_opts *opts, FILE *out,
			  char *err, size_t errlen);

/* The same from a commtap.report/v1 document, read as ct_rep_read reads it. */
int ct_trace_write(json_object *doc, const struct ct_trace_opts *opts, FILE *out, char *err,
		   size_t errlen);

#endif
