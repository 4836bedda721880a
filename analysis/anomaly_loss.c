// SPDX-License-Identifier: MIT
/*
 * Loss hot spot: retransmissions, PSN gaps and NAKs concentrated on one
 * link (between two addresses, both ways: a cable loses either way) or,
 * spread over its senders, on one receiver. A NAK travels back from the
 * receiver: it counts against the way its data came. The finding names the
 * way with more signals first. The flow counters are totals over the capture, so this is said for
 * the whole capture, not per iteration.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Fewer loss signals than this are no hot spot: the synthesizer's --noise
 * puts one retransmission in a clean capture, and real clean gloo runs
 * show 0..2 TCP retransmissions (docs/accuracy.md, Anomalies).
 */
#define LOSS_MIN_SIGNALS 8
/* concentrated: one link (or receiver) holds at least this share of all signals */
#define LOSS_MIN_SHARE 0.5
/* and its signals per packet are this many times the other links' (when they have any) */
#define LOSS_MIN_RATIO 4.0

struct link {
	struct ct_addr src, dst;
	double signals, packets;
	double fwd; /* signals src -> dst (the rest: dst -> src) */
};

static int link_cmp(const void *a, const void *b)
{
	const struct link *x = a, *y = b;
	int d = memcmp(&x->src, &y->src, sizeof(x->src));

	return d ?: memcmp(&x->dst, &y->dst, sizeof(x->dst));
}

/* Sort and sum links of one key (src, dst) into one. */
static size_t links_merge(struct link *l, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(l, n, sizeof(*l), link_cmp);
	for (size_t i = 1; i < n; i++) {
		if (!link_cmp(&l[i], &l[k])) {
			l[k].signals += l[i].signals;
			l[k].packets += l[i].packets;
			l[k].fwd += l[i].fwd;
		} else {
			l[++k] = l[i];
		}
	}
	return k + 1;
}

/* The hot spot among l (its index), or -1; *others: the rest's signals per packet. */
static long hot(const struct link *l, size_t n, double total, double *others)
{
	size_t top = 0;
	double s = 0, p = 0;

	for (size_t i = 1; i < n; i++)
		if (l[i].signals > l[top].signals)
			top = i;
	if (!n || l[top].signals < LOSS_MIN_SIGNALS || l[top].signals < LOSS_MIN_SHARE * total)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (i != top) {
			s += l[i].signals;
			p += l[i].packets;
		}
	*others = p > 0 ? s / p : 0;
	if (*others > 0 && l[top].signals / fmax(l[top].packets, 1) < LOSS_MIN_RATIO * *others)
		return -1;
	return (long)top;
}

int anom_loss(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct link *links = malloc((2 * set->count + 1) * sizeof(*links)), *rx = NULL;
	size_t nl = 0, nr, n_dir;
	double total = 0, others;
	long t;
	int err = 0;

	if (!links)
		return -ENOMEM;
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];
		double sig = (double)(f->retransmits + f->psn_gaps);
		double naks = (double)(f->naks_seq + f->naks_other);

		links[nl++] = (struct link){f->key.src, f->key.dst, sig, (double)f->packets, sig};
		if (naks > 0) /* against the data's way */
			links[nl++] = (struct link){f->key.dst, f->key.src, naks, 0, naks};
		total += sig + naks;
	}
	/* the receivers first (a receiver's signals are its way's), then links both ways */
	n_dir = nl;
	rx = malloc((nl + 1) * sizeof(*rx));
	if (!rx) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nl; i++)
		rx[i] = (struct link){links[i].dst, links[i].dst, links[i].signals,
				      links[i].packets, 0};
	for (size_t i = 0; i < nl; i++) {
		struct link *l = &links[i];

		if (memcmp(&l->src, &l->dst, sizeof(l->src)) > 0) { /* one key per pair */
			struct ct_addr a = l->src;

			l->src = l->dst;
			l->dst = a;
			l->fwd = l->signals - l->fwd;
		}
	}
	nl = links_merge(links, nl);
	if (total < LOSS_MIN_SIGNALS)
		goto out;
	t = hot(links, nl, total, &others);
	if (t >= 0) {
		int back = links[t].fwd < links[t].signals - links[t].fwd;
		struct ct_anomaly an = {.kind = CT_ANOMALY_LOSS,
					.scope = CT_ANOMALY_AT_LINK,
					.priority = -1,
					.cls = -1,
					.host = back ? links[t].dst : links[t].src,
					.peer = back ? links[t].src : links[t].dst,
					.onset = -1,
					.value = links[t].signals};
		double share = links[t].signals / total;

		an.confidence = fmin(1, share) * fmin(1, links[t].signals / (2 * LOSS_MIN_SIGNALS));
		snprintf(
			an.evidence, sizeof(an.evidence),
			"%.0f of the capture's %.0f loss signals (retransmitted packets, PSN gaps, "
			"NAKs from the receiver) are on this link, %.0f of them this way: %.3g "
			"per 1000 packets, the other links %.3g",
			links[t].signals, total,
			back ? links[t].signals - links[t].fwd : links[t].fwd,
			links[t].signals / fmax(links[t].packets, 1) * 1e3, others * 1e3);
		err = anom_add(c, &an);
		goto out;
	}
	/* no one link: one receiver, over its senders? */
	nr = links_merge(rx, n_dir);
	t = hot(rx, nr, total, &others);
	if (t >= 0) {
		struct ct_anomaly an = {.kind = CT_ANOMALY_LOSS,
					.scope = CT_ANOMALY_AT_RECEIVER,
					.priority = -1,
					.cls = -1,
					.host = rx[t].src,
					.onset = -1,
					.value = rx[t].signals};

		an.confidence = fmin(1, rx[t].signals / total) *
				fmin(1, rx[t].signals / (2 * LOSS_MIN_SIGNALS));
		snprintf(an.evidence, sizeof(an.evidence),
			 "%.0f of the capture's %.0f loss signals are on traffic toward this host, "
			 "spread over its senders: %.3g per 1000 packets, the other receivers %.3g",
			 rx[t].signals, total, rx[t].signals / fmax(rx[t].packets, 1) * 1e3,
			 others * 1e3);
		err = anom_add(c, &an);
	}
out:
	free(links);
	free(rx);
	return err;
}
