/* SPDX-License-Identifier: MIT */
/*
 * From flows and bursts to an analysed report: what every producer shares.
 * The flows come from the engine (commtap analyze, commtap-mirror) or from
 * the kernel probe's maps (commtap agent); from here on all take the same
 * path: sort, pair, periodicity, classification; export/report_sink.h
 * then writes and publishes the report.
 */
#ifndef COMMTAP_ANALYSIS_H
#define COMMTAP_ANALYSIS_H

#include <time.h>

#include <commtap/anomaly.h>
#include <commtap/classify.h>
#include <commtap/flow_set.h>
#include <commtap/periodicity.h>
#include <commtap/report.h>

#include "model.h" /* profiles/ */

/* What classification knows besides the traffic: labels and a profile's expectation. */
struct ct_knowledge {
	struct ct_labels labels;
	const char *labels_dir; /* --labels named a directory: re-read when it changes */
	struct timespec labels_mtime;
	struct ct_profile profile;
	struct ct_prediction prediction;
	struct ct_expect_xfer *xfers;
	struct ct_class_expect expect;
	int have_profile;
};

/*
 * Load the labels and the profile (either may be NULL). Returns 0, or a
 * negative errno with a one-line reason naming the option in err.
 */
int ct_knowledge_load(const char *labels_path, const char *profile_path, struct ct_knowledge *k,
		      char *err, size_t errlen);
void ct_knowledge_free(struct ct_knowledge *k);
/*
 * Before a report: when --labels named a directory and it changed since it
 * was read (an agent renamed a new labels file into it), read it again.
 * Returns 0 (also when nothing changed), or a negative errno with the
 * reason in err; the labels read before then stay.
 */
int ct_knowledge_refresh(struct ct_knowledge *k, char *err, size_t errlen);

/* The analysis results a report points into. */
struct ct_analysis {
	struct ct_periodicity periodicity;
	struct ct_classification classes;
	struct ct_anomalies anomalies;
	/*
	 * CLOCK_MONOTONIC ns by which the analysis must end (0: none): a step
	 * that would start after it is left out, and the report says which
	 * (ct_report.cut_short). The caller sets it; ct_analysis_free keeps it.
	 */
	uint64_t deadline_ns;
};

/* CLOCK_MONOTONIC in ns, the deadline's clock. */
uint64_t ct_monotonic_ns(void);

/*
 * Sort and pair r->flows, compute the periodicity over bursts and classify
 * (then the receivers' cc figures per class);
 * r->periodicity and r->classes point into a when they could be computed.
 * Returns 0, -ETIMEDOUT when the deadline cut it short (r->cut_short says
 * where), or -ENOMEM after saying what is missing (ct_log, CT_LOG_WARN).
 */
int ct_analysis_run(const struct ct_knowledge *k, struct ct_report *r, const struct ct_cm_event *cm,
		    unsigned n_cm, const struct ct_burst_log *bursts, double min_period_s,
		    struct ct_analysis *a);
void ct_analysis_free(struct ct_analysis *a);
/* Before a report is analysed again: drop its pointers into the freed analysis. */
void ct_report_forget_analysis(struct ct_report *r);

#endif
