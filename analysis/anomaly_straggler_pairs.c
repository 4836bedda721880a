// SPDX-License-Identifier: MIT
/*
 * Stragglers where every collective has two members (a 2-2-2 hybrid job:
 * its tensor, data and embedding groups are pairs). Within one pair the
 * later member is late only against the other, and one that starts early
 * looks the same (anomaly_straggler.c needs three members). A host in two
 * pairs or more is three hosts with its partners. Each pair's steps give
 * each member's entry (its first send after the step before closed, a
 * ready message alone as much as data), so how long each waited for the
 * other. The late host is the one waited for first in the iteration: a
 * late rank's partner, which waited for it, enters its other collectives
 * as late, and a pipeline hands the delay on to the other stage, whose
 * ranks then come late to collectives where the late rank waits for them
 * (the real ptd-straggler: rank 3 sleeping 40 ms drags ranks 2, 6 and 7;
 * ptd-straggler-r6: rank 6 asleep, its pipeline peer rank 2 and its
 * tensor partner rank 3 come late to their data-parallel all-reduces and
 * rank 6 waits for rank 2 in the embedding sync). All of that follows the
 * first wait. Of two partners both read late, the one read so more often
 * is said: it held the other up.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a host needs this many partners to stand on (itself and them: three hosts) */
#define PAIRS_MIN_PARTNERS 2
/*
 * A host comes after a partner from this share of the period: a NIC's
 * serialization shifts a first packet by tens of microseconds in an
 * iteration of tens of ms (anomaly_straggler.c's STRAGGLER_MIN_SHARE).
 */
#define PAIRS_MIN_SHARE 0.01
/*
 * A host is late where a partner waited for it over PAIRS_LATE_SPREADS of
 * the pairs' spread (each pair's delays about its own median: a pipeline's
 * pairs enter in their stages' order) in the iteration's first such wait.
 */
#define PAIRS_LATE_SPREADS 3.0
/*
 * A straggler is late in this many iterations at least, and in this share
 * of those since its first at least: a host late now and then is jitter.
 * Three were not enough: in an interval report of the clean real pp4-4 a
 * pipeline's first stage was waited for 300 ms in 3 iterations running,
 * while the whole machine stalled (the ranks' own iterations 2-4 times
 * their median), and never again (the real ptd-straggler: late in 11 of
 * 14).
 */
#define PAIRS_MIN_ITERATIONS 4
#define PAIRS_MIN_STEADY     0.75
/*
 * An alarm needs this many judged iterations before the onset in which it
 * was not late: a pair's members enter in an order of the job's own make
 * (a pipeline's stages), which reads as lateness from the first iteration;
 * otherwise it is said below an alarm.
 */
#define PAIRS_MIN_BEFORE	   3
#define PAIRS_UNDECIDED_CONFIDENCE 0.45

struct pair {
	size_t a, b; /* host indices */
	int cls;
};

/*
 * Sends of the pair apart by less than this share of the period are of
 * one run (anomaly_straggler.c's STRAGGLER_STEP_JOIN: gloo's reductions
 * part a ring's steps by up to 1.6% of the iteration).
 */
#define PAIRS_STEP_JOIN 0.05

/* Hosts i and j already paired (in another class: one partner, not two). */
static int listed(const struct pair *p, size_t n, size_t i, size_t j)
{
	for (size_t k = 0; k < n; k++)
		if (p[k].a == i && p[k].b == j)
			return 1;
	return 0;
}

/*
 * The classes' groups of exactly two hosts (union of their data flows):
 * appended to p, returns how many.
 */
