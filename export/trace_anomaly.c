// SPDX-License-Identifier: MIT
/*
 * The report's anomalies for the timeline (docs/trace.md, docs/anomalies.md):
 * one instant per iteration a finding was seen in, at that iteration's
 * start, or where the report says when (a straggler's entry, at_ns) then;
 * a finding of the whole capture (loss, congestion) once, at the
 * capture's first packet. trace.c writes them on the job's track.
 */
#include "trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void name_of(const struct ct_rep_finding *f, char *buf, size_t len)
{
	const char *kind = ct_rep_kind_name(f->kind);

	if (f->scope == CT_ANOMALY_AT_LINK)
		snprintf(buf, len, "%s %s>%s", kind, f->src, f->dst);
	else if (f->scope == CT_ANOMALY_AT_PRIORITY)
		snprintf(buf, len, "%s priority %llu", kind, (unsigned long long)f->priority);
	else if (f->scope == CT_ANOMALY_AT_JOB)
		snprintf(buf, len, "%s", kind);
	else
		snprintf(buf, len, "%s %s", kind, f->host);
}

static int by_ts(const void *pa, const void *pb)
{
	const struct tr_instant *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return strcmp(a->name, b->name);
}

long tr_anomaly_instants(const struct ct_rep *rep, const uint64_t *iters, size_t n_iter,
			 struct tr_instant **out)
{
	const struct ct_rep_anomalies *a = &rep->anomalies;
	uint64_t first = rep->capture.first_ts;
	size_t n = 0, cap = 0;
	struct tr_instant *v;

	*out = NULL;
	for (size_t i = 0; i < a->n_findings; i++) {
		const struct ct_rep_finding *f = &a->findings[i];

		cap += f->has_per_iteration ? f->n_per_iteration : 1;
	}
	if (!cap)
		return 0;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < a->n_findings; i++) {
		const struct ct_rep_finding *f = &a->findings[i];
		char name[96];

		name_of(f, name, sizeof(name));
		if (!f->has_per_iteration) {
			v[n] = (struct tr_instant){.ts = first, .finding = f, .iteration = -1};
			memcpy(v[n++].name, name, sizeof(name));
			continue;
		}
		for (size_t k = 0; k < f->n_per_iteration; k++) {
			uint64_t it = f->per_iteration[k].iteration, at = f->per_iteration[k].at_ns;

			if (it >= n_iter) /* not in this report's iterations */
				continue;
			v[n] = (struct tr_instant){
				.ts = at ? at : iters[it], .finding = f, .iteration = (long)it};
			memcpy(v[n++].name, name, sizeof(name));
		}
	}
	qsort(v, n, sizeof(*v), by_ts);
	*out = v;
	return (long)n;
}
