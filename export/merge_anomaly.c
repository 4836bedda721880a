// SPDX-License-Identifier: MIT
/*
 * The merged report's findings (see merge.h): every vantage point's, one
 * per anomaly. Two findings are one when they are of the same kind, at the
 * same place (host, link, receiver, priority or the job) and their windows
 * overlap in time; the more confident copy is kept and "sources" lists the
 * reports that found it. Windows are compared in capture time, not in
 * iteration numbers: each report numbers the iterations it saw.
 */
#include "merge.h"
#include "report_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct merged_finding {
	const struct ct_rep_finding *f; /* the copy kept */
	uint64_t from, to;		/* window, capture time (ns); 0..UINT64_MAX: all of it */
	unsigned char *sources;		/* [i]: report i found it */
};

/* The finding's window: onset to the last iteration since, or the whole capture. */
static void window(const struct ct_rep_finding *f, double period_s, uint64_t *from, uint64_t *to)
{
	double iterations = f->iterations_since_onset > 1 ? (double)f->iterations_since_onset : 1;

	if (!f->has_onset) {
		*from = 0;
		*to = UINT64_MAX;
		return;
	}
	*from = f->onset_ns;
	*to = f->onset_ns + (uint64_t)(iterations * (period_s > 0 ? period_s : 0) * 1e9);
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int same_place(const struct ct_rep_finding *a, const struct ct_rep_finding *b)
{
	return a->kind == b->kind && a->scope == b->scope && same_text(a->host, b->host) &&
	       same_text(a->src, b->src) && same_text(a->dst, b->dst) && a->priority == b->priority;
}

/* As a report lists them: by kind, then the most confident first. */
static int by_kind_confidence(const void *pa, const void *pb)
{
	const struct merged_finding *a = pa, *b = pb;

	if (a->f->kind != b->f->kind)
		return a->f->kind < b->f->kind ? -1 : 1;
	return a->f->confidence > b->f->confidence ? -1 : a->f->confidence < b->f->confidence;
}

static void add(json_object *o, const char *key, json_object *v, int *oom)
{
	if (!v || json_object_object_add(o, key, v)) {
		json_object_put(v);
		*oom = 1;
	}
}

/* Add report i's findings to the n_out merged so far. */
static size_t fold(struct merged_finding *out, size_t n_out, const struct ct_rep_anomalies *a,
		   size_t i)
{
	for (size_t k = 0; k < a->n_findings; k++) {
		const struct ct_rep_finding *f = &a->findings[k];
		uint64_t from, to;
		size_t j;

		window(f, a->period_s, &from, &to);
		for (j = 0; j < n_out; j++)
			if (same_place(out[j].f, f) && from <= out[j].to && out[j].from <= to)
				break;
		if (j == n_out) {
			out[n_out].f = f;
			out[n_out].from = from;
			out[n_out].to = to;
			out[n_out++].sources[i] = 1;
			continue;
		}
		if (f->confidence > out[j].f->confidence)
			out[j].f = f;
		out[j].from = from < out[j].from ? from : out[j].from;
		out[j].to = to > out[j].to ? to : out[j].to;
		out[j].sources[i] = 1;
	}
	return n_out;
}

/*
 * The section's own figures: iterations, period and the straggler noise
 * floor of the report the job came from (the findings' iteration numbers
 * stay their own report's); a kind not looked for when no report looked.
 */
static void figures(json_object *o, const struct ct_rep_anomalies *reps, size_t n, size_t best,
		    int *oom)
{
	const struct ct_rep_anomalies *b = &reps[best];
	json_object *nl = json_object_new_object();

	add(o, "iterations", json_object_new_uint64(b->iterations), oom);
	add(o, "period_s", json_object_new_double(b->period_s), oom);
	if (b->has_jitter) {
		add(o, "straggler_jitter_s", json_object_new_double(b->straggler_jitter_s), oom);
		add(o, "straggler_threshold_s", json_object_new_double(b->straggler_threshold_s),
		    oom);
	}
	for (size_t k = 0; nl && k < b->n_not_looked; k++) {
		int everywhere = 1;

		for (size_t i = 0; i < n && everywhere; i++) {
			int skipped = !reps[i].present;

			for (size_t m = 0; m < reps[i].n_not_looked; m++)
				skipped |=
					!strcmp(reps[i].not_looked[m].name, b->not_looked[k].name);
			everywhere = skipped;
		}
		if (everywhere)
			add(nl, b->not_looked[k].name, json_object_new_string(b->not_looked[k].why),
			    oom);
	}
	add(o, "not_looked", nl, oom);
}

/* The merged findings as JSON, capped as a report's; *dropped counts the rest. */
static json_object *findings(struct merged_finding *m, size_t n_m, const char *const *names,
			     size_t n, uint64_t *dropped, int *oom)
{
	json_object *list = json_object_new_array();

	qsort(m, n_m, sizeof(*m), by_kind_confidence);
	for (size_t j = 0; list && j < n_m; j++) {
		json_object *copy = NULL, *sources = json_object_new_array();

		if (j >= CT_ANOMALY_MAX) {
			(*dropped)++;
			json_object_put(sources);
			continue;
		}
		if (!sources || json_object_deep_copy(m[j].f->json, &copy, NULL)) {
			json_object_put(sources);
			*oom = 1;
			break;
		}
		for (size_t i = 0; i < n; i++)
			if (m[j].sources[i])
				json_object_array_add(sources, json_object_new_string(names[i]));
		add(copy, "sources", sources, oom);
		if (json_object_array_add(list, copy)) {
			json_object_put(copy);
			*oom = 1;
		}
	}
	if (!list)
		*oom = 1;
	return list;
}

int ct_merge_anomalies(json_object *const *docs, const char *const *names, size_t n, size_t best,
		       json_object **out)
{
	struct ct_rep_anomalies *reps = calloc(n + 1, sizeof(*reps));
	struct merged_finding *m = NULL;
	unsigned char *seen = NULL;
	json_object *o = NULL, *unread = json_object_new_array();
	size_t total = 0, n_m = 0, any = 0;
	uint64_t dropped = 0;
	int oom = !reps || !unread;

	*out = NULL;
	for (size_t i = 0; !oom && i < n; i++) {
		char err[256];

		if (ct_rep_read_anomalies(docs[i], names[i], &reps[i], err, sizeof(err))) {
			json_object_array_add(unread, json_object_new_string(err));
			continue;
		}
		any += reps[i].present;
		total += reps[i].n_findings;
		dropped += reps[i].findings_dropped + reps[i].findings_unknown;
	}
	/* the job's report, else the first that has the section */
	for (size_t i = 0; !oom && (best >= n || !reps[best].present) && i < n; i++)
		best = i;
	if (!oom && (any || json_object_array_length(unread))) {
		m = calloc(total + 1, sizeof(*m));
		seen = calloc((total + 1) * n, 1);
		o = json_object_new_object();
		oom = !m || !seen || !o;
	}
	for (size_t k = 0; !oom && k < total; k++)
		m[k].sources = seen + k * n;
	for (size_t i = 0; !oom && i < n; i++)
		n_m = fold(m, n_m, &reps[i], i);
	if (!oom && o) {
		if (any)
			figures(o, reps, n, best, &oom);
		add(o, "findings", findings(m, n_m, names, n, &dropped, &oom), &oom);
		add(o, "findings_dropped", json_object_new_uint64(dropped), &oom);
		if (json_object_array_length(unread))
			add(o, "unread", json_object_get(unread), &oom);
	}
	for (size_t i = 0; reps && i < n; i++)
		ct_rep_anomalies_free(&reps[i]);
	free(reps);
	free(m);
	free(seen);
	json_object_put(unread);
	if (oom) {
		json_object_put(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}
