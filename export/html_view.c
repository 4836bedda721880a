// SPDX-License-Identifier: MIT
/* The view of a report the HTML sections share: hosts, classes, matrices, the timeline's span. */
#include "html_internal.h"

#include <commtap/traffic_class.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Sort key of an address: IPv4 first, then IPv6, each numerically, then anything else. */
static void addr_key(const char *text, unsigned char key[17])
{
	memset(key, 0, 17);
	if (inet_pton(AF_INET, text, key + 13) == 1)
		return;
	key[0] = 1;
	if (inet_pton(AF_INET6, text, key + 1) != 1)
		key[0] = 2;
}

static int addr_cmp(const void *pa, const void *pb)
{
	unsigned char a[17], b[17];
	int r;

	addr_key(pa, a);
	addr_key(pb, b);
	r = memcmp(a, b, sizeof(a));
	return r ? r : strcmp(pa, pb);
}

int ct_view_host(const struct ct_view *v, const char *addr)
{
	char(*hit)[CT_ADDR_TEXT];

	if (!addr)
		return -1;
	hit = bsearch(addr, v->hosts, v->n_listed, sizeof(*v->hosts), addr_cmp);
	if (hit)
		return (int)(hit - v->hosts);
	return v->n_others ? (int)v->n_hosts - 1 : -1;
}

double *ct_view_cell(const struct ct_view *v, int cls, size_t src, size_t dst)
{
	return &v->matrix[((size_t)cls * v->n_hosts + src) * v->n_hosts + dst];
}

double ct_view_per_iter(const struct ct_view *v, double bytes)
{
	return v->iterations > 0 ? bytes / v->iterations : bytes;
}

static const struct ct_view *sort_view; /* qsort has no context argument */

static int by_bytes_desc(const void *pa, const void *pb)
{
	const struct ct_view_flow *a = &sort_view->flows[*(const size_t *)pa];
	const struct ct_view_flow *b = &sort_view->flows[*(const size_t *)pb];

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

struct host_traffic {
	size_t index;
	double bytes;
};

static int by_traffic_desc(const void *pa, const void *pb)
{
	const struct host_traffic *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return a->index < b->index ? -1 : 1;
}

static int by_index(const void *pa, const void *pb)
{
	const struct host_traffic *a = pa, *b = pb;

	return a->index < b->index ? -1 : a->index > b->index;
}

/* Too many hosts to draw: keep the busiest (sent plus received), fold the rest into one. */
static int fold_hosts(struct ct_view *v)
{
	struct host_traffic *t = calloc(v->n_hosts, sizeof(*t));
	size_t keep = CT_HTML_MAX_HOSTS - 1;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_hosts; i++)
		t[i].index = i;
	for (size_t i = 0; i < v->n_flows; i++) {
		int s = ct_view_host(v, v->flows[i].rep->src);
		int d = ct_view_host(v, v->flows[i].rep->dst);

		if (s >= 0)
			t[s].bytes += (double)v->flows[i].bytes;
		if (d >= 0)
			t[d].bytes += (double)v->flows[i].bytes;
	}
	qsort(t, v->n_hosts, sizeof(*t), by_traffic_desc);
	qsort(t, keep, sizeof(*t), by_index); /* the kept ones back in address order */
	for (size_t i = 0; i < keep; i++)
		memmove(v->hosts[i], v->hosts[t[i].index], CT_ADDR_TEXT);
	v->n_others = v->n_hosts - keep;
	snprintf(v->hosts[keep], CT_ADDR_TEXT, "other hosts (%zu)", v->n_others);
	v->n_listed = keep;
	v->n_hosts = keep + 1;
	free(t);
	return 0;
}

static int collect_hosts(struct ct_view *v)
{
	size_t n = 0;

	v->hosts = calloc(2 * v->n_flows + 1, sizeof(*v->hosts));
	if (!v->hosts)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_flows; i++) {
		const char *ends[2] = {v->flows[i].rep->src, v->flows[i].rep->dst};

		for (int e = 0; e < 2; e++)
			if (ends[e])
				snprintf(v->hosts[n++], CT_ADDR_TEXT, "%s", ends[e]);
	}
	qsort(v->hosts, n, sizeof(*v->hosts), addr_cmp);
	v->n_hosts = 0;
	for (size_t i = 0; i < n; i++)
		if (!v->n_hosts || strcmp(v->hosts[v->n_hosts - 1], v->hosts[i]))
			memcpy(v->hosts[v->n_hosts++], v->hosts[i], CT_ADDR_TEXT);
	v->n_listed = v->n_hosts;
	return v->n_hosts > CT_HTML_MAX_HOSTS ? fold_hosts(v) : 0;
}