static size_t find_pairs(const struct anom_ctx *c, const struct anom_hosts *h, size_t *parent,
			 size_t *size, struct pair *p)
{
	size_t n = 0;

	for (int cls = 0; cls < CT_CLASS_COUNT; cls++) {
		if (!anom_collective_class(cls))
			continue;
		for (size_t i = 0; i < h->n; i++) {
			parent[i] = i;
			size[i] = 0;
		}
		for (size_t f = 0; f < c->set->count; f++) {
			const struct ct_flow_summary *s = &c->set->flows[f];
			size_t x, y;

			if (!anom_job_data_flow(c, f) || anom_class(c, f) != cls)
				continue;
			x = anom_find_root(parent, (size_t)anom_hosts_find(h, &s->key.src));
			y = anom_find_root(parent, (size_t)anom_hosts_find(h, &s->key.dst));
			parent[x] = y;
		}
		for (size_t i = 0; i < h->n; i++)
			size[anom_find_root(parent, i)]++;
		for (size_t i = 0; i < h->n; i++)
			for (size_t j = i + 1; j < h->n; j++)
				if (anom_find_root(parent, i) == anom_find_root(parent, j) &&
				    size[anom_find_root(parent, i)] == 2 && !listed(p, n, i, j))
					p[n++] = (struct pair){i, j, cls};
	}
	return n;
}

/*
 * The pair's sends to each other on its class's flows that carry a
 * message, by start, into b (the flow's index replaced by the sender: 0
 * for p->a, 1 for p->b); returns how many.
 */
static size_t pair_sends(const struct anom_ctx *c, const struct anom_hosts *h, const struct pair *p,
			 struct ct_burst *b)
{
	size_t n = 0;

	for (size_t f = 0; f < c->set->count; f++) {
		const struct ct_flow_summary *s = &c->set->flows[f];
		const struct ct_flow_periodicity *fp = &c->per->flows[f];
		long src = anom_hosts_find(h, &s->key.src), dst = anom_hosts_find(h, &s->key.dst);

		if (!anom_job_data_flow(c, f) || anom_class(c, f) != p->cls ||
		    !((src == (long)p->a && dst == (long)p->b) ||
		      (src == (long)p->b && dst == (long)p->a)))
			continue;
		for (size_t i = 0; i < fp->n_bursts; i++)
			if (anom_carries_message(&fp->bursts[i])) {
				b[n] = fp->bursts[i];
				b[n++].flow = src == (long)p->b;
			}
	}
	qsort(b, n, sizeof(*b), anom_burst_start_cmp);
	return n;
}

/* One step of a pair: when its later member entered, and how much later than the other. */
struct pair_step {
	uint64_t at;  /* the later member's entry */
	double delay; /* s, p->a's entry after p->b's */
	long it;
	uint32_t pair;
};

/*
 * Per iteration, how much later p->a entered one of the pair's steps than
 * p->b, s (NAN: no step), the step where they were furthest apart; every
 * step appended to st (n_st of them). A step closes with a run of sends in
 * which both sent; each member enters the next one with its first send
 * after that, a ready message alone as much as data (a member that waits
 * for the other sends its ready and then nothing until the other comes).
 * The step is of the iteration its close falls in.
 */
static void pair_steps(const struct anom_ctx *c, const struct ct_burst *b, size_t n, double *d,
		       uint32_t pair, struct pair_step *st, size_t *n_st)
{
	uint64_t join = (uint64_t)(c->period_s * PAIRS_STEP_JOIN * 1e9), end = 0;
	uint64_t entry[2] = {UINT64_MAX, UINT64_MAX};
	int in_run[2] = {0, 0};

	for (size_t it = 0; it < c->n_iter; it++)
		d[it] = NAN;
	for (size_t i = 0; i <= n; i++) {
		if (i && (i == n || b[i].start > end + join) && in_run[0] && in_run[1]) {
			/* the run before closed a step both entered */
			long it = anom_iteration(c, end);
			double x = ((double)entry[0] - (double)entry[1]) / 1e9;

			if (it >= 0 && (isnan(d[it]) || fabs(x) > fabs(d[it])))
				d[it] = x;
			if (it >= 0)
				st[(*n_st)++] = (struct pair_step){
					entry[0] > entry[1] ? entry[0] : entry[1], x, it, pair};
			entry[0] = entry[1] = UINT64_MAX;
		}
		if (i == n)
			break;
		if (!i || b[i].start > end + join) { /* a new run */
			in_run[0] = in_run[1] = 0;
			end = b[i].end;
		} else if (b[i].end > end) {
			end = b[i].end;
		}
		if (entry[b[i].flow] == UINT64_MAX)
			entry[b[i].flow] = b[i].start;
		in_run[b[i].flow] = 1;
	}
}

