// SPDX-License-Identifier: MIT
/*
 * commtap.report/v1 JSON -> struct ct_rep (report_model.h). Every key
 * the exporters read is spelled here once: scalar fields in one table per
 * structure, sections and lists by the functions that walk them. A field of
 * the wrong type is an error naming the file and the field, never a guess.
 */
#include "report_model.h"
#include "report_doc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN 96 /* "anomalies.findings[63].per_iteration" and an index fit */

enum rep_type { T_U64, T_NUM, T_STR, T_BOOL, T_I64 };

struct rep_field {
	const char *key;
	enum rep_type type;
	size_t off;
	long has; /* offset of its bool has_*, or -1 */
};

#define F(s, k, t, m)                                                                              \
	{                                                                                          \
		k, t, offsetof(s, m), -1                                                           \
	}
#define FH(s, k, t, m, h)                                                                          \
	{                                                                                          \
		k, t, offsetof(s, m), (long)offsetof(s, h)                                         \
	}
#define N(table) (sizeof(table) / sizeof(table[0]))

struct rd {
	const char *name; /* the file, for errors */
	char *err;
	size_t errlen;
};

static int fail(struct rd *r, const char *path, const char *key, const char *what)
{
	snprintf(r->err, r->errlen, "%s%s%s%s%s: %s", r->name, *r->name ? ": " : "", path,
		 *path && key ? "." : "", key ? key : "", what);
	return -EINVAL;
}

/* The value under key; NULL when absent or null. */
static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A section: NULL when absent, -EINVAL when not an object. */
static int section(struct rd *r, json_object *o, const char *path, const char *key, json_type type,
		   json_object **out)
{
	*out = get(o, key);
	if (*out && !json_object_is_type(*out, type))
		return fail(r, path, key,
			    type == json_type_object ? "not an object" : "not an array");
	return 0;
}

static int is_number(json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static uint64_t as_u64(json_object *v)
{
	double d;

	if (json_object_is_type(v, json_type_int))
		return json_object_get_uint64(v);
	d = json_object_get_double(v);
	/* out of range (or NaN) is not a count */
	return d > 0 && d < 18446744073709549568.0 ? (uint64_t)d : 0;
}

static double as_num(json_object *v)
{
	if (json_object_is_type(v, json_type_int))
		return (double)json_object_get_uint64(v);
	return json_object_get_double(v);
}

static int read_fields(struct rd *r, json_object *o, const char *path, const struct rep_field *t,
		       size_t n, void *base)
{
	for (size_t i = 0; i < n; i++) {
		json_object *v = get(o, t[i].key);
		char *at = (char *)base + t[i].off;

		if (!v)
			continue;
		switch (t[i].type) {
		case T_U64:
			if (!is_number(v))
				return fail(r, path, t[i].key, "not a number");
			*(uint64_t *)at = as_u64(v);
			break;
		case T_NUM:
			if (!is_number(v))
				return fail(r, path, t[i].key, "not a number");
			*(double *)at = as_num(v);
			break;
		case T_I64:
			if (!json_object_is_type(v, json_type_int))
				return fail(r, path, t[i].key, "not an integer");
			*(int64_t *)at = json_object_get_int64(v);
			break;
		case T_STR:
			if (!json_object_is_type(v, json_type_string))
				return fail(r, path, t[i].key, "not a string");
			*(const char **)at = json_object_get_string(v);
			break;
		case T_BOOL:
			if (!json_object_is_type(v, json_type_boolean))
				return fail(r, path, t[i].key, "not true or false");
			*(bool *)at = json_object_get_boolean(v);
			break;
		}
		if (t[i].has >= 0)
			*(bool *)((char *)base + t[i].has) = true;
	}
	return 0;
}

/* An array's elements as objects: calloc'ed n of size each, *items NULL for none. */
static int list(struct rd *r, json_object *o, const char *path, const char *key, size_t size,
		void **items, size_t *n)
{
	json_object *a;
	int rc = section(r, o, path, key, json_type_array, &a);

	*items = NULL;
	*n = 0;
	if (rc || !a || !json_object_array_length(a))
		return rc;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_object)) {
			char at[PATH_LEN];

			snprintf(at, sizeof(at), "%s%s%s[%zu]", path, *path ? "." : "", key, i);
			return fail(r, at, NULL, "not an object");
		}
	*items = calloc(json_object_array_length(a), size);
	if (!*items) {
		snprintf(r->err, r->errlen, "%s: out of memory", r->name);
		return -ENOMEM;
	}
	*n = json_object_array_length(a);
	return 0;
}

static void elem_path(char *buf, const char *key, size_t i)
{
	snprintf(buf, PATH_LEN, "%s[%zu]", key, i);
}

/* A distribution's median ({"median": x} under key), when the report has it. */
static int read_dist(struct rd *r, json_object *o, const char *path, const char *key,
		     struct ct_rep_dist *d)
{
	static const struct rep_field dist_fields[] = {
		F(struct ct_rep_dist, "median", T_NUM, median),
	};
	json_object *x;
	int rc = section(r, o, path, key, json_type_object, &x);

	if (rc || !x)
		return rc;
	d->present = true;
	return read_fields(r, x, path, dist_fields, N(dist_fields), d);
}

/* on_s, off_s and burst_bytes: the on-off shape's medians (job and flows). */
static int read_shape(struct rd *r, json_object *o, const char *path, struct ct_rep_dist *on,
		      struct ct_rep_dist *off, struct ct_rep_dist *burst)
{
	int rc = read_dist(r, o, path, "on_s", on);

	rc = rc ?: read_dist(r, o, path, "off_s", off);
	return rc ?: read_dist(r, o, path, "burst_bytes", burst);
}

static const struct rep_field vantage_fields[] = {
	F(struct ct_rep_vantage, "report", T_STR, report),
	F(struct ct_rep_vantage, "flows", T_U64, flows),
};

/* An object of counts by name ({"64": 3, ...}), in the document's order. */
static int read_counts(struct rd *r, json_object *o, const char *path, struct ct_rep_count **out,
		       size_t *n)
{
	size_t i = 0;

	if (!o || !json_object_object_length(o))
		return 0;
	*out = calloc(json_object_object_length(o), sizeof(**out));
	if (!*out)
		return fail(r, path, NULL, "out of memory");
	json_object_object_foreach(o, name, count)
	{
		if (!is_number(count))
			return fail(r, path, name, "not a number");
		(*out)[i].name = name;
		(*out)[i++].count = as_u64(count);
		*n = i;
	}
	return 0;
}

