// SPDX-License-Identifier: MIT
/* The report's "anomalies" section (docs/report-schema.md, docs/anomalies.md). */
#include <commtap/anomaly.h>
#include <commtap/traffic_class.h>

#include <json-c/json.h>

/* json-c calls that fail leave the section incomplete: the caller drops it whole. */
struct aj {
	int oom;
};

static void put(struct aj *b, json_object *o, const char *name, json_object *v)
{
	if (!v || json_object_object_add(o, name, v)) {
		json_object_put(v);
		b->oom = 1;
	}
}

static void push(struct aj *b, json_object *a, json_object *v)
{
	if (!v || json_object_array_add(a, v)) {
		json_object_put(v);
		b->oom = 1;
	}
}

static json_object *addr(const struct ct_addr *a)
{
	char buf[64];

	return json_object_new_string(ct_addr_format(a, buf, sizeof(buf)));
}

/* what .value is, per kind */
static const char *value_unit(enum ct_anomaly_kind k)
{
	static const char *const units[] = {
		[CT_ANOMALY_STRAGGLER] = "delay_s",	    [CT_ANOMALY_SLOW_LINK] = "rate_ratio",
		[CT_ANOMALY_LOSS] = "loss_signals",	    [CT_ANOMALY_CONGESTION] = "marked_fraction",
		[CT_ANOMALY_RHYTHM] = "excess_s",	    [CT_ANOMALY_HANG] = "silence_s",
	};

	return (unsigned)k < CT_ANOMALY_KINDS ? units[k] : "value";
}

static json_object *finding(struct aj *b, const struct ct_anomaly *a)
{
	json_object *o = json_object_new_object(), *it;

	if (!o) {
		b->oom = 1;
		return NULL;
	}
	put(b, o, "kind", json_object_new_string(ct_anomaly_kind_name(a->kind)));
	put(b, o, "scope", json_object_new_string(ct_anomaly_scope_name(a->scope)));
	if (a->scope == CT_ANOMALY_AT_HOST || a->scope == CT_ANOMALY_AT_RECEIVER)
		put(b, o, "host", addr(&a->host));
	if (a->scope == CT_ANOMALY_AT_LINK) {
		put(b, o, "src", addr(&a->host));
		put(b, o, "dst", addr(&a->peer));
	}
	if (a->scope == CT_ANOMALY_AT_PRIORITY)
		put(b, o, "priority", json_object_new_int(a->priority));
	if (a->kind == CT_ANOMALY_HANG) { /* the last host to send; the one silent longest */
		put(b, o, "last_host", addr(&a->host));
		if (a->confidence >= 0.5)
			put(b, o, "silent_host", addr(&a->peer));
	}
	if (a->cls >= 0)
		put(b, o, "class", json_object_new_string(ct_class_name(a->cls)));
	put(b, o, value_unit(a->kind), json_object_new_double(a->value));
	if (a->kind == CT_ANOMALY_STRAGGLER || a->kind == CT_ANOMALY_RHYTHM ||
	    a->kind == CT_ANOMALY_HANG) /* a hang's: how many periods it has been silent */
		put(b, o, "share_of_iteration", json_object_new_double(a->share));
	put(b, o, "confidence", json_object_new_double(a->confidence));
	if (a->onset >= 0) {
		put(b, o, "onset_iteration", json_object_new_int64(a->onset));
		put(b, o, "onset_ns", json_object_new_uint64(a->onset_ns));
		put(b, o, "iterations_seen", json_object_new_int64(a->seen));
		put(b, o, "iterations_since_onset", json_object_new_int64(a->of));
		it = json_object_new_array();
		if (!it)
			b->oom = 1;
		for (unsigned i = 0; it && i < a->seen; i++) {
			json_object *e = json_object_new_object();

			if (!e) {
				b->oom = 1;
				break;
			}
			put(b, e, "iteration", json_object_new_int64(a->iters[i].iteration));
			put(b, e, value_unit(a->kind), json_object_new_double(a->iters[i].value));
			if (a->iters[i].at_ns)
				put(b, e, "at_ns", json_object_new_uint64(a->iters[i].at_ns));
			push(b, it, e);
		}
		put(b, o, "per_iteration", it);
	} else {
		/* said of the whole capture */
		if (json_object_object_add(o, "onset_iteration", NULL))
			b->oom = 1;
	}
	put(b, o, "evidence", json_object_new_string(a->evidence));
	return o;
}

json_object *ct_anomalies_json(const struct ct_anomalies *a)
{
	struct aj jb = {0}, *b = &jb;
	json_object *o = json_object_new_object(), *list = json_object_new_array();
	json_object *nl = json_object_new_object();

	if (!o || !list || !nl) {
		json_object_put(o);
		json_object_put(list);
		json_object_put(nl);
		return NULL;
	}
	put(b, o, "iterations", json_object_new_int64((int64_t)a->iterations));
	put(b, o, "period_s", json_object_new_double(a->period_s));
	if (a->straggler_jitter_s >= 0) {
		put(b, o, "straggler_jitter_s", json_object_new_double(a->straggler_jitter_s));
		put(b, o, "straggler_threshold_s",
		    json_object_new_double(a->straggler_threshold_s));
	}
	for (int k = 0; k < CT_ANOMALY_KINDS; k++)
		if (a->not_looked[k])
			put(b, nl, ct_anomaly_kind_name(k),
			    json_object_new_string(a->not_looked[k]));
	put(b, o, "not_looked", nl);
	for (size_t i = 0; i < a->n; i++)
		push(b, list, finding(b, &a->list[i]));
	put(b, o, "findings", list);
	put(b, o, "findings_dropped", json_object_new_int64((int64_t)a->dropped));
	if (b->oom) {
		json_object_put(o);
		return NULL;
	}
	return o;
}
