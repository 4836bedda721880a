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
 * PP pairs move 0.1..20 Gbit/s while their DP pairs move 45).
 *
 * Where the schedule paces the transfers, a slower link does not lower the
 * rate while sending by much: its messages leave when the schedule lets
 * them, and it is the pair's share of the step that grows (its bursts start
 * with its peers' and end later). The step test: per iteration, the
 * pair's on time over the median of its peers' that moved the same bytes
 * (within SLOW_STEP_BYTES) in the same step; clean real pairs hold such a
 * share steadily away from 1, so the test asks for a rise of it
 * (step_rise) beyond the run's own spread, on both ways of the link. A
 * pair is slow in an iteration by either test.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A pair is slow in an iteration below this share of its peers' median
 * rate: clean synthesized jobs' pairs stay within 0.8..1.25 of their
 * class's median, a link at half rate reads 0.5 and below.
 */
#define SLOW_RATIO 0.6
/* peers to compare with: the median of two is their mean, one slow pair would drag it */
#define SLOW_MIN_PAIRS 3
/* seen in at least this many iterations, and in most of them from its onset */
#define SLOW_MIN_ITERATIONS 2
#define SLOW_MIN_STEADY	    0.5
/*
 * Bursts of fewer packets are too few to time a rate (a clear-to-send is
 * one; the first packet's own serialization is not in the burst's span).
 */
#define SLOW_MIN_PACKETS 3
/* peers move between 1/2 and 2 times the pair's bytes an iteration */
#define SLOW_PEER_VOLUME 2.0
/*
 * Healthy is what the job's own pairs do: a pair is slow in an iteration
 * only where its shortfall from the peers' median is SLOW_SPREAD_Z robust
 * deviations (1.4826 MAD of the peers' rates, relative to their median) or
 * more, 3 being the usual robust outlier bound. Synthesized pairs spread
 * by 0.03-0.1 of their median and a link at a third of its rate stands
 * out; on clean real runs the pairs of token routing (EP) and of a
 * pipeline move 0.1..0.5 of their median from iteration to iteration
 * (gloo on a loaded 2-core machine): below 60% there was the healthy
 * spread, 25 findings at confidence 0.5 or more in 1,088 clean iterations.
 */
#define SLOW_SPREAD_Z 3.0
/*
 * The step test compares on times of the same transfers: peers whose bytes
 * in the iteration are within this factor of the pair's (a collective's
 * members move equal shares; clean synthesized peers match to 1%).
 */
#define SLOW_STEP_BYTES 1.1
/*
 * The shortest excess of on time the step test takes, as a share of the
 * peers' median: where the peers' spread is nil (synthesized jobs), a
 * share this long is a link a fifth slower over the burst at the least;
 * the spread test above it decides on real runs.
 */
#define SLOW_STEP_MIN 0.2
/*
 * Measured iterations on either side of a rise, at the least: clean real
 * runs' last two or three iterations stretch one pair or another (ranks
 * leaving the loop at different times), 3 findings in 1,125 iterations
 * with 2.
 */
#define SLOW_STEP_SIDE 4

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

static int same_bytes(double a, double b)
{
	return b * SLOW_STEP_BYTES >= a && b <= a * SLOW_STEP_BYTES;
}

/* The median deviation of v[0..n) from their median, relative to it (v reordered). */
static double rel_spread(double *v, size_t n)
{
	double med = anom_median(v, n);

	if (!n || med <= 0)
		return NAN;
	for (size_t j = 0; j < n; j++)
		v[j] = fabs(v[j] - med) / med;
	return anom_median(v, n);
}

/* 1.4826 times the median of x[0..n) over the entries that are not NaN (the window's spread). */
static double window_spread(const double *x, size_t n, double *tmp)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(x[i]))
			tmp[m++] = x[i];
	return 1.4826 * anom_median(tmp, m);
}

/*
 * Where the pair's share of the step grew: x[0..n) its on time over its
 * peers' less 1 (NaN: not measured). For a split k (SLOW_STEP_SIDE
 * measured iterations on each side at the least), the rise is the median
 * after less the median before, its bar SLOW_STEP_MIN or SLOW_SPREAD_Z
 * times the spread before the split (1.4826 MAD: the healthy run's; a
 * slowed link is noisier after) or the peers' (peers_spread), whichever
 * is more. The split whose rise stands highest over its bar is taken;
 * *base is its median before and *bar its bar. Returns k, -1 where no
 * split's rise reaches its bar, -2 where too few iterations are measured
 * to tell. tmp: 2n entries.
 */
