// SPDX-License-Identifier: MIT
/*
 * Periodicity of a report. The job's period comes from the spectral
 * estimate on all bursts together (period.c); a flow's own period comes
 * from its burst starts, one job iteration apart, so the cost per flow is
 * linear in its bursts (no transform per flow).
 */
#include "periodicity_internal.h"

#include <commtap/traffic_class.h>

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

/*
 * Stable sort by start of bursts that come in runs already in order (a
 * flow's, a sender's): the runs are merged pairwise, O(n log runs). tmp
 * holds n bursts, runs n + 1 offsets.
 */
static void merge_sort_by_start(struct ct_burst *b, size_t n, struct ct_burst *tmp, size_t *runs)
{
	struct ct_burst *src = b, *dst = tmp;
	size_t nr = 0;

	if (n < 2)
		return;
	runs[nr++] = 0;
	for (size_t i = 1; i < n; i++)
		if (b[i].start < b[i - 1].start)
			runs[nr++] = i;
	runs[nr] = n; /* run r is [runs[r], runs[r + 1]) */
	while (nr > 1) {
		size_t k = 0;

		for (size_t r = 0; r < nr; r += 2) {
			size_t lo = runs[r], mid = runs[r + 1], hi = r + 1 < nr ? runs[r + 2] : mid;
			size_t i = lo, j = mid, o = lo;

			/* ties: the left run first, so the sort is stable */
			while (i < mid && j < hi)
				dst[o++] = src[j].start < src[i].start ? src[j++] : src[i++];
			memcpy(dst + o, src + i, (mid - i) * sizeof(*dst));
			o += mid - i;
			memcpy(dst + o, src + j, (hi - j) * sizeof(*dst));
			runs[k++] = lo;
		}
		runs[k] = n;
		nr = k;
		struct ct_burst *t = src;

		src = dst;
		dst = t;
	}
	if (src != b)
		memcpy(b, src, n * sizeof(*b));
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
		fp->period_s =
			(double)(last_start - first_start) / (double)(last_it - first_it) / 1e9;
	}
}

int ct_flow_periodicity_against(struct ct_flow_periodicity *fp, const struct ct_period *job,
				double *room)
{
	int err;

	fp->periodic = 0;
	fp->period_s = 0;
	fp->phase_first = fp->phase_last = -1;
	memset(&fp->volumes, 0, sizeof(fp->volumes));
	if (!job->periodic)
		return 0;
	err = ct_iteration_volumes_in(fp->bursts, fp->n_bursts, job, &fp->volumes, room);
	if (err)
		return err;
	fp->phase_first = fp->volumes.phase_first;
	fp->phase_last = fp->volumes.phase_last;
	flow_period(fp->bursts, fp->n_bursts, job, fp);
	return 0;
}

const struct ct_period *ct_periodicity_job_period(const struct ct_periodicity *p, size_t j)
{
	return j ? &p->jobs[j].period : &p->job;
}

const struct ct_period *ct_periodicity_period_of(const struct ct_periodicity *p, size_t flow)
{
	int j = p->flows[flow].job;

	return ct_periodicity_job_period(p, j > 0 ? (size_t)j : 0);
}

/*
 * Bursts by start (ties by sender) -> one burst per overlapping run of a
 * sender (.flow, numbered from 0), its bytes and packets summed: the rate
 * the sender's NIC achieved. open[] (a slot per sender, SIZE_MAX) keeps
 * each sender's last run; the runs come out by start, ties by sender.
 */
static size_t join_per_sender(const struct ct_burst *b, size_t n, struct ct_burst *out,
			      size_t *open)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t *o = &open[b[i].flow];

		if (*o != SIZE_MAX && b[i].start <= out[*o].end) {
			out[*o].bytes += b[i].bytes;
			out[*o].messages += b[i].messages;
			out[*o].packets += b[i].packets;
			if (b[i].end > out[*o].end)
				out[*o].end = b[i].end;
			continue;
		}
		*o = k;
		out[k++] = b[i];
	}
	return k;
}

/*
 * Per receiving host, in address order. Flows are grouped by destination by
 * a counting sort on the hosts' ranks. Each flow's bursts are in start order
 * in `all` already, so the orders the figures need (by sender then start, by
 * start) come from merging those runs.
 */
