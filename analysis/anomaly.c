// SPDX-License-Identifier: MIT
/*
 * Anomaly localisation: runs every detector of the table below over an
 * analysed report (after periodicity and classification) and keeps what
 * they found, by kind, the most confident first. A detector is one file;
 * adding one is a line here.
 */
#include "anomaly_internal.h"

#include <commtap/grow.h>
#include <commtap/traffic_class.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct anom_detector detectors[] = {
	{CT_ANOMALY_STRAGGLER, anom_straggler}, {CT_ANOMALY_SLOW_LINK, anom_slow_link},
	{CT_ANOMALY_LOSS, anom_loss},		{CT_ANOMALY_CONGESTION, anom_congestion},
	{CT_ANOMALY_RHYTHM, anom_rhythm},	{CT_ANOMALY_HANG, anom_hang},
};

/*
 * A direction that carries at least this share of its reverse's bytes
 * carries data too (gloo sends both ways on one socket); an ACK stream is
 * under 2% of its data's (one 66-byte ACK per two 9000-byte segments).
 */
#define DATA_MIN_REVERSE_SHARE 0.25

const char *ct_anomaly_kind_name(enum ct_anomaly_kind k)
{
	static const char *const names[] = {
		[CT_ANOMALY_STRAGGLER] = "straggler", [CT_ANOMALY_SLOW_LINK] = "slow_link",
		[CT_ANOMALY_LOSS] = "loss",	      [CT_ANOMALY_CONGESTION] = "congestion",
		[CT_ANOMALY_RHYTHM] = "rhythm",	      [CT_ANOMALY_HANG] = "hang",
	};

	return (unsigned)k < CT_ANOMALY_KINDS ? names[k] : "unknown";
}

const char *ct_anomaly_scope_name(enum ct_anomaly_scope s)
{
	static const char *const names[] = {"host", "link", "receiver", "priority", "job"};

	return (unsigned)s <= CT_ANOMALY_AT_JOB ? names[s] : "unknown";
}

int anom_seen_in(const struct anom_ctx *c, struct ct_anomaly *an, size_t *seen, size_t ni,
		 size_t it, double value)
{
	if (!an->iters) { /* the first iteration it shows in: its onset */
		an->iters = malloc(ni * sizeof(*an->iters));
		if (!an->iters)
			return -ENOMEM;
		an->onset = (long)it;
		an->onset_ns = c->bounds[it];
	}
	an->iters[(*seen)++] = (struct ct_anomaly_iter){(uint32_t)it, value};
	return 0;
}

int anom_add(struct anom_ctx *c, struct ct_anomaly *a)
{
	struct ct_anomalies *o = c->out;

	if (o->n == CT_ANOMALY_MAX) {
		o->dropped++;
		free(a->iters);
		a->iters = NULL;
		return 0;
	}
	if (!o->list) {
		o->list = calloc(CT_ANOMALY_MAX, sizeof(*o->list));
		if (!o->list) {
			free(a->iters);
			a->iters = NULL;
			return -ENOMEM;
		}
	}
	o->list[o->n++] = *a;
	a->iters = NULL;
	return 0;
}

void anom_not_looked(struct anom_ctx *c, enum ct_anomaly_kind k, const char *why)
{
	c->out->not_looked[k] = why;
}

int anom_class(const struct anom_ctx *c, size_t flow)
{
	if (!c->classes || flow >= c->classes->n)
		return CT_CLASS_OTHER;
	return c->classes->flows[flow].cls;
}

int anom_job_data_flow(const struct anom_ctx *c, size_t flow)
{
	const struct ct_flow_summary *f = &c->set->flows[flow];
	const struct ct_flow_periodicity *fp;

	if (!c->per || flow >= c->per->n_flows || anom_class(c, flow) == CT_CLASS_OTHER)
		return 0;
	fp = &c->per->flows[flow];
	if (!fp->periodic || fp->job > 0)
		return 0;
	if (f->reverse >= 0 &&
	    (double)f->bytes < DATA_MIN_REVERSE_SHARE * (double)c->set->flows[f->reverse].bytes)
		return 0;
	return 1;
}

long anom_iteration(const struct anom_ctx *c, uint64_t t)
{
	/* the bounds are the first job's iterations: its own search */
	return c->n_iter ? ct_period_iteration(&c->per->job, t) : -1;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double anom_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int anom_hosts_add(struct anom_hosts *h, const struct ct_addr *a)
{
	if (h->n == h->cap) {
		struct ct_addr *na = ct_grow(h->a, &h->cap, sizeof(*na), 64);

		if (!na)
			return -ENOMEM;
		h->a = na;
	}
	h->a[h->n++] = *a;
	return 0;
}

static int addr_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_addr));
}

void anom_hosts_done(struct anom_hosts *h)
{
	size_t k = 0;

	if (!h->n)
		return;
	qsort(h->a, h->n, sizeof(*h->a), addr_cmp);
	for (size_t i = 1; i < h->n; i++)
		if (memcmp(&h->a[i], &h->a[k], sizeof(*h->a)))
			h->a[++k] = h->a[i];
	h->n = k + 1;
}

long anom_hosts_find(const struct anom_hosts *h, const struct ct_addr *a)
{
	const struct ct_addr *hit = h->n ? bsearch(a, h->a, h->n, sizeof(*a), addr_cmp) : NULL;

	return hit ? hit - h->a : -1;
}

void anom_hosts_free(struct anom_hosts *h)
{
	free(h->a);
	memset(h, 0, sizeof(*h));
}

const char *anom_addr(const struct ct_addr *a, char *buf)
{
	return ct_addr_format(a, buf, 64);
}

static int finding_cmp(const void *a, const void *b)
{
	const struct ct_anomaly *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->confidence != y->confidence)
		return x->confidence > y->confidence ? -1 : 1;
	return memcmp(&x->host, &y->host, sizeof(x->host));
}

int ct_anomalies_find(const struct ct_flow_set *set, const struct ct_periodicity *per,
		      const struct ct_classification *classes,
		      const struct ct_engine_counters *counters, struct ct_anomalies *out)
{
	struct anom_ctx c = {
		.set = set, .per = per, .classes = classes, .counters = counters, .out = out};
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->straggler_jitter_s = out->straggler_threshold_s = -1;
	if (per && per->job.periodic && per->job.iterations >= 2) {
		const struct ct_period *job = &per->job;

		c.n_iter = job->iterations;
		c.period_s = job->period_s;
		c.bounds = malloc((c.n_iter + 1) * sizeof(*c.bounds));
		if (!c.bounds)
			return -ENOMEM;
		memcpy(c.bounds, job->starts, c.n_iter * sizeof(*c.bounds));
		/* the last iteration lasts a period */
		c.bounds[c.n_iter] = job->starts[c.n_iter - 1] + (uint64_t)(job->period_s * 1e9);
		out->iterations = c.n_iter;
		out->period_s = c.period_s;
	}
	for (size_t i = 0; i < sizeof(detectors) / sizeof(detectors[0]) && !err; i++)
		err = detectors[i].run(&c);
	free(c.bounds);
	if (err) {
		ct_anomalies_free(out);
		return err;
	}
	if (out->n)
		qsort(out->list, out->n, sizeof(*out->list), finding_cmp);
	return 0;
}

void ct_anomalies_free(struct ct_anomalies *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->list[i].iters);
	free(a->list);
	memset(a, 0, sizeof(*a));
}
