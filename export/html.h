/* SPDX-License-Identifier: MIT */
/*
 * The report as one self-contained HTML page: inline CSS and SVG drawn here,
 * no script, nothing fetched. Sections: summary, host x host heatmap per
 * class (bytes per iteration), message-size CDF per class, on-off timeline
 * of the classes and busiest flows over a few iterations, periodicity table,
 * congestion control, predicted versus observed (with a profile), GPU
 * per-iteration bars (when the report carries them).
 *
 * Timestamps stay exact: times are printed as integer nanosecond offsets
 * from the capture's first packet (computed in uint64), and the base is
 * printed once as a decimal string.
 */
#ifndef COMMTAP_EXPORT_HTML_H
#define COMMTAP_EXPORT_HTML_H

#include "report_model.h"

#include <json-c/json.h>
#include <stdio.h>

#define CT_HTML_CLASSES 6 /* TP PP DP EP EmbTableSyn Other, as in traffic_class.h */

/* What a profile predicts, in the units of the capture (scaled like synth). */
struct ct_html_expect {
	const char *profile; /* its name */
	unsigned n_hosts;
	const char *const *host_addr; /* n_hosts addresses, as the report writes them */
	const double *bytes;	      /* [class][src][dst] bytes per iteration */
	double t_iter, t_comp, t_bubble;
	double t_class[CT_HTML_CLASSES];
	int on_wire[CT_HTML_CLASSES]; /* the class crosses a NIC (TP inside a host does not) */
};

struct ct_html_opts {
	const char *title;
	const struct ct_html_expect *expect; /* NULL: no profile */
	unsigned timeline_iterations;	     /* iterations the timeline shows (default 3) */
	unsigned timeline_flows;	     /* busiest flows in the timeline (default 8) */
	unsigned table_flows;		     /* flows in the periodicity table (default 40) */
};

/* Write the page for one (possibly merged) report. Returns 0 or a negative errno. */
int ct_html_write_report(const struct ct_rep *rep, const struct ct_html_opts *opts, FILE *out);

/* The same from a document, read as ct_rep_read reads it (-EINVAL: a field's type is wrong). */
int ct_html_write(json_object *report, const struct ct_html_opts *opts, FILE *out);

#endif