static const struct rep_field capture_fields[] = {
	F(struct ct_rep_capture, "file", T_STR, file),
	F(struct ct_rep_capture, "format", T_STR, format),
	F(struct ct_rep_capture, "error", T_STR, error),
	F(struct ct_rep_capture, "packets", T_U64, packets),
	F(struct ct_rep_capture, "bytes", T_U64, bytes),
	F(struct ct_rep_capture, "roce_packets", T_U64, roce_packets),
	F(struct ct_rep_capture, "tcp_packets", T_U64, tcp_packets),
	F(struct ct_rep_capture, "other_ip_packets", T_U64, other_ip_packets),
	F(struct ct_rep_capture, "other_l2_packets", T_U64, other_l2_packets),
	F(struct ct_rep_capture, "truncated_frames", T_U64, truncated_frames),
	F(struct ct_rep_capture, "encapsulated", T_U64, encapsulated),
	F(struct ct_rep_capture, "first_ts", T_U64, first_ts),
	F(struct ct_rep_capture, "last_ts", T_U64, last_ts),
	F(struct ct_rep_capture, "duration_ns", T_U64, duration_ns),
	F(struct ct_rep_capture, "complete", T_BOOL, complete),
	FH(struct ct_rep_capture, "kernel_drops", T_U64, kernel_drops, has_kernel_drops),
};

static int read_capture(struct rd *r, json_object *doc, struct ct_rep_capture *c)
{
	json_object *o, *m, *reasons;
	int rc = section(r, doc, "", "capture", json_type_object, &o);

	rc = rc ?: read_fields(r, o, "capture", capture_fields, N(capture_fields), c);
	rc = rc ?: section(r, o, "capture", "malformed", json_type_object, &m);
	rc = rc ?: section(r, m, "capture.malformed", "by_reason", json_type_object, &reasons);
	void *items = NULL;

	rc = rc
		     ?: read_counts(r, reasons, "capture.malformed.by_reason", &c->malformed,
				    &c->n_malformed);
	rc = rc
		     ?: list(r, o, "capture", "vantage_points", sizeof(*c->vantage_points), &items,
			     &c->n_vantage_points);
	c->vantage_points = items;
	for (size_t i = 0; !rc && i < c->n_vantage_points; i++) {
		char at[PATH_LEN];

		elem_path(at, "capture.vantage_points", i);
		rc = read_fields(r, json_object_array_get_idx(get(o, "vantage_points"), i), at,
				 vantage_fields, N(vantage_fields), &c->vantage_points[i]);
	}
	return rc;
}

static const struct rep_field engine_fields[] = {
	F(struct ct_rep_engine, "flow_capacity", T_U64, flow_capacity),
	F(struct ct_rep_engine, "flow_memory_bytes", T_U64, flow_memory_bytes),
	F(struct ct_rep_engine, "flows_inserted", T_U64, flows_inserted),
	F(struct ct_rep_engine, "evicted_idle", T_U64, evicted_idle),
	F(struct ct_rep_engine, "evicted_full", T_U64, evicted_full),
	F(struct ct_rep_engine, "evicted_unreported", T_U64, evicted_unreported),
	F(struct ct_rep_engine, "bursts", T_U64, bursts),
	F(struct ct_rep_engine, "bursts_dropped", T_U64, bursts_dropped),
	F(struct ct_rep_engine, "read_overwrites", T_U64, read_overwrites),
};

static const struct rep_field period_fields[] = {
	F(struct ct_rep_period, "periodic", T_BOOL, periodic),
	F(struct ct_rep_period, "reason", T_STR, reason),
	F(struct ct_rep_period, "iteration_period_s", T_NUM, iteration_period_s),
	F(struct ct_rep_period, "period_confidence", T_NUM, period_confidence),
	F(struct ct_rep_period, "iterations", T_U64, iterations),
	F(struct ct_rep_period, "duty_cycle", T_NUM, duty_cycle),
	F(struct ct_rep_period, "peak_gbps", T_NUM, peak_gbps),
};

static const struct rep_field job_fields[] = {
	F(struct ct_rep_job, "name", T_STR, name),
	F(struct ct_rep_job, "iteration_period_s", T_NUM, iteration_period_s),
	F(struct ct_rep_job, "period_confidence", T_NUM, period_confidence),
	F(struct ct_rep_job, "iterations", T_NUM, iterations),
};

static int read_job(struct rd *r, json_object *o, const char *path, struct ct_rep_job *j)
{
	json_object *hosts, *cb;
	int rc = read_fields(r, o, path, job_fields, N(job_fields), j);

	rc = rc ?: section(r, o, path, "hosts", json_type_array, &hosts);
	rc = rc ?: section(r, o, path, "class_bytes", json_type_object, &cb);
	if (rc)
		return rc;
	for (int c = 0; c < CT_REP_CLASSES && cb; c++) {
		json_object *v = get(cb, ct_class_name(c));

		if (!v)
			continue;
		if (!is_number(v))
			return fail(r, path, ct_class_name(c), "class bytes: not a number");
		j->class_bytes[c] = as_u64(v);
		j->class_bytes_has |= 1u << c;
	}
	if (!hosts || !json_object_array_length(hosts))
		return 0;
	j->hosts = calloc(json_object_array_length(hosts), sizeof(*j->hosts));
	if (!j->hosts)
		return fail(r, path, NULL, "out of memory");
	for (size_t i = 0; i < json_object_array_length(hosts); i++) {
		json_object *h = json_object_array_get_idx(hosts, i);

		if (!json_object_is_type(h, json_type_string))
			return fail(r, path, "hosts", "an address is not a string");
		j->hosts[j->n_hosts++] = json_object_get_string(h);
	}
	return 0;
}

