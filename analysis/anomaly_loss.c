// SPDX-License-Identifier: MIT
/*
 * Loss hot spot: retransmissions, PSN gaps and NAKs concentrated on one
 * link (between two addresses, both ways: a cable loses either way) or,
 * spread over its senders, on one receiver. A NAK travels back from the
 * receiver: it counts against the way its data came. The finding names the
 * way with more signals first. The flow counters are totals over the
 * capture; the bursts' own counts give the iteration it started in and
 * those it recurs in (anomaly_onset.c), and set apart what came before the
 * job's first iteration: start-up (processes starting, connections
 * opening, the first buckets) loses packets on healthy runs. In 67 clean
 * real recordings every loss hot spot found over the whole capture (5) was
 * of start-up: 23 of ptd's 26 signals came in the 2 s before its first
 * iteration. Where the job has iterations and the bursts carry the
 * counts, only the signals from its first iteration on make a hot spot.
 * The rendezvous (the store every rank connects to first) is set apart
 * too: its polling beats like iterations while the ranks start, and in the
 * interval reports of those recordings it carried every signal of 7 of the
 * 9 loss alarms.
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
/*
 * Before the job has a period (an interval report over its first seconds,
 * a capture of start-up alone) nothing can set start-up apart, and start-up
 * loses packets on healthy runs: a hot spot then cannot be decided and
 * stays below the 0.5 a report calls a finding. In 67 clean real
 * recordings run with --interval 1, 4 interval reports without an
 * iteration held a loss finding at 0.58 to 0.73 (ddp8, ps-4), each gone
 * from the final report once the job's iterations set its start-up apart.
 */
#define LOSS_UNDECIDED_MAX 0.45

/* one-sided 95% of a Poisson count, by its normal approximation (margin) */
#define LOSS_RATE_Z 1.645

struct link {
	struct ct_addr src, dst;
	double signals, packets;
	double fwd; /* signals src -> dst (the rest: dst -> src) */
};

/*
 * Confidence grows with the margin over the bar, as the congestion
 * detector's does: a rate at LOSS_MIN_RATIO times the others' gives half,
 * twice that or more (or others without any) the whole. Loaded clean real
 * runs lose packets on every link (TCP retransmissions 0.8 to 1.9 per 1000
 * packets), and a link at 5x that is the veth's own, not a fault worth a page.
 * The rate is judged at its lower bound (LOSS_RATE_Z): a count of n signals
 * is uncertain by about its square root, 26% of 15, and an interval report
 * early in a run holds few. In clean real recordings two veths that lose
 * steadily (ddp-4, mpi-5: 4.7 and 10.9 per 1000 packets, 15 and 20
 * signals, 8.1 and 6.9 times the others') crossed 0.5 in one interval
 * report each and fell below it as their counts grew.
 */
static double margin(const struct link *l, double others)
{
	double low = fmax(0, l->signals - LOSS_RATE_Z * sqrt(l->signals));

	if (others <= 0)
		return 1;
	return fmin(1, low / fmax(l->packets, 1) / others / (2 * LOSS_MIN_RATIO));
}

static int link_cmp(const void *a, const void *b)
{
	const struct link *x = a, *y = b;
	int d = memcmp(&x->src, &y->src, sizeof(x->src));

	return d ?: memcmp(&x->dst, &y->dst, sizeof(x->dst));
}