static long step_rise(const double *x, size_t n, double peers_spread, double *tmp, double *base,
		      double *bar)
{
	size_t measured = 0;
	long best = -1;
	double most = 0;

	for (size_t i = 0; i < n; i++)
		measured += !isnan(x[i]);
	if (measured < 2 * SLOW_STEP_SIDE)
		return -2;
	for (size_t k = 1; k < n; k++) {
		size_t a = 0, b = 0;
		double mb, ma, need;

		for (size_t i = 0; i < n; i++)
			if (!isnan(x[i]))
				tmp[i < k ? a++ : n + b++] = x[i];
		if (a < SLOW_STEP_SIDE || b < SLOW_STEP_SIDE)
			continue;
		mb = anom_median(tmp, a);
		ma = anom_median(tmp + n, b);
		for (size_t i = 0; i < a; i++)
			tmp[i] = fabs(tmp[i] - mb);
		need = fmax(SLOW_STEP_MIN,
			    SLOW_SPREAD_Z * fmax(1.4826 * anom_median(tmp, a), peers_spread));
		if ((ma - mb) / need > most) {
			most = (ma - mb) / need;
			best = (long)k;
			*base = mb;
			*bar = need;
		}
	}
	return most >= 1 ? best : -1;
}

int anom_slow_link(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct pair *pairs = NULL;
	double *bytes = NULL, *on = NULL, *ratio = NULL, *spread = NULL, *tmp = NULL;
	double *excess = NULL, *xspread = NULL;
	double *whole_spread = NULL, *whole_xspread = NULL, *base = NULL, *bar = NULL;
	long *rise_at = NULL;
	size_t *peer = NULL;
	size_t np = 0, ni = c->n_iter;
	int err = 0, *whole = NULL;
	double *vol = NULL;

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
	excess = malloc((np * ni + 1) * sizeof(*excess));
	xspread = malloc((np * ni + 1) * sizeof(*xspread));
	whole_spread = malloc((np + 1) * sizeof(*whole_spread));
	whole_xspread = malloc((np + 1) * sizeof(*whole_xspread));
	base = calloc(np + 1, sizeof(*base));
	bar = calloc(np + 1, sizeof(*bar));
	rise_at = malloc((np + 1) * sizeof(*rise_at));
	peer = malloc((np + 1) * sizeof(*peer));
	whole = calloc(np + 1, sizeof(*whole));
	vol = calloc(np + 1, sizeof(*vol));
	tmp = malloc((np + 3 * ni + 1) * sizeof(*tmp));
	if (!bytes || !on || !ratio || !spread || !excess || !xspread || !whole_spread ||
	    !whole_xspread || !base || !bar || !rise_at || !peer || !tmp || !whole || !vol) {
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
			if (it < 0 || u->end <= u->start ||
			    (u->packets && u->packets < SLOW_MIN_PACKETS))
				continue;
			bytes[(size_t)(p - pairs) * ni + (size_t)it] += (double)u->bytes;
			on[(size_t)(p - pairs) * ni + (size_t)it] +=
				(double)(u->end - u->start) / 1e9;
		}
	}
	/*
	 * Per iteration: each pair's rate over the median of its class's pairs,
	 * and its on time over that of those which moved the same bytes.
	 */
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
			excess[a * ni + it] = xspread[a * ni + it] = NAN;
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
			if (m)
				spread[a * ni + it] = rel_spread(tmp, m);
			/* the step: the peers that moved the same bytes, their on times */
			m = 0;
			for (size_t j = 0; j < k; j++)
				if (same_bytes(bytes[a * ni + it], bytes[peer[j] * ni + it]))
					peer[m++] = peer[j];
			if (m < SLOW_MIN_PAIRS)
				continue;
			for (size_t j = 0; j < m; j++)
				tmp[j] = on[peer[j] * ni + it];
			excess[a * ni + it] = on[a * ni + it] / anom_median(tmp, m) - 1;
			k = 0;
			for (size_t j = 0; j < m; j++)
				if (!same_link(&pairs[a], &pairs[peer[j]]))
					tmp[k++] = on[peer[j] * ni + it];
			if (k)
				xspread[a * ni + it] = rel_spread(tmp, k);
		}
	/* each pair's peers' spreads over the whole window (run to run) */
	for (size_t a = 0; a < np; a++) {
		whole_spread[a] = window_spread(spread + a * ni, ni, tmp);
		whole_xspread[a] = window_spread(xspread + a * ni, ni, tmp);
		rise_at[a] =
			step_rise(excess + a * ni, ni, whole_xspread[a], tmp, &base[a], &bar[a]);
	}
	for (size_t a = 0; a < np && !err; a++) {
		struct ct_anomaly an = {.kind = CT_ANOMALY_SLOW_LINK,
					.scope = CT_ANOMALY_AT_LINK,
					.priority = -1,
					.cls = (int8_t)pairs[a].cls,
					.host = pairs[a].src,
					.peer = pairs[a].dst,
					.onset = -1};
		struct pair back = {pairs[a].dst, pairs[a].src, pairs[a].cls};
		const struct pair *rev = bsearch(&back, pairs, np, sizeof(*pairs), pair_cmp);
		double *longer = tmp + 2 * ni; /* the step test's rises */
		size_t seen = 0, by_step = 0;
		double rate = 0, strength;
		/*
		 * A slower cable or port slows both ways, a sender falling
		 * behind only its own: the step test takes a link whose
		 * reverse carries data and rose too. One way alone does not
		 * tell a link from its sender (on a clean real run, a ring's
		 * one-way pair stretched by 0.7 from its fifth iteration on).
		 */
		long step_at = rev && rise_at[rev - pairs] >= 0 ? rise_at[a] : -1;

		for (size_t it = 0; it < ni; it++) {
			double r = ratio[a * ni + it], x = excess[a * ni + it] - base[a];
			int slow_rate = !isnan(r) && r < SLOW_RATIO &&
					1 - r >= SLOW_SPREAD_Z * whole_spread[a];
			int slow_step =
				step_at >= 0 && (long)it >= step_at && !isnan(x) && x >= bar[a];

			if (!slow_rate && !slow_step)
				continue;
			err = anom_seen_in(c, &an, &seen, ni, it, r);
			if (err)
				break;
			if (slow_step)
				longer[by_step++] = x;
			rate += bytes[a * ni + it] / on[a * ni + it];
		}
		an.of = an.onset < 0 ? 0 : (unsigned)(ni - (size_t)an.onset);
		if (err || seen < SLOW_MIN_ITERATIONS || seen < SLOW_MIN_STEADY * an.of) {
			free(an.iters);
			continue;
		}
		an.seen = (unsigned)seen;
		for (size_t k = 0; k < seen; k++)
			tmp[k] = an.iters[k].value;
		an.value = anom_median(tmp, seen);
		/* 0.5 at either test's bar, 1 at 0.3 of the peers' rate or twice the step's bar */
		strength = 0.5 + (SLOW_RATIO - an.value) / SLOW_RATIO;
		if (by_step)
			strength = fmax(strength, 0.5 * anom_median(longer, by_step) / bar[a]);
		an.confidence = (double)seen / an.of * fmin(1, strength);
		rate /= (double)seen;
		if (by_step)
			snprintf(an.evidence, sizeof(an.evidence),
				 "%s bursts on this link, both ways, take %.0f%% more of the step "
				 "from iteration %ld than before, against the %s pairs moving the "
				 "same bytes (flagged from %.0f%%, %s), at %.3g Gbit/s while "
				 "sending "
				 "(%.0f%% of their median), in %zu of %u iterations",
				 ct_class_name(pairs[a].cls), anom_median(longer, by_step) * 100,
				 an.onset,
				 whole[a] ? "job's collective" : ct_class_name(pairs[a].cls),
				 bar[a] * 100,
				 bar[a] > SLOW_STEP_MIN ? "three deviations of the run's own spread"
							: "the least the test takes",
				 rate * 8 / 1e9, an.value * 100, seen, an.of);
		else
			snprintf(an.evidence, sizeof(an.evidence),
				 "%s bursts on this link move %.3g Gbit/s while sending, %.0f%% of "
				 "the median of the %s pairs in the same iteration (flagged below "
				 "%.0f%%), in %zu of %u iterations from iteration %ld",
				 ct_class_name(pairs[a].cls), rate * 8 / 1e9, an.value * 100,
				 whole[a] ? "job's collective" : ct_class_name(pairs[a].cls),
				 SLOW_RATIO * 100, seen, an.of, an.onset);
		err = anom_add(c, &an);
	}
out:
	free(pairs);
	free(bytes);
	free(on);
	free(ratio);
	free(spread);
	free(excess);
	free(xspread);
	free(whole_spread);
	free(whole_xspread);
	free(base);
	free(bar);
	free(rise_at);
	free(peer);
	free(whole);
	free(vol);
	free(tmp);
	return err;
}