static const struct rep_field flow_fields[] = {
	F(struct ct_rep_flow, "transport", T_STR, transport),
	F(struct ct_rep_flow, "src", T_STR, src),
	F(struct ct_rep_flow, "dst", T_STR, dst),
	F(struct ct_rep_flow, "class_source", T_STR, class_source),
	F(struct ct_rep_flow, "qpn_cut", T_STR, qpn_cut),
	FH(struct ct_rep_flow, "id", T_U64, id, has_id),
	FH(struct ct_rep_flow, "qpn", T_U64, qpn, has_qpn),
	F(struct ct_rep_flow, "sport", T_U64, sport),
	F(struct ct_rep_flow, "dport", T_U64, dport),
	F(struct ct_rep_flow, "bytes", T_U64, bytes),
	F(struct ct_rep_flow, "messages", T_U64, messages),
	F(struct ct_rep_flow, "packets", T_U64, packets),
	F(struct ct_rep_flow, "cnp", T_U64, cnp),
	F(struct ct_rep_flow, "ecn_ce", T_U64, ecn_ce),
	F(struct ct_rep_flow, "retransmits", T_U64, retransmits),
	F(struct ct_rep_flow, "first_ts", T_U64, first_ts),
	FH(struct ct_rep_flow, "class_confidence", T_NUM, class_confidence, has_class_confidence),
	F(struct ct_rep_flow, "operation", T_STR, op_name),
};

static const struct rep_field periodicity_fields[] = {
	FH(struct ct_rep_flow, "job", T_I64, job, has_job),
	FH(struct ct_rep_flow, "period_s", T_NUM, period_s, has_period),
	FH(struct ct_rep_flow, "duty_cycle", T_NUM, duty_cycle, has_duty),
	FH(struct ct_rep_flow, "peak_gbps", T_NUM, peak_gbps, has_peak),
};

static const struct rep_field flow_per_iteration_fields[] = {
	FH(struct ct_rep_flow, "bytes_cv", T_NUM, bytes_cv, has_bytes_cv),
};

/* An enumeration's value by the name it writes, -1 for none. */
static int named(const char *name, const char *(*name_of)(int), int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, name_of(i)))
			return i;
	return -1;
}

static const char *class_name_of(int c)
{
	return ct_class_name((enum ct_class)c);
}

static const char *op_name_of(int op)
{
	return ct_op_name((enum ct_op)op);
}

/*
 * A finding's kind, its figure's key, and its scope, as
 * analysis/anomaly_json.c writes them (the values are analysis/'s
 * enumerations; the names are read back here only, so that the exporters
 * build without the detectors).
 */
static const char *const kind_names[][2] = {
	[CT_ANOMALY_STRAGGLER] = {"straggler", "delay_s"},
	[CT_ANOMALY_SLOW_LINK] = {"slow_link", "rate_ratio"},
	[CT_ANOMALY_LOSS] = {"loss", "loss_signals"},
	[CT_ANOMALY_CONGESTION] = {"congestion", "marked_fraction"},
	[CT_ANOMALY_RHYTHM] = {"rhythm", "excess_s"},
	[CT_ANOMALY_HANG] = {"hang", "silence_s"},
};
static const char *const scope_names[] = {
	[CT_ANOMALY_AT_HOST] = "host",	       [CT_ANOMALY_AT_LINK] = "link",
	[CT_ANOMALY_AT_RECEIVER] = "receiver", [CT_ANOMALY_AT_PRIORITY] = "priority",
	[CT_ANOMALY_AT_JOB] = "job",
};
_Static_assert(N(kind_names) == CT_ANOMALY_KINDS, "a name for every anomaly kind");

const char *ct_rep_kind_name(enum ct_anomaly_kind k)
{
	return (unsigned)k < CT_ANOMALY_KINDS ? kind_names[k][0] : "unknown";
}

const char *ct_rep_finding_unit(enum ct_anomaly_kind k)
{
	return (unsigned)k < CT_ANOMALY_KINDS ? kind_names[k][1] : "value";
}

static const char *kind_name_of(int k)
{
	return ct_rep_kind_name((enum ct_anomaly_kind)k);
}

static const char *scope_name_of(int s)
{
	return scope_names[s];
}

/*
 * A string field naming an enumeration's value: dflt when absent, and when
 * unknown if lenient (a flow's class or operation from a later version
 * counts as Other or Unknown), else an error.
 */
static int read_enum(struct rd *r, json_object *o, const char *path, const char *key,
		     const char *(*name_of)(int), int n, int dflt, bool lenient, int *out)
{
	json_object *v = get(o, key);

	*out = dflt;
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return fail(r, path, key, "not a string");
	*out = named(json_object_get_string(v), name_of, n);
	if (*out < 0 && lenient)
		return 0; /* -1: named, but not a name this version knows */
	return *out < 0 ? fail(r, path, key, "not a name this version knows") : 0;
}

/* periodicity.first_bursts: [start, end, bytes] or [start, end, bytes, messages] each. */
static int read_bursts(struct rd *r, json_object *per, const char *path, struct ct_rep_flow *f)
{
	json_object *list_json;
	int rc = section(r, per, path, "first_bursts", json_type_array, &list_json);

	if (rc || !list_json || !json_object_array_length(list_json))
		return rc;
	f->first_bursts = calloc(json_object_array_length(list_json), sizeof(*f->first_bursts));
	if (!f->first_bursts)
		return fail(r, path, NULL, "out of memory");
	for (size_t k = 0; k < json_object_array_length(list_json); k++) {
		json_object *e = json_object_array_get_idx(list_json, k);
		size_t len =
			json_object_is_type(e, json_type_array) ? json_object_array_length(e) : 0;
		uint64_t v[4] = {0};
		char at[2 * PATH_LEN];

		snprintf(at, sizeof(at), "%s.first_bursts[%zu]", path, k);
		for (size_t i = 0; i < len && i < 4; i++)
			if (!is_number(json_object_array_get_idx(e, i)))
				len = 0;
		if (len < 3)
			return fail(r, at, NULL, "not [start, end, bytes, ...]");
		for (size_t i = 0; i < len && i < 4; i++)
			v[i] = as_u64(json_object_array_get_idx(e, i));
		f->first_bursts[k] = (struct ct_rep_burst){v[0], v[1], v[2], v[3]};
		f->n_first_bursts = k + 1;
	}
	return 0;
}

