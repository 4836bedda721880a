// SPDX-License-Identifier: MIT
/*
 * Anomalies as Prometheus series (docs/metrics.md, docs/anomalies.md):
 * findings per kind (a fixed label set), and the CT_PROM_TOP_ANOMALIES most
 * confident findings with their confidence and figure, labelled by where
 * they are (a host, "src>dst" for a link, "priority N"), so a scrape stays
 * bounded whatever was found. Every series also carries the labels the
 * caller gives (the fleet's ct_job and vantage: one value each per scrape,
 * so they add no series).
 */
#include "prom_anomaly.h"

#include <stdlib.h>

static int by_confidence(const void *pa, const void *pb)
{
	double a = (*(const struct ct_rep_finding *const *)pa)->confidence;
	double b = (*(const struct ct_rep_finding *const *)pb)->confidence;

	return a > b ? -1 : a < b;
}

/* Where a finding is, as one label value (addresses and digits: nothing to escape). */
static void where(const struct ct_rep_finding *f, char *buf, size_t len)
{
	if (f->scope == CT_ANOMALY_AT_LINK)
		snprintf(buf, len, "%s>%s", f->src, f->dst);
	else if (f->scope == CT_ANOMALY_AT_PRIORITY)
		snprintf(buf, len, "priority %llu", (unsigned long long)f->priority);
	else if (f->scope == CT_ANOMALY_AT_JOB)
		snprintf(buf, len, "job");
	else
		snprintf(buf, len, "%s", f->host ? f->host : "");
}

/* A series' name and its labels up to the caller's: "name{labels," or "name{". */
static void series(FILE *out, const char *name, const char *labels)
{
	fprintf(out, "%s{%s%s", name, labels ? labels : "", labels && *labels ? "," : "");
}

void ct_prom_anomalies(FILE *out, const struct ct_rep_anomalies *a, const char *labels)
{
	size_t n = a->n_findings, top = n < CT_PROM_TOP_ANOMALIES ? n : CT_PROM_TOP_ANOMALIES;
	unsigned per_kind[CT_ANOMALY_KINDS] = {0};
	const struct ct_rep_finding **sorted;

	if (!a->present)
		return;
	for (size_t i = 0; i < n; i++)
		per_kind[a->findings[i].kind]++;
	fputs("# HELP commtap_anomalies Anomalies found in the report, by kind.\n"
	      "# TYPE commtap_anomalies gauge\n",
	      out);
	for (int k = 0; k < CT_ANOMALY_KINDS; k++) {
		series(out, "commtap_anomalies", labels);
		fprintf(out, "kind=\"%s\"} %u\n", ct_rep_kind_name(k), per_kind[k]);
	}
	if (a->has_jitter)
		fprintf(out,
			"# HELP commtap_straggler_jitter_seconds The job's own spread of hosts' "
			"lateness into its collectives (the straggler detector's noise floor).\n"
			"# TYPE commtap_straggler_jitter_seconds gauge\n"
			"commtap_straggler_jitter_seconds%s%s%s %.17g\n",
			labels && *labels ? "{" : "", labels ? labels : "",
			labels && *labels ? "}" : "", a->straggler_jitter_s);
	sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
	if (!sorted)
		return; /* out of memory: the counts above stand */
	for (size_t i = 0; i < n; i++)
		sorted[i] = &a->findings[i];
	qsort(sorted, n, sizeof(*sorted), by_confidence);
	fputs("# HELP commtap_anomaly_confidence Confidence of the most confident findings "
	      "(0..1).\n"
	      "# TYPE commtap_anomaly_confidence gauge\n",
	      out);
	for (size_t i = 0; i < top; i++) {
		char w[160];

		where(sorted[i], w, sizeof(w));
		series(out, "commtap_anomaly_confidence", labels);
		fprintf(out, "kind=\"%s\",where=\"%s\"} %.17g\n", ct_rep_kind_name(sorted[i]->kind),
			w, sorted[i]->confidence);
	}
	fputs("# HELP commtap_anomaly_value The same findings' figure, in the unit the label "
	      "names (docs/anomalies.md).\n"
	      "# TYPE commtap_anomaly_value gauge\n",
	      out);
	for (size_t i = 0; i < top; i++) {
		enum ct_anomaly_kind k = sorted[i]->kind;
		char w[160];

		where(sorted[i], w, sizeof(w));
		series(out, "commtap_anomaly_value", labels);
		fprintf(out, "kind=\"%s\",where=\"%s\",unit=\"%s\"} %.17g\n", ct_rep_kind_name(k),
			w, ct_rep_finding_unit(k), sorted[i]->value);
	}
	free((void *)sorted);
}
