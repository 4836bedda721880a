// SPDX-License-Identifier: MIT
/* Merging reports of several vantage points into one (see merge.h). */
#include "merge.h"
#include "report_doc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KEY_LEN 160

struct merge_flow {
	json_object *flow;
	size_t doc;
	size_t slot; /* position in key order */
	char key[KEY_LEN];
};

static int by_key(const void *pa, const void *pb)
{
	const struct merge_flow *a = pa, *b = pb;

	return strcmp(a->key, b->key);
}

static int by_report_order(const void *pa, const void *pb)
{
	const struct merge_flow *a = pa, *b = pb;

	return ct_doc_flow_cmp(a->flow, b->flow);
}

/* Of two copies of one flow, the one seen better: more packets, a surer class. */
static int better_copy(const struct merge_flow *a, const struct merge_flow *b)
{
	uint64_t pa = ct_doc_u64(a->flow, "packets"), pb = ct_doc_u64(b->flow, "packets");

	if (pa != pb)
		return pa > pb;
	return ct_doc_num(a->flow, "class_confidence") > ct_doc_num(b->flow, "class_confidence");
}

static int key_of_sorted(const void *key, const void *elem)
{
	return strcmp(key, ((const struct merge_flow *)elem)->key);
}

/* Add src's integer counters into dst (objects and arrays recursively). */
static void sum_counters(json_object *dst, json_object *src)
{
	if (json_object_is_type(dst, json_type_array)) {
		for (size_t i = 0; i < ct_doc_len(dst) && i < ct_doc_len(src); i++)
			sum_counters(ct_doc_at(dst, i), ct_doc_at(src, i));
		return;
	}
	if (!json_object_is_type(dst, json_type_object) ||
	    !json_object_is_type(src, json_type_object))
		return;
	json_object_object_foreach(src, key, val)
	{
		json_object *d = ct_doc_get(dst, key);

		if (!strcmp(key, "priority"))
			continue;
		if (!d) {
			json_object *copy = NULL;

			if (!json_object_deep_copy(val, &copy, NULL))
				json_object_object_add(dst, key, copy);
		} else if (json_object_is_type(d, json_type_int) &&
			   json_object_is_type(val, json_type_int)) {
			json_object_set_uint64(d, json_object_get_uint64(d) +
							  json_object_get_uint64(val));
		} else {
			sum_counters(d, val);
		}
	}
}

static json_object *summed(json_object *const *docs, size_t n, const char *section)
{
	json_object *out = NULL;

	if (json_object_deep_copy(ct_doc_get(docs[0], section), &out, NULL) ||
	    !json_object_is_type(out, json_type_object)) {
		json_object_put(out);
		return json_object_new_object();
	}
	for (size_t i = 1; i < n; i++)
		sum_counters(out, ct_doc_get(docs[i], section));
	return out;
}

/*
 * The flows each report summed past its limit on flows in detail, summed
 * (not deduplicated: they have no keys); "limit" is the largest. NULL when
 * no report summed any.
 */
static json_object *flows_summed_merged(json_object *const *docs, size_t n)
{
	json_object *out = NULL;
	uint64_t limit = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *s = ct_doc_get(docs[i], "flows_summed");

		if (!json_object_is_type(s, json_type_object))
			continue;
		if (ct_doc_u64(s, "limit") > limit)
			limit = ct_doc_u64(s, "limit");
		if (out)
			sum_counters(out, s);
		else if (json_object_deep_copy(s, &out, NULL))
			return NULL;
	}
	if (out)
		json_object_object_add(out, "limit", json_object_new_uint64(limit));
	return out;
}

static json_object *capture_merged(json_object *const *docs, const char *const *names, size_t n)
{
	json_object *c = summed(docs, n, "capture");
	json_object *points = json_object_new_array();
	uint64_t first = 0, last = 0;
	const char *error = NULL;
	int complete = 1;

	for (size_t i = 0; i < n; i++) {
		json_object *ci = ct_doc_get(docs[i], "capture");
		json_object *p = json_object_new_object();
		uint64_t f = ct_doc_u64(ci, "first_ts"), l = ct_doc_u64(ci, "last_ts");

		if (ct_doc_u64(ci, "packets")) {
			first = !first || f < first ? f : first;
			last = l > last ? l : last;
		}
		if (!ct_doc_bool(ci, "complete")) {
			complete = 0;
			error = error ? error : ct_doc_str(ci, "error");
		}
		json_object_object_add(p, "report", json_object_new_string(names[i]));
		json_object_object_add(p, "file",
				       json_object_new_string(ct_doc_str(ci, "file") ?: ""));
		json_object_object_add(p, "packets",
				       json_object_new_uint64(ct_doc_u64(ci, "packets")));
		json_object_object_add(p, "bytes", json_object_new_uint64(ct_doc_u64(ci, "bytes")));
		json_object_object_add(
			p, "flows",
			json_object_new_uint64(ct_doc_len(ct_doc_get(docs[i], "flows"))));
		json_object_array_add(points, p);
	}
	json_object_object_add(c, "file", json_object_new_string("cluster merge"));
	json_object_object_add(c, "format", json_object_new_string("merge"));
	json_object_object_add(c, "first_ts", json_object_new_uint64(first));
	json_object_object_add(c, "last_ts", json_object_new_uint64(last));
	json_object_object_add(c, "duration_ns", json_object_new_uint64(last - first));
	json_object_object_add(c, "complete", json_object_new_boolean(complete));
	json_object_object_add(
		c, "error",
		complete ? NULL : json_object_new_string(error ? error : "a report is incomplete"));
	json_object_object_add(c, "vantage_points", points);
	return c;
}