/* Per host and iteration, its delays after each partner it was timed against. */
struct delays {
	double d[CT_CLASS_COUNT]; /* s; p->a's after p->b's, or the reverse */
	unsigned n;
};

/*
 * Each host's delays after its partners in every iteration, every pair
 * step's delay (ad, nd of them) for the job's spread, and the steps
 * themselves (*st, n_st of them; the caller frees them).
 */
static int lateness(const struct anom_ctx *c, const struct anom_hosts *h, const struct pair *p,
		    size_t np, struct delays *dl, size_t *partners, double *ad, size_t *nd,
		    struct pair_step **st, size_t *n_st)
{
	size_t ni = c->n_iter, nb = 0;
	double *d = malloc((ni + 1) * sizeof(*d));
	struct ct_burst *b;

	for (size_t f = 0; f < c->set->count; f++)
		nb += c->per->flows[f].n_bursts;
	b = malloc((nb + 1) * sizeof(*b));
	/* a step closes a run of sends: at most one per burst of the pairs */
	*st = malloc((nb + 1) * sizeof(**st));
	*n_st = 0;
	if (!d || !b || !*st) {
		free(d);
		free(b);
		free(*st);
		*st = NULL;
		return -ENOMEM;
	}
	memset(dl, 0, h->n * ni * sizeof(*dl));
	memset(partners, 0, h->n * sizeof(*partners));
	*nd = 0;
	for (size_t k = 0; k < np; k++) {
		size_t m = 0, from = *nd;
		double mid;

		partners[p[k].a]++;
		partners[p[k].b]++;
		pair_steps(c, b, pair_sends(c, h, &p[k], b), d, (uint32_t)k, *st, n_st);
		for (size_t it = 0; it < ni; it++) {
			struct delays *x = &dl[p[k].a * ni + it], *y = &dl[p[k].b * ni + it];

			if (isnan(d[it]))
				continue;
			ad[from + m++] = d[it];
			x->d[x->n++] = d[it];
			y->d[y->n++] = -d[it];
		}
		/* about the pair's own median: a pipeline's pairs enter in their stages' order */
		mid = anom_median(ad + from, m);
		for (size_t i = 0; i < m; i++)
			ad[from + i] = fabs(ad[from + i] - mid);
		*nd += m;
	}
	free(d);
	free(b);
	return 0;
}

/* The iteration's first wait: who was waited for, and how long. */
struct first_wait {
	long host; /* -1: nobody was waited for over `late` */
	double delay;
};

/*
 * Per iteration, the first step (by its later member's entry) at which a
 * member waited for the other over `late`: the late one and the wait.
 */
static void first_waits(const struct pair *p, const struct pair_step *st, size_t n_st, size_t ni,
			double late, struct first_wait *fw)
{
	uint64_t *at = malloc((ni + 1) * sizeof(*at));

	for (size_t it = 0; it < ni; it++)
		fw[it] = (struct first_wait){-1, 0};
	if (!at)
		return; /* out of memory: nobody is said late */
	for (size_t it = 0; it < ni; it++)
		at[it] = UINT64_MAX;
	for (size_t k = 0; k < n_st; k++) {
		const struct pair_step *x = &st[k];

		if (fabs(x->delay) <= late || (size_t)x->it >= ni || x->at >= at[x->it])
			continue;
		at[x->it] = x->at;
		fw[x->it].host = (long)(x->delay > 0 ? p[x->pair].a : p[x->pair].b);
		fw[x->it].delay = fabs(x->delay);
	}
	free(at);
}

