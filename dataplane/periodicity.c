// SPDX-License-Identifier: MIT
/*
 * Periodicity of a report. The job's period comes from the spectral
 * estimate on all bursts together (period.c); a flow's own period comes
 * from its burst starts, one job iteration apart, so the cost per flow is
 * linear in its bursts (no transform per flow).
 */
#include <commtap/periodicity.h>

#include <commtap/grow.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ct_burst_log_add(struct ct_burst_log *log, const struct ct_flow_burst *b)
{
	if (log->n == log->cap) {
		struct ct_flow_burst *nb = ct_grow(log->b, &log->cap, sizeof(*nb), 4096);

		if (!nb)
			return -ENOMEM;
		log->b = nb;
	}
	log->b[log->n++] = *b;
	return 0;
}

void ct_burst_log_free(struct ct_burst_log *log)
{
	free(log->b);
	memset(log, 0, sizeof(*log));
}

static int by_flow_then_start(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_start(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Radix sorts, or comparison sorts where there is no memory for them. */
static void sort_by_start(struct ct_burst *b, size_t n)
{
	if (ct_bursts_sort_by_start(b, n))
		qsort(b, n, sizeof(*b), by_start);
}

static void sort_by_flow(struct ct_burst *b, size_t n)
{
	if (ct_bursts_sort_by_flow(b, n))
		qsort(b, n, sizeof(*b), by_flow_then_start);
}

/* A flow's period: its first burst in each job iteration, over the iterations between. */
static void flow_period(const struct ct_burst *b, size_t n, const struct ct_period *job,
			struct ct_flow_periodicity *fp)
{
	uint64_t first_start = 0, last_start = 0;
	long first_it = -1, last_it = -1, prev = -1;
	size_t seen = 0;

	for (size_t i = 0; i < n; i++) {
		long it = ct_period_iteration(job, b[i].start);

		if (it < 0 || it == prev)
			continue;
		prev = it;
		seen++;
		if (first_it < 0) {
			first_it = it;
			first_start = b[i].start;
		}
		last_it = it;
		last_start = b[i].start;
	}
	if (seen >= CT_PERIOD_MIN_ITERATIONS && last_it > first_it) {
		fp->periodic = 1;
		fp->period_s = (double)(last_start - first_start) / (double)(last_it - first_it) / 1e9;
	}
}

/*
 * Bursts sorted by (sender, start) -> one burst per overlapping run of a
 * sender, its bytes and packets summed: the rate the sender's NIC achieved.
 */
static size_t join_per_sender(const struct ct_burst *b, size_t n, struct ct_burst *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && out[k - 1].flow == b[i].flow && b[i].start <= out[k - 1].end) {
			out[k - 1].bytes += b[i].bytes;
			out[k - 1].messages += b[i].messages;
			out[k - 1].packets += b[i].packets;
			if (b[i].end > out[k - 1].end)
				out[k - 1].end = b[i].end;
			continue;
		}
		out[k++] = b[i];
	}
	return k;
}

struct addr_order {
	const struct ct_flow_set *set;
	int by_dst; /* order by destination, else by source */
};

static int flow_addr_cmp(const void *a, const void *b, void *arg)
{
	const struct addr_order *o = arg;
	const struct ct_flow_key *x = &o->set->flows[*(const size_t *)a].key;
	const struct ct_flow_key *y = &o->set->flows[*(const size_t *)b].key;
	int r = o->by_dst ? memcmp(&x->dst, &y->dst, sizeof(x->dst))
			  : memcmp(&x->src, &y->src, sizeof(x->src));

	if (r)
		return r;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* CNPs sent by a host: they travel from it (the receiver of the data) to the senders. */
static uint64_t cnp_sent_by(const struct ct_flow_set *set, const size_t *by_src,
			    const struct ct_addr *host)
{
	size_t lo = 0, hi = set->count;
	uint64_t cnp = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memcmp(&set->flows[by_src[mid]].key.src, host, sizeof(*host)) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < set->count && !memcmp(&set->flows[by_src[lo]].key.src, host, sizeof(*host));
	     lo++)
		cnp += set->flows[by_src[lo]].cnp;
	return cnp;
}

/*
 * Per receiving host. Flows are grouped by destination (one sort), and each
 * flow's bursts are found by offset in `all` (sorted by flow), so the cost is
 * a sort of the flows and of the bursts, not receivers x flows.
 */
