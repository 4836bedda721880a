// SPDX-License-Identifier: MIT
/* Per-iteration GPU-side times, bandwidth utilisation, and the report. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <sys/timex.h>
#include <stddef.h>
#include <string.h>

#include "gpu_corr.h"

struct span {
	uint64_t a, b;
};

static int cmp_span(const void *x, const void *y)
{
	const struct span *p = x, *q = y;

	return p->a < q->a ? -1 : p->a > q->a;
}

/* Length of the union of n spans (sorted in place). */
static uint64_t union_len(struct span *s, size_t n)
{
	uint64_t sum = 0, a = 0, b = 0;

	if (n) /* qsort takes no NULL array */
		qsort(s, n, sizeof(*s), cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || s[i].a > b) {
			sum += b - a;
			a = s[i].a;
			b = s[i].b;
		} else if (s[i].b > b) {
			b = s[i].b;
		}
	}
	return n ? sum + (b - a) : 0;
}

static bool clip(uint64_t a, uint64_t b, uint64_t s, uint64_t e, struct span *out)
{
	if (b <= s || a >= e)
		return false;
	out->a = a < s ? s : a;
	out->b = b > e ? e : b;
	return true;
}

static int boundary_class(const struct gc_job *j, int32_t pid)
{
	uint64_t bytes[CT_CLASS_COUNT + 1] = {0};
	int best = -1;

	for (size_t i = 0; i < j->n_ops; i++) {
		const struct gc_comm *c = &j->comms[j->ops[i].comm];

		if (c->pid == pid && c->cls <= CT_CLASS_OTHER)
			bytes[c->cls] += j->ops[i].bytes + 1;
	}
	if (bytes[CT_CLASS_DP])
		return CT_CLASS_DP;
	for (int k = 0; k <= CT_CLASS_OTHER; k++)
		if (bytes[k] && (best < 0 || bytes[k] > bytes[best]))
			best = k;
	return best;
}

