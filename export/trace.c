// SPDX-License-Identifier: MIT
/*
 * commtap trace: a report as Trace Event Format JSON. Events are written
 * track by track in time order; timestamps are microseconds (with three
 * decimals: exact nanoseconds) from the earliest time in the trace, which
 * otherData.time_origin_ns gives on the report's clock.
 */
#include "trace.h"
#include "trace_internal.h"

#include <commtap/traffic_class.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PID_JOB = 1, PID_GPU = 2, PID_HOST0 = 3 };

struct tr_out {
	FILE *f;
	uint64_t origin;
	unsigned long events;
};

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* Microseconds since the origin, exact to the nanosecond. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void event_open(struct tr_out *o, char ph, int pid, const char *name)
{
	fputs(o->events++ ? ",\n" : "\n", o->f);
	fprintf(o->f, "{\"ph\":\"%c\",\"pid\":%d,\"name\":", ph, pid);
	put_str(o->f, name);
}

static void meta(struct tr_out *o, const char *what, int pid, int tid, const char *name, long sort)
{
	event_open(o, 'M', pid, what);
	if (tid > 0)
		fprintf(o->f, ",\"tid\":%d", tid);
	if (name) {
		fputs(",\"args\":{\"name\":", o->f);
		put_str(o->f, name);
		fputs("}}", o->f);
	} else {
		fprintf(o->f, ",\"args\":{\"sort_index\":%ld}}", sort);
	}
}

/* A complete slice; the caller adds its args and closes it. */
static void slice_open(struct tr_out *o, int pid, int tid, const char *cat, const char *name,
		       uint64_t start, uint64_t end)
{
	event_open(o, 'X', pid, name);
	fprintf(o->f, ",\"cat\":\"%s\",\"tid\":%d,\"ts\":", cat, tid);
	put_us(o->f, start - o->origin);
	fputs(",\"dur\":", o->f);
	put_us(o->f, end - start);
}

static int cmp_burst(const void *a, const void *b)
{
	const struct tr_burst *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int load_flows(const struct ct_rep *rep, struct tr_flow **out, size_t *count, char *err,
		      size_t errlen)
{
	size_t n = rep->n_flows;
	struct tr_flow *v = calloc(n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct ct_rep_flow *f = &rep->flows[i];
		struct tr_flow *t = &v[i];

		t->flow = f;
		t->id = f->has_id ? f->id : i;
		t->bytes = f->bytes;
		t->src = f->src;
		t->cls = f->has_class ? (int)f->cls : TR_UNCLASSIFIED;
		t->b = calloc(f->n_first_bursts + 1, sizeof(*t->b));
		if (!t->b) {
			*out = v;
			*count = i + 1;
			return -ENOMEM;
		}
		for (size_t k = 0; k < f->n_first_bursts; k++) {
			const struct ct_rep_burst *e = &f->first_bursts[k];
			struct tr_burst *b = &t->b[t->nb];

			*b = (struct tr_burst){e->start, e->end, e->bytes, e->messages};
			if (b->end < b->start) {
				snprintf(err, errlen,
					 "flow %" PRIu64 ": burst %zu ends (%" PRIu64
					 ") before it starts (%" PRIu64 ")",
					 t->id, k, b->end, b->start);
				*out = v;
				*count = i + 1;
				return -EINVAL;
			}
			t->burst_bytes += b->bytes;
			t->nb++;
		}
		qsort(t->b, t->nb, sizeof(*t->b), cmp_burst);
	}
	*out = v;
	*count = n;
	return 0;
}

static void free_flows(struct tr_flow *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].b);
	free(v);
}