static int receivers_cc(const struct ct_flow_set *set, const struct ct_burst *all, size_t n,
			const struct ct_period *job, struct ct_periodicity *out)
{
	size_t nf = set->count;
	size_t *by_dst = malloc((nf + 1) * sizeof(size_t)), *by_src = malloc((nf + 1) * sizeof(size_t));
	size_t *first = calloc(nf + 1, sizeof(size_t)), *count = calloc(nf + 1, sizeof(size_t));
	struct ct_burst *rb = malloc((n + 1) * sizeof(*rb)), *jb = malloc((n + 1) * sizeof(*jb));
	struct ct_addr *senders = malloc((nf + 1) * sizeof(*senders));
	int err = 0;

	out->receivers = calloc(nf + 1, sizeof(*out->receivers));
	if (!by_dst || !by_src || !first || !count || !rb || !jb || !senders || !out->receivers) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nf; i++)
		by_dst[i] = by_src[i] = i;
	qsort_r(by_dst, nf, sizeof(size_t), flow_addr_cmp, &(struct addr_order){set, 1});
	qsort_r(by_src, nf, sizeof(size_t), flow_addr_cmp, &(struct addr_order){set, 0});
	for (size_t i = n; i-- > 0;) {
		first[all[i].flow] = i;
		count[all[i].flow]++;
	}
	for (size_t a = 0; a < nf && !err;) {
		const struct ct_addr *host = &set->flows[by_dst[a]].key.dst;
		struct ct_receiver_cc *r = &out->receivers[out->n_receivers++];
		uint64_t ce = 0, packets = 0;
		size_t m = 0, ns = 0, b = a;

		r->host = *host;
		for (; b < nf && !memcmp(&set->flows[by_dst[b]].key.dst, host, sizeof(*host)); b++) {
			size_t f = by_dst[b], j;
			const struct ct_flow_summary *s = &set->flows[f];

			ce += s->ecn_ce;
			packets += s->packets;
			r->retransmits += s->retransmits;
			for (j = 0; j < ns && memcmp(&senders[j], &s->key.src, sizeof(*host)); j++)
				;
			if (j == ns)
				senders[ns++] = s->key.src;
			/* its bursts, with .flow naming the sending host for the incast sweep */
			for (size_t k = 0; k < count[f]; k++) {
				rb[m] = all[first[f] + k];
				rb[m++].flow = (uint32_t)j;
			}
		}
		a = b;
		r->senders = (unsigned)ns;
		/*
		 * One sender's flows (QPs) share its NIC: join their overlapping bursts
		 * before the sweep, so their rates are not added as if in parallel.
		 */
		sort_by_flow(rb, m);
		size_t joined = join_per_sender(rb, m, jb);

		sort_by_start(jb, joined);
		err = ct_incast_of(jb, joined, &r->incast_degree, &r->peak_gbps);
		sort_by_start(rb, m);
		err = err ?: ct_onoff_of(rb, m, &r->onoff);
		r->start_spread_s = ct_start_spread_s(rb, m, job);
		r->cnp_per_s_on = r->onoff.total_on_s > 0
					  ? (double)cnp_sent_by(set, by_src, host) / r->onoff.total_on_s
					  : 0;
		r->ecn_ce_fraction = packets ? (double)ce / (double)packets : 0;
	}
out:
	free(by_dst);
	free(by_src);
	free(first);
	free(count);
	free(rb);
	free(jb);
	free(senders);
	return err;
}

int ct_periodicity_compute(const struct ct_flow_set *set, const struct ct_burst_log *log,
			   double min_period_s, struct ct_periodicity *out)
{
	struct ct_burst *all = malloc((log->n + 1) * sizeof(*all));
	size_t n = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->flows = calloc(set->count + 1, sizeof(*out->flows));
	out->n_flows = set->count;
	if (!all || !out->flows) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < log->n; i++) {
		const struct ct_flow_burst *fb = &log->b[i];
		int64_t f = ct_flow_set_find(set, &fb->key);

		if (f < 0)
			continue;
		all[n++] = (struct ct_burst){fb->start, fb->end, fb->bytes, fb->messages, (uint32_t)f,
					     fb->packets};
	}
	out->bursts = n;
	err = ct_period_estimate(all, n, min_period_s, &out->job); /* sorts by start */
	err = err ?: ct_onoff_of(all, n, &out->job_onoff);
	if (err)
		goto out;

	/* by flow, each flow's bursts staying in start order */
	if (ct_bursts_sort_stable_by_flow(all, n))
		sort_by_flow(all, n);
	for (size_t i = 0; i < n && !err;) {
		size_t j = i;
		struct ct_flow_periodicity *fp = &out->flows[all[i].flow];

		while (j < n && all[j].flow == all[i].flow)
			j++;
		fp->bursts = all + i;
		fp->n_bursts = j - i;
		err = ct_onoff_of(all + i, j - i, &fp->onoff);
		fp->phase_first = fp->phase_last = -1;
		if (!err && out->job.periodic) {
			err = ct_iteration_volumes_of(all + i, j - i, &out->job, &fp->volumes);
			fp->phase_first = fp->volumes.phase_first;
			fp->phase_last = fp->volumes.phase_last;
			flow_period(all + i, j - i, &out->job, fp);
		}
		i = j;
	}
	err = err ?: receivers_cc(set, all, n, &out->job, out);
	out->by_flow = all;
	all = NULL;
out:
	free(all);
	if (err)
		ct_periodicity_free(out);
	return err;
}

void ct_periodicity_free(struct ct_periodicity *p)
{
	for (size_t i = 0; p->flows && i < p->n_flows; i++)
		ct_iteration_volumes_free(&p->flows[i].volumes);
	free(p->flows);
	free(p->receivers);
	free(p->by_flow);
	ct_period_free(&p->job);
	memset(p, 0, sizeof(*p));
}