static int same_addr(const struct ct_addr *a, const struct ct_addr *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/*
 * The finding's signals per iteration: of the flows on its link (either
 * way), or for a receiver, the share of each flow's signals that is its:
 * the retransmissions and gaps of flows toward it, the NAKs of flows from
 * it (a burst's count is both: split as the flow's totals are).
 */
static int loss_onset(struct anom_ctx *c, struct ct_anomaly *an, const unsigned char *rdv)
{
	const struct ct_flow_set *set = c->set;
	double *w = calloc(set->count + 1, sizeof(*w)), *pw = calloc(set->count + 1, sizeof(*pw));
	double *x = malloc((c->n_iter + 1) * sizeof(*x)), *p = malloc((c->n_iter + 1) * sizeof(*p));
	double *ev = malloc((c->n_iter + 1) * sizeof(*ev));
	double cut, p_cut, ev_cut;
	int err = -ENOMEM;

	if (!w || !pw || !x || !p || !ev)
		goto out;
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];
		double sig = (double)(f->retransmits + f->psn_gaps);
		double naks = (double)(f->naks_seq + f->naks_other);

		/* the packets the signals are of: the link's both ways, or toward the receiver */
		if (an->scope == CT_ANOMALY_AT_LINK)
			pw[i] = (same_addr(&f->key.src, &an->host) &&
				 same_addr(&f->key.dst, &an->peer)) ||
				(same_addr(&f->key.src, &an->peer) &&
				 same_addr(&f->key.dst, &an->host));
		else
			pw[i] = same_addr(&f->key.dst, &an->host);
		if (rdv[i])
			pw[i] = 0;
		if (sig + naks <= 0 || rdv[i])
			continue;
		if (an->scope == CT_ANOMALY_AT_LINK) {
			w[i] = pw[i];
			continue;
		}
		if (same_addr(&f->key.dst, &an->host))
			w[i] += sig / (sig + naks);
		if (same_addr(&f->key.src, &an->host))
			w[i] += naks / (sig + naks);
	}
	err = anom_burst_series(c, w, ANOM_BURST_LOSS, x, &cut);
	err = err ?: anom_burst_series(c, w, ANOM_BURST_LOSS_EVENTS, ev, &ev_cut);
	err = err ?: anom_burst_series(c, pw, ANOM_BURST_PACKETS, p, &p_cut);
	err = err == -ENOENT ? 0 : err ?: anom_onset_of_series(c, an, x, ev, p, cut, an->value);
	if (!err)
		anom_onset_at_first_signal(c, an, w, ANOM_BURST_LOSS);
out:
	free(ev);
	free(w);
	free(pw);
	free(x);
	free(p);
	return err;
}

/*
 * Per flow, the share of its loss signals from the job's first iteration
 * on (1 for all where there are no iterations or the bursts carry less than
 * half of the capture's signals); *startup: the signals before it.
 */
static void steady_share(const struct anom_ctx *c, const unsigned char *rdv, double *share,
			 double *startup)
{
	const struct ct_flow_set *set = c->set;
	double total = 0, counted = 0;

	*startup = 0;
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];

		share[i] = 1;
		total += (double)(f->retransmits + f->psn_gaps + f->naks_seq + f->naks_other);
	}
	if (!c->per || !c->n_iter)
		return;
	for (size_t i = 0; i < set->count && i < c->per->n_flows; i++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[i];
		double all = 0, before = 0;

		for (size_t b = 0; b < fp->n_bursts; b++) {
			all += fp->bursts[b].loss;
			/* over before the first iteration began (a burst across it is the job's) */
			if (fp->bursts[b].end < c->bounds[0])
				before += fp->bursts[b].loss;
		}
		counted += all;
		share[i] = all > 0 ? 1 - before / all : 1;
	}
	if (counted < 0.5 * total) { /* the bursts do not tell (the eBPF probe's) */
		for (size_t i = 0; i < set->count; i++)
			share[i] = 1;
		return;
	}
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];

		if (!rdv[i])
			*startup += (1 - share[i]) * (double)(f->retransmits + f->psn_gaps +
							      f->naks_seq + f->naks_other);
	}
}

/* Whether the capture has a job period, so its start-up can be set apart. */
static int has_period(const struct anom_ctx *c)
{
	return c->per && c->per->job.periodic && c->per->job.iterations >= 2;
}

