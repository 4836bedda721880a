/* SPDX-License-Identifier: MIT */
/*
 * Where every producer's reports go (commtap analyze, commtap agent,
 * commtap-mirror): given an analysed report in memory, the sink builds its
 * document once and from it writes the JSON (renamed into place whole), the
 * per-flow lines and the table, and renders the Prometheus exposition for
 * /metrics (no JSON text written and parsed back). It numbers the interval
 * reports and tells them apart from the final one.
 *
 * A producer reads its input and hands each report's flows, counters and
 * bursts to ct_report_sink_analyse(), which analyses and writes it.
 */
#ifndef COMMTAP_EXPORT_REPORT_SINK_H
#define COMMTAP_EXPORT_REPORT_SINK_H

#include <stdint.h>

#include <commtap/analysis.h>
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
	/*
	 * After a stop was asked for, the final report is written at once from
	 * the flows and counters alone, then the whole analysis gets this long
	 * (seconds) to replace it (0: the first report stands).
	 */
	double shutdown_deadline_s;
};

/* What a report is analysed from, besides its flows and counters (in the report). */
struct ct_report_input {
	struct ct_knowledge *know; /* its labels directory is re-read when it changed */
	/*
	 * Labels the producer learnt itself (the agent: each flow's job from
	 * its process), joined to know's for this report; NULL: none.
	 */
	const struct ct_labels *more_labels;
	const struct ct_cm_event *cm;
	unsigned n_cm;
	const struct ct_burst_log *bursts;
	double min_period_s;
	/*
	 * Called after a whole analysis, before the report is written (the
	 * agent joins its GPU rings there); NULL: none.
	 */
	void (*analysed)(struct ct_report *r, void *ctx);
	void *ctx;
	/* When the stop came (ct_monotonic_ns): the shutdown deadline counts
	 * from it; 0: from the call. */
	uint64_t stopped_ns;
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

/*
 * The report driver of every producer: analyse r (ct_analysis_run) and put
 * it. For a final report after a stop was asked for (stopping), first the
 * flows and counters alone are written at once (the report says what was
 * left out), then the whole analysis runs against the shutdown deadline
 * (from in->stopped_ns), less the time the first report took to write, and
 * its report replaces the first; when that leaves no time, or the analysis
 * runs out of it, the first report stands. The analysis is freed before returning;
 * r->flows stays the caller's. Returns what ct_report_sink_put returned.
 */
int ct_report_sink_analyse(struct ct_report_sink *s, const struct ct_report_input *in,
			   struct ct_report *r, int final, int stopping);

struct ct_snapshot;
/*
 * The workers' merged snapshot as a report's input (commtap-mirror,
 * analyze --live): its flows into r->flows (initialised, and limited, by
 * the caller), its bursts into bursts, its counters into r, its CM log and
 * the bursts into in. 0 or -ENOMEM; the caller frees r->flows and bursts.
 */
int ct_report_of_snapshot(const struct ct_snapshot *all, struct ct_report *r,
			  struct ct_burst_log *bursts, struct ct_report_input *in);

/* The /metrics server's port (0 without --listen). */
uint16_t ct_report_sink_port(const struct ct_report_sink *s);

/*
 * 0 when every file the sink was given was written; else the first
 * failure's negative errno (the producer's exit status is non-zero then),
 * after, when there were several files, a line that says how many of how
 * many were not written and one that says where the final report went.
 */
int ct_report_sink_failures(const struct ct_report_sink *s);

void ct_report_sink_close(struct ct_report_sink *s);

#endif