/* Busiest first: burst bytes, then the report's order. */
static const struct tr_flow *rank_base;
static int cmp_busy(const void *a, const void *b)
{
	const struct tr_flow *x = &rank_base[*(const size_t *)a],
			     *y = &rank_base[*(const size_t *)b];

	if (x->burst_bytes != y->burst_bytes)
		return x->burst_bytes > y->burst_bytes ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* An address as 16 bytes, IPv4 mapped into IPv6, for ordering. */
static void addr_bytes(const char *text, unsigned char out[16])
{
	memset(out, 0, 16);
	if (!text || inet_pton(AF_INET6, text, out) == 1)
		return;
	out[10] = out[11] = 0xff;
	if (inet_pton(AF_INET, text, out + 12) != 1)
		memset(out, 0, 16);
}

static int cmp_addr(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	unsigned char p[16], q[16];
	int c;

	addr_bytes(x, p);
	addr_bytes(y, q);
	c = memcmp(p, q, 16);
	return c ? c : strcmp(x ? x : "", y ? y : "");
}

static int host_pid(const char **hosts, size_t nh, const char *src)
{
	const char **h = bsearch(&src, hosts, nh, sizeof(*hosts), cmp_addr);

	return h ? PID_HOST0 + (int)(h - hosts) : PID_HOST0;
}

/*
 * One flow's bursts as slices. Bursts of one flow that overlap (a merged
 * report, two vantage points) go to the flow's next track: slices never
 * overlap on a track and each keeps its own bytes.
 */
static int write_flow(struct tr_out *o, const struct tr_flow *t, int pid, int *next_tid, long sort)
{
	uint64_t *lane_end = calloc(t->nb + 1, sizeof(*lane_end));
	unsigned *lane = calloc(t->nb + 1, sizeof(*lane));
	unsigned lanes = 0;
	char key[256], name[320];
	int op;

	if (!lane_end || !lane) {
		free(lane_end);
		free(lane);
		return -ENOMEM;
	}
	for (size_t k = 0; k < t->nb; k++) {
		unsigned l = 0;

		while (l < lanes && lane_end[l] > t->b[k].start)
			l++;
		if (l == lanes)
			lanes++;
		lane_end[l] = t->b[k].end;
		lane[k] = l;
	}
	ct_rep_flow_key(t->flow, key, sizeof(key));
	op = t->flow->has_op ? (int)t->flow->op : -1;
	for (unsigned l = 0; l < lanes; l++) {
		int tid = (*next_tid)++;

		if (l)
			snprintf(name, sizeof(name), "%s [%s] overlapping bursts %u", key,
				 tr_class_name(t->cls), l + 1);
		else
			snprintf(name, sizeof(name), "%s [%s]", key, tr_class_name(t->cls));
		meta(o, "thread_name", pid, tid, name, 0);
		meta(o, "thread_sort_index", pid, tid, NULL, sort * 16 + l);
		for (size_t k = 0; k < t->nb; k++) {
			const struct tr_burst *b = &t->b[k];

			if (lane[k] != l)
				continue;
			slice_open(o, pid, tid, "burst", tr_class_name(t->cls), b->start, b->end);
			fprintf(o->f,
				",\"args\":{\"flow\":%" PRIu64 ",\"burst\":%zu,\"bytes\":%" PRIu64
				",\"messages\":%" PRIu64 ",",
				t->id, k, b->bytes, b->messages);
			if (op >= 0) /* a name of the fixed set: nothing to escape */
				fprintf(o->f, "\"operation\":\"%s\",", ct_op_name(op));
			fputs("\"gbps\":", o->f);
			if (b->end > b->start)
				fprintf(o->f, "%.6g}}",
					(double)b->bytes * 8 / (double)(b->end - b->start));
			else
				fputs("null}}", o->f);
		}
	}
	free(lane_end);
	free(lane);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The job's iterations as one track; the last one lasts a period, within the capture. */
static size_t iteration_spans(const struct ct_rep *rep, uint64_t **out)
{
	size_t n = rep->job.n_iteration_starts;
	uint64_t *s = calloc(n + 1, sizeof(*s)), last = rep->capture.last_ts;
	double period = rep->job.iteration_period_s;

	*out = s;
	if (!s || !n)
		return 0;
	for (size_t i = 0; i < n; i++)
		s[i] = rep->job.iteration_starts[i];
	qsort(s, n, sizeof(*s), cmp_u64);
	s[n] = period > 0 ? s[n - 1] + (uint64_t)llround(period * 1e9) : s[n - 1];
	if (last > s[n - 1] && last < s[n])
		s[n] = last;
	return n;
}

static void write_iterations(struct tr_out *o, const uint64_t *s, size_t n, int tid)
{
	char name[48];

	meta(o, "thread_name", PID_JOB, tid, "iterations (wire)", 0);
	meta(o, "thread_sort_index", PID_JOB, tid, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "iteration %zu", i);
		slice_open(o, PID_JOB, tid, "iteration", name, s[i], s[i + 1]);
		fprintf(o->f, ",\"args\":{\"iteration\":%zu,\"ms\":%.6f}}", i,
			(s[i + 1] - s[i]) / 1e6);
	}
}

/* The report's anomalies, instants on their own track of the job (trace_anomaly.c). */
static int write_anomalies(struct tr_out *o, const struct ct_rep *rep, const uint64_t *s, size_t n,
			   int tid)
{
	struct tr_instant *v;
	long k = tr_anomaly_instants(rep, s, n, &v);

	if (k < 0)
		return -ENOMEM;
	if (k)
		meta(o, "thread_name", PID_JOB, tid, "anomalies", 0);
	for (long i = 0; i < k; i++) {
		const struct ct_rep_finding *f = v[i].finding;

		event_open(o, 'i', PID_JOB, v[i].name);
		fprintf(o->f, ",\"cat\":\"anomaly\",\"tid\":%d,\"s\":\"t\",\"ts\":", tid);
		put_us(o->f, v[i].ts < o->origin ? 0 : v[i].ts - o->origin);
		fputs(",\"args\":{\"kind\":", o->f);
		put_str(o->f, ct_rep_kind_name(f->kind));
		if (v[i].iteration >= 0)
			fprintf(o->f, ",\"iteration\":%ld", v[i].iteration);
		fprintf(o->f, ",\"confidence\":%.3f,\"evidence\":", f->confidence);
		put_str(o->f, f->evidence);
		fputs("}}", o->f);
	}
	free(v);
	return 0;
}

/*
 * Bytes on the wire per class and time bin, every flow's bursts included: a
 * burst's bytes are spread over the bins it covers in proportion to time,
 * in integers whose sum is exactly its bytes. Written as counter samples at
 * each non-empty bin and a zero after it, so the samples sum to the bytes.
 */
static int write_counters(struct tr_out *o, const struct tr_flow *flows, size_t n, uint64_t t0,
			  uint64_t t1, unsigned max_bins, uint64_t placed[TR_CLASSES],
			  uint64_t *bin_ns)
{
	uint64_t w = (t1 - t0) / max_bins + 1, *bins;
	size_t nbins;

	w = (w + 999) / 1000 * 1000;
	nbins = (size_t)((t1 - t0) / w) + 1;
	*bin_ns = w;
	bins = calloc(nbins + 1, sizeof(*bins));
	if (!bins)
		return -ENOMEM;
	for (int c = 0; c < TR_CLASSES; c++) {
		char name[48];
		int any = 0;

		memset(bins, 0, (nbins + 1) * sizeof(*bins));
		for (size_t f = 0; f < n; f++) {
			if (flows[f].cls != c)
				continue;
			for (size_t k = 0; k < flows[f].nb; k++) {
				const struct tr_burst *b = &flows[f].b[k];
				size_t first = (size_t)((b->start - t0) / w), lastb;
				uint64_t given = 0;

				any = 1;
				placed[c] += b->bytes;
				if (b->end == b->start) {
					bins[first] += b->bytes;
					continue;
				}
				lastb = (size_t)((b->end - 1 - t0) / w);
				for (size_t i = first; i <= lastb; i++) {
					uint64_t hi = t0 + (i + 1) * w, upto;

					if (hi > b->end)
						hi = b->end;
					upto = (uint64_t)((unsigned __int128)b->bytes *
							  (hi - b->start) / (b->end - b->start));
					bins[i] += upto - given;
					given = upto;
				}
			}
		}
		if (!any)
			continue;
		snprintf(name, sizeof(name), "wire bytes %s", tr_class_name(c));
		for (size_t i = 0; i < nbins + 1; i++) {
			if (!bins[i] && (!i || !bins[i - 1]))
				continue;
			event_open(o, 'C', PID_JOB, name);
			fputs(",\"cat\":\"wire\",\"ts\":", o->f);
			put_us(o->f, t0 + i * w - o->origin);
			fprintf(o->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", bins[i]);
		}
	}
	free(bins);
	return 0;
}

struct gpu_iter {
	uint64_t start, end;
	const struct ct_rep_gpu_iteration *it;
};

static int cmp_gpu_iter(const void *a, const void *b)
{
	const struct gpu_iter *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The GPU section's iterations, moved onto the wire's clock when the offset is known. */
static size_t gpu_spans(const struct ct_rep_gpu *g, const struct tr_clock *clk,
			struct gpu_iter **out)
{
	size_t n = g->n_iterations, m = 0;
	struct gpu_iter *v = calloc(n + 1, sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct ct_rep_gpu_iteration *it = &g->iterations[i];
		int64_t shift = clk->estimated ? clk->offset_ns : 0;
		uint64_t s = it->start_ns;
		double len = it->t_iter;

		if (!s || !(len >= 0) || (shift > 0 && s < (uint64_t)shift))
			continue;
		v[m].start = s - (uint64_t)shift;
		v[m].end = v[m].start + (uint64_t)llround(len * 1e9);
		v[m++].it = it;
	}
	qsort(v, m, sizeof(*v), cmp_gpu_iter);
	/* Rounding of t_iter (seconds) must not make neighbours overlap. */
	for (size_t i = 0; i + 1 < m; i++)
		if (v[i].end > v[i + 1].start)
			v[i].end = v[i + 1].start;
	return m;
}

static void write_gpu(struct tr_out *o, const struct ct_rep_gpu *g, const struct gpu_iter *v,
		      size_t n, const struct tr_clock *clk, int tid)
{
	char name[160];

	snprintf(name, sizeof(name), "GPU host: rank %" PRIu64 " (pid %" PRIu64 ")", g->rank,
		 g->pid);
	meta(o, "process_name", PID_GPU, 0, name, 0);
	meta(o, "process_sort_index", PID_GPU, 0, NULL, 1);
	meta(o, "thread_name", PID_GPU, tid,
	     clk->estimated ? "GPU iterations (on the wire's clock: GPU clock - offset)"
			    : "GPU iterations (the GPU host's clock, offset unknown)",
	     0);
	for (size_t i = 0; i < n; i++) {
		const struct ct_rep_gpu_iteration *it = v[i].it;

		snprintf(name, sizeof(name), "GPU iteration %zu", i);
		slice_open(o, PID_GPU, tid, "gpu", name, v[i].start, v[i].end);
		fprintf(o->f, ",\"args\":{\"t_iter_ms\":%.6f,\"t_comp_ms\":%.6f", it->t_iter * 1e3,
			it->t_comp * 1e3);
		for (int c = 0; c < TR_CLASSES - 1; c++)
			if (it->t_class_has & 1u << c)
				fprintf(o->f, ",\"t_%s_ms\":%.6f", tr_class_name(c),
					it->t_class[c] * 1e3);
		fprintf(o->f, ",\"overlap_ms\":%.6f,\"bubble_ms\":%.6f,\"r_comm\":%.6f}}",
			it->overlap * 1e3, it->bubble * 1e3, it->r_comm);
	}
}

static json_object *u64_obj(uint64_t v)
{
	return json_object_new_uint64(v);
}

/* The trace's own description: what is drawn, what is summed, the clocks. */
static void write_other_data(struct tr_out *o, const struct ct_rep *rep,
			     const struct tr_flow *flows, size_t n, size_t drawn, unsigned limit,
			     const uint64_t *placed, uint64_t bin_ns, const struct tr_clock *clk)
{
	json_object *d = json_object_new_object(), *cb = json_object_new_object(), *x;
	uint64_t report[TR_CLASSES] = {0};

	for (size_t i = 0; i < n; i++)
		report[flows[i].cls] += flows[i].bytes;
	json_object_object_add(d, "generator", json_object_new_string("commtap trace"));
	json_object_object_add(d, "report_generator",
			       json_object_new_string(rep->generator ? rep->generator : "unknown"));
	json_object_object_add(
		d, "clock",
		json_object_new_string(rep->clock_source ? rep->clock_source : "unknown"));
	json_object_object_add(d, "time_origin_ns", u64_obj(o->origin));
	json_object_object_add(d, "flows", u64_obj(n));
	json_object_object_add(d, "flows_drawn", u64_obj(drawn));
	json_object_object_add(d, "flows_limit", u64_obj(limit));
	json_object_object_add(
		d, "flows_layout",
		json_object_new_string(
			"the busiest flows (burst bytes) each on a track of their sending host's "
			"process, bursts as complete slices (the report's first_bursts, up to 64 a "
			"flow); a flow's overlapping bursts go to separate tracks of the flow; "
			"every "
			"flow, drawn or not, is summed into its class's counter"));
	json_object_object_add(d, "counter_bin_ns", u64_obj(bin_ns));
	for (int c = 0; c < TR_CLASSES; c++) {
		if (!report[c] && !placed[c])
			continue;
		x = json_object_new_object();
		json_object_object_add(x, "report_bytes", u64_obj(report[c]));
		json_object_object_add(x, "counter_bytes", u64_obj(placed[c]));
		json_object_object_add(x, "not_placed_bytes",
				       u64_obj(report[c] > placed[c] ? report[c] - placed[c] : 0));
		json_object_object_add(cb, tr_class_name(c), x);
	}
	json_object_object_add(d, "class_bytes", cb);
	if (rep->gpu.present) {
		x = json_object_new_object();
		json_object_object_add(x, "estimated", json_object_new_boolean(clk->estimated));
		if (clk->estimated) {
			json_object_object_add(x, "offset_ns",
					       json_object_new_int64(clk->offset_ns));
			/* null: one clock, its slew not measured (see method) */
			json_object_object_add(
				x, "uncertainty_ns",
				clk->same_clock ? NULL
						: json_object_new_int64(clk->uncertainty_ns));
		}
		if (clk->pairs)
			json_object_object_add(x, "iterations_paired", u64_obj(clk->pairs));
		if (clk->boundary_class)
			json_object_object_add(x, "boundary_class",
					       json_object_new_string(clk->boundary_class));
		json_object_object_add(x, "method", json_object_new_string(clk->why));
		json_object_object_add(x, "gpu_host_sync", json_object_get(rep->gpu.sync));
		json_object_object_add(d, "gpu_clock_offset", x);
		json_object_object_add(
			d, "gpu_events",
			json_object_new_string(
				"the gpu section's iterations (commtap.gpu/v1 iterations[]); it "
				"lists no single collectives or kernels, so none are drawn"));
	}
	json_object_object_add(
		d, "flow_arrows",
		json_object_new_string(
			"none: the report names no collective that caused a given burst (the gpu "
			"section counts joined operations per class only)"));
	fprintf(o->f, ",\n\"otherData\":%s",
		json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(d);
}

int ct_trace_write_report(const struct ct_rep *rep, const struct ct_trace_opts *opts, FILE *out,
			  char *err, size_t errlen)
{
	unsigned limit = opts && opts->flows ? opts->flows : CT_TRACE_DEFAULT_FLOWS;
	unsigned max_bins = opts && opts->bins ? opts->bins : CT_TRACE_DEFAULT_BINS;
	struct tr_out o = {.f = out, .origin = UINT64_MAX};
	uint64_t placed[TR_CLASSES] = {0}, t1 = 0, bin_ns = 0, *iters = NULL;
	struct tr_flow *flows = NULL;
	struct gpu_iter *gpu = NULL;
	const char **hosts = NULL;
	size_t n = 0, drawn = 0, nh = 0, *order = NULL, n_iter, n_gpu = 0;
	struct tr_clock clk;
	int rc, tid = 2;

	err[0] = 0;
	rc = load_flows(rep, &flows, &n, err, errlen);
	if (rc)
		goto out;
	tr_clock_estimate(rep, flows, n, &clk);
	n_iter = iteration_spans(rep, &iters);
	if (rep->gpu.present)
		n_gpu = gpu_spans(&rep->gpu, &clk, &gpu);
	order = calloc(n + 1, sizeof(*order));
	hosts = calloc(n + 1, sizeof(*hosts));
	if (!order || !hosts || !iters || (rep->gpu.present && !gpu)) {
		rc = -ENOMEM;
		goto out;
	}

	/* The time span, so that every timestamp is at or after the origin. */
	if (rep->capture.first_ts)
		o.origin = rep->capture.first_ts;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < flows[i].nb; k++) {
			if (flows[i].b[k].start < o.origin)
				o.origin = flows[i].b[k].start;
			if (flows[i].b[k].end > t1)
				t1 = flows[i].b[k].end;
		}
	for (size_t i = 0; i < n_iter; i++)
		if (iters[i] < o.origin)
			o.origin = iters[i];
	for (size_t i = 0; i < n_gpu; i++)
		if (gpu[i].start < o.origin)
			o.origin = gpu[i].start;
	if (o.origin == UINT64_MAX)
		o.origin = 0;
	if (t1 < o.origin)
		t1 = o.origin;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	rank_base = flows;
	qsort(order, n, sizeof(*order), cmp_busy);
	for (size_t i = 0; i < n && drawn < limit; i++) {
		if (!flows[order[i]].nb)
			break;
		hosts[nh++] = flows[order[i]].src;
		drawn++;
	}
	qsort(hosts, nh, sizeof(*hosts), cmp_addr);
	{
		size_t u = 0;

		for (size_t i = 0; i < nh; i++)
			if (!u || cmp_addr(&hosts[u - 1], &hosts[i]))
				hosts[u++] = hosts[i];
		nh = u;
	}

	fputs("{\"traceEvents\":[", out);
	meta(&o, "process_name", PID_JOB, 0, "job: iterations and bytes on the wire per class", 0);
	meta(&o, "process_sort_index", PID_JOB, 0, NULL, 0);
	for (size_t i = 0; i < nh; i++) {
		char name[96];

		snprintf(name, sizeof(name), "host %s", hosts[i] ? hosts[i] : "?");
		meta(&o, "process_name", PID_HOST0 + (int)i, 0, name, 0);
		meta(&o, "process_sort_index", PID_HOST0 + (int)i, 0, NULL, 2 + (long)i);
	}
	for (size_t i = 0; i < drawn; i++) {
		const struct tr_flow *t = &flows[order[i]];

		rc = write_flow(&o, t, host_pid(hosts, nh, t->src), &tid, (long)i);
		if (rc)
			goto out;
	}
	if (n_iter)
		write_iterations(&o, iters, n_iter, 1);
	rc = write_anomalies(&o, rep, iters, n_iter, tid++);
	if (rc)
		goto out;
	rc = write_counters(&o, flows, n, o.origin, t1, max_bins, placed, &bin_ns);
	if (rc)
		goto out;
	if (rep->gpu.present)
		write_gpu(&o, &rep->gpu, gpu, n_gpu, &clk, 1);
	fputs("\n]", out);
	write_other_data(&o, rep, flows, n, drawn, limit, placed, bin_ns, &clk);
	fputs("}\n", out);
	rc = ferror(out) ? -EIO : 0;
out:
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	free_flows(flows, n);
	free(iters);
	free(gpu);
	free(hosts);
	free(order);
	return rc;
}

int ct_trace_write(json_object *doc, const struct ct_trace_opts *opts, FILE *out, char *err,
		   size_t errlen)
{
	struct ct_rep rep;
	int rc = ct_rep_read(doc, "", &rep, err, errlen);

	if (rc)
		return rc;
	rc = ct_trace_write_report(&rep, opts, out, err, errlen);
	ct_rep_free(&rep);
	return rc;
}