static int read_flow(struct rd *r, json_object *o, const char *path, struct ct_rep_flow *f)
{
	char at[PATH_LEN + sizeof(".msg_size_hist")];
	json_object *per, *hist;
	int cls, op;
	int rc = read_fields(r, o, path, flow_fields, N(flow_fields), f);

	rc = rc
		     ?: read_enum(r, o, path, "class", class_name_of, CT_REP_CLASSES,
				  CT_CLASS_OTHER, true, &cls);
	rc = rc
		     ?: read_enum(r, o, path, "operation", op_name_of, CT_OP_COUNT, CT_OP_UNKNOWN,
				  true, &op);
	rc = rc ?: section(r, o, path, "periodicity", json_type_object, &per);
	rc = rc ?: section(r, o, path, "msg_size_hist", json_type_object, &hist);
	snprintf(at, sizeof(at), "%s.msg_size_hist", path);
	rc = rc ?: read_counts(r, hist, at, &f->msg_size_hist, &f->n_msg_size_hist);
	if (rc)
		return rc;
	f->has_class = get(o, "class") && cls >= 0;
	f->has_op = get(o, "operation") && op >= 0;
	f->cls = cls < 0 ? CT_CLASS_OTHER : (enum ct_class)cls;
	f->op = op < 0 ? CT_OP_UNKNOWN : (enum ct_op)op;
	if (!per)
		return 0;
	snprintf(at, sizeof(at), "%s.periodicity", path);
	f->has_periodicity = true;
	rc = read_fields(r, per, at, periodicity_fields, N(periodicity_fields), f);
	rc = rc ?: read_shape(r, per, at, &f->on_s, &f->off_s, &f->burst_bytes);
	rc = rc ?: section(r, per, at, "per_iteration", json_type_object, &hist);
	rc = rc
		     ?: read_fields(r, hist, at, flow_per_iteration_fields,
				    N(flow_per_iteration_fields), f);
	return rc ?: read_bursts(r, per, at, f);
}

static const struct rep_field receiver_fields[] = {
	F(struct ct_rep_receiver, "receiver", T_STR, receiver),
	F(struct ct_rep_receiver, "class", T_STR, class_name),
	F(struct ct_rep_receiver, "bursts", T_U64, bursts),
	F(struct ct_rep_receiver, "senders", T_U64, senders),
	F(struct ct_rep_receiver, "retransmits", T_U64, retransmits),
	F(struct ct_rep_receiver, "duty_cycle", T_NUM, duty_cycle),
	FH(struct ct_rep_receiver, "start_spread_s", T_NUM, start_spread_s, has_start_spread),
	F(struct ct_rep_receiver, "peak_gbps", T_NUM, peak_gbps),
	F(struct ct_rep_receiver, "incast_degree", T_NUM, incast_degree),
	F(struct ct_rep_receiver, "peak_over_nic", T_NUM, peak_over_nic),
	F(struct ct_rep_receiver, "ecn_ce_fraction", T_NUM, ecn_ce_fraction),
	F(struct ct_rep_receiver, "cnp_per_s_on", T_NUM, cnp_per_s_on),
};

static const struct rep_field priority_fields[] = {
	F(struct ct_rep_pfc_priority, "frames", T_U64, frames),
	F(struct ct_rep_pfc_priority, "xoff", T_U64, xoff),
	F(struct ct_rep_pfc_priority, "quanta", T_U64, quanta),
};

static int read_pfc(struct rd *r, json_object *doc, struct ct_rep *rep)
{
	static const struct rep_field pfc_fields[] = {
		F(struct ct_rep, "pause_frames", T_U64, pause_frames),
		F(struct ct_rep, "pause_quanta", T_U64, pause_quanta),
		F(struct ct_rep, "pfc_frames", T_U64, pfc_frames),
	};
	json_object *pf, *prios;
	int rc = section(r, doc, "", "pfc", json_type_object, &pf);

	rc = rc ?: read_fields(r, pf, "pfc", pfc_fields, N(pfc_fields), rep);
	rc = rc ?: section(r, pf, "pfc", "priorities", json_type_array, &prios);
	for (size_t i = 0;
	     !rc && prios && i < json_object_array_length(prios) && i < CT_REP_PRIORITIES; i++) {
		json_object *p = json_object_array_get_idx(prios, i);
		char at[PATH_LEN];

		elem_path(at, "pfc.priorities", i);
		if (!json_object_is_type(p, json_type_object))
			return fail(r, at, NULL, "not an object");
		rc = read_fields(r, p, at, priority_fields, N(priority_fields),
				 &rep->priorities[i]);
		rep->n_priorities = i + 1;
	}
	return rc;
}

static const struct rep_field finding_fields[] = {
	F(struct ct_rep_finding, "host", T_STR, host),
	F(struct ct_rep_finding, "src", T_STR, src),
	F(struct ct_rep_finding, "dst", T_STR, dst),
	F(struct ct_rep_finding, "evidence", T_STR, evidence),
	FH(struct ct_rep_finding, "priority", T_U64, priority, has_priority),
	F(struct ct_rep_finding, "share_of_iteration", T_NUM, share),
	F(struct ct_rep_finding, "confidence", T_NUM, confidence),
	FH(struct ct_rep_finding, "onset_iteration", T_I64, onset_iteration, has_onset),
	F(struct ct_rep_finding, "onset_ns", T_U64, onset_ns),
	F(struct ct_rep_finding, "iterations_seen", T_I64, iterations_seen),
	F(struct ct_rep_finding, "iterations_since_onset", T_I64, iterations_since_onset),
};

static const struct rep_field seen_fields[] = {
	F(struct ct_rep_seen, "iteration", T_U64, iteration),
	F(struct ct_rep_seen, "at_ns", T_U64, at_ns),
};

/* per_iteration: the iterations it was seen in, each with the kind's figure. */
static int read_seen(struct rd *r, json_object *o, const char *path, struct ct_rep_finding *f)
{
	json_object *list_json = get(o, "per_iteration");
	void *items = NULL;
	int rc = list(r, o, path, "per_iteration", sizeof(*f->per_iteration), &items,
		      &f->n_per_iteration);

	f->per_iteration = items;
	f->has_per_iteration = list_json != NULL;
	for (size_t k = 0; !rc && k < f->n_per_iteration; k++) {
		json_object *e = json_object_array_get_idx(list_json, k);
		json_object *v = get(e, ct_rep_finding_unit(f->kind));
		char at[PATH_LEN + sizeof(".per_iteration[]") + 20];

		snprintf(at, sizeof(at), "%s.per_iteration[%zu]", path, k);
		rc = read_fields(r, e, at, seen_fields, N(seen_fields), &f->per_iteration[k]);
		if (!rc && v && !is_number(v))
			rc = fail(r, at, ct_rep_finding_unit(f->kind), "not a number");
		f->per_iteration[k].value = v && !rc ? as_num(v) : 0;
	}
	return rc;
}

/*
 * One finding; 1 when of a kind this version does not know (or none): a
 * later version's detector, left out as the page always left it out. A
 * scope not known reads as a host.
 */