/*
 * Host's lateness in an iteration (NAN: not judged; 0: not late): how long
 * it was waited for in the iteration's first wait, where that was for it.
 */
static double own_lateness(const struct delays *x, size_t host, const struct first_wait *fw)
{
	if (x->n < PAIRS_MIN_PARTNERS)
		return NAN;
	return fw->host == (long)host ? fw->delay : 0;
}

/* Already said of this host by the straggler detector of larger groups. */
static int said(const struct anom_ctx *c, const struct ct_addr *host)
{
	for (size_t i = 0; i < c->out->n; i++)
		if (c->out->list[i].kind == CT_ANOMALY_STRAGGLER &&
		    !memcmp(&c->out->list[i].host, host, sizeof(*host)))
			return 1;
	return 0;
}

/*
 * Host's finding into an (its confidence -1: none): late in
 * PAIRS_MIN_ITERATIONS iterations and in PAIRS_MIN_STEADY of those since
 * its lateness began, after the last PAIRS_MIN_BEFORE it was not late in.
 */
static int judge(struct anom_ctx *c, const struct anom_hosts *h, size_t host,
		 const struct delays *dl, const struct first_wait *fw, double late, double spread,
		 size_t partners, double *tmp, struct ct_anomaly *an)
{
	size_t ni = c->n_iter, seen = 0, of = 0, before = 0, start = ni, calm = 0;
	int err = 0;

	*an = (struct ct_anomaly){.kind = CT_ANOMALY_STRAGGLER,
				  .scope = CT_ANOMALY_AT_HOST,
				  .priority = -1,
				  .cls = -1,
				  .host = h->a[host],
				  .onset = -1,
				  .confidence = -1};
	for (size_t it = 0; it < ni; it++) {
		double l = own_lateness(&dl[it], host, &fw[it]);

		if (isnan(l))
			continue;
		if (l > 0 && (start == ni || calm >= PAIRS_MIN_BEFORE))
			start = it;
		calm = l > 0 ? 0 : calm + 1;
	}
	for (size_t it = start; it < ni && !err; it++) {
		double l = own_lateness(&dl[it], host, &fw[it]);

		if (isnan(l))
			continue;
		of++;
		if (l > 0)
			err = anom_seen_in(c, an, &seen, ni, it, l);
	}
	if (err || seen < PAIRS_MIN_ITERATIONS || (double)seen < PAIRS_MIN_STEADY * (double)of) {
		free(an->iters);
		an->iters = NULL;
		an->confidence = -1;
		return err;
	}
	for (size_t it = 0; it < (size_t)an->onset; it++)
		before += dl[it].n >= PAIRS_MIN_PARTNERS;
	for (size_t k = 0; k < seen; k++)
		tmp[k] = an->iters[k].value;
	an->seen = (unsigned)seen;
	an->of = (unsigned)of;
	an->value = anom_median(tmp, seen);
	an->share = an->value / c->period_s;
	an->confidence = (double)seen / (double)of * fmin(1, an->value / late - 1);
	if (before < PAIRS_MIN_BEFORE)
		an->confidence = fmin(an->confidence, PAIRS_UNDECIDED_CONFIDENCE);
	snprintf(an->evidence, sizeof(an->evidence),
		 "waited for first: its partners wait a median %.3g ms (%.1f%% of the %.3g ms "
		 "iteration) for it, before any other wait of its %zu pairs, in %u of %u "
		 "iterations from %ld; the pairs' spread is %.3g ms, flagged from %.3g ms%s",
		 an->value * 1e3, an->share * 100, c->period_s * 1e3, partners, an->seen, an->of,
		 an->onset, spread * 1e3, late * 1e3,
		 before < PAIRS_MIN_BEFORE ? "; late from its first iterations (below an alarm)"
					   : "");
	return 0;
}