/* The most confident vantage point's job (periodic first): its index, n for none. */
static size_t best_job(json_object *const *docs, size_t n)
{
	size_t best = n;

	for (size_t i = 0; i < n; i++) {
		json_object *j = ct_doc_get(docs[i], "job"), *b;

		if (!j)
			continue;
		if (best == n) {
			best = i;
			continue;
		}
		b = ct_doc_get(docs[best], "job");
		if (ct_doc_bool(j, "periodic") != ct_doc_bool(b, "periodic")
			    ? ct_doc_bool(j, "periodic")
			    : ct_doc_num(j, "period_confidence") >
				      ct_doc_num(b, "period_confidence"))
			best = i;
	}
	return best;
}

/* The job period of the most confident vantage point. */
static json_object *job_merged(json_object *const *docs, const char *const *names, size_t n,
			       size_t best)
{
	json_object *copy = NULL;

	if (best == n || json_object_deep_copy(ct_doc_get(docs[best], "job"), &copy, NULL))
		return NULL;
	if (!json_object_is_type(copy, json_type_object)) {
		json_object_put(copy);
		return NULL;
	}
	json_object_object_add(copy, "source", json_object_new_string(names[best]));
	return copy;
}

static json_object *classification_merged(json_object *const *docs, size_t n)
{
	const char *method = NULL;
	json_object *o = json_object_new_object(), *layout = NULL;

	for (size_t i = 0; i < n; i++) {
		json_object *c = ct_doc_get(docs[i], "classification");
		const char *m = ct_doc_str(c, "method");
		json_object *l = ct_doc_get(c, "inferred_layout");

		if (!m)
			continue;
		method = !method || !strcmp(method, m) ? m : "mixed";
		if (l && (!layout || ct_doc_u64(l, "hosts") > ct_doc_u64(layout, "hosts")))
			layout = l;
	}
	json_object_object_add(o, "method", json_object_new_string(method ? method : "none"));
	if (layout)
		json_object_object_add(o, "inferred_layout", json_object_get(layout));
	return o;
}

/* The class a cc entry counts ("all" when the report predates classes). */
static const char *cc_class(json_object *e)
{
	const char *c = ct_doc_str(e, "class");

	return c ? c : "all";
}

/* Each receiver and class once: the copy that saw most of its bursts. */
static json_object *cc_merged(json_object *const *docs, size_t n)
{
	json_object *o = json_object_new_object(), *list = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		json_object *ri = ct_doc_get(ct_doc_get(docs[i], "cc"), "receivers");

		for (size_t k = 0; k < ct_doc_len(ri); k++) {
			json_object *e = ct_doc_at(ri, k);
			const char *addr = ct_doc_str(e, "receiver");
			size_t j;

			for (j = 0; j < ct_doc_len(list); j++) {
				json_object *o2 = ct_doc_at(list, j);
				const char *other = ct_doc_str(o2, "receiver");

				if (addr && other && !strcmp(addr, other) &&
				    !strcmp(cc_class(e), cc_class(o2)))
					break;
			}
			if (j == ct_doc_len(list))
				json_object_array_add(list, json_object_get(e));
			else if (ct_doc_u64(e, "bursts") > ct_doc_u64(ct_doc_at(list, j), "bursts"))
				json_object_array_put_idx(list, j, json_object_get(e));
		}
	}
	json_object_object_add(o, "receivers", list);
	return o;
}

