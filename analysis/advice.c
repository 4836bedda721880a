// SPDX-License-Identifier: MIT
/*
 * The advice's figures (docs/advice.md), per job, from its bursts inside
 * whole iterations (from its first iteration start to its last):
 *
 * - a class's on-time is the union of its bursts, per iteration; its
 *   effective bandwidth the bytes a sender (a NIC address) sends over that
 *   sender's own on-time, summed over senders: sum(bytes) / sum(on-time);
 * - at the NIC's rate each sender's bursts shrink by its utilization (its
 *   bytes would take bytes / rate), starts kept: the unions again give the
 *   class's and the job's communication time at the NIC rate;
 * - the scheduling bound on two resources, computation and communication
 *   (three for a parameter server: push, pull and computation).
 *
 * The unions walk each flow's bursts in place (advice_runs.c): nothing is
 * copied per burst.
 */
#include "advice_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Within this factor of each other computation and communication are
 * "balanced": overlap alone could then give at least 1 + 1/1.25 = 1.8x
 * of its 2x, and neither side alone is the thing to shorten.
 */
#define BALANCE 1.25

/*
 * What makes a receiver stand in the way of its senders' rate (cc.c's
 * figures): one packet in a thousand CE-marked is DCQCN/ECN cutting the
 * rate on every such mark; any CNP or retransmission likewise; a peak
 * toward it at 90% of the NIC rate or more while two senders or more are
 * on, and the class's senders below 90% of it, is its own link full and
 * shared (incast) holding them back: one sender at line rate is only that
 * sender at its best, and a class at 90% of the rate has little to gain.
 */
#define BLOCK_CE_FRACTION   0.001
#define BLOCK_PEAK_OVER_NIC 0.9

/*
 * The three-resource bound applies when PushPull carries this share of
 * the job's bytes (Other aside) at least: what is left are a socket's
 * ACKs and the servers' own control, not a collective of its own.
 */
#define PUSHPULL_SHARE 0.9

/* The class a flow counts in: Other when the report has no classes. */
static int flow_class(const struct ct_report *r, size_t f)
{
	if (!r->classes || f >= r->classes->n)
		return CT_CLASS_OTHER;
	return r->classes->flows[f].cls;
}

/* Runs by class, then sender (ctx: the flows' summaries): Other last. */
static int by_class_src(const void *a, const void *b, void *ctx)
{
	const struct ct_advice_run *x = a, *y = b;
	const struct ct_flow_summary *f = ctx;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return memcmp(&f[x->flow].key.src, &f[y->flow].key.src, sizeof(struct ct_addr));
}

/* The job's flows with bursts as runs, by class then sender; *n of them. */
static struct ct_advice_run *job_runs(const struct ct_report *r, const uint8_t *dir, int job,
				      uint64_t w0, uint64_t w1, size_t *n)
{
	const struct ct_periodicity *p = r->periodicity;
	struct ct_advice_run *runs;
	size_t k = 0;

	for (size_t f = 0; f < p->n_flows && f < r->flows.count; f++)
		k += p->flows[f].job == job && p->flows[f].n_bursts;
	runs = calloc(k ? k : 1, sizeof(*runs));
	if (!runs)
		return NULL;
	k = 0;
	for (size_t f = 0; f < p->n_flows && f < r->flows.count; f++) {
		const struct ct_flow_periodicity *fp = &p->flows[f];

		if (fp->job != job || !fp->n_bursts)
			continue;
		runs[k] = (struct ct_advice_run){.first = fp->bursts,
						 .last = fp->bursts + fp->n_bursts,
						 .util = 1,
						 .flow = (uint32_t)f,
						 .cls = (uint8_t)flow_class(r, f),
						 .dir = dir ? dir[f] : 0};
		runs[k].bytes = ct_advice_run_bytes(&runs[k], w0, w1);
		k++;
	}
	qsort_r(runs, k, sizeof(*runs), by_class_src, (void *)r->flows.flows);
	*n = k;
	return runs;
}

/*
 * Per class and sender: bytes over the sender's on-time, summed into the
 * class; with a rate, each sender's bursts to last its utilization of
 * themselves at that rate (never longer).
 */
