// SPDX-License-Identifier: MIT
/*
 * What the anomaly detectors share: keeping a finding, the flows of the
 * job's collectives, the iteration a time falls in, hosts as indices. They
 * call nothing back: anomaly.c runs the detectors, the detectors call these.
 */
#include "anomaly_internal.h"

#include <commtap/grow.h>
#include <commtap/traffic_class.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A direction that carries at least this share of its reverse's bytes
 * carries data too (gloo sends both ways on one socket); an ACK stream is
 * under 2% of its data's (one 66-byte ACK per two 9000-byte segments).
 */
#define DATA_MIN_REVERSE_SHARE 0.25

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

/*
 * Whole iterations a finding judged against the job's own spread needs
 * before it can page (confidence >= 0.5). The spread is a median absolute
 * deviation, whose error from n values is about 1.16 / sqrt(n) of it for
 * normal ones: 41% from 8, 58% from 4. Interval reports early in a run hold
 * a few iterations: on 67 clean real recordings read with --interval 1, 55
 * of the 142 reports' alarms came from reports of fewer than 8 iterations.
 */
#define ANOM_SETTLED_ITERATIONS 8
/* below them a finding stays in the report, under an alarm's confidence */
#define ANOM_UNSETTLED_CONFIDENCE 0.45
/* a hang counts periods of silence: its period needs this many whole iterations */
#define ANOM_HANG_SETTLED_ITERATIONS 3

static void cap_unsettled(const struct anom_ctx *c, struct ct_anomaly *a)
{
	size_t whole = c->n_iter ? c->n_iter - 1 : 0, need;
	size_t at = strlen(a->evidence);

	if (!c->n_iter) /* a finding of the whole capture, no iteration judged */
		return;
	need = a->kind == CT_ANOMALY_HANG ? ANOM_HANG_SETTLED_ITERATIONS : ANOM_SETTLED_ITERATIONS;
	if (whole >= need || a->confidence <= ANOM_UNSETTLED_CONFIDENCE)
		return;
	a->confidence = ANOM_UNSETTLED_CONFIDENCE;
	snprintf(a->evidence + at, sizeof(a->evidence) - at,
		 " (%zu whole iterations so far: below an alarm until %zu)", whole, need);
}

int anom_add(struct anom_ctx *c, struct ct_anomaly *a)
{
	struct ct_anomalies *o = c->out;

	cap_unsettled(c, a);

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
	if (!c->out->not_looked[k]) /* the first reason stands */
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

int anom_finding_cmp(const void *a, const void *b)
{
	const struct ct_anomaly *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->confidence != y->confidence)
		return x->confidence > y->confidence ? -1 : 1;
	return memcmp(&x->host, &y->host, sizeof(x->host));
}

int anom_burst_start_cmp(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int anom_collective_class(int cls)
{
	return cls == CT_CLASS_DP || cls == CT_CLASS_TP || cls == CT_CLASS_EP ||
	       cls == CT_CLASS_EMB;
}

size_t anom_find_root(size_t *parent, size_t i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

/*
 * Bursts of at most this many wire bytes a packet are acknowledgements
 * (TCP 66 to 78 bytes, RoCE ACKs 62 to 66), not data: the kernel or NIC
 * sends them whatever the process does (a stopped one's still acknowledges
 * what comes to it), so they say nothing of its entry or its work.
 */
#define ANOM_ACK_FRAME 128

int anom_acks_only(const struct ct_burst *b)
{
	return b->packets && b->bytes <= ANOM_ACK_FRAME * (uint64_t)b->packets;
}

int anom_carries_message(const struct ct_burst *b)
{
	return b->messages || !anom_acks_only(b);
}

int anom_job_bursts(const struct anom_ctx *c, int data, struct ct_burst **out, size_t *n)
{
	const struct ct_periodicity *p = c->per;
	struct ct_burst *all;
	size_t k = 0;

	for (size_t f = 0; f < p->n_flows; f++)
		if (data ? anom_job_data_flow(c, f) : p->flows[f].job == 0)
			k += p->flows[f].n_bursts;
	all = malloc((k + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	k = 0;
	for (size_t f = 0; f < p->n_flows; f++)
		if ((data ? anom_job_data_flow(c, f) : p->flows[f].job == 0) &&
		    p->flows[f].n_bursts) {
			memcpy(all + k, p->flows[f].bursts, p->flows[f].n_bursts * sizeof(*all));
			k += p->flows[f].n_bursts;
		}
	qsort(all, k, sizeof(*all), anom_burst_start_cmp);
	*out = all;
	*n = k;
	return 0;
}

int anom_metered_flows(const struct anom_ctx *c, unsigned char *metered)
{
	size_t n = c->set->count, k;
	double *share = malloc((2 * n + 1) * sizeof(*share)), *peers = share + n;

	if (!share)
		return -ENOMEM;
	for (size_t f = 0; f < n; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];
		double all = 0, timed = 0;

		metered[f] = 0;
		share[f] = NAN;
		if (!anom_job_data_flow(c, f))
			continue;
		for (size_t b = 0; b < fp->n_bursts; b++) {
			const struct ct_burst *u = &fp->bursts[b];

			if (anom_iteration(c, u->start) < 0)
				continue;
			all += (double)u->bytes;
			if (u->end > u->start && u->packets >= ANOM_TIMED_PACKETS)
				timed += (double)u->bytes;
		}
		if (all > 0)
			share[f] = timed / all;
	}
	/* each class's median, its flows among them */
	for (int cls = 0; cls < CT_CLASS_COUNT; cls++) {
		double mid;

		k = 0;
		for (size_t f = 0; f < n; f++)
			if (!isnan(share[f]) && anom_class(c, f) == cls)
				peers[k++] = share[f];
		if (k < 2)
			continue;
		mid = anom_median(peers, k);
		for (size_t f = 0; f < n; f++)
			if (!isnan(share[f]) && anom_class(c, f) == cls)
				metered[f] = share[f] < ANOM_METERED_SHARE * mid;
	}
	free(share);
	return 0;
}
