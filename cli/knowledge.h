/* SPDX-License-Identifier: MIT */
/*
 * What classification knows besides the traffic (agent labels, a job
 * profile's expected transfers), and the last steps from collected flows to
 * a report: sort, pair, periodicity, classes. Shared by `commtap analyze`
 * and commtap-mirror so both write the same report for the same packets.
 */
#ifndef COMMTAP_KNOWLEDGE_H
#define COMMTAP_KNOWLEDGE_H

#include <commtap/classify.h>
#include <commtap/flow_set.h>
#include <commtap/periodicity.h>
#include <commtap/report.h>

#include "model.h"

struct knowledge {
	struct ct_labels labels;
	struct ct_profile profile;
	struct ct_prediction prediction;
	struct ct_expect_xfer *xfers;
	struct ct_class_expect expect;
	int have_profile;
};

/* Load labels and/or a profile (either path may be NULL); errors printed as "prog: ...". */
int knowledge_load(const char *prog, const char *labels_path, const char *profile_path,
		   struct knowledge *k);
void knowledge_free(struct knowledge *k);

int knowledge_classify(const struct knowledge *k, const struct ct_flow_set *set,
		       const struct ct_periodicity *per, struct ct_classification *out);

/*
 * r->flows holds the flows: sort and pair them, compute the periodicity over
 * bursts and classify, filling r->periodicity and r->classes (per and classes
 * are the caller's, freed by it). What fails for want of memory is left out
 * of the report with a line on stderr.
 */
void knowledge_complete_report(const char *prog, const struct knowledge *k, struct ct_report *r,
			       const struct ct_burst_log *bursts, const struct ct_cm_event *cm,
			       unsigned n_cm, double min_period_s, struct ct_periodicity *per,
			       struct ct_classification *classes);

#endif
