// SPDX-License-Identifier: MIT
/*
 * Flow classification (see classify.h). Where a flow goes: its connection's
 * data direction is classified (label, else profile, else signature); the
 * other direction then takes that class.
 */
#include <commtap/classify.h>

#include "classify_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Names counted per job: one job's flows are named alike by every agent;
 * more than one name means jobs that share a period were joined, and the
 * busiest of the first few names is the one worth giving.
 */
#define CT_JOB_VOTES 8

void ct_class_set(struct ct_flow_class *fc, enum ct_class cls, enum ct_class_source src,
		  double confidence, const char *fmt, ...)
{
	va_list ap;

	fc->cls = (uint8_t)cls;
	fc->source = (uint8_t)src;
	fc->confidence = confidence < 0 ? 0 : confidence > 1 ? 1 : confidence;
	va_start(ap, fmt);
	vsnprintf(fc->evidence, sizeof(fc->evidence), fmt, ap);
	va_end(ap);
}

void ct_class_copy(struct ct_flow_class *dst, const struct ct_flow_class *src)
{
	dst->cls = src->cls;
	dst->source = src->source;
	dst->op = src->op;
	dst->confidence = src->confidence;
	memcpy(dst->evidence, src->evidence, strnlen(src->evidence, sizeof(src->evidence) - 1) + 1);
}

/*
 * The direction of a connection that carries its data: the one with more
 * bytes (ACKs, CTS and READ requests are small). A flow without a reverse
 * is its own data direction.
 */
int ct_class_is_data_direction(const struct ct_flow_set *set, size_t i)
{
	const struct ct_flow_summary *f = &set->flows[i];

	if (f->reverse < 0)
		return 1;
	const struct ct_flow_summary *r = &set->flows[f->reverse];

	return f->bytes > r->bytes || (f->bytes == r->bytes && (int64_t)i < f->reverse);
}

/*
 * What the wire alone reads from the same flows (the signatures): with a
 * profile, its layout against the profile's (a wrong mapping or a wrong t
 * is said, not silently scored); with labels or a profile, the operation
 * each flow carries, which the wire shows whoever names the class.
 */
static int read_wire(const struct ct_flow_set *set, const struct ct_periodicity *per,
		     const struct ct_class_expect *expect, const uint8_t *data_dir,
		     struct ct_classification *out)
{
	struct ct_classification wire = {0};
	int err;

	wire.n = set->count;
	wire.method = "signatures";
	wire.flows = calloc(set->count ? set->count : 1, sizeof(*wire.flows));
	if (!wire.flows)
		return -ENOMEM;
	err = ct_classify_by_signature(set, per, data_dir, &wire);
	if (!err && expect && per->job.periodic)
		err = ct_layout_check(expect, &wire.layout, &out->check);
	for (size_t i = 0; i < set->count && !err; i++) /* ways back the wire read too */
		if (data_dir[i] || wire.flows[i].op != CT_OP_UNKNOWN)
			out->flows[i].op = wire.flows[i].op;
	ct_classification_free(&wire);
	return err;
}

/* Labels that give a class (a label may name the job alone). */
static int labels_give_classes(const struct ct_labels *labels)
{
	for (size_t i = 0; labels && i < labels->n; i++)
		if (!labels->l[i].no_class)
			return 1;
	return 0;
}

/*
 * Each periodicity job's name from its flows' labels: of the names given,
 * the one whose flows carry the most bytes (a host's agent names only the
 * flows of its own processes, and a flow may sit in the wrong job where two
 * jobs share a period). Few names per job: a linear search over them.
 */
static int name_jobs(const struct ct_flow_set *set, const struct ct_periodicity *per,
		     const struct ct_labels *labels, struct ct_classification *out)
{
	struct job_vote {
		const char *name;
		uint64_t bytes;
	} * votes;
	size_t n_jobs = per ? per->n_jobs : 0;
	size_t *n_votes;

	if (!n_jobs || !labels || !labels->n)
		return 0;
	out->job_names = calloc(n_jobs, sizeof(*out->job_names));
	votes = calloc(n_jobs * CT_JOB_VOTES, sizeof(*votes));
	n_votes = calloc(n_jobs, sizeof(*n_votes));
	if (!out->job_names || !votes || !n_votes) {
		free(votes);
		free(n_votes);
		return -ENOMEM;
	}
	out->n_job_names = n_jobs;
	for (size_t i = 0; i < set->count && i < per->n_flows; i++) {
		const struct ct_label *l = ct_labels_find(labels, &set->flows[i].key);
		int j = per->flows[i].job;
		struct job_vote *v;
		size_t k;

		if (!l || !l->job[0] || j < 0 || (size_t)j >= n_jobs)
			continue;
		v = votes + (size_t)j * CT_JOB_VOTES;
		for (k = 0; k < n_votes[j] && strcmp(v[k].name, l->job); k++)
			;
		if (k == n_votes[j] && k < CT_JOB_VOTES)
			v[n_votes[j]++].name = l->job;
		if (k < n_votes[j])
			v[k].bytes += set->flows[i].bytes;
	}
	for (size_t j = 0; j < n_jobs; j++) {
		const struct job_vote *v = votes + j * CT_JOB_VOTES;
		size_t best = 0;

		for (size_t k = 1; k < n_votes[j]; k++)
			if (v[k].bytes > v[best].bytes)
				best = k;
		if (n_votes[j])
			snprintf(out->job_names[j], CT_JOB_NAME_LEN, "%s", v[best].name);
	}
	free(votes);
	free(n_votes);
	return 0;
}

