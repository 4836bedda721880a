// SPDX-License-Identifier: MIT
/*
 * Labels and profile knowledge for classification, and the report's last
 * steps (see knowledge.h).
 */
#include "knowledge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Load the labels and the profile named on the command line; errors are reported here. */
int knowledge_load(const char *prog, const char *labels_path, const char *profile_path,
		   struct knowledge *k)
{
	char err[768];
	int rc;

	if (labels_path) {
		rc = ct_labels_load(labels_path, &k->labels, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "%s: --labels %s\n", prog, err);
			return rc;
		}
	}
	if (!profile_path)
		return 0;
	rc = ct_profile_load(profile_path, &k->profile, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s: --profile %s\n", prog, err);
		return rc;
	}
	k->have_profile = 1;
	rc = ct_predict(&k->profile, &k->prediction);
	if (rc) {
		fprintf(stderr, "%s: --profile %s: cannot predict its traffic: %s\n", prog,
			profile_path, strerror(-rc));
		return rc;
	}
	k->xfers = calloc(k->prediction.n_xfers + 1, sizeof(*k->xfers));
	if (!k->xfers)
		return -ENOMEM;
	/* the transfers that cross a NIC, placed in the iteration */
	for (size_t i = 0; i < k->prediction.n_xfers; i++) {
		const struct ct_transfer *x = &k->prediction.xfers[i];
		double t = k->prediction.t_iter;

		if (x->src_host == x->dst_host)
			continue;
		k->xfers[k->expect.n_xfers++] = (struct ct_expect_xfer){
			.src_rank = x->src_rank,
			.dst_rank = x->dst_rank,
			.src_host = x->src_host,
			.dst_host = x->dst_host,
			.cls = x->cls,
			.phase_start = x->start / t,
			.phase_end = (x->start + x->duration) / t,
			.bytes = (double)x->bytes,
		};
	}
	k->expect.profile = k->profile.name;
	k->expect.hosts = k->profile.hosts;
	k->expect.host_addr = k->profile.host_addr;
	k->expect.xfers = k->xfers;
	return 0;
}

void knowledge_free(struct knowledge *k)
{
	ct_labels_free(&k->labels);
	free(k->xfers);
	if (k->have_profile) {
		ct_prediction_free(&k->prediction);
		ct_profile_free(&k->profile);
	}
}

int knowledge_classify(const struct knowledge *k, const struct ct_flow_set *set,
		       const struct ct_periodicity *per, struct ct_classification *out)
{
	return ct_classify(set, per, k->labels.n ? &k->labels : NULL,
			   k->have_profile ? &k->expect : NULL, out);
}

void knowledge_complete_report(const char *prog, const struct knowledge *k, struct ct_report *r,
			       const struct ct_burst_log *bursts, const struct ct_cm_event *cm,
			       unsigned n_cm, double min_period_s, struct ct_periodicity *per,
			       struct ct_classification *classes)
{
	ct_flow_set_sort(&r->flows);
	ct_flow_set_pair(&r->flows, cm, n_cm);
	if (ct_periodicity_compute(&r->flows, bursts, min_period_s, per))
		fprintf(stderr, "%s: out of memory: the report has no periodicity\n", prog);
	else
		r->periodicity = per;
	if (knowledge_classify(k, &r->flows, r->periodicity, classes))
		fprintf(stderr, "%s: out of memory: the report has no classes\n", prog);
	else
		r->classes = classes;
}