/* Hosts i and j are partners. */
static int partnered(const struct pair *p, size_t np, size_t i, size_t j)
{
	for (size_t k = 0; k < np; k++)
		if ((p[k].a == i && p[k].b == j) || (p[k].a == j && p[k].b == i))
			return 1;
	return 0;
}

int anom_straggler_pairs(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct anom_hosts h = {0};
	struct pair *p = NULL;
	struct delays *dl = NULL;
	size_t *parent = NULL, *size = NULL, *partners = NULL, np, ni = c->n_iter, nd = 0;
	struct ct_anomaly *found = NULL;
	size_t judged = 0;
	double *tmp = NULL, spread, late;
	struct pair_step *st = NULL;
	struct first_wait *fw = NULL;
	size_t n_st = 0;
	int err = 0;

	if (!ni || c->starting)
		return 0; /* said by the straggler detector */
	for (size_t f = 0; f < set->count && !err; f++)
		if (anom_job_data_flow(c, f) && anom_collective_class(anom_class(c, f))) {
			err = anom_hosts_add(&h, &set->flows[f].key.src);
			err = err ?: anom_hosts_add(&h, &set->flows[f].key.dst);
		}
	if (err || !h.n)
		goto out;
	anom_hosts_done(&h);
	parent = malloc(h.n * sizeof(*parent));
	size = malloc(h.n * sizeof(*size));
	partners = malloc(h.n * sizeof(*partners));
	p = malloc(CT_CLASS_COUNT * h.n * sizeof(*p));
	dl = malloc((h.n * ni + 1) * sizeof(*dl));
	tmp = malloc((CT_CLASS_COUNT * h.n * ni + 1) * sizeof(*tmp));
	found = calloc(h.n, sizeof(*found));
	if (!parent || !size || !partners || !p || !dl || !tmp || !found) {
		err = -ENOMEM;
		goto out;
	}
	np = find_pairs(c, &h, parent, size, p);
	if (!np)
		goto out;
	err = lateness(c, &h, p, np, dl, partners, tmp, &nd, &st, &n_st);
	if (err || !nd)
		goto out;
	for (size_t i = 0; i < h.n; i++)
		judged += partners[i] >= PAIRS_MIN_PARTNERS;
	if (!judged)
		goto out;
	/* hosts with partners enough are judged: "no reference" does not hold for them */
	c->out->not_looked[CT_ANOMALY_STRAGGLER] = NULL;
	spread = 1.4826 * anom_median(tmp, nd);
	late = fmax(PAIRS_LATE_SPREADS * spread, PAIRS_MIN_SHARE * c->period_s);
	fw = malloc((ni + 1) * sizeof(*fw));
	if (!fw) {
		err = -ENOMEM;
		goto out;
	}
	first_waits(p, st, n_st, ni, late, fw);
	if (spread > c->out->straggler_jitter_s) {
		c->out->straggler_jitter_s = spread;
		c->out->straggler_threshold_s = late;
	}
	for (size_t i = 0; i < h.n && !err; i++)
		if (partners[i] >= PAIRS_MIN_PARTNERS && !said(c, &h.a[i]))
			err = judge(c, &h, i, dl + i * ni, fw, late, spread, partners[i], tmp,
				    &found[i]);
		else
			found[i].confidence = -1;
	/* two partners both late: the one seen late more often held the other up */
	for (size_t i = 0; i < h.n && !err; i++) {
		int kept = found[i].confidence >= 0;

		for (size_t j = 0; j < h.n && kept; j++)
			kept = j == i || found[j].confidence < 0 || !partnered(p, np, i, j) ||
			       found[j].seen < found[i].seen ||
			       (found[j].seen == found[i].seen && j > i);
		if (kept)
			err = anom_add(c, &found[i]);
		free(found[i].iters);
		found[i].iters = NULL;
	}
out:
	free(st);
	free(fw);
	free(parent);
	free(size);
	free(partners);
	free(p);
	free(dl);
	free(tmp);
	free(found);
	anom_hosts_free(&h);
	return err;
}