static int read_finding(struct rd *r, json_object *o, const char *path, struct ct_rep_finding *f)
{
	int kind, scope;
	int rc = read_fields(r, o, path, finding_fields, N(finding_fields), f);
	json_object *v;

	rc = rc ?: read_enum(r, o, path, "kind", kind_name_of, CT_ANOMALY_KINDS, -1, true, &kind);
	rc = rc
		     ?: read_enum(r, o, path, "scope", scope_name_of, N(scope_names),
				  CT_ANOMALY_AT_HOST, true, &scope);
	if (rc)
		return rc;
	if (kind < 0)
		return 1;
	if (scope < 0)
		scope = CT_ANOMALY_AT_HOST;
	f->kind = (enum ct_anomaly_kind)kind;
	f->scope = (enum ct_anomaly_scope)scope;
	f->json = o;
	v = get(o, ct_rep_finding_unit(f->kind));
	if (v && !is_number(v))
		return fail(r, path, ct_rep_finding_unit(f->kind), "not a number");
	f->value = v ? as_num(v) : 0;
	return read_seen(r, o, path, f);
}

static const struct rep_field anomalies_fields[] = {
	F(struct ct_rep_anomalies, "iterations", T_U64, iterations),
	F(struct ct_rep_anomalies, "period_s", T_NUM, period_s),
	FH(struct ct_rep_anomalies, "straggler_jitter_s", T_NUM, straggler_jitter_s, has_jitter),
	F(struct ct_rep_anomalies, "straggler_threshold_s", T_NUM, straggler_threshold_s),
	F(struct ct_rep_anomalies, "findings_dropped", T_U64, findings_dropped),
};

static int read_anomalies(struct rd *r, json_object *doc, struct ct_rep_anomalies *a)
{
	json_object *o, *nl;
	void *items = NULL;
	int rc = section(r, doc, "", "anomalies", json_type_object, &o);

	if (rc || !o)
		return rc;
	a->present = true;
	rc = read_fields(r, o, "anomalies", anomalies_fields, N(anomalies_fields), a);
	rc = rc ?: section(r, o, "anomalies", "not_looked", json_type_object, &nl);
	if (!rc && nl && json_object_object_length(nl)) {
		a->not_looked = calloc(json_object_object_length(nl), sizeof(*a->not_looked));
		if (!a->not_looked)
			return fail(r, "", NULL, "out of memory");
		json_object_object_foreach(nl, kind, why)
		{
			if (!json_object_is_type(why, json_type_string))
				return fail(r, "anomalies.not_looked", kind, "not a string");
			a->not_looked[a->n_not_looked].name = kind;
			a->not_looked[a->n_not_looked++].why = json_object_get_string(why);
		}
	}
	rc = rc
		     ?: list(r, o, "anomalies", "findings", sizeof(*a->findings), &items,
			     &a->n_findings);
	a->findings = items;
	for (size_t i = 0, n = a->n_findings; !rc && i < n; i++) {
		struct ct_rep_finding *f = &a->findings[a->n_findings - (n - i)];
		char at[PATH_LEN];

		elem_path(at, "anomalies.findings", i);
		rc = read_finding(r, json_object_array_get_idx(get(o, "findings"), i), at, f);
		if (rc == 1) { /* left out: the next one takes its place */
			memset(f, 0, sizeof(*f));
			a->n_findings--;
			a->findings_unknown++;
			rc = 0;
		}
	}
	return rc;
}

static int read_jobs_flows(struct rd *r, json_object *doc, struct ct_rep *rep)
{
	json_object *jobs = get(doc, "jobs"), *flows = get(doc, "flows");
	void *items;
	int rc = list(r, doc, "", "jobs", sizeof(*rep->jobs), &items, &rep->n_jobs);

	rep->jobs = items;
	for (size_t i = 0; !rc && i < rep->n_jobs; i++) {
		char at[PATH_LEN];

		elem_path(at, "jobs", i);
		rc = read_job(r, json_object_array_get_idx(jobs, i), at, &rep->jobs[i]);
	}
	rc = rc ?: list(r, doc, "", "flows", sizeof(*rep->flows), &items, &rep->n_flows);
	if (!rc)
		rep->flows = items;
	for (size_t i = 0; !rc && i < rep->n_flows; i++) {
		char at[PATH_LEN];

		elem_path(at, "flows", i);
		rc = read_flow(r, json_object_array_get_idx(flows, i), at, &rep->flows[i]);
	}
	return rc;
}

static int read_cc(struct rd *r, json_object *doc, struct ct_rep *rep)
{
	json_object *cc, *list_json;
	void *items;
	int rc = section(r, doc, "", "cc", json_type_object, &cc);

	rc = rc
		     ?: list(r, cc, "cc", "receivers", sizeof(*rep->receivers), &items,
			     &rep->n_receivers);
	if (rc || !rep->n_receivers)
		return rc;
	rep->receivers = items;
	list_json = get(cc, "receivers");
	for (size_t i = 0; !rc && i < rep->n_receivers; i++) {
		json_object *o = json_object_array_get_idx(list_json, i);
		char at[PATH_LEN];

		elem_path(at, "cc.receivers", i);
		rc = read_fields(r, o, at, receiver_fields, N(receiver_fields), &rep->receivers[i]);
	}
	return rc;
}

/* A list of counts (job.iteration_starts). */
static int read_u64s(struct rd *r, json_object *o, const char *path, const char *key,
		     uint64_t **out, size_t *n)
{
	json_object *a;
	int rc = section(r, o, path, key, json_type_array, &a);

	if (rc || !a || !json_object_array_length(a))
		return rc;
	*out = calloc(json_object_array_length(a), sizeof(**out));
	if (!*out)
		return fail(r, path, key, "out of memory");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		if (!is_number(json_object_array_get_idx(a, i)))
			return fail(r, path, key, "a value is not a number");
		(*out)[i] = as_u64(json_object_array_get_idx(a, i));
		*n = i + 1;
	}
	return 0;
}

static const struct rep_field gpu_iteration_fields[] = {
	F(struct ct_rep_gpu_iteration, "start_ns", T_U64, start_ns),
	F(struct ct_rep_gpu_iteration, "t_iter", T_NUM, t_iter),
	F(struct ct_rep_gpu_iteration, "t_comp", T_NUM, t_comp),
	F(struct ct_rep_gpu_iteration, "overlap", T_NUM, overlap),
	F(struct ct_rep_gpu_iteration, "bubble", T_NUM, bubble),
	F(struct ct_rep_gpu_iteration, "r_comm", T_NUM, r_comm),
};