int ct_classify(const struct ct_flow_set *set, const struct ct_periodicity *per,
		const struct ct_labels *labels, const struct ct_class_expect *expect,
		struct ct_classification *out)
{
	uint8_t *to_classify, *data_dir;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->n = set->count;
	out->flows = calloc(set->count ? set->count : 1, sizeof(*out->flows));
	to_classify = calloc(set->count ? set->count : 1, 1);
	data_dir = calloc(set->count ? set->count : 1, 1);
	if (!out->flows || !to_classify || !data_dir) {
		free(to_classify);
		free(data_dir);
		ct_classification_free(out);
		return -ENOMEM;
	}
	out->method = labels_give_classes(labels) ? "labels" : expect ? "profile" : "signatures";
	out->profile = expect ? expect->profile : NULL;

	/* 1. labels: authoritative, for either direction */
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_label *l = ct_labels_find(labels, &set->flows[i].key);

		data_dir[i] = ct_class_is_data_direction(set, i);
		if (l && !l->no_class)
			ct_class_set(&out->flows[i], l->cls, CT_CLASS_BY_LABEL, 1,
				     l->comm[0] ? "agent label (communicator %s)" : "agent label%s",
				     l->comm);
		else
			to_classify[i] = data_dir[i];
	}
	/* 2./3. data directions without a label: the profile, else the signatures */
	if (expect)
		err = ct_classify_by_profile(set, per, expect, to_classify, out);
	else
		err = ct_classify_by_signature(set, per, to_classify, out);
	/* the operations, where labels or a profile named the classes */
	if (!err && per && (expect || strcmp(out->method, "signatures")))
		err = read_wire(set, per, expect, data_dir, out);
	/* what is no collective of a job carries no operation */
	for (size_t i = 0; i < set->count && !err; i++)
		if (data_dir[i] && out->flows[i].cls == CT_CLASS_OTHER)
			out->flows[i].op = CT_OP_OTHER;
	/* the other directions take their data direction's class */
	for (size_t i = 0; i < set->count && !err; i++) {
		const struct ct_flow_summary *f = &set->flows[i];

		if (to_classify[i] || data_dir[i])
			continue;
		if (out->flows[i].source == CT_CLASS_BY_LABEL) {
			if (out->flows[i].op == CT_OP_UNKNOWN)
				out->flows[i].op = out->flows[f->reverse].op;
			continue;
		}
		const struct ct_flow_class *d = &out->flows[f->reverse];

		ct_class_set(&out->flows[i], d->cls, CT_CLASS_BY_CONNECTION, d->confidence,
			     "reverse of flow %lld, its connection's data direction",
			     (long long)f->reverse);
		if (out->flows[i].op == CT_OP_UNKNOWN) /* unless the wire read its own */
			out->flows[i].op = d->op;
	}
	free(to_classify);
	free(data_dir);
	err = err ?: name_jobs(set, per, labels, out);
	if (err)
		ct_classification_free(out);
	return err;
}

int ct_classification_cc(const struct ct_classification *c, const struct ct_flow_set *set,
			 struct ct_periodicity *per)
{
	uint8_t *cls;
	int err;

	if (!per || !per->n_flows)
		return 0;
	cls = malloc(set->count + 1);
	if (!cls)
		return -ENOMEM;
	for (size_t i = 0; i < set->count; i++)
		cls[i] = i < c->n ? c->flows[i].cls : CT_CLASS_OTHER;
	err = ct_periodicity_cc_by_class(per, set, cls);
	free(cls);
	return err;
}

void ct_classification_free(struct ct_classification *c)
{
	free(c->layout.groups);
	free(c->layout.group_hosts);
	c->layout.groups = NULL;
	c->layout.group_hosts = NULL;
	free(c->flows);
	c->flows = NULL;
	c->n = 0;
	free(c->job_names);
	c->job_names = NULL;
	c->n_job_names = 0;
}