static int receivers_cc(const struct ct_flow_set *set, const struct ct_hosts *h,
			const struct ct_period *job, const struct ct_periodicity *out,
			const uint8_t *want, struct ct_receiver_cc **list, size_t *n_list)
{
	size_t nf = set->count, max_m = 0, receivers = 0;
	size_t *by_dst = NULL, *first = NULL, *seg = NULL, *runs = NULL;
	uint32_t *slot = NULL, *stamp = NULL;
	struct ct_burst *rb = NULL, *jb = NULL, *tmp = NULL;
	uint64_t *cnp = NULL;
	int err = 0;

	by_dst = malloc((nf + 1) * sizeof(*by_dst));
	first = calloc(h->n + 2, sizeof(*first));
	cnp = calloc(h->n + 1, sizeof(*cnp));
	slot = malloc((h->n + 1) * sizeof(*slot));
	stamp = calloc(h->n + 1, sizeof(*stamp));
	seg = malloc((nf + 1) * sizeof(*seg));
	if (!by_dst || !first || !cnp || !slot || !stamp || !seg) {
		err = -ENOMEM;
		goto out;
	}
	/* by destination, each destination's flows in index order */
	for (size_t f = 0; f < nf; f++) {
		if (want && !want[f])
			continue;
		first[h->dst[f] + 2]++;
		cnp[h->src[f]] += set->flows[f].cnp; /* CNPs go from the data's receiver */
	}
	for (size_t d = 0; d < h->n; d++)
		first[d + 2] += first[d + 1];
	for (size_t f = 0; f < nf; f++)
		if (!want || want[f])
			by_dst[first[h->dst[f] + 1]++] = f;
	/* first[d] .. first[d + 1]: the flows into host d; the largest sizes the buffers */
	for (size_t d = 0; d < h->n; d++) {
		size_t m = 0;

		for (size_t b = first[d]; b < first[d + 1]; b++)
			m += out->flows[by_dst[b]].n_bursts;
		max_m = m > max_m ? m : max_m;
		receivers += first[d + 1] > first[d];
	}
	*list = calloc(receivers + 1, sizeof(**list));
	*n_list = 0;
	rb = malloc((max_m + 1) * sizeof(*rb));
	jb = malloc((max_m + 1) * sizeof(*jb));
	tmp = malloc((max_m + 1) * sizeof(*tmp));
	runs = malloc((max_m + 2) * sizeof(*runs));
	if (!*list || !rb || !jb || !tmp || !runs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t d = 0; d < h->n && !err; d++) {
		struct ct_receiver_cc *r;
		uint64_t ce = 0, packets = 0;
		size_t ns = 0, m = 0;

		if (first[d + 1] == first[d])
			continue; /* a host that only sends */
		r = &(*list)[(*n_list)++];
		r->cls = -1;
		r->host = set->flows[by_dst[first[d]]].key.dst;
		/* senders numbered as they come; their bursts counted */
		for (size_t b = first[d]; b < first[d + 1]; b++) {
			size_t f = by_dst[b];
			const struct ct_flow_summary *s = &set->flows[f];

			ce += s->ecn_ce;
			packets += s->packets;
			r->retransmits += s->retransmits;
			if (stamp[h->src[f]] != *n_list) {
				stamp[h->src[f]] = (uint32_t)*n_list;
				slot[h->src[f]] = (uint32_t)ns;
				seg[ns++] = 0;
			}
			seg[slot[h->src[f]]] += out->flows[f].n_bursts;
		}
		r->senders = (unsigned)ns;
		for (size_t j = 0; j < ns; j++) {
			size_t c = seg[j];

			seg[j] = m;
			m += c;
		}
		/*
		 * The bursts by sender (.flow naming it for the incast sweep), then
		 * by start: a stable counting sort on the sender, each sender's
		 * flows' runs merged.
		 */
		for (size_t b = first[d]; b < first[d + 1]; b++) {
			size_t f = by_dst[b], nb = out->flows[f].n_bursts;
			uint32_t j = slot[h->src[f]];
			struct ct_burst *to = rb + seg[j];

			if (!nb)
				continue;
			memcpy(to, out->flows[f].bursts, nb * sizeof(*to));
			for (size_t k = 0; k < nb; k++)
				to[k].flow = j;
			seg[j] += nb;
		}
		for (size_t j = 0, lo = 0; j < ns; lo = seg[j++])
			merge_sort_by_start(rb + lo, seg[j] - lo, tmp, runs);
		merge_sort_by_start(rb, m, tmp, runs);
		/*
		 * One sender's flows (QPs) share its NIC: join their overlapping bursts
		 * before the sweep, so their rates are not added as if in parallel.
		 */
		for (size_t j = 0; j < ns; j++)
			seg[j] = SIZE_MAX;
		size_t joined = join_per_sender(rb, m, jb, seg);

		err = ct_incast_of(jb, joined, &r->incast_degree, &r->peak_gbps);
		err = err ?: ct_onoff_of(rb, m, &r->onoff);
		r->start_spread_s = ct_start_spread_s(rb, m, job);
		r->cnp_per_s_on =
			r->onoff.total_on_s > 0 ? (double)cnp[d] / r->onoff.total_on_s : 0;
		r->ecn_ce_fraction = packets ? (double)ce / (double)packets : 0;
	}
out:
	free(by_dst);
	free(first);
	free(cnp);
	free(slot);
	free(stamp);
	free(seg);
	free(rb);
	free(jb);
	free(tmp);
	free(runs);
	return err;
}