/* Undecided without a period: below a finding, and the evidence says why. */
static void cap_without_period(const struct anom_ctx *c, struct ct_anomaly *an)
{
	size_t len = strlen(an->evidence);

	if (has_period(c))
		return;
	an->confidence = fmin(an->confidence, LOSS_UNDECIDED_MAX);
	if (len < sizeof(an->evidence))
		snprintf(an->evidence + len, sizeof(an->evidence) - len,
			 "; no iteration yet: start-up cannot be set apart");
}

/* The evidence's note of the signals set apart as start-up, if any. */
static void note_startup(struct ct_anomaly *an, double startup)
{
	size_t len = strlen(an->evidence);

	if (startup >= 0.5 && len < sizeof(an->evidence))
		snprintf(an->evidence + len, sizeof(an->evidence) - len,
			 "; %.0f more before the job's first iteration (start-up) not counted",
			 startup);
}

/* The rendezvous set apart, for the evidence. */
struct rdv_note {
	struct ct_addr host;
	uint16_t port;
	double signals;
};

static void note_rendezvous(struct ct_anomaly *an, const struct rdv_note *r)
{
	size_t len = strlen(an->evidence);
	char a[64];

	if (r->signals >= 0.5 && len < sizeof(an->evidence))
		snprintf(an->evidence + len, sizeof(an->evidence) - len,
			 "; %.0f more on the rendezvous (%s:%u, every rank's first connection: "
			 "the store) not counted",
			 r->signals, anom_addr(&r->host, a), r->port);
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
	double *share = malloc((set->count + 1) * sizeof(*share));
	const unsigned char *rdv = c->rdv;
	struct rdv_note note = {.host = c->rdv_host, .port = c->rdv_port};
	size_t nl = 0, nr, n_dir;
	double total = 0, others, startup;
	long t;
	int err = 0;

	if (!links || !share) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < set->count; i++)
		if (rdv[i])
			note.signals +=
				(double)(set->flows[i].retransmits + set->flows[i].psn_gaps +
					 set->flows[i].naks_seq + set->flows[i].naks_other);
	steady_share(c, rdv, share, &startup);
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];
		double sig = share[i] * (double)(f->retransmits + f->psn_gaps);
		double naks = share[i] * (double)(f->naks_seq + f->naks_other);

		if (rdv[i]) /* set apart: neither its signals nor its packets */
			continue;
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
		double link_share = links[t].signals / total;

		an.confidence = fmin(1, link_share) *
				fmin(1, links[t].signals / (2 * LOSS_MIN_SIGNALS)) *
				margin(&links[t], others);
		snprintf(
			an.evidence, sizeof(an.evidence),
			"%.0f of the capture's %.0f loss signals (retransmitted packets, PSN gaps, "
			"NAKs from the receiver) are on this link, %.0f of them this way: %.3g "
			"per 1000 packets, the other links %.3g",
			links[t].signals, total,
			back ? links[t].signals - links[t].fwd : links[t].fwd,
			links[t].signals / fmax(links[t].packets, 1) * 1e3, others * 1e3);
		note_startup(&an, startup);
		note_rendezvous(&an, &note);
		cap_without_period(c, &an);
		err = loss_onset(c, &an, rdv) ?: anom_add(c, &an);
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

		an.confidence = fmin(1, rx[t].signals / total) * margin(&rx[t], others) *
				fmin(1, rx[t].signals / (2 * LOSS_MIN_SIGNALS));
		snprintf(an.evidence, sizeof(an.evidence),
			 "%.0f of the capture's %.0f loss signals are on traffic toward this host, "
			 "spread over its senders: %.3g per 1000 packets, the other receivers %.3g",
			 rx[t].signals, total, rx[t].signals / fmax(rx[t].packets, 1) * 1e3,
			 others * 1e3);
		note_startup(&an, startup);
		note_rendezvous(&an, &note);
		cap_without_period(c, &an);
		err = loss_onset(c, &an, rdv) ?: anom_add(c, &an);
	}
out:
	free(links);
	free(rx);
	free(share);
	return err;
}