size_t gc_iterations(const struct gc_job *j, int32_t pid, struct gc_iter *it, size_t max)
{
	int bc = boundary_class(j, pid);
	uint64_t *ends, first = UINT64_MAX, max_gap = 0, prev_end = 0;
	size_t n_b = 0, n_ends = 0, n = 0;
	struct span *sp;

	if (bc < 0 || !max)
		return 0;
	ends = malloc((j->n_ops + 1) * sizeof(*ends));
	sp = malloc((2 * j->n_ops + j->n_kernels + 1) * sizeof(*sp));
	if (!ends || !sp)
		goto out;
	/* The boundary class's operations of this process, in start order:
	 * the largest gap between them separates iterations; bursts split at
	 * gaps over half of it. */
	for (size_t i = 0; i < j->n_ops; i++) {
		const struct gc_op *o = &j->ops[i];
		const struct gc_comm *c = &j->comms[o->comm];

		if (c->pid != pid)
			continue;
		if (o->t_start < first)
			first = o->t_start;
		if (c->cls != bc)
			continue;
		if (n_b && o->t_start > prev_end && o->t_start - prev_end > max_gap)
			max_gap = o->t_start - prev_end;
		if (o->t_end > prev_end)
			prev_end = o->t_end;
		n_b++;
	}
	for (size_t i = 0; i < j->n_kernels; i++)
		if (j->kernels[i].pid == pid && j->kernels[i].t_start < first)
			first = j->kernels[i].t_start;
	prev_end = 0;
	for (size_t i = 0; i < j->n_ops; i++) {
		const struct gc_op *o = &j->ops[i];
		const struct gc_comm *c = &j->comms[o->comm];

		if (c->pid != pid || c->cls != bc)
			continue;
		if (n_ends && o->t_start > prev_end && o->t_start - prev_end > max_gap / 2)
			n_ends++;
		else if (!n_ends)
			n_ends = 1;
		if (o->t_end > prev_end)
			prev_end = o->t_end;
		ends[n_ends - 1] = prev_end;
	}
	for (size_t k = 0; k < n_ends && n < max; k++) {
		uint64_t s = k ? ends[k - 1] : first, e = ends[k];
		struct gc_iter *x = &it[n];
		size_t ns = 0, n_comp, n_all;

		memset(x, 0, sizeof(*x));
		x->t_start = s;
		x->t_end = e;
		for (size_t i = 0; i < j->n_kernels; i++) {
			const struct gc_kernel *kn = &j->kernels[i];

			if (kn->pid == pid && kn->kclass == CT_KCLASS_COMPUTE &&
			    clip(kn->t_start, kn->t_end, s, e, &sp[ns]))
				ns++;
		}
		n_comp = ns;
		x->t_comp = union_len(sp, ns) / 1e9;
		for (int cls = 0; cls < CT_CLASS_COUNT; cls++) {
			size_t m = n_comp;

			for (size_t i = 0; i < j->n_ops; i++) {
				const struct gc_op *o = &j->ops[i];
				const struct gc_comm *c = &j->comms[o->comm];

				if (c->pid == pid && c->cls == cls &&
				    clip(o->t_start, o->t_end, s, e, &sp[m]))
					m++;
			}
			x->t_comm[cls] = union_len(sp + n_comp, m - n_comp) / 1e9;
		}
		n_all = n_comp;
		for (size_t i = 0; i < j->n_ops; i++) {
			const struct gc_op *o = &j->ops[i];

			if (j->comms[o->comm].pid == pid &&
			    clip(o->t_start, o->t_end, s, e, &sp[n_all]))
				n_all++;
		}
		x->t_comm_all = union_len(sp + n_comp, n_all - n_comp) / 1e9;
		/* Compute spans again (sorted in place above), then both together. */
		ns = 0;
		for (size_t i = 0; i < j->n_kernels; i++) {
			const struct gc_kernel *kn = &j->kernels[i];

			if (kn->pid == pid && kn->kclass == CT_KCLASS_COMPUTE &&
			    clip(kn->t_start, kn->t_end, s, e, &sp[ns]))
				ns++;
		}
		for (size_t i = 0; i < j->n_ops; i++) {
			const struct gc_op *o = &j->ops[i];

			if (j->comms[o->comm].pid == pid &&
			    clip(o->t_start, o->t_end, s, e, &sp[ns]))
				ns++;
		}
		{
			double busy = union_len(sp, ns) / 1e9, len = (e - s) / 1e9;

			x->overlap = x->t_comp + x->t_comm_all - busy;
			x->bubble = len - busy;
			x->r_comm = len > 0 ? (x->t_comm_all - x->overlap) / len : 0;
		}
		n++;
	}
out:
	free(ends);
	free(sp);
	return n;
}

double gc_bw_util(const struct gc_job *j, const struct gc_flows *f, int cls, double nic_gbps)
{
	struct span *sp = malloc((j->n_ops + 1) * sizeof(*sp));
	uint64_t bytes = 0;
	size_t n = 0;
	double t;

	if (!sp || nic_gbps <= 0) {
		free(sp);
		return -1;
	}
	for (size_t i = 0; i < j->n_ops; i++)
		if (j->comms[j->ops[i].comm].cls == cls)
			sp[n++] = (struct span){j->ops[i].t_start, j->ops[i].t_end};
	t = union_len(sp, n) / 1e9;
	free(sp);
	for (size_t i = 0; f && i < f->n; i++)
		if (f->v[i].comm >= 0 && f->v[i].cls == cls)
			bytes += f->v[i].joined_bytes;
	if (t <= 0 || !bytes)
		return -1;
	return (double)bytes * 8 / t / (nic_gbps * 1e9);
}

static json_object *num(double v)
{
	return json_object_new_double(v);
}