static void senders(const struct ct_report *r, struct ct_advice_job *j, struct ct_advice_run *runs,
		    size_t n, uint64_t w0, uint64_t w1, double nic_gbps,
		    struct ct_advice_heap *heap)
{
	const struct ct_flow_summary *f = r->flows.flows;
	double host_on[CT_ADVICE_CLASSES] = {0};

	for (size_t i = 0; i < n;) {
		size_t e = i;
		double bytes = 0, on;
		uint64_t on_ns;

		while (e < n && !by_class_src(&runs[e], &runs[i], (void *)f))
			bytes += runs[e++].bytes;
		ct_advice_runs_union(runs + i, e - i, w0, w1, heap, &on_ns, NULL);
		on = (double)on_ns / 1e9;
		host_on[runs[i].cls] += on;
		j->cls[runs[i].cls].bytes += bytes;
		if (nic_gbps > 0 && on > 0) {
			double util = bytes * 8 / on / (nic_gbps * 1e9);

			for (size_t k = i; util < 1 && k < e; k++)
				runs[k].util = util;
		}
		i = e;
	}
	for (int c = 0; c < CT_ADVICE_CLASSES; c++) {
		struct ct_advice_class *k = &j->cls[c];

		k->gbps = host_on[c] > 0 ? k->bytes * 8 / host_on[c] / 1e9 : 0;
		k->util = nic_gbps > 0 ? k->gbps / nic_gbps : -1;
	}
}

/*
 * On-times per class, now and at the NIC rate, then of every class but
 * Other together (the runs before Other's, by class); returns how many
 * runs that is.
 */
static size_t on_times(const struct ct_report *r, struct ct_advice_job *j,
		       struct ct_advice_run *runs, size_t n, uint64_t w0, uint64_t w1, int at_nic,
		       struct ct_advice_heap *heap)
{
	size_t comm = 0, classes = 0;
	uint64_t now, nic;

	for (size_t i = 0; i < n;) {
		size_t e = i;
		struct ct_advice_class *k = &j->cls[runs[i].cls];

		while (e < n && runs[e].cls == runs[i].cls)
			e++;
		ct_advice_runs_union(runs + i, e - i, w0, w1, heap, &now, &nic);
		k->on_s = (double)now / 1e9;
		k->on_s_at_nic = at_nic ? (double)nic / 1e9 : -1;
		k->present = k->on_s > 0 || k->bytes > 0;
		classes++;
		i = e;
	}
	/* Other (storage, control) is no communication of the training, unless nothing is classed
	 */
	while (comm < n && (runs[comm].cls != CT_CLASS_OTHER || !r->classes))
		comm++;
	if (classes == 1 && comm == n) {
		/* one class and nothing else: its union is the job's */
		j->comm_s = j->cls[runs[0].cls].on_s;
		j->comm_s_at_nic = j->cls[runs[0].cls].on_s_at_nic;
		return comm;
	}
	ct_advice_runs_union(runs, comm, w0, w1, heap, &now, &nic);
	j->comm_s = (double)now / 1e9;
	j->comm_s_at_nic = at_nic ? (double)nic / 1e9 : -1;
	return comm;
}

/*
 * A parameter server's push and pull, each the union of its bursts, when
 * PushPull is nearly all of the job's communication (its first n runs).
 * Returns 0 or -ENOMEM.
 */
static int push_pull(struct ct_advice_job *j, const struct ct_advice_run *runs, size_t n,
		     uint64_t w0, uint64_t w1, struct ct_advice_heap *heap)
{
	struct ct_advice_run *dir_runs;
	double pp = 0, all = 0;

	for (size_t i = 0; i < n; i++) {
		all += runs[i].bytes;
		pp += runs[i].dir ? runs[i].bytes : 0;
	}
	if (!all || pp < PUSHPULL_SHARE * all)
		return 0;
	dir_runs = malloc(n * sizeof(*dir_runs));
	if (!dir_runs)
		return -ENOMEM;
	j->push_pull = 1;
	for (uint8_t d = CT_ADVICE_PUSH; d <= CT_ADVICE_PULL; d++) {
		size_t k = 0;
		uint64_t ns;
		double t;

		for (size_t i = 0; i < n; i++)
			if (runs[i].dir == d)
				dir_runs[k++] = runs[i];
		ct_advice_runs_union(dir_runs, k, w0, w1, heap, &ns, NULL);
		t = (double)ns / 1e9;
		if (d == CT_ADVICE_PUSH)
			j->push_s = t;
		else
			j->pull_s = t;
	}
	free(dir_runs);
	return 0;
}

