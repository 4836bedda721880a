// SPDX-License-Identifier: MIT
/*
 * Slow link: a host pair whose achieved rate in a collective is well below
 * its peers' in the same collective (a degraded cable, a port negotiated
 * down). A pair's rate in an iteration is the bytes of its data flows of
 * one class over the time their bursts were on (the rate while it sends,
 * whatever the compute between); its peers are the other pairs of that
 * class that move as many bytes an iteration (within SLOW_PEER_VOLUME: the
 * same transfers; a stream of small messages paced by the compute moves
 * 0.1 Gbit/s over its burst beside a bucket at 45 on the same hosts), in
 * the same iteration, and the reference their median. A class of
 * fewer than SLOW_MIN_PAIRS pairs is compared with all the job's
 * collective pairs: a slow link can change its own class (its messages,
 * drawn out, no longer form one burst each, and read as EP's varying
 * chunks). A pipeline's pairs are compared only among themselves: its
 * activations are paced by compute, not by the link (clean matrix jobs'
 * PP pairs move 0.1..20 Gbit/s while their DP pairs move 45). A pair with
 * no peers at all is judged against its own earlier iterations
 * (anomaly_slow_link_own.c). An alarm needs a step of the pair's own
 * (SLOW_UNDECIDED_CONFIDENCE) that costs the job more than its own swing
 * in iteration time (anom_slow_step_felt), or a link that meters.
 */
#include "anomaly_slow_link.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* peers to compare with: the median of two is their mean, one slow pair would drag it */
#define SLOW_MIN_PAIRS 3
/* peers move between 1/2 and 2 times the pair's bytes an iteration */
#define SLOW_PEER_VOLUME 2.0

/*
 * A link that meters what it carries pages without a step (see
 * SLOW_UNDECIDED_CONFIDENCE): a pair that moves under ANOM_METERED_SHARE of
 * its peers' timed share (bursts of ANOM_TIMED_PACKETS or more; fewer are
 * too few to time a rate: a clear-to-send is one, and the first packet's
 * own serialization is not in the burst's span) is metered
 * (anomaly_internal.h).
 */

struct pair {
	struct ct_addr src, dst;
	int cls;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int d = memcmp(&x->src, &y->src, sizeof(x->src));

	d = d ?: memcmp(&x->dst, &y->dst, sizeof(x->dst));
	return d ?: x->cls - y->cls;
}

/* Both directions of one host pair: a slow link slows both. */
static int same_link(const struct pair *a, const struct pair *b)
{
	return (!memcmp(&a->src, &b->src, sizeof(a->src)) &&
		!memcmp(&a->dst, &b->dst, sizeof(a->dst))) ||
	       (!memcmp(&a->src, &b->dst, sizeof(a->src)) &&
		!memcmp(&a->dst, &b->src, sizeof(a->dst)));
}

static int peer_volume(double a, double b)
{
	return b * SLOW_PEER_VOLUME >= a && b <= a * SLOW_PEER_VOLUME;
}

/*
 * The median share of their bytes in an iteration that the peers of pair
 * a (its class's pairs, or the job's collective pairs when whole, that move
 * as many bytes) move in bursts timed for a rate; NAN without peers.
 */
static double peers_timed_share(const struct pair *pairs, size_t np, size_t a, int whole,
				const double *vol, const double *timed, const double *inside,
				double *tmp)
{
	size_t k = 0;

	for (size_t o = 0; o < np; o++)
		if (o != a && inside[o] > 0 && peer_volume(vol[a], vol[o]) &&
		    (whole ? pairs[o].cls != CT_CLASS_PP : pairs[o].cls == pairs[a].cls))
			tmp[k++] = timed[o] / inside[o];
	return k < SLOW_MIN_PAIRS - 1 ? NAN : anom_median(tmp, k);
}

/* An iteration's ratio to its peers reads slow: under SLOW_RATIO, past the pair's own spread. */
static int slow_in(double r, double spread)
{
	return !isnan(r) && r < SLOW_RATIO && 1 - r >= SLOW_SPREAD_Z * spread;
}