/* The timeline's span: a few iterations from the first boundary, or the capture's start. */
static void timeline_span(struct ct_view *v, const struct ct_html_opts *o)
{
	unsigned k = o->timeline_iterations ? o->timeline_iterations : 3;
	uint64_t last = v->rep->capture.last_ts;

	v->win_start = v->t0;
	v->win_end = last;
	if (v->periodic && v->n_iter) {
		v->win_start = v->iter_starts[0];
		if (v->n_iter > k)
			v->win_end = v->iter_starts[k];
		else if (v->period_s > 0 && k * v->period_s < 1e9) /* under 30 years */
			v->win_end = v->win_start + (uint64_t)(k * v->period_s * 1e9);
	}
	if (v->win_end > last && last > v->win_start)
		v->win_end = last;
	if (v->win_end <= v->win_start)
		v->win_end = v->win_start + 1;
}

int ct_view_build(const struct ct_rep *rep, const struct ct_html_opts *o, struct ct_view *v)
{
	double duration_s;

	memset(v, 0, sizeof(*v));
	v->rep = rep;
	v->n_flows = rep->n_flows;
	v->flows = calloc(v->n_flows + 1, sizeof(*v->flows));
	v->busiest = calloc(v->n_flows + 1, sizeof(*v->busiest));
	if (!v->flows || !v->busiest)
		goto oom;
	for (size_t i = 0; i < v->n_flows; i++) {
		struct ct_view_flow *f = &v->flows[i];

		f->rep = &rep->flows[i];
		f->cls = (int)rep->flows[i].cls;
		f->bytes = rep->flows[i].bytes;
		f->messages = rep->flows[i].messages;
		v->class_bytes[f->cls] += f->bytes;
		v->class_messages[f->cls] += f->messages;
		v->class_flows[f->cls]++;
		v->busiest[i] = i;
	}
	sort_view = v;
	qsort(v->busiest, v->n_flows, sizeof(*v->busiest), by_bytes_desc);
	if (collect_hosts(v))
		goto oom;
	v->matrix =
		calloc((size_t)CT_HTML_CLASSES * v->n_hosts * v->n_hosts + 1, sizeof(*v->matrix));
	if (!v->matrix)
		goto oom;
	for (size_t i = 0; i < v->n_flows; i++) {
		int s = ct_view_host(v, v->flows[i].rep->src);
		int d = ct_view_host(v, v->flows[i].rep->dst);

		if (s >= 0 && d >= 0)
			*ct_view_cell(v, v->flows[i].cls, (size_t)s, (size_t)d) +=
				(double)v->flows[i].bytes;
	}
	v->t0 = rep->capture.first_ts;
	v->periodic = rep->job.periodic;
	v->period_s = rep->job.iteration_period_s;
	duration_s = (double)rep->capture.duration_ns / 1e9;
	if (v->periodic && v->period_s > 0)
		v->iterations = duration_s / v->period_s > 1 ? duration_s / v->period_s : 1;
	v->n_iter = rep->job.n_iteration_starts;
	v->iter_buf = calloc(v->n_iter + 1, sizeof(*v->iter_buf));
	if (!v->iter_buf)
		goto oom;
	for (size_t k = 0; k < v->n_iter; k++)
		v->iter_buf[k] = rep->job.iteration_starts[k];
	v->iter_starts = v->iter_buf;
	timeline_span(v, o);
	return 0;
oom:
	ct_view_free(v);
	return -ENOMEM;
}

void ct_view_free(struct ct_view *v)
{
	free(v->flows);
	free(v->busiest);
	free(v->hosts);
	free(v->matrix);
	free(v->iter_buf);
	memset(v, 0, sizeof(*v));
}

static int span_cmp(const void *pa, const void *pb)
{
	const struct ct_span *a = pa, *b = pb;

	return a->s < b->s ? -1 : a->s > b->s;
}

long ct_view_class_spans(const struct ct_view *v, int cls, uint64_t join_ns, struct ct_span **out)
{
	size_t n = 0, cap = 0, m = 0;
	struct ct_span *sp = NULL;

	*out = NULL;
	for (size_t i = 0; i < v->n_flows; i++) {
		const struct ct_rep_flow *f = v->flows[i].rep;

		if (v->flows[i].cls != cls)
			continue;
		for (size_t k = 0; k < f->n_first_bursts; k++) {
			uint64_t s = f->first_bursts[k].start, e = f->first_bursts[k].end;

			if (e < v->win_start || s > v->win_end || e < s)
				continue;
			if (n == cap) {
				struct ct_span *g;

				cap = cap ? 2 * cap : 256;
				g = realloc(sp, cap * sizeof(*sp));
				if (!g) {
					free(sp);
					return -ENOMEM;
				}
				sp = g;
			}
			sp[n++] = (struct ct_span){s < v->win_start ? v->win_start : s,
						   e > v->win_end ? v->win_end : e};
		}
	}
	if (!n) {
		free(sp);
		return 0;
	}
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (size_t i = 1; i < n; i++) {
		if (sp[i].s <= sp[m].e + join_ns) {
			if (sp[i].e > sp[m].e)
				sp[m].e = sp[i].e;
		} else {
			sp[++m] = sp[i];
		}
	}
	*out = sp;
	return (long)m + 1;
}