/* Whether a flow of job jn and class c goes to host. */
static int receives(const struct ct_report *r, size_t jn, int c, const struct ct_addr *host)
{
	const struct ct_periodicity *p = r->periodicity;

	for (size_t f = 0; f < p->n_flows && f < r->flows.count; f++)
		if (p->flows[f].job == (int)jn && flow_class(r, f) == c &&
		    !memcmp(&r->flows.flows[f].key.dst, host, sizeof(*host)))
			return 1;
	return 0;
}

/*
 * The receivers of class c in job jn (a flow of both goes to it: a host
 * that only receives is in no job's hosts) whose figures say their
 * senders cannot go faster, in address order (cc.c lists them so).
 */
static void blockers(const struct ct_report *r, size_t jn, int c, double nic_gbps,
		     struct ct_advice_class *k)
{
	const struct ct_periodicity *p = r->periodicity;

	for (size_t i = 0; i < p->n_class_receivers && k->n_blockers < CT_ADVICE_BLOCKERS; i++) {
		const struct ct_receiver_cc *rc = &p->class_receivers[i];
		double over = nic_gbps > 0 ? rc->peak_gbps / nic_gbps : -1;

		if (rc->cls != c)
			continue;
		if (rc->ecn_ce_fraction < BLOCK_CE_FRACTION && rc->cnp_per_s_on <= 0 &&
		    !rc->retransmits &&
		    (over < BLOCK_PEAK_OVER_NIC || rc->incast_degree < 2 ||
		     k->util >= BLOCK_PEAK_OVER_NIC))
			continue;
		if (!receives(r, jn, c, &rc->host))
			continue;
		k->blockers[k->n_blockers++] = (struct ct_advice_blocker){
			.host = rc->host,
			.ecn_ce_fraction = rc->ecn_ce_fraction,
			.cnp_per_s_on = rc->cnp_per_s_on,
			.peak_over_nic = over,
			.incast_degree = rc->incast_degree,
			.retransmits = rc->retransmits,
		};
	}
}

/* The scheduling bound of two resources and where the job sits on its curve. */
static void scheduling(struct ct_advice_job *j)
{
	double today;

	/* medians taken apart may not nest: no more overlap than the shorter side */
	if (j->overlap > j->t_comp)
		j->overlap = j->t_comp;
	if (j->overlap > j->t_comm)
		j->overlap = j->t_comm;
	today = j->t_comp + j->t_comm - j->overlap;

	j->best_s = j->t_comp > j->t_comm ? j->t_comp : j->t_comm;
	j->speedup_bound = j->best_s > 0 ? today / j->best_s : 1;
	if (j->push_pull) {
		/* push and pull on links' two directions: three resources, at most 3x */
		j->best3_s = j->t_comp;
		if (j->push_s > j->best3_s)
			j->best3_s = j->push_s;
		if (j->pull_s > j->best3_s)
			j->best3_s = j->pull_s;
		j->speedup_bound3 = j->best3_s > 0 ? today / j->best3_s : 1;
	}
	j->comp_to_comm = j->t_comm > 0 ? j->t_comp / j->t_comm : -1;
	if (j->comp_to_comm < 0 || j->comp_to_comm > BALANCE)
		j->regime = "compute-bound";
	else if (j->comp_to_comm < 1 / BALANCE)
		j->regime = "communication-bound";
	else
		j->regime = "balanced";
}