/*
 * Where the pair's slowness begins: its first slow iteration after the last
 * SLOW_MIN_BEFORE judged iterations in a row that were not (ni: none). A dip
 * the pair came back from is its own swing, of the iterations before the
 * onset, not the onset (a synthesized DP link slowed from iteration 4 dipped
 * to 0.59 of its peers in its first: read "slow from its first", at 0.45).
 */
static size_t episode(const double *ratio, size_t ni, double spread)
{
	size_t start = ni, calm = 0;

	for (size_t it = 0; it < ni; it++) {
		if (slow_in(ratio[it], spread)) {
			if (start == ni || calm >= SLOW_MIN_BEFORE)
				start = it;
			calm = 0;
		} else if (!isnan(ratio[it])) {
			calm++;
		}
	}
	return start;
}

/* Whether the pair had peers to compare with in any of its iterations. */
static int any_peers(const double *ratio, size_t ni)
{
	for (size_t it = 0; it < ni; it++)
		if (!isnan(ratio[it]))
			return 1;
	return 0;
}

/*
 * The median of a pair's ratios in its iterations before onset (NAN with
 * fewer than SLOW_MIN_BEFORE) and their robust spread about it, relative.
 */
static double own_before(const double *ratio, size_t onset, double *tmp, double *spread)
{
	size_t n = 0;
	double m;

	for (size_t it = 0; it < onset; it++)
		if (!isnan(ratio[it]))
			tmp[n++] = ratio[it];
	if (n < SLOW_MIN_BEFORE)
		return NAN;
	m = anom_median(tmp, n);
	for (size_t i = 0; i < n; i++)
		tmp[i] = fabs(tmp[i] - m) / m;
	*spread = 1.4826 * anom_median(tmp, n);
	return m;
}

