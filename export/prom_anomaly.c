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

#include "report_doc.h"

#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {"straggler", "slow_link", "loss", "congestion", "rhythm"};
/* each kind's figure, as the report names it */
static const char *const units[] = {"delay_s", "rate_ratio", "loss_signals", "marked_fraction",
				    "excess_s"};

static int kind_index(const char *k)
{
	for (int i = 0; i < 5; i++)
		if (k && !strcmp(k, kinds[i]))
			return i;
	return -1;
}

static int by_confidence(const void *pa, const void *pb)
{
	double a = ct_doc_num(*(json_object *const *)pa, "confidence");
	double b = ct_doc_num(*(json_object *const *)pb, "confidence");

	return a > b ? -1 : a < b;
}

/* Where a finding is, as one label value (addresses and digits: nothing to escape). */
static void where(json_object *f, char *buf, size_t len)
{
	const char *scope = ct_doc_str(f, "scope");

	if (scope && !strcmp(scope, "link"))
		snprintf(buf, len, "%s>%s", ct_doc_str(f, "src"), ct_doc_str(f, "dst"));
	else if (scope && !strcmp(scope, "priority"))
		snprintf(buf, len, "priority %llu", (unsigned long long)ct_doc_u64(f, "priority"));
	else if (scope && !strcmp(scope, "job"))
		snprintf(buf, len, "job");
	else
		snprintf(buf, len, "%s", ct_doc_str(f, "host") ? ct_doc_str(f, "host") : "");
}

/* A series' name and its labels up to the caller's: "name{labels," or "name{". */
static void series(FILE *out, const char *name, const char *labels)
{
	fprintf(out, "%s{%s%s", name, labels ? labels : "", labels && *labels ? "," : "");
}

void ct_prom_anomalies(FILE *out, json_object *doc, const char *labels)
{
	json_object *a = ct_doc_get(doc, "anomalies"), *list = ct_doc_get(a, "findings");
	size_t n = ct_doc_len(list), top = n < CT_PROM_TOP_ANOMALIES ? n : CT_PROM_TOP_ANOMALIES;
	unsigned per_kind[5] = {0};
	json_object **sorted;

	if (!a)
		return;
	for (size_t i = 0; i < n; i++) {
		int k = kind_index(ct_doc_str(ct_doc_at(list, i), "kind"));

		if (k >= 0)
			per_kind[k]++;
	}
	fputs("# HELP commtap_anomalies Anomalies found in the report, by kind.\n"
	      "# TYPE commtap_anomalies gauge\n",
	      out);
	for (int k = 0; k < 5; k++) {
		series(out, "commtap_anomalies", labels);
		fprintf(out, "kind=\"%s\"} %u\n", kinds[k], per_kind[k]);
	}
	if (ct_doc_get(a, "straggler_jitter_s"))
		fprintf(out,
			"# HELP commtap_straggler_jitter_seconds The job's own spread of hosts' "
			"lateness into its collectives (the straggler detector's noise floor).\n"
			"# TYPE commtap_straggler_jitter_seconds gauge\n"
			"commtap_straggler_jitter_seconds%s%s%s %.17g\n",
			labels && *labels ? "{" : "", labels ? labels : "",
			labels && *labels ? "}" : "", ct_doc_num(a, "straggler_jitter_s"));
	sorted = n ? malloc(n * sizeof(*sorted)) : NULL;
	if (!sorted)
		return; /* out of memory: the counts above stand */
	for (size_t i = 0; i < n; i++)
		sorted[i] = ct_doc_at(list, i);
	qsort(sorted, n, sizeof(*sorted), by_confidence);
	fputs("# HELP commtap_anomaly_confidence Confidence of the most confident findings "
	      "(0..1).\n"
	      "# TYPE commtap_anomaly_confidence gauge\n",
	      out);
	for (size_t i = 0; i < top; i++) {
		char w[160];

		where(sorted[i], w, sizeof(w));
		series(out, "commtap_anomaly_confidence", labels);
		fprintf(out, "kind=\"%s\",where=\"%s\"} %.17g\n", ct_doc_str(sorted[i], "kind"), w,
			ct_doc_num(sorted[i], "confidence"));
	}
	fputs("# HELP commtap_anomaly_value The same findings' figure, in the unit the label "
	      "names (docs/anomalies.md).\n"
	      "# TYPE commtap_anomaly_value gauge\n",
	      out);
	for (size_t i = 0; i < top; i++) {
		int k = kind_index(ct_doc_str(sorted[i], "kind"));
		char w[160];

		if (k < 0)
			continue;
		where(sorted[i], w, sizeof(w));
		series(out, "commtap_anomaly_value", labels);
		fprintf(out, "kind=\"%s\",where=\"%s\",unit=\"%s\"} %.17g\n", kinds[k], w, units[k],
			ct_doc_num(sorted[i], units[k]));
	}
	free(sorted);
}
