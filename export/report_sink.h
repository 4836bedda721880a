/* SPDX-License-Identifier: MIT */
/*
 * Where every producer's reports go (commtap analyze, commtap agent,
 * commtap-mirror): given an analysed report in memory, the sink builds its
 * document once and from it writes the JSON (renamed into place whole), the
 * per-flow lines and the table, and renders the Prometheus exposition for
 * /metrics (no JSON text written and parsed back). It numbers the interval
 * reports and tells them apart from the final one.
 *
 * A producer reads its input, hands snapshots over and calls, per report:
 * ct_analysis_run(), ct_report_sink_put(), ct_analysis_free().
 */
#ifndef COMMTAP_EXPORT_REPORT_SINK_H
#define COMMTAP_EXPORT_REPORT_SINK_H

#include <stdint.h>

#include <commtap/report.h>

struct ct_report_sink_config {
	const char *json_path;	/* the final report ("-": stdout), or NULL */
	const char *lines_path; /* one line per flow of the final report ("-": stdout), or NULL */
	int table;		/* the readable table of the final report on stdout */
	const char *report_dir; /* interval reports: REPORT_DIR/commtap-report-NNNNNN.json */
	int final_in_dir;	/* and the final one as REPORT_DIR/commtap-report-final.json */
	int resume_numbering;	/* number on from the highest report already in report_dir */
	const char *listen;	/* serve /metrics there ("ADDR:PORT"), or NULL */
	const char *input_path; /* the input file, which no output may overwrite, or NULL */
};

struct ct_report_sink;

/*
 * Check the destinations (writable directory, no output that is the input)
 * and start the /metrics server. Returns 0, or a negative errno with a
 * one-line reason naming the option in err.
 */
int ct_report_sink_open(const struct ct_report_sink_config *cfg, struct ct_report_sink **out,
			char *err, size_t errlen);

/*
 * Write and publish one analysed report: an interval report (final == 0) to
 * the report directory and /metrics, the final one to every destination.
 * Sets r->interval and r->seq. A destination that fails is said through
 * ct_log (CT_LOG_WARN) and the others are still written; returns 0 or the
 * first negative errno.
 */
int ct_report_sink_put(struct ct_report_sink *s, struct ct_report *r, int final);

/* The /metrics server's port (0 without --listen). */
uint16_t ct_report_sink_port(const struct ct_report_sink *s);

void ct_report_sink_close(struct ct_report_sink *s);

#endif