int ct_periodicity_compute(const struct ct_flow_set *set, const struct ct_burst_log *log,
			   double min_period_s, struct ct_periodicity *out)
{
	struct ct_burst *all = ct_slow_alloc((log->n + 1) * sizeof(*all)), *tmp = NULL;
	const struct ct_flow_key *last = NULL;
	struct ct_hosts hosts = {0};
	size_t n = 0, flows = 0;
	int64_t f = -1;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->flows = ct_slow_calloc(set->count + 1, sizeof(*out->flows));
	out->n_flows = set->count;
	if (!all || !out->flows) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < log->n; i++) {
		const struct ct_flow_burst *fb = &log->b[i];

		/* a flow's bursts tend to come in runs: look its key up once a run */
		if (!last || memcmp(&fb->key, last, sizeof(*last)))
			f = ct_flow_set_find(set, &fb->key);
		last = &fb->key;
		if (f < 0)
			continue;
		all[n++] = (struct ct_burst){fb->start,	   fb->end,	fb->bytes,
					     fb->messages, (uint32_t)f, fb->packets};
	}
	out->bursts = n;
	/*
	 * One room for both sorts: the job's by start (the period's own sort
	 * then finds them in order) and the flows' (a fresh buffer a sort is
	 * 20,000 page faults at 80 MB).
	 */
	tmp = ct_slow_alloc((n + 1) * sizeof(*tmp));
	if (tmp) /* else (or without memory for the counts) the period sorts */
		(void)ct_bursts_sort_by_start_using(all, n, tmp);
	err = ct_period_estimate(all, n, min_period_s, &out->job); /* sorts by start */
	err = err ?: ct_onoff_of(all, n, &out->job_onoff);
	if (err)
		goto out;

	/* by flow, each flow's bursts staying in start order */
	if (!tmp || ct_bursts_sort_stable_by_flow_using(all, n, tmp))
		qsort(all, n, sizeof(*all), by_flow_then_start); /* no memory for the radix sort */
	free(tmp);
	tmp = NULL;
	/* every flow's volumes in one room */
	for (size_t i = 0; i < n; i++)
		flows += !i || all[i].flow != all[i - 1].flow;
	if (out->job.periodic) {
		out->volume_room = ct_slow_alloc((2 * flows * out->job.iterations + 1) *
						 sizeof(*out->volume_room));
		if (!out->volume_room) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0, k = 0; i < n && !err; k++) {
		size_t j = i;
		struct ct_flow_periodicity *fp = &out->flows[all[i].flow];

		while (j < n && all[j].flow == all[i].flow)
			j++;
		fp->bursts = all + i;
		fp->n_bursts = j - i;
		err = ct_onoff_of(all + i, j - i, &fp->onoff);
		err = err
			      ?: ct_flow_periodicity_against(fp, &out->job,
							     out->volume_room +
								     2 * k * out->job.iterations);
		i = j;
	}
	out->by_flow = all;
	all = NULL;
	err = err ?: ct_hosts_rank(set, &hosts);
	err = err ?: ct_jobs_find(set, &hosts, min_period_s, out);
	err = err
		      ?: receivers_cc(set, &hosts, &out->job, out, NULL, &out->receivers,
				      &out->n_receivers);
out:
	ct_hosts_free(&hosts);
	free(all);
	free(tmp);
	if (err)
		ct_periodicity_free(out);
	return err;
}

int ct_periodicity_cc_by_class(struct ct_periodicity *p, const struct ct_flow_set *set,
			       const uint8_t *flow_class)
{
	struct ct_hosts hosts = {0};
	uint8_t *want = malloc(set->count + 1);
	int err = want ? ct_hosts_rank(set, &hosts) : -ENOMEM;

	for (int c = 0; c <= CT_CLASS_COUNT && !err; c++) {
		struct ct_receiver_cc *list = NULL, *grown;
		size_t n = 0, any = 0;

		for (size_t f = 0; f < set->count; f++)
			any += want[f] = flow_class[f] == c;
		if (!any)
			continue;
		err = receivers_cc(set, &hosts, &p->job, p, want, &list, &n);
		grown = err ? NULL
			    : realloc(p->class_receivers,
				      (p->n_class_receivers + n + 1) * sizeof(*grown));
		if (!grown) {
			free(list);
			err = err ?: -ENOMEM;
			break;
		}
		p->class_receivers = grown;
		for (size_t i = 0; i < n; i++) {
			list[i].cls = c;
			p->class_receivers[p->n_class_receivers++] = list[i];
		}
		free(list);
	}
	ct_hosts_free(&hosts);
	free(want);
	return err;
}

void ct_periodicity_free(struct ct_periodicity *p)
{
	free(p->class_receivers);
	free(p->volume_room); /* every flow's volumes */
	free(p->flows);
	free(p->receivers);
	free(p->by_flow);
	ct_jobs_free(p);
	ct_period_free(&p->job);
	memset(p, 0, sizeof(*p));
}