int anom_slow_link(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct pair *pairs = NULL;
	double *bytes = NULL, *on = NULL, *ratio = NULL, *spread = NULL, *tmp = NULL;
	double *whole_spread = NULL;
	size_t *peer = NULL;
	size_t np = 0, ni = c->n_iter;
	int err = 0, *whole = NULL;
	double *vol = NULL, *timed = NULL, *inside = NULL;

	if (!ni) {
		anom_not_looked(c, CT_ANOMALY_SLOW_LINK, "no iteration period");
		return 0;
	}
	pairs = malloc((set->count + 1) * sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	for (size_t f = 0; f < set->count; f++)
		if (anom_job_data_flow(c, f))
			pairs[np++] = (struct pair){set->flows[f].key.src, set->flows[f].key.dst,
						    anom_class(c, f)};
	qsort(pairs, np, sizeof(*pairs), pair_cmp);
	if (np) {
		size_t k = 0;

		for (size_t i = 1; i < np; i++)
			if (pair_cmp(&pairs[i], &pairs[k]))
				pairs[++k] = pairs[i];
		np = k + 1;
	}
	bytes = calloc(np * ni + 1, sizeof(*bytes));
	on = calloc(np * ni + 1, sizeof(*on));
	ratio = malloc((np * ni + 1) * sizeof(*ratio));
	spread = malloc((np * ni + 1) * sizeof(*spread));
	whole_spread = malloc((np + 1) * sizeof(*whole_spread));
	peer = malloc((np + 1) * sizeof(*peer));
	whole = calloc(np + 1, sizeof(*whole));
	vol = calloc(np + 1, sizeof(*vol));
	timed = calloc(np + 1, sizeof(*timed));
	inside = calloc(np + 1, sizeof(*inside));
	tmp = malloc((np + ni + 1) * sizeof(*tmp));
	if (!bytes || !on || !ratio || !spread || !whole_spread || !peer || !tmp || !whole ||
	    !vol || !timed || !inside) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t f = 0; f < set->count; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];
		struct pair key;
		struct pair *p;

		if (!anom_job_data_flow(c, f))
			continue;
		key = (struct pair){set->flows[f].key.src, set->flows[f].key.dst, anom_class(c, f)};
		p = bsearch(&key, pairs, np, sizeof(*pairs), pair_cmp);
		for (size_t b = 0; b < fp->n_bursts; b++) {
			const struct ct_burst *u = &fp->bursts[b];
			long it = anom_iteration(c, u->start);

			vol[p - pairs] += (double)u->bytes;
			if (it >= 0)
				inside[p - pairs] += (double)u->bytes;
			if (it < 0 || u->end <= u->start ||
			    (u->packets && u->packets < ANOM_TIMED_PACKETS))
				continue;
			timed[p - pairs] += (double)u->bytes;
			bytes[(size_t)(p - pairs) * ni + (size_t)it] += (double)u->bytes;
			on[(size_t)(p - pairs) * ni + (size_t)it] +=
				(double)(u->end - u->start) / 1e9;
		}
	}
	/* each pair's rate over the median of its class's pairs, per iteration */
	for (size_t it = 0; it < ni; it++)
		for (size_t a = 0; a < np; a++) {
			size_t k = 0, m = 0;
			double ra = on[a * ni + it] > 0 ? bytes[a * ni + it] / on[a * ni + it] : 0;
			double med;

			for (size_t o = 0; o < np; o++)
				if (pairs[o].cls == pairs[a].cls && on[o * ni + it] > 0 &&
				    peer_volume(vol[a], vol[o]))
					peer[k++] = o;
			if (k < SLOW_MIN_PAIRS && pairs[a].cls != CT_CLASS_PP) {
				whole[a] = 1; /* the job's collective pairs */
				k = 0;
				for (size_t o = 0; o < np; o++)
					if (pairs[o].cls != CT_CLASS_PP && on[o * ni + it] > 0 &&
					    peer_volume(vol[a], vol[o]))
						peer[k++] = o;
			}
			ratio[a * ni + it] = spread[a * ni + it] = NAN;
			if (k < SLOW_MIN_PAIRS || ra <= 0)
				continue;
			for (size_t j = 0; j < k; j++)
				tmp[j] = bytes[peer[j] * ni + it] / on[peer[j] * ni + it];
			med = anom_median(tmp, k);
			ratio[a * ni + it] = ra / med;
			/* the others' spread about their own median, the link's own two
			 * directions left out (both are slow where the link is) */
			for (size_t j = 0; j < k; j++)
				if (!same_link(&pairs[a], &pairs[peer[j]]))
					tmp[m++] = bytes[peer[j] * ni + it] / on[peer[j] * ni + it];
			if (m) {
				double others = anom_median(tmp, m);

				for (size_t j = 0; j < m; j++)
					tmp[j] = fabs(tmp[j] - others) / others;
				spread[a * ni + it] = anom_median(tmp, m);
			}
		}
	/* each pair's peers' spread over the whole window (run to run) */
	for (size_t a = 0; a < np; a++) {
		size_t m = 0;

		for (size_t it = 0; it < ni; it++)
			if (!isnan(spread[a * ni + it]))
				tmp[m++] = spread[a * ni + it];
		whole_spread[a] = 1.4826 * anom_median(tmp, m);
	}
	for (size_t a = 0; a < np && !err; a++) {
		struct ct_anomaly an = {.kind = CT_ANOMALY_SLOW_LINK,
					.scope = CT_ANOMALY_AT_LINK,
					.priority = -1,
					.cls = (int8_t)pairs[a].cls,
					.host = pairs[a].src,
					.peer = pairs[a].dst,
					.onset = -1};
		size_t seen = 0, at;
		double rate = 0, before, metered, own_spread = 0;
		int stepped;

		for (size_t it = episode(ratio + a * ni, ni, whole_spread[a]); it < ni; it++) {
			double r = ratio[a * ni + it];

			if (!slow_in(r, whole_spread[a]))
				continue;
			err = anom_seen_in(c, &an, &seen, ni, it, r);
			if (err)
				break;
			rate += bytes[a * ni + it] / on[a * ni + it];
		}
		an.of = an.onset < 0 ? 0 : (unsigned)(ni - (size_t)an.onset);
		if (!err && !seen && pairs[a].cls != CT_CLASS_PP &&
		    !any_peers(ratio + a * ni, ni)) {
			free(an.iters);
			for (size_t it = 0; it < ni; it++)
				tmp[it] = on[a * ni + it] > 0 ? bytes[a * ni + it] / on[a * ni + it]
							      : 0;
			err = anom_slow_link_own(c, &pairs[a].src, &pairs[a].dst, pairs[a].cls, tmp,
						 on + a * ni);
			continue;
		}
		if (err || seen < SLOW_MIN_ITERATIONS || seen < SLOW_MIN_STEADY * an.of) {
			free(an.iters);
			continue;
		}
		an.seen = (unsigned)seen;
		for (size_t k = 0; k < seen; k++)
			tmp[k] = an.iters[k].value;
		an.value = anom_median(tmp, seen);
		an.confidence =
			(double)seen / an.of * fmin(1, 0.5 + (SLOW_RATIO - an.value) / SLOW_RATIO);
		rate /= (double)seen;
		before = own_before(ratio + a * ni, (size_t)an.onset, tmp, &own_spread);
		at = (size_t)snprintf(
			an.evidence, sizeof(an.evidence),
			"%s bursts on this link move %.3g Gbit/s while sending, %.0f%% "
			"of the median of the %s pairs in the same iteration (flagged "
			"below %.0f%%), in %zu of %u iterations from iteration %ld",
			ct_class_name(pairs[a].cls), rate * 8 / 1e9, an.value * 100,
			whole[a] ? "job's collective" : ct_class_name(pairs[a].cls),
			SLOW_RATIO * 100, seen, an.of, an.onset);
		at = at < sizeof(an.evidence) ? at : sizeof(an.evidence) - 1;
		metered = peers_timed_share(pairs, np, a, whole[a], vol, timed, inside, tmp);
		stepped = !isnan(before) && an.value < SLOW_RATIO * before &&
			  1 - an.value / before >= SLOW_SPREAD_Z * own_spread;
		if (stepped) {
			at += (size_t)snprintf(an.evidence + at, sizeof(an.evidence) - at,
					       "; %.0f%% of them before it (its own spread %.0f%%)",
					       before * 100, own_spread * 100);
			at = at < sizeof(an.evidence) ? at : sizeof(an.evidence) - 1;
			anom_slow_step_felt(c, &an, on + a * ni, before, at, tmp);
		} else if (!isnan(metered) && timed[a] < ANOM_METERED_SHARE * metered * inside[a])
			snprintf(an.evidence + at, sizeof(an.evidence) - at,
				 "; %.0f%% of its bytes move in bursts of %d packets or more, "
				 "%.0f%% of its peers': the link meters them",
				 timed[a] / inside[a] * 100, ANOM_TIMED_PACKETS, metered * 100);
		else if (isnan(before)) {
			an.confidence = fmin(an.confidence, SLOW_UNDECIDED_CONFIDENCE);
			snprintf(an.evidence + at, sizeof(an.evidence) - at,
				 "; under %d iterations of its own before it: slow from its "
				 "first, as a host slower by placement reads too (below an alarm)",
				 SLOW_MIN_BEFORE);
		} else {
			an.confidence = fmin(an.confidence, SLOW_UNDECIDED_CONFIDENCE);
			snprintf(an.evidence + at, sizeof(an.evidence) - at,
				 "; %.0f%% of them before it, its own spread %.0f%%: no step "
				 "beyond it (below an alarm)",
				 before * 100, own_spread * 100);
		}
		err = anom_add(c, &an);
	}
out:
	free(pairs);
	free(bytes);
	free(on);
	free(ratio);
	free(spread);
	free(whole_spread);
	free(peer);
	free(whole);
	free(vol);
	free(timed);
	free(inside);
	free(tmp);
	return err;
}