static const struct rep_field communicator_fields[] = {
	F(struct ct_rep_gpu, "rank", T_U64, rank),
	F(struct ct_rep_gpu, "pid", T_U64, pid),
};

static int read_gpu_iteration(struct rd *r, json_object *o, const char *path,
			      struct ct_rep_gpu_iteration *it)
{
	int rc = read_fields(r, o, path, gpu_iteration_fields, N(gpu_iteration_fields), it);

	for (int c = 0; !rc && c < CT_REP_CLASSES; c++) {
		char key[32]; /* "t_EmbTableSyn" */
		json_object *v;

		snprintf(key, sizeof(key), "t_%s", ct_class_name(c));
		v = get(o, key);
		if (!v)
			continue;
		if (!is_number(v))
			return fail(r, path, key, "not a number");
		it->t_class[c] = as_num(v);
		it->t_class_has |= 1u << c;
	}
	return rc;
}

static int read_gpu(struct rd *r, json_object *doc, struct ct_rep_gpu *g)
{
	json_object *o, *comms, *joined, *clocks, *iters;
	void *items = NULL;
	int rc = section(r, doc, "", "gpu", json_type_object, &o);

	if (rc || !o)
		return rc;
	g->present = true;
	rc = section(r, o, "gpu", "communicators", json_type_array, &comms);
	rc = rc ?: section(r, o, "gpu", "operations_joined", json_type_object, &joined);
	rc = rc ?: section(r, o, "gpu", "clocks", json_type_object, &clocks);
	rc = rc
		     ?: list(r, o, "gpu", "iterations", sizeof(*g->iterations), &items,
			     &g->n_iterations);
	g->iterations = items;
	if (!rc && comms && json_object_array_length(comms)) {
		json_object *c0 = json_object_array_get_idx(comms, 0);

		if (!json_object_is_type(c0, json_type_object))
			return fail(r, "gpu.communicators[0]", NULL, "not an object");
		g->has_communicator = true;
		rc = read_fields(r, c0, "gpu.communicators[0]", communicator_fields,
				 N(communicator_fields), g);
	}
	g->has_joined = joined != NULL;
	for (int c = 0; !rc && joined && c < CT_REP_CLASSES; c++) {
		json_object *j = get(joined, ct_class_name(c)), *v = get(j, "wire_bytes");

		if (v && !is_number(v))
			return fail(r, "gpu.operations_joined", ct_class_name(c),
				    "wire_bytes: not a number");
		g->joined_wire_bytes[c] = v ? as_u64(v) : 0;
	}
	g->sync = clocks ? get(clocks, "sync") : NULL;
	iters = get(o, "iterations");
	for (size_t i = 0; !rc && i < g->n_iterations; i++) {
		char at[PATH_LEN];

		elem_path(at, "gpu.iterations", i);
		rc = read_gpu_iteration(r, json_object_array_get_idx(iters, i), at,
					&g->iterations[i]);
	}
	return rc;
}

static const struct rep_field advice_fields[] = {
	FH(struct ct_rep_advice, "nic_gbps", T_NUM, nic_gbps, has_nic),
	F(struct ct_rep_advice, "nic_source", T_STR, nic_source),
};

static const struct rep_field advice_job_fields[] = {
	F(struct ct_rep_advice_job, "job", T_U64, job),
	F(struct ct_rep_advice_job, "iterations", T_U64, iterations),
	F(struct ct_rep_advice_job, "reason", T_STR, reason),
	F(struct ct_rep_advice_job, "iteration_s", T_NUM, iteration_s),
	F(struct ct_rep_advice_job, "comm_s", T_NUM, comm_s),
	F(struct ct_rep_advice_job, "comm_ratio", T_NUM, comm_ratio),
};

static const struct rep_field advice_scheduling_fields[] = {
	F(struct ct_rep_advice_job, "source", T_STR, source),
	F(struct ct_rep_advice_job, "regime", T_STR, regime),
	F(struct ct_rep_advice_job, "t_iter", T_NUM, t_iter),
	F(struct ct_rep_advice_job, "t_comp", T_NUM, t_comp),
	F(struct ct_rep_advice_job, "t_comm", T_NUM, t_comm),
	F(struct ct_rep_advice_job, "overlap", T_NUM, overlap),
	F(struct ct_rep_advice_job, "best_iteration_s", T_NUM, best_iteration_s),
	F(struct ct_rep_advice_job, "speedup_bound", T_NUM, speedup_bound),
	FH(struct ct_rep_advice_job, "comp_to_comm", T_NUM, comp_to_comm, has_comp_to_comm),
};

static const struct rep_field advice_push_pull_fields[] = {
	F(struct ct_rep_advice_job, "push_s", T_NUM, push_s),
	F(struct ct_rep_advice_job, "pull_s", T_NUM, pull_s),
	F(struct ct_rep_advice_job, "best_iteration_s", T_NUM, best3_s),
	FH(struct ct_rep_advice_job, "speedup_bound", T_NUM, speedup_bound3, has_push_pull),
};

static const struct rep_field advice_network_fields[] = {
	F(struct ct_rep_advice_job, "comm_s_at_nic", T_NUM, comm_s_at_nic),
	FH(struct ct_rep_advice_job, "iteration_s_at_nic", T_NUM, iteration_s_at_nic, has_network),
	F(struct ct_rep_advice_job, "speedup", T_NUM, network_speedup),
};

static const struct rep_field advice_class_fields[] = {
	F(struct ct_rep_advice_class, "on_s", T_NUM, on_s),
	F(struct ct_rep_advice_class, "comm_ratio", T_NUM, comm_ratio),
	F(struct ct_rep_advice_class, "bytes_per_iteration", T_NUM, bytes_per_iteration),
	F(struct ct_rep_advice_class, "effective_gbps", T_NUM, effective_gbps),
	FH(struct ct_rep_advice_class, "bw_utilization", T_NUM, bw_utilization, has_util),
	FH(struct ct_rep_advice_class, "on_s_at_nic", T_NUM, on_s_at_nic, has_on_at_nic),
};

