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

#include <commtap/classify.h>
#include <commtap/flow_set.h>
#include <commtap/periodicity.h>
#include <commtap/report.h>

#include "model.h" /* profiles/ */

/* What classification knows besides the traffic: labels and a profile's expectation. */
struct ct_knowledge {
	struct ct_labels labels;
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

/* The analysis results a report points into. */
struct ct_analysis {
	struct ct_periodicity periodicity;
	struct ct_classification classes;
};

/*
 * Sort and pair r->flows, compute the periodicity over bursts and classify
 * (then the receivers' cc figures per class);
 * r->periodicity and r->classes point into a when they could be computed.
 * Returns 0, or -ENOMEM after saying what is missing (ct_log, CT_LOG_WARN).
 */
int ct_analysis_run(const struct ct_knowledge *k, struct ct_report *r, const struct ct_cm_event *cm,
		    unsigned n_cm, const struct ct_burst_log *bursts, double min_period_s,
		    struct ct_analysis *a);
void ct_analysis_free(struct ct_analysis *a);

#endif