/* Renumber the chosen flows and point `reverse` at the merged ids. */
static int flows_merged(json_object *const *docs, size_t n, json_object **out)
{
	struct merge_flow *all = NULL, *pick = NULL;
	size_t total = 0, n_pick = 0, at = 0;
	long long *reverse = NULL;
	size_t *new_id = NULL;
	json_object *flows;

	for (size_t i = 0; i < n; i++)
		total += ct_doc_len(ct_doc_get(docs[i], "flows"));
	all = calloc(total + 1, sizeof(*all));
	pick = calloc(total + 1, sizeof(*pick));
	reverse = calloc(total + 1, sizeof(*reverse));
	new_id = calloc(total + 1, sizeof(*new_id));
	if (!all || !pick || !reverse || !new_id) {
		free(all);
		free(pick);
		free(reverse);
		free(new_id);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *fl = ct_doc_get(docs[i], "flows");

		for (size_t k = 0; k < ct_doc_len(fl); k++) {
			if (!json_object_is_type(ct_doc_at(fl, k), json_type_object))
				continue; /* not a flow: left out */
			all[at].flow = ct_doc_at(fl, k);
			all[at].doc = i;
			ct_doc_flow_key(all[at].flow, all[at].key, KEY_LEN);
			at++;
		}
	}
	total = at;
	qsort(all, total, sizeof(*all), by_key);
	for (size_t i = 0; i < total; i++) {
		if (n_pick && !strcmp(pick[n_pick - 1].key, all[i].key)) {
			if (better_copy(&all[i], &pick[n_pick - 1]))
				pick[n_pick - 1] = all[i];
			continue;
		}
		pick[n_pick++] = all[i];
	}
	/* pick is in key order: look the reverse flows up before reordering */
	for (size_t i = 0; i < n_pick; i++) {
		json_object *rev = ct_doc_get(pick[i].flow, "reverse");
		json_object *src_flows = ct_doc_get(docs[pick[i].doc], "flows");
		char key[KEY_LEN];
		struct merge_flow *hit;

		pick[i].slot = i;
		reverse[i] = -1;
		if (!json_object_is_type(rev, json_type_int))
			continue;
		ct_doc_flow_key(ct_doc_at(src_flows, (size_t)json_object_get_int64(rev)), key,
				KEY_LEN);
		hit = bsearch(key, pick, n_pick, sizeof(*pick), key_of_sorted);
		if (hit)
			reverse[i] = hit - pick;
	}
	qsort(pick, n_pick, sizeof(*pick), by_report_order);
	for (size_t i = 0; i < n_pick; i++)
		new_id[pick[i].slot] = i;
	flows = json_object_new_array_ext((int)n_pick);
	for (size_t i = 0; i < n_pick; i++) {
		json_object *f = pick[i].flow;
		long long r = reverse[pick[i].slot];

		json_object_object_add(f, "id", json_object_new_uint64(i));
		json_object_object_add(f, "reverse",
				       r >= 0 ? json_object_new_uint64(new_id[r]) : NULL);
		if (r < 0)
			json_object_object_add(f, "reverse_evidence", NULL);
		json_object_array_add(flows, json_object_get(f));
	}
	free(all);
	free(pick);
	free(reverse);
	free(new_id);
	*out = flows;
	return 0;
}

int ct_merge_reports(json_object *const *docs, const char *const *names, size_t n,
		     json_object **out)
{
	json_object *root, *flows, *job, *from, *rest, *anomalies;
	size_t best;
	int rc;

	*out = NULL;
	if (!n)
		return -EINVAL;
	best = best_job(docs, n);
	rc = ct_merge_anomalies(docs, names, n, best, &anomalies);
	if (rc)
		return rc;
	rc = flows_merged(docs, n, &flows);
	if (rc) {
		json_object_put(anomalies);
		return rc;
	}
	root = json_object_new_object();
	json_object_object_add(root, "schema", json_object_get(ct_doc_get(docs[0], "schema")));
	json_object_object_add(root, "generator",
			       json_object_get(ct_doc_get(docs[0], "generator")));
	json_object_object_add(root, "clock", json_object_get(ct_doc_get(docs[0], "clock")));
	json_object_object_add(root, "capture", capture_merged(docs, names, n));
	json_object_object_add(root, "engine", summed(docs, n, "engine"));
	job = job_merged(docs, names, n, best);
	if (job)
		json_object_object_add(root, "job", job);
	json_object_object_add(root, "classification", classification_merged(docs, n));
	if (anomalies)
		json_object_object_add(root, "anomalies", anomalies);
	json_object_object_add(root, "flows", flows);
	rest = flows_summed_merged(docs, n);
	if (rest)
		json_object_object_add(root, "flows_summed", rest);
	json_object_object_add(root, "pfc", summed(docs, n, "pfc"));
	json_object_object_add(root, "cc", cc_merged(docs, n));
	from = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(from, json_object_new_string(names[i]));
	json_object_object_add(root, "merged_from", from);
	*out = root;
	return 0;
}