static const struct rep_field advice_blocker_fields[] = {
	F(struct ct_rep_advice_blocker, "receiver", T_STR, receiver),
	F(struct ct_rep_advice_blocker, "ecn_ce_fraction", T_NUM, ecn_ce_fraction),
	F(struct ct_rep_advice_blocker, "cnp_per_s_on", T_NUM, cnp_per_s_on),
	FH(struct ct_rep_advice_blocker, "peak_over_nic", T_NUM, peak_over_nic, has_peak),
	F(struct ct_rep_advice_blocker, "retransmits", T_U64, retransmits),
	F(struct ct_rep_advice_blocker, "incast_degree", T_U64, incast_degree),
};

/* One class of a job's advice, with the receivers that block its rate. */
static int read_advice_class(struct rd *r, json_object *o, const char *path,
			     struct ct_rep_advice_class *k)
{
	json_object *list_json = get(o, "blocking_receivers");
	void *items = NULL;
	int rc = read_fields(r, o, path, advice_class_fields, N(advice_class_fields), k);

	k->present = true;
	rc = rc
		     ?: list(r, o, path, "blocking_receivers", sizeof(*k->blockers), &items,
			     &k->n_blockers);
	k->blockers = items;
	for (size_t i = 0; !rc && i < k->n_blockers; i++) {
		char at[2 * PATH_LEN];

		snprintf(at, sizeof(at), "%s.blocking_receivers[%zu]", path, i);
		rc = read_fields(r, json_object_array_get_idx(list_json, i), at,
				 advice_blocker_fields, N(advice_blocker_fields), &k->blockers[i]);
	}
	return rc;
}

static int read_advice_job(struct rd *r, json_object *o, const char *path,
			   struct ct_rep_advice_job *j)
{
	json_object *sched, *net, *classes, *pp;
	char at[PATH_LEN + 32];
	int rc = read_fields(r, o, path, advice_job_fields, N(advice_job_fields), j);

	rc = rc ?: section(r, o, path, "scheduling", json_type_object, &sched);
	rc = rc ?: section(r, o, path, "network", json_type_object, &net);
	rc = rc ?: section(r, o, path, "classes", json_type_object, &classes);
	snprintf(at, sizeof(at), "%s.scheduling", path);
	rc = rc
		     ?: read_fields(r, sched, at, advice_scheduling_fields,
				    N(advice_scheduling_fields), j);
	snprintf(at, sizeof(at), "%s.scheduling", path);
	rc = rc ?: section(r, sched, at, "push_pull", json_type_object, &pp);
	snprintf(at, sizeof(at), "%s.scheduling.push_pull", path);
	rc = rc ?: read_fields(r, pp, at, advice_push_pull_fields, N(advice_push_pull_fields), j);
	snprintf(at, sizeof(at), "%s.network", path);
	rc = rc ?: read_fields(r, net, at, advice_network_fields, N(advice_network_fields), j);
	for (int c = 0; !rc && classes && c < CT_REP_CLASSES; c++) {
		json_object *k = get(classes, ct_class_name(c));

		if (!k)
			continue;
		snprintf(at, sizeof(at), "%s.classes.%s", path, ct_class_name(c));
		if (!json_object_is_type(k, json_type_object))
			return fail(r, at, NULL, "not an object");
		rc = read_advice_class(r, k, at, &j->cls[c]);
	}
	return rc;
}

static int read_advice(struct rd *r, json_object *doc, struct ct_rep_advice *a)
{
	json_object *o;
	void *items = NULL;
	int rc = section(r, doc, "", "advice", json_type_object, &o);

	if (rc || !o)
		return rc;
	a->present = true;
	rc = read_fields(r, o, "advice", advice_fields, N(advice_fields), a);
	rc = rc ?: list(r, o, "advice", "jobs", sizeof(*a->jobs), &items, &a->n_jobs);
	a->jobs = items;
	for (size_t i = 0; !rc && i < a->n_jobs; i++) {
		char at[PATH_LEN];

		elem_path(at, "advice.jobs", i);
		rc = read_advice_job(r, json_object_array_get_idx(get(o, "jobs"), i), at,
				     &a->jobs[i]);
	}
	return rc;
}

static void advice_free(struct ct_rep_advice *a)
{
	for (size_t i = 0; i < a->n_jobs; i++)
		for (int c = 0; c < CT_REP_CLASSES; c++)
			free(a->jobs[i].cls[c].blockers);
	free(a->jobs);
}

static const struct rep_field summed_fields[] = {
	F(struct ct_rep, "flows", T_U64, summed_flows),
	F(struct ct_rep, "bytes", T_U64, summed_bytes),
	F(struct ct_rep, "limit", T_U64, summed_limit),
};

static const struct rep_field classification_fields[] = {
	F(struct ct_rep, "profile", T_STR, profile),
	F(struct ct_rep, "method", T_STR, method),
};

static const struct rep_field layout_check_fields[] = {
	F(struct ct_rep, "agree", T_BOOL, layout_agrees),
	F(struct ct_rep, "summary", T_STR, layout_summary),
};

/* One class's groups: arrays of addresses. */
static int read_groups(struct rd *r, json_object *list_json, const char *name,
		       struct ct_rep_groups *g)
{
	static const char *const at = "classification.inferred_layout.groups";

	g->name = name;
	if (!json_object_is_type(list_json, json_type_array))
		return fail(r, at, name, "not an array");
	g->groups = calloc(json_object_array_length(list_json) + 1, sizeof(*g->groups));
	if (!g->groups)
		return fail(r, "", NULL, "out of memory");
	for (size_t k = 0; k < json_object_array_length(list_json); k++) {
		json_object *hosts = json_object_array_get_idx(list_json, k);
		struct ct_rep_host_group *h = &g->groups[k];

		g->n_groups = k + 1;
		if (!json_object_is_type(hosts, json_type_array))
			return fail(r, at, name, "a group is not an array");
		h->hosts = calloc(json_object_array_length(hosts) + 1, sizeof(*h->hosts));
		if (!h->hosts)
			return fail(r, "", NULL, "out of memory");
		for (size_t i = 0; i < json_object_array_length(hosts); i++) {
			json_object *a = json_object_array_get_idx(hosts, i);

			if (!json_object_is_type(a, json_type_string))
				return fail(r, at, name, "an address is not a string");
			h->hosts[h->n_hosts++] = json_object_get_string(a);
		}
	}
	return 0;
}

