// SPDX-License-Identifier: MIT
/*
 * The figures congestion control is tuned from, per receiving host: incast
 * degree and aggregate peak rate, on-off shape, start-time spread, CNP rate
 * and ECN-CE share, for all classes together and, after classification,
 * for each class alone.
 */
#include "periodicity_internal.h"

#include <commtap/burst_sort.h>
#include <commtap/traffic_class.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
int ct_receivers_cc(const struct ct_flow_set *set, const struct ct_hosts *h,
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
			ct_bursts_merge_runs_by_start(rb + lo, seg[j] - lo, tmp, runs);
		ct_bursts_merge_runs_by_start(rb, m, tmp, runs);
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
		err = ct_receivers_cc(set, &hosts, &p->job, p, want, &list, &n);
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