static int job_advice(const struct ct_report *r, const struct ct_advice *a, const uint8_t *dir,
		      size_t jn, struct ct_advice_job *j)
{
	const struct ct_periodicity *p = r->periodicity;
	const struct ct_period *per = ct_periodicity_job_period(p, jn);
	struct ct_advice_run *runs;
	uint64_t w0, w1;
	struct ct_advice_heap *heap;
	size_t n = 0, comm;
	double it;
	int err;

	if (!per->periodic || per->iterations < 2 || !per->starts)
		return 0; /* no whole iteration: nothing to say */
	w0 = per->starts[0];
	w1 = per->starts[per->iterations - 1];
	runs = job_runs(r, dir, (int)jn, w0, w1, &n);
	heap = malloc((n ? n : 1) * sizeof(*heap));
	if (!runs || !heap) {
		free(runs);
		free(heap);
		return -ENOMEM;
	}
	j->present = 1;
	j->period_s = per->period_s;
	j->iterations = per->iterations - 1;
	it = (double)j->iterations;
	senders(r, j, runs, n, w0, w1, a->nic_gbps, heap);
	comm = on_times(r, j, runs, n, w0, w1, a->nic_gbps > 0, heap);
	err = push_pull(j, runs, comm, w0, w1, heap);
	free(runs);
	free(heap);
	if (err)
		return err;
	j->push_s /= it;
	j->pull_s /= it;
	for (int c = 0; c < CT_ADVICE_CLASSES; c++) {
		struct ct_advice_class *k = &j->cls[c];

		k->on_s /= it;
		k->on_s_at_nic = k->on_s_at_nic >= 0 ? k->on_s_at_nic / it : -1;
		k->bytes /= it;
		k->comm_ratio = k->on_s / j->period_s;
		if (k->present && c != CT_CLASS_OTHER)
			blockers(r, jn, c, a->nic_gbps, k);
	}
	j->comm_s /= it;
	j->comm_s_at_nic = j->comm_s_at_nic >= 0 ? j->comm_s_at_nic / it : -1;
	j->comm_ratio = j->comm_s / j->period_s;
	/* the GPU side is one rank's, of the job it runs in: the only one, or the first */
	if (a->gpu.present && jn == 0 && a->gpu.t_iter > 0) {
		j->source = "gpu";
		j->t_iter = a->gpu.t_iter;
		j->t_comp = a->gpu.t_comp;
		j->t_comm = a->gpu.t_comm;
		j->overlap = a->gpu.overlap;
	} else {
		/* the wire sees no overlap: what is off the wire is computation (or idle) */
		j->source = "wire";
		j->t_iter = j->period_s;
		j->t_comm = j->comm_s < j->period_s ? j->comm_s : j->period_s;
		j->t_comp = j->period_s - j->t_comm;
		j->overlap = 0;
	}
	scheduling(j);
	if (a->nic_gbps > 0) {
		j->iter_s_at_nic = j->period_s - (j->comm_s - j->comm_s_at_nic);
		j->network_speedup = j->iter_s_at_nic > 0 ? j->period_s / j->iter_s_at_nic : 1;
	} else {
		j->iter_s_at_nic = j->network_speedup = -1;
	}
	return 0;
}

int ct_advice_compute(const struct ct_report *r, struct ct_advice *out)
{
	const struct ct_periodicity *p = r->periodicity;
	uint8_t *dir;

	memset(out, 0, sizeof(*out));
	if (r->nic_source && r->nic_gbps_stated > 0) {
		out->nic_gbps = r->nic_gbps_stated;
		out->nic_source = r->nic_source;
	}
	for (unsigned i = 0; i < r->n_sections; i++)
		if (!strcmp(r->sections[i].name, "gpu"))
			ct_advice_gpu_read(r->sections[i].value, &out->gpu);
	if (!p || !p->n_jobs)
		return 0;
	out->jobs = calloc(p->n_jobs, sizeof(*out->jobs));
	if (!out->jobs)
		return -ENOMEM;
	out->n_jobs = p->n_jobs;
	dir = malloc(r->flows.count ? r->flows.count : 1);
	if (!dir || ct_advice_pushpull_dirs(r, dir)) {
		free(dir);
		ct_advice_free(out);
		return -ENOMEM;
	}
	for (size_t j = 0; j < p->n_jobs; j++)
		if (job_advice(r, out, dir, j, &out->jobs[j])) {
			free(dir);
			ct_advice_free(out);
			return -ENOMEM;
		}
	free(dir);
	if (ct_advice_interleave(r, &out->interleave)) {
		ct_advice_free(out);
		return -ENOMEM;
	}
	return 0;
}

void ct_advice_free(struct ct_advice *a)
{
	ct_advice_interleave_free(&a->interleave);
	free(a->jobs);
	memset(a, 0, sizeof(*a));
}