/* classification.inferred_layout (degrees and groups) and layout_check. */
static int read_layout(struct rd *r, json_object *cls, struct ct_rep *rep)
{
	static const char *const degrees[4] = {"p", "t", "d", "ep"};
	json_object *l, *groups = NULL, *check;
	int rc = section(r, cls, "classification", "inferred_layout", json_type_object, &l);

	rc = rc ?: section(r, cls, "classification", "layout_check", json_type_object, &check);
	rc = rc
		     ?: section(r, l, "classification.inferred_layout", "groups", json_type_object,
				&groups);
	if (rc)
		return rc;
	rep->has_layout_check = check != NULL;
	rc = read_fields(r, check, "classification.layout_check", layout_check_fields,
			 N(layout_check_fields), rep);
	for (int k = 0; !rc && l && k < 4; k++) {
		json_object *v = get(l, degrees[k]);

		if (v && !is_number(v))
			return fail(r, "classification.inferred_layout", degrees[k],
				    "not a number");
		rep->layout_degree[k] = v ? as_u64(v) : 0;
		rep->layout_degree_has |= v ? 1u << k : 0;
	}
	rep->has_layout = groups != NULL;
	if (rc || !groups || !json_object_object_length(groups))
		return rc;
	rep->layout_groups = calloc(json_object_object_length(groups), sizeof(*rep->layout_groups));
	if (!rep->layout_groups)
		return fail(r, "", NULL, "out of memory");
	json_object_object_foreach(groups, name, list_json)
	{
		rc = read_groups(r, list_json, name, &rep->layout_groups[rep->n_layout_groups++]);
		if (rc)
			return rc;
	}
	return 0;
}

static const struct rep_field top_fields[] = {
	F(struct ct_rep, "schema", T_STR, schema),
	F(struct ct_rep, "generator", T_STR, generator),
};

static const struct rep_field clock_fields[] = {
	F(struct ct_rep, "source", T_STR, clock_source),
};

int ct_rep_read(json_object *doc, const char *name, struct ct_rep *rep, char *err, size_t errlen)
{
	struct rd r = {name, err, errlen};
	json_object *o = NULL;
	int rc;

	memset(rep, 0, sizeof(*rep));
	if (!json_object_is_type(doc, json_type_object))
		return fail(&r, "", NULL, "not a JSON object");
	rep->doc = json_object_get(doc);
	rc = read_fields(&r, doc, "", top_fields, N(top_fields), rep);
	rc = rc ?: section(&r, doc, "", "clock", json_type_object, &o);
	rc = rc ?: read_fields(&r, o, "clock", clock_fields, N(clock_fields), rep);
	rc = rc ?: read_capture(&r, doc, &rep->capture);
	rc = rc ?: section(&r, doc, "", "engine", json_type_object, &o);
	rc = rc ?: read_fields(&r, o, "engine", engine_fields, N(engine_fields), &rep->engine);
	rc = rc ?: section(&r, doc, "", "job", json_type_object, &o);
	rep->job.present = o != NULL;
	rc = rc ?: read_fields(&r, o, "job", period_fields, N(period_fields), &rep->job);
	rc = rc ?: read_shape(&r, o, "job", &rep->job.on_s, &rep->job.off_s, &rep->job.burst_bytes);
	rc = rc
		     ?: read_u64s(&r, o, "job", "iteration_starts", &rep->job.iteration_starts,
				  &rep->job.n_iteration_starts);
	rc = rc ?: section(&r, doc, "", "classification", json_type_object, &o);
	rc = rc
		     ?: read_fields(&r, o, "classification", classification_fields,
				    N(classification_fields), rep);
	rc = rc ?: read_layout(&r, o, rep);
	rc = rc ?: section(&r, doc, "", "flows_summed", json_type_object, &o);
	rep->has_flows_summed = o != NULL;
	rc = rc ?: read_fields(&r, o, "flows_summed", summed_fields, N(summed_fields), rep);
	rc = rc ?: read_jobs_flows(&r, doc, rep);
	rc = rc ?: read_cc(&r, doc, rep);
	rc = rc ?: read_pfc(&r, doc, rep);
	rc = rc ?: read_anomalies(&r, doc, &rep->anomalies);
	rc = rc ?: read_gpu(&r, doc, &rep->gpu);
	rc = rc ?: read_advice(&r, doc, &rep->advice);
	if (rc)
		ct_rep_free(rep);
	return rc;
}

int ct_rep_load(const char *path, struct ct_rep *rep, char *err, size_t errlen)
{
	json_object *doc;
	int rc = ct_doc_load(path, &doc, err, errlen);

	memset(rep, 0, sizeof(*rep));
	if (rc)
		return rc;
	rc = ct_rep_read(doc, path, rep, err, errlen);
	json_object_put(doc); /* rep holds its own reference */
	return rc;
}

int ct_rep_read_anomalies(json_object *doc, const char *name, struct ct_rep_anomalies *a, char *err,
			  size_t errlen)
{
	struct rd r = {name, err, errlen};
	int rc;

	memset(a, 0, sizeof(*a));
	rc = read_anomalies(&r, doc, a);
	if (rc)
		ct_rep_anomalies_free(a);
	return rc;
}

void ct_rep_anomalies_free(struct ct_rep_anomalies *a)
{
	for (size_t i = 0; i < a->n_findings; i++)
		free(a->findings[i].per_iteration);
	free(a->not_looked);
	free(a->findings);
	memset(a, 0, sizeof(*a));
}

void ct_rep_free(struct ct_rep *rep)
{
	for (size_t i = 0; i < rep->n_jobs; i++)
		free(rep->jobs[i].hosts);
	free(rep->jobs);
	for (size_t i = 0; i < rep->n_layout_groups; i++) {
		for (size_t k = 0; k < rep->layout_groups[i].n_groups; k++)
			free(rep->layout_groups[i].groups[k].hosts);
		free(rep->layout_groups[i].groups);
	}
	free(rep->layout_groups);
	free(rep->capture.vantage_points);
	for (size_t i = 0; i < rep->n_flows; i++) {
		free(rep->flows[i].first_bursts);
		free(rep->flows[i].msg_size_hist);
	}
	free(rep->flows);
	free(rep->job.iteration_starts);
	free(rep->gpu.iterations);
	advice_free(&rep->advice);
	free(rep->receivers);
	free(rep->capture.malformed);
	ct_rep_anomalies_free(&rep->anomalies);
	json_object_put(rep->doc);
	memset(rep, 0, sizeof(*rep));
}