static void row(json_object *rows, const char *what, double pred, double obs)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "quantity", json_object_new_string(what));
	json_object_object_add(o, "predicted", num(pred));
	json_object_object_add(o, "observed", num(obs));
	json_object_object_add(o, "error_pct", pred != 0 ? num((obs - pred) / pred * 100) : NULL);
	json_object_array_add(rows, o);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(const struct gc_iter *it, size_t n, size_t off)
{
	double v[256];
	size_t m = n < 256 ? n : 256;

	for (size_t i = 0; i < m; i++)
		v[i] = *(const double *)((const char *)&it[i] + off);
	qsort(v, m, sizeof(v[0]), cmp_double);
	return m ? v[m / 2] : 0;
}

int gc_write_report(const struct gc_job *j, const struct gc_flows *f, int32_t pid,
		    const struct ct_prediction *pr, double nic_gbps, FILE *out)
{
	json_object *root = json_object_new_object(), *a, *o, *clocks;
	struct gc_iter it[256];
	size_t n = gc_iterations(j, pid, it, 256);
	char h[24];

	json_object_object_add(root, "schema", json_object_new_string("commtap.gpu/v1"));
	clocks = json_object_new_object();
	json_object_object_add(
		clocks, "nccl_plugin",
		json_object_new_string("CLOCK_REALTIME (TSC scaled, re-anchored every 50 ms)"));
	json_object_object_add(
		clocks, "cupti",
		json_object_new_string("CLOCK_REALTIME (cuptiActivityRegisterTimestampCallback)"));
	json_object_object_add(clocks, "kernel_channel",
			       json_object_new_string("GPU globaltimer (kept raw in the records)"));
	json_object_object_add(clocks, "pcap", json_object_new_string("CLOCK_REALTIME"));
	json_object_object_add(
		clocks, "bpf",
		json_object_new_string("CLOCK_MONOTONIC: realtime - (created_realtime_ns - "
				       "created_monotonic_ns) from the ring header"));
	{
		/* The kernel's view of this host's clock discipline (NTP/chrony
		 * or PTP through phc2sys): the bound a cross-host join assumes. */
		struct timex tx = {0};
		int st = adjtimex(&tx);
		json_object *sync = json_object_new_object();

		json_object_object_add(sync, "source", json_object_new_string("adjtimex"));
		json_object_object_add(sync, "synchronised",
				       json_object_new_boolean(st >= 0 && st != TIME_ERROR &&
							       !(tx.status & STA_UNSYNC)));
		json_object_object_add(sync, "esterror_us", json_object_new_int64(tx.esterror));
		json_object_object_add(sync, "maxerror_us", json_object_new_int64(tx.maxerror));
		json_object_object_add(sync, "join_slack_ms", json_object_new_double(1.0));
		json_object_object_add(clocks, "sync", sync);
	}
	json_object_object_add(root, "clocks", clocks);
	json_object_object_add(root, "rings", json_object_new_int((int)j->rings));
	json_object_object_add(root, "rings_skipped", json_object_new_int((int)j->rings_skipped));
	json_object_object_add(root, "records_dropped", json_object_new_uint64(j->dropped));
	json_object_object_add(root, "records_lost", json_object_new_uint64(j->errors));

	a = json_object_new_array();
	for (size_t i = 0; i < j->n_comms; i++) {
		const struct gc_comm *c = &j->comms[i];

		o = json_object_new_object();
		snprintf(h, sizeof(h), "0x%llx", (unsigned long long)c->hash);
		json_object_object_add(o, "comm", json_object_new_string(h));
		json_object_object_add(o, "pid", json_object_new_int(c->pid));
		json_object_object_add(o, "rank", json_object_new_int(c->rank));
		json_object_object_add(o, "nranks", json_object_new_int(c->nranks));
		json_object_object_add(
			o, "class", json_object_new_string(ct_class_name((enum ct_class)c->cls)));
		json_object_object_add(o, "why", json_object_new_string(c->why));
		json_object_object_add(o, "collectives", json_object_new_int((int)c->n_coll));
		json_object_object_add(o, "p2p", json_object_new_int((int)c->n_p2p));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "communicators", a);

	if (f) {
		size_t linked = 0;

		for (size_t i = 0; i < f->n; i++)
			linked += f->v[i].comm >= 0;
		json_object_object_add(root, "flows", json_object_new_int((int)f->n));
		json_object_object_add(root, "flows_linked", json_object_new_int((int)linked));
	}

	a = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "start_ns", json_object_new_uint64(it[i].t_start));
		json_object_object_add(o, "t_iter", num((it[i].t_end - it[i].t_start) / 1e9));
		json_object_object_add(o, "t_comp", num(it[i].t_comp));
		for (int c = 0; c < CT_CLASS_COUNT; c++) {
			char k[32];

			snprintf(k, sizeof(k), "t_%s", ct_class_name((enum ct_class)c));
			json_object_object_add(o, k, num(it[i].t_comm[c]));
		}
		json_object_object_add(o, "overlap", num(it[i].overlap));
		json_object_object_add(o, "r_comm", num(it[i].r_comm));
		json_object_object_add(o, "bubble", num(it[i].bubble));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "iterations", a);

	o = json_object_new_object();
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		double u = gc_bw_util(j, f, c, nic_gbps);

		if (u >= 0)
			json_object_object_add(o, ct_class_name((enum ct_class)c), num(u));
	}
	json_object_object_add(root, "bw_utilization", o);

	/* Operations and the wire bursts joined to them, per class. */
	o = json_object_new_object();
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		unsigned long ops = 0, with = 0;
		uint64_t bytes = 0;
		json_object *x;

		for (size_t i = 0; i < j->n_ops; i++) {
			if (j->comms[j->ops[i].comm].cls != c)
				continue;
			ops++;
			with += j->ops[i].wire_bytes > 0;
			bytes += j->ops[i].wire_bytes;
		}
		if (!ops)
			continue;
		x = json_object_new_object();
		json_object_object_add(x, "operations", json_object_new_uint64(ops));
		json_object_object_add(x, "with_wire_traffic", json_object_new_uint64(with));
		json_object_object_add(x, "wire_bytes", json_object_new_uint64(bytes));
		json_object_object_add(o, ct_class_name((enum ct_class)c), x);
	}
	json_object_object_add(root, "operations_joined", o);

	if (pr && n) {
		/* Medians over the iterations; the first one holds warm-up. */
		const struct gc_iter *m = n > 1 ? it + 1 : it;
		size_t k = n > 1 ? n - 1 : n;
		double t_iter[256];

		for (size_t i = 0; i < k; i++)
			t_iter[i] = (m[i].t_end - m[i].t_start) / 1e9;
		qsort(t_iter, k, sizeof(double), cmp_double);
		a = json_object_new_array();
		row(a, "T_iter", pr->t_iter, t_iter[k / 2]);
		row(a, "T_comp", pr->t_comp, median_of(m, k, offsetof(struct gc_iter, t_comp)));
		for (int c = 0; c < CT_CLASS_COUNT; c++) {
			char q[32];
			double obs = median_of(m, k,
					       offsetof(struct gc_iter, t_comm) +
						       (size_t)c * sizeof(double));

			if (pr->t_class[c] <= 0 && obs <= 0)
				continue;
			snprintf(q, sizeof(q), "T_%s", ct_class_name((enum ct_class)c));
			row(a, q, pr->t_class[c], obs);
		}
		row(a, "T_bubble", pr->t_bubble, median_of(m, k, offsetof(struct gc_iter, bubble)));
		row(a, "R_comm", pr->r_comm, median_of(m, k, offsetof(struct gc_iter, r_comm)));
		json_object_object_add(root, "predicted_vs_observed", a);
	}
	fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object_put(root);
	return ferror(out) ? -EIO : 0;
}
