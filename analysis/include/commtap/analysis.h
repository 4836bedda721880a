/* SPDX-License-Identifier: MIT */
/*
 * From flows and bursts to a report: what `commtap analyze` and `commtap
 * agent` share. The flows come from the engine (analyze) or from the
 * kernel probe's maps (agent); from here on both take the same path: sort,
 * pair, periodicity, classification, commtap.report/v1.
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
 * Load the labels and the profile (either may be NULL); errors are reported
 * on stderr prefixed with prog ("commtap analyze").
 */
int ct_knowledge_load(const char *prog, const char *labels_path, const char *profile_path,
		      struct ct_knowledge *k);
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
 * Returns 0, or -ENOMEM after reporting (prefixed with prog) what is missing.
 */
int ct_analysis_run(const char *prog, const struct ct_knowledge *k, struct ct_report *r,
		    const struct ct_cm_event *cm, unsigned n_cm, const struct ct_burst_log *bursts,
		    double min_period_s, struct ct_analysis *a);
void ct_analysis_free(struct ct_analysis *a);

/* Write the JSON report to path.tmp and rename it over path: readers never see half. */
int ct_report_write_json_file(const struct ct_report *r, const char *path);

#endif
