// SPDX-License-Identifier: MIT
/*
 * The report's anomalies for the timeline (docs/trace.md, docs/anomalies.md):
 * one instant per iteration a finding was seen in, at that iteration's
 * start; a finding of the whole capture (loss, congestion) once, at the
 * capture's first packet. trace.c writes them on the job's track.
 */
#include "report_doc.h"
#include "trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void name_of(json_object *f, char *buf, size_t len)
{
	const char *scope = ct_doc_str(f, "scope"), *kind = ct_doc_str(f, "kind");

	if (scope && !strcmp(scope, "link"))
		snprintf(buf, len, "%s %s>%s", kind, ct_doc_str(f, "src"), ct_doc_str(f, "dst"));
	else if (scope && !strcmp(scope, "priority"))
		snprintf(buf, len, "%s priority %llu", kind,
			 (unsigned long long)ct_doc_u64(f, "priority"));
	else if (scope && !strcmp(scope, "job"))
		snprintf(buf, len, "%s", kind);
	else
		snprintf(buf, len, "%s %s", kind, ct_doc_str(f, "host"));
}

static int by_ts(const void *pa, const void *pb)
{
	const struct tr_instant *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return strcmp(a->name, b->name);
}

long tr_anomaly_instants(json_object *doc, const uint64_t *iters, size_t n_iter,
			 struct tr_instant **out)
{
	json_object *list = ct_doc_get(ct_doc_get(doc, "anomalies"), "findings");
	uint64_t first = ct_doc_u64(ct_doc_get(doc, "capture"), "first_ts");
	size_t n = 0, cap = 0;
	struct tr_instant *v;

	*out = NULL;
	for (size_t i = 0; i < ct_doc_len(list); i++) {
		json_object *its = ct_doc_get(ct_doc_at(list, i), "per_iteration");

		cap += its ? ct_doc_len(its) : 1;
	}
	if (!cap)
		return 0;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < ct_doc_len(list); i++) {
		json_object *f = ct_doc_at(list, i), *its = ct_doc_get(f, "per_iteration");
		char name[96];

		name_of(f, name, sizeof(name));
		if (!its) {
			v[n] = (struct tr_instant){.ts = first, .finding = f, .iteration = -1};
			memcpy(v[n++].name, name, sizeof(name));
			continue;
		}
		for (size_t k = 0; k < ct_doc_len(its); k++) {
			uint64_t it = ct_doc_u64(ct_doc_at(its, k), "iteration");

			if (it >= n_iter) /* not in this report's iterations */
				continue;
			v[n] = (struct tr_instant){
				.ts = iters[it], .finding = f, .iteration = (long)it};
			memcpy(v[n++].name, name, sizeof(name));
		}
	}
	qsort(v, n, sizeof(*v), by_ts);
	*out = v;
	return (long)n;
}
