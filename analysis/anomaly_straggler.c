// SPDX-License-Identifier: MIT
/*
 * Straggler: the host that enters the job's collectives last, iteration
 * after iteration, while the others wait inside them for it. The sends of
 * collective data (DP, TP, EP, EmbTableSyn: collectives every member
 * enters at once; a pipeline's stages start one after another by design
 * and are left out) of a collective's members are joined into busy spans;
 * in each iteration the collective starts with the span after their
 * longest common wait (the compute before the step: the job's iteration
 * starts are found the same way, period.c). A member's entry is its first
 * send that carries a message since the collective's previous step (every
 * member sent in it), up to half a period after that start. The later
 * steps of the iteration are judged too, each member's surest finding
 * kept: in an all-to-all exchanged in pairs only the exchange after the
 * late member's compute shows it (starts()). Steps are matched across
 * iterations by what they carry, not by their place (match_steps).
 *
 * Why a message, not any packet, and not the first data: in a ring a
 * member's data to its successor waits for its own entry and, where the
 * transport waits for the receiver (gloo: the receiver's ready message
 * before the data), for its successor's too: a late member delays its
 * predecessor's data as much as its own (ddp-straggler: rank 2 late,
 * ranks 3 -> 2 and 2 -> 1 start together). What each member sends the
 * moment it enters is its message on its own way (gloo's 48-byte one); the
 * acknowledgements its kernel or NIC sends on the same way are no sign of
 * it (a receiver's clear-to-send on the reverse way may be timed by its
 * sender: the synthesizer's is, so those ways are left out).
 *
 * Lateness is an entry against the median of the other members'. A host
 * is late in an iteration when it is the latest, beyond 1% of the period.
 * It is a straggler when late in STRAGGLER_MIN_ITERATIONS iterations and
 * either beyond STRAGGLER_SPREADS times the job's own spread (1.4826 x the
 * median absolute deviation of the entries) in as many, or last in the
 * order of entries more often than chance allows, its change to last told
 * from chance too for confidence (order_ranks, order_change).
 *
 * Or from who the collective waits for where no entry shows it
 * (judge_waits): where every member's data waits for each other's part
 * and no member says it is in (gloo's DDP buckets after the first: one is
 * queued behind the bucket before it and starts as that one ends), the
 * on-time members' entries are not on the wire at all. Every member falls
 * silent, and the member whose data ends the silence is the one waited for
 * (the real ddp-bucket-straggler-r1: every iteration from the onset but
 * two; before it and in the job run clean, no such silence); or, where
 * that data answers its receiver's message on the way back, the receiver
 * (answered()).
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * With two hosts the later one is late only against the other: one that
 * starts early looks the same. Three or more give a median to stand on.
 */
#define STRAGGLER_MIN_HOSTS 3
/*
 * Lateness is flagged from this many times the job's own spread: clean
 * synthesized DP jobs (jitter 0..5%) spread 0.0..0.03 ms, clean real gloo
 * runs (8 ranks on 2 cores) 0.1..2 ms with single-iteration spikes to 4x
 * their spread (docs/accuracy.md, Anomalies).
 */
#define STRAGGLER_SPREADS 6.0
/*
 * And never from less than this share of the period: NIC serialization of
 * a host sharing its NIC with others' flows shifts its first packet by
 * tens of microseconds in an iteration of tens of ms.
 */
#define STRAGGLER_MIN_SHARE 0.01
/*
 * Or, where the job's jitter is too wide for that (clean real gloo runs on
 * a loaded machine: ranks' entries 20-100 ms apart from one iteration to
 * the next), from its place in the order of entries: a finding when it
 * enters last so often that chance would do it (any one of the
 * collective's members) at most this often, certain at
 * 10^-STRAGGLER_SURE_LOG10 (confidence: -log10(chance) / that, 0.5 at 1%).
 */
#define STRAGGLER_MAX_CHANCE 0.01
#define STRAGGLER_SURE_LOG10 4.0
/*
 * A change needs this many iterations each side to be told from chance.
 * The best of the splits is taken: under chance it reaches a given z about
 * this many times less often than the splits tried (simulated, ranks of 4
 * or 8 members drawn at random: 12 iterations (7 splits) 1.2-4 times the
 * chance of one split, 19 (14) 3.8-6.0, 40 (35) 9.2-9.6).
 */
#define STRAGGLER_MIN_BASELINE 3
#define STRAGGLER_SCAN_TRIES   3.0
/*
 * The change's split dates a finding where chance would make so large a
 * change at most this often, though it is not told from chance
 * (STRAGGLER_MAX_CHANCE) and so adds nothing to the confidence: a member
 * last from the split on, and now and then before by the jitter, is dated
 * at the split, not at its first chance lateness (moe-straggler-r3: change
 * chance 0.2, 7 iterations before the split, last in 2 of them by 4 ms).
 * Where there is no sign of a change at all (the synthesized stragglers
 * of 7 to 8 iterations, late from the first: chance 1) the finding starts
 * at its first late iteration. Where its place shows none but how late it
 * is does, at the same chance, that dates it (size_change).
 */
#define STRAGGLER_DATE_CHANCE 0.5
/*
 * Sends apart by less than this share of the period are of one step: gloo's
 * reductions on the CPU part a ring all-reduce's steps by up to 3.6 ms
 * (1.6% of ddp-straggler's 232 ms iteration, 4 ranks on 2 loaded cores),
 * where the compute before the collective takes 40 ms or more (17%).
 */
#define STRAGGLER_STEP_JOIN 0.05
/*
 * Where every member has sent, a ready message this share of the period or
 * more after the last send begins the next exchange, though nearer than a
 * step's join: an exchange's sends follow one another within 0.1 ms, and
 * gloo sends its ready messages only on entering one (moe-straggler-r3: its
 * backward pass's last exchange and the next iteration's first, on the
 * same sockets, 6.5 ms apart, 3.6% of its 179 ms iteration, the DP
 * all-reduce between them on other sockets).
 */
#define STRAGGLER_EXCHANGE_GAP 0.01
/*
 * Sends of at most this many bytes a packet that carry a message are a
 * member saying it is in (gloo's 48-byte ready message: a 114-byte frame),
 * not a step's data (frames of an MTU, 9014 bytes here).
 */
#define STRAGGLER_READY_FRAME 256
/*
 * Steps of a collective judged each iteration, at most: a MoE iteration
 * holds 4 to 6 expert exchanges. Each one judged is one more chance of a
 * member last by chance, so the chances found are multiplied by the steps
 * judged.
 */
#define STRAGGLER_MAX_STEPS 8
/*
 * An exchange carries the same bytes every iteration, within this share:
 * a ring of 8's all-reduce 14,170,286 to 14,172,908 B (0.02%) in
 * ddp8-straggler-h1, whether found as one step or parted in two by a
 * pause inside it; the MoE jobs' exchanges differ from one another by 2x.
 */
#define STRAGGLER_PIECES 0.01
/*
 * Data answers a message on the way back from this long after it, ns: the
 * message has to reach the sender and the data come back through the
 * switch and two NICs (about a microsecond each on RDMA hardware; gloo's
 * answer in the real ddp8-straggler-r7 came 50 us after its request). The
 * synthesizer's clear-to-send leads its data by 1 us, timed by the sender
 * (CTS_LEAD_NS in profiles/synth.c): no answer.
 */
#define STRAGGLER_ANSWER_NS 2000
/* "Iteration after iteration": one late iteration is a hiccup, not a straggler. */
#define STRAGGLER_MIN_ITERATIONS 2
/*
 * A lateness that rests on this many late iterations or fewer is not yet
 * a persistent one where it could not be judged in an iteration since its
 * onset (the step not seen there, or fewer than STRAGGLER_MIN_HOSTS members
 * in it; the window's last iteration, which may be cut short, aside): its
 * confidence counts the iterations it was judged in, and two of two read
 * as certain. It stays below an alarm, at STRAGGLER_FRESH_CONFIDENCE, until a
 * further late iteration: the straggler alarms of the interval reports of
 * clean real runs (pp4, a window of 10 iterations: a rank 30 ms late in
 * the 2 of the last 4 it was judged in, at 0.67; ptd-4: late in 2 of the 4
 * of 17, at 0.5). A straggler late in its step in every iteration from
 * its onset is judged as before.
 */
#define STRAGGLER_FRESH		   2
#define STRAGGLER_FRESH_CONFIDENCE 0.45
/*
 * A member late beyond the job's spread in every iteration since it was
 * first late is steady from there once it is so in this many: in clean
 * real runs a rank is so 2 iterations in a row (interval reports, windows
 * of 10 to 12: pp4-2, 21.9 ms, 6.4 times its collective's threshold;
 * zero3-3, 45.7 ms, 1.5 times), and the onset goal (2 iterations and an
 * interval) leaves room for a third.
 */
#define STRAGGLER_STEADY 3

/* Send b is a member saying it is in: a ready message (STRAGGLER_READY_FRAME). */
static int says_in(const struct ct_burst *b)
{
	return b->packets && b->bytes <= STRAGGLER_READY_FRAME * b->packets;
}

/*
 * The busy span (a run) of the sends b from b[*i] on: those that start
 * before the run's end so far. Each member that sends in it is marked in
 * seen and counted in *senders, a ready message (STRAGGLER_READY_FRAME)
 * sets *ready; *i moves past the run. Returns the run's end.
 */
static uint64_t take_run(const struct ct_burst *b, size_t n, size_t *i, const size_t *member,
			 char *seen, size_t *senders, int *ready)
{
	uint64_t end;

	for (end = b[*i].end; *i < n && b[*i].start <= end; (*i)++) {
		size_t who = member[b[*i].flow];

		*senders += !seen[who];
		seen[who] = 1;
		*ready |= says_in(&b[*i]);
		if (b[*i].end > end)
			end = b[*i].end;
	}
	return end;
}

/*
 * The collective's start in each iteration (UINT64_MAX: none): over its
 * members' sends b (sorted here), the start of the busy span after the
 * longest wait within half a period of the iteration's start. And where
 * its members' entries are looked for from (after[]): the end of its
 * previous step (spans apart by less than STRAGGLER_STEP_JOIN of the
 * period taken as one): the last run every member sent in, and the runs
 * of data only right after it (a late member's last bucket, alone after
 * the others'; a run with a ready message, STRAGGLER_READY_FRAME, is an
 * entry), within a period before the start; else the start itself. A
 * member that enters long before the others (its ready message alone, a
 * wait longer than the compute before it) would otherwise read as
 * entering with the others' data, when the step's wait began.
 *
 * The collective's later steps in the iteration too (step k of iteration
 * it at start[k * n_iter + it], k < STRAGGLER_MAX_STEPS; *n_steps: how
 * many): a run begins one where the step before has closed (every member
 * sent in a run of it, and data only after) and it brings a ready message
 * or every member: in an all-to-all exchanged in pairs (gloo's) the member
 * that enters last holds up every other member's data to it, so each
 * member's data waits in the step the late one arrives in, and the
 * others' wait ends there: only that step shows it, and it need not be
 * the one after the longest wait (a MoE job's expert exchanges: that is
 * its backward pass's compute, the straggler's delay is before the
 * iteration's first exchange). member[f]: the member sending on flow f (nh
 * members); longest: n_iter scratch; seen: nh scratch.
 */
static void starts(const struct anom_ctx *c, struct ct_burst *b, size_t n, const size_t *member,
		   size_t nh, uint64_t *start, uint64_t *after, uint64_t *longest, char *seen,
		   size_t *n_steps)
{
	uint64_t half = (uint64_t)(c->period_s * 0.5e9), period = 2 * half, end = 0, all_end = 0,
		 join = (uint64_t)(c->period_s * STRAGGLER_STEP_JOIN * 1e9);
	uint64_t exchange = (uint64_t)(c->period_s * STRAGGLER_EXCHANGE_GAP * 1e9);
	size_t it = 0, senders = 0, ni = c->n_iter, per_step[STRAGGLER_MAX_STEPS] = {0};
	int ready = 0, tail = 0;

	qsort(b, n, sizeof(*b), anom_burst_start_cmp);
	for (size_t k = 0; k < ni * STRAGGLER_MAX_STEPS; k++)
		start[k] = after[k] = UINT64_MAX;
	for (size_t k = 0; k < ni; k++)
		longest[k] = 0;
	memset(seen, 0, nh);
	for (size_t i = 0; i < n;) {
		uint64_t s = b[i].start, gap = i ? s - end : UINT64_MAX;

		if (i && gap > join) { /* the step before ends */
			/*
			 * Every member in it, or data only right after such a
			 * step (a late member's last bucket): the previous step.
			 */
			tail = senders == nh || (tail && !ready);
			if (tail)
				all_end = end;
			memset(seen, 0, nh);
			senders = 0;
			ready = 0;
		}
		end = take_run(b, n, &i, member, seen, &senders, &ready);
		/* spans come by start: the iteration whose start is nearest */
		while (it + 1 < ni && c->bounds[it + 1] <= s + half)
			it++;
		if (s + half < c->bounds[it] || s >= c->bounds[it] + half)
			continue;
		if (start[it] == UINT64_MAX || gap > longest[it]) {
			longest[it] = gap;
			start[it] = s;
			after[it] = all_end && all_end + period >= s && gap > join ? all_end : s;
		}
	}
	/* the later steps: runs that begin one, between a start and the next */
	*n_steps = 1;
	tail = ready = 0;
	end = all_end = 0;
	it = senders = 0;
	memset(seen, 0, nh);
	for (size_t i = 0, k = 0; i < n;) {
		uint64_t s = b[i].start, gap = i ? s - end : UINT64_MAX, was = all_end;
		int closed = tail;

		/*
		 * A ready message after a run every member sent in is the next
		 * exchange, however short the wait (STRAGGLER_EXCHANGE_GAP).
		 */
		if (i && (gap > join || (senders == nh && gap > exchange && says_in(&b[i])))) {
			tail = senders == nh || (tail && !ready);
			if (tail)
				all_end = end;
			closed = tail;
			was = all_end;
			memset(seen, 0, nh);
			senders = 0;
			ready = 0;
		} else if (i) {
			closed = 0; /* still the same run */
		}
		end = take_run(b, n, &i, member, seen, &senders, &ready);
		if (!closed || !(senders == nh || ready))
			continue;
		/*
		 * The iteration whose first step's entries began last before
		 * it: a run after where the next iteration's entries are
		 * looked for from is one of them, not a step of its own (a late
		 * member's data, past a join after the others' entries, ends
		 * the next iteration's longest wait: moe-straggler-r3 read
		 * one exchange in two iterations, its late entry twice).
		 */
		while (it + 1 < ni && start[it + 1] != UINT64_MAX && after[it + 1] < s) {
			it++;
			k = 0;
		}
		if (start[it] == UINT64_MAX || s <= start[it] || s >= start[it] + period ||
		    ++k >= STRAGGLER_MAX_STEPS)
			continue;
		start[k * ni + it] = s;
		after[k * ni + it] = was && was + period >= s ? was : s;
		per_step[k]++;
	}
	/* steps seen in half the iterations or more (fewer cannot be told from chance) */
	while (*n_steps < STRAGGLER_MAX_STEPS && 2 * per_step[*n_steps] >= ni)
		(*n_steps)++;
}

/*
 * A host found straggling in several collectives is said once, in the one
 * it is surest in: 1 where it is already said as surely as confidence;
 * else its less sure finding is taken out (0).
 */
static int reported(const struct anom_ctx *c, const struct ct_addr *host, double confidence)
{
	struct ct_anomalies *o = c->out;

	for (size_t i = 0; i < o->n; i++) {
		if (o->list[i].kind != CT_ANOMALY_STRAGGLER ||
		    memcmp(&o->list[i].host, host, sizeof(*host)))
			continue;
		if (o->list[i].confidence >= confidence)
			return 1;
		free(o->list[i].iters);
		memmove(&o->list[i], &o->list[i + 1], (o->n - i - 1) * sizeof(*o->list));
		o->n--;
		return 0;
	}
	return 0;
}

/*
 * host's sends on flow f are of the collective of class cls: one of its
 * data flows, unless a link meters it (c->metered): its data leaves when
 * the meter lets it, not when its host enters, and it never pauses (the
 * real ddp-slowlink: rank 2's segments to rank 1 every 1.44 ms through the
 * whole iteration, the ranks' compute included, so no step ended before
 * the others' entries and rank 3 read 9.8 ms late at 0.58, though by the
 * ranks' own clocks it enters 15 ms early).
 */
static int sends_on(const struct anom_ctx *c, size_t f, int cls, const struct ct_addr *host)
{
	return anom_job_data_flow(c, f) && anom_class(c, f) == cls &&
	       !(c->metered && c->metered[f]) &&
	       !memcmp(&c->set->flows[f].key.src, host, sizeof(*host));
}

/* Appends host's sends in the collective of class cls to b; returns how many. */
static size_t host_sends(const struct anom_ctx *c, int cls, const struct ct_addr *host,
			 struct ct_burst *b)
{
	size_t n = 0;

	for (size_t f = 0; f < c->set->count; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];

		if (!sends_on(c, f, cls, host))
			continue;
		for (size_t i = 0; i < fp->n_bursts; i++)
			if (anom_carries_message(&fp->bursts[i]))
				b[n++] = fp->bursts[i];
	}
	return n;
}

/*
 * Member a's place in the order of entries, each iteration (NAN: it or too
 * few members entered): its rank among the members that entered (1 the
 * first; ties share their mean rank), standardised against a rank drawn
 * at random ((k + 1) / 2, variance (k^2 - 1) / 12 among k). Ranks, not
 * delays: whatever the size of the job's jitter, a member that enters last
 * iteration after iteration stands out.
 */
static void order_ranks(const uint64_t *first, const double *late, size_t nh, size_t ni, size_t a,
			double *u)
{
	for (size_t it = 0; it < ni; it++) {
		double rank = 1;
		size_t k = 1;

		u[it] = NAN;
		if (isnan(late[a * ni + it]))
			continue;
		for (size_t o = 0; o < nh; o++) {
			if (o == a || isnan(late[o * ni + it]))
				continue;
			k++;
			if (first[o * ni + it] < first[a * ni + it])
				rank += 1;
			else if (first[o * ni + it] == first[a * ni + it])
				rank += 0.5;
		}
		if (k >= STRAGGLER_MIN_HOSTS)
			u[it] = (rank - (double)(k + 1) / 2) / sqrt((double)(k * k - 1) / 12);
	}
}

/* Member a is late in iteration it: the latest of the members, beyond floor. */
static int late_in(const double *late, size_t nh, size_t ni, size_t a, size_t it, double floor)
{
	double l = late[a * ni + it];

	if (isnan(l) || l <= floor)
		return 0;
	for (size_t o = 0; o < nh; o++)
		if (o != a && !isnan(late[o * ni + it]) && late[o * ni + it] >= l)
			return 0;
	return 1;
}

/* The chance that any of nh members' standardised ranks sum to z or more. */
static double by_chance(double z, size_t nh)
{
	return fmin(1, (double)nh * 0.5 * erfc(z / M_SQRT2));
}

/* Sum and count of the defined u[from .. to). */
static double sum_of(const double *u, size_t from, size_t to, size_t *n)
{
	double s = 0;

	*n = 0;
	for (size_t it = from; it < to; it++)
		if (!isnan(u[it])) {
			s += u[it];
			(*n)++;
		}
	return s;
}

/*
 * Where member a's place in the order changed: the split of the iterations
 * into a baseline and what follows (each STRAGGLER_MIN_BASELINE defined
 * iterations or more) whose mean ranks differ most, as a z score (the
 * ranks' variance is 1 each way); *split: its first iteration after, 0
 * where none (too few iterations). Returns the chance of so large a change
 * among nh members, the best of the splits taken (STRAGGLER_SCAN_TRIES).
 */
static double order_change(const double *u, size_t ni, size_t nh, size_t *split)
{
	double best = -INFINITY;
	size_t splits = 0, nb, na;

	*split = 0;
	for (size_t k = 1; k < ni; k++) {
		double sb = sum_of(u, 0, k, &nb), sa = sum_of(u, k, ni, &na), z;

		if (nb < STRAGGLER_MIN_BASELINE || na < STRAGGLER_MIN_BASELINE || isnan(u[k]))
			continue;
		splits++;
		z = (sa / na - sb / nb) / sqrt(1.0 / na + 1.0 / nb);
		if (z > best) {
			best = z;
			*split = k;
		}
	}
	if (!splits)
		return 1;
	return fmin(1, fmax(1, (double)splits / STRAGGLER_SCAN_TRIES) * by_chance(best, nh));
}

/*
 * Where how late member a is changed: the split (each side
 * STRAGGLER_MIN_BASELINE judged iterations or more) about whose two
 * medians its lateness deviates least, and how far apart they are against
 * the lateness's own noise, as a z score: the noise from one iteration to
 * the next (1.4826 MAD of the successive changes over sqrt 2), a median's
 * standard error 1.2533 of it over sqrt n. (The split of the largest z
 * drifts to the middle: a side's median holds while fewer than half its
 * iterations are of the other regime.) A member last by 1-2 ms before it
 * sleeps and by 25 ms after keeps its place in the order but not its size
 * (moe-straggler-r0). Medians, not ranks of its sizes: read early in 3 of
 * its 11 late iterations where its step's sends were matched to another
 * exchange (set C), its ranks showed a change at chance 1, so it was dated
 * at the capture's start; its medians, 0 and 25.5 ms against a noise of
 * 2.2 ms, are no chance. The noise is `floor` at least (the least lateness
 * judged, STRAGGLER_MIN_SHARE): a synthesized straggler late by the same
 * 2.53 ms in every iteration is no change. At most SIZE_SPLITS splits,
 * evenly spaced (each one's medians sort its sides). *split: its first
 * iteration after, 0 where none. Returns the chance of so large a change
 * among nh members, the best of the splits tried (STRAGGLER_SCAN_TRIES).
 * v, w: n_iter and 2 n_iter scratch.
 */
#define SIZE_SPLITS 64

static double size_change(const double *late, size_t ni, size_t a, double floor, size_t nh,
			  size_t *split, double *v, double *w)
{
	size_t n = 0, splits = 0, stride;
	double *at = w + ni, noise, best = -INFINITY, least = INFINITY;

	*split = 0;
	for (size_t it = 0; it < ni; it++)
		if (!isnan(late[a * ni + it])) {
			at[n] = (double)it;
			v[n++] = late[a * ni + it];
		}
	if (n < 2 * STRAGGLER_MIN_BASELINE)
		return 1;
	for (size_t k = 1; k < n; k++)
		w[k - 1] = fabs(v[k] - v[k - 1]);
	noise = fmax(floor, 1.4826 * anom_median(w, n - 1) / M_SQRT2);
	stride = (n + SIZE_SPLITS - 1) / SIZE_SPLITS;
	for (size_t k = STRAGGLER_MIN_BASELINE; k + STRAGGLER_MIN_BASELINE <= n; k += stride) {
		double before, after, cost = 0;

		memcpy(w, v, k * sizeof(*w));
		before = anom_median(w, k);
		memcpy(w, v + k, (n - k) * sizeof(*w));
		after = anom_median(w, n - k);
		for (size_t i = 0; i < n; i++)
			cost += fabs(v[i] - (i < k ? before : after));
		splits++;
		if (cost < least) {
			least = cost;
			best = (after - before) /
			       (1.2533 * noise * sqrt(1.0 / (double)k + 1.0 / (double)(n - k)));
			*split = (size_t)at[k];
		}
	}
	if (!splits)
		return 1;
	return fmin(1, fmax(1, (double)splits / STRAGGLER_SCAN_TRIES) * by_chance(best, nh));
}

/* Iteration it of a finding, its lateness and when the member entered there. */
static int late_at(const struct anom_ctx *c, struct ct_anomaly *an, size_t *seen, size_t it,
		   double lateness, uint64_t at_ns)
{
	int err = anom_seen_in(c, an, seen, c->n_iter, it, lateness);

	if (!err)
		an->iters[*seen - 1].at_ns = at_ns;
	return err;
}

/* A finding's figure: the median of its iterations' values (scratch: seen of them). */
static void finding_value(const struct anom_ctx *c, struct ct_anomaly *an, size_t seen,
			  double *scratch)
{
	for (size_t k = 0; k < seen; k++)
		scratch[k] = an->iters[k].value;
	an->value = anom_median(scratch, seen);
	an->share = an->value / c->period_s;
}

/*
 * A finding late in STRAGGLER_FRESH iterations or fewer and not judged in
 * every one since its onset stays below an alarm (STRAGGLER_FRESH):
 * returns whether its confidence was so held.
 */
static int held_fresh(struct ct_anomaly *an, size_t seen, size_t dated, size_t ni)
{
	if (seen > STRAGGLER_FRESH || an->confidence <= STRAGGLER_FRESH_CONFIDENCE ||
	    dated + 1 >= ni - (size_t)an->onset)
		return 0;
	an->confidence = STRAGGLER_FRESH_CONFIDENCE;
	return 1;
}

/*
 * The finding an, its chance `chance`, says more than the member's best so
 * far: surer; or, both an alarm, seen in more iterations. Where either
 * pages, the one that shows more of the straggler says since when and how
 * late: a step where its lateness shows only now and then can read it
 * steady over its last iterations and surer than the step it shows in
 * every iteration from its onset (ddp8-straggler-100 in its third
 * recording: at 1.00 from iteration 15 over 3, where the first step has it
 * at 0.7 from iteration 6 over 12).
 */
static int surer(const struct ct_anomaly *an, double chance, const struct ct_anomaly *best,
		 double best_chance)
{
	if (an->confidence >= CT_ANOMALY_ALARM && best->confidence >= CT_ANOMALY_ALARM &&
	    an->seen != best->seen)
		return an->seen > best->seen;
	return an->confidence > best->confidence ||
	       (an->confidence == best->confidence && chance < best_chance);
}

/* The finding an, its chance `chance`, kept as the member's best where it says more (surer). */
static void keep_surer(struct ct_anomaly *an, double chance, struct ct_anomaly *best,
		       double *best_chance)
{
	if (!surer(an, chance, best, *best_chance)) {
		free(an->iters);
		return;
	}
	free(best->iters);
	*best = *an;
	*best_chance = chance;
}

/*
 * A member not in within half a period of its step's start: its entry up
 * to half a period after the last of the others to enter (still before
 * the step's next start). The others' own spread (their entries 20-38 ms
 * apart on a loaded machine) put a rank 23 ms late beyond half a period
 * from the first to enter in 7 of its 13 late iterations (the
 * ddp-straggler of set C), and it was not judged there. first: the
 * entries found (UINT64_MAX: none); until: nh * n_iter scratch.
 */
static void late_entries(const struct anom_ctx *c, int cls, const struct anom_hosts *h,
			 const size_t *m, size_t nh, const uint64_t *gate, const uint64_t *after,
			 uint64_t half, uint64_t *first, double *until, struct ct_burst *bursts)
{
	size_t ni = c->n_iter;

	/* every member's window from the others' entries as first found */
	for (size_t a = 0; a < nh; a++)
		for (size_t it = 0; it < ni; it++) {
			uint64_t last = 0;

			until[a * ni + it] = 0;
			if (gate[it] == UINT64_MAX || first[a * ni + it] != UINT64_MAX)
				continue;
			for (size_t o = 0; o < nh; o++)
				if (o != a && first[o * ni + it] != UINT64_MAX &&
				    first[o * ni + it] > last)
					last = first[o * ni + it];
			if (last > gate[it])
				until[a * ni + it] = (double)(last + half);
		}
	for (size_t a = 0; a < nh; a++) {
		const double *u = until + a * ni;
		uint64_t *e = first + a * ni;
		size_t nb, open = 0;

		for (size_t it = 0; it < ni; it++)
			open += u[it] > 0;
		if (!open)
			continue;
		nb = host_sends(c, cls, &h->a[m[a]], bursts);
		for (size_t b = 0; b < nb; b++) {
			uint64_t t = bursts[b].start;

			for (size_t it = 0; it < ni; it++)
				if (u[it] > 0 && t > after[it] && (double)t < u[it] && t < e[it] &&
				    (it + 1 == ni || t < gate[it + 1]))
					e[it] = t;
		}
	}
}

/*
 * One step of a collective (its start gate[it], entries looked for after
 * after[it], step of n_steps): each member's entry and lateness, and the
 * member's finding there where it is one and surer than best[a] (kept in
 * best; confidence -1: none yet). first, late: nh * n_iter + 1 scratch,
 * tmp that, nh and 2 n_iter more; bursts: room for the bursts of every flow.
 */
static int judge_step(struct anom_ctx *c, int cls, const struct anom_hosts *h, const size_t *m,
		      size_t nh, const uint64_t *gate, const uint64_t *after, size_t step,
		      size_t n_steps, uint64_t *first, double *late, double *tmp,
		      struct ct_burst *bursts, struct ct_anomaly *best, double *best_chance)
{
	size_t ni = c->n_iter, n_late = 0, nb;
	uint64_t half = (uint64_t)(c->period_s * 0.5e9);
	double spread, threshold, floor;
	int err = 0;

	/*
	 * Each member's entry: its first send since the previous step, up to
	 * half a period on and before the step's next start: a send is one
	 * iteration's entry (moe-straggler-r0 read one send as its entry in
	 * its last two iterations, ddp-slowlink in two of its first).
	 */
	for (size_t a = 0; a < nh; a++) {
		uint64_t *e = first + a * ni;

		nb = host_sends(c, cls, &h->a[m[a]], bursts);
		for (size_t it = 0; it < ni; it++)
			e[it] = UINT64_MAX;
		for (size_t b = 0; b < nb; b++) {
			uint64_t t = bursts[b].start;

			for (size_t it = 0; it < ni; it++)
				if (gate[it] != UINT64_MAX && (t > after[it] || t == gate[it]) &&
				    t < gate[it] + half && t < e[it] &&
				    (it + 1 == ni || t < gate[it + 1]))
					e[it] = t;
		}
	}
	late_entries(c, cls, h, m, nh, gate, after, half, first, tmp, bursts);
	/* lateness: a host's entry against the median of the others' */
	for (size_t it = 0; it < ni; it++)
		for (size_t a = 0; a < nh; a++) {
			size_t k = 0;

			late[a * ni + it] = NAN;
			if (first[a * ni + it] == UINT64_MAX)
				continue;
			for (size_t o = 0; o < nh; o++)
				if (o != a && first[o * ni + it] != UINT64_MAX)
					tmp[k++] = (double)first[o * ni + it];
			if (k + 1 < STRAGGLER_MIN_HOSTS)
				continue;
			late[a * ni + it] =
				((double)first[a * ni + it] - anom_median(tmp, k)) / 1e9;
		}
	/*
	 * The spread: each entry against the median of all the iteration's
	 * (itself counted), so that one late host of three moves no other's
	 * figure (against the others' median each on-time host of three
	 * would read half its delay early).
	 */
	for (size_t it = 0; it < ni; it++) {
		double *all = tmp + nh * ni + 1, mid; /* nh more */
		size_t k = 0;

		for (size_t a = 0; a < nh; a++)
			if (!isnan(late[a * ni + it]))
				all[k++] = (double)first[a * ni + it];
		if (!k)
			continue;
		mid = anom_median(all, k);
		for (size_t a = 0; a < nh; a++)
			if (!isnan(late[a * ni + it]))
				tmp[n_late++] = fabs((double)first[a * ni + it] - mid) / 1e9;
	}
	if (!n_late)
		return 0;
	spread = 1.4826 * anom_median(tmp, n_late);
	floor = STRAGGLER_MIN_SHARE * c->period_s;
	threshold = fmax(STRAGGLER_SPREADS * spread, floor);
	/* the report's figure: the noisiest collective's (its first step's) */
	if (!step && spread > c->out->straggler_jitter_s) {
		c->out->straggler_jitter_s = spread;
		c->out->straggler_threshold_s = threshold;
	}
	for (size_t a = 0; a < nh && !err; a++) {
		struct ct_anomaly an = {.kind = CT_ANOMALY_STRAGGLER,
					.scope = CT_ANOMALY_AT_HOST,
					.priority = -1,
					.cls = -1,
					.host = h->a[m[a]],
					.onset = -1};
		double *u = tmp + nh * ni + 1 + nh, *sized = u + ni; /* ni more each */
		double order, change, by_spread;
		int fresh;
		size_t seen = 0, above = 0, of, dated, split, from, told;
		/* iterations late beyond the threshold since its first late one, judged since */
		size_t steady = 0, since = SIZE_MAX, since_of;

		/*
		 * a change in its place in the order: late from then on; else
		 * since the start. Each step judged is one more chance.
		 */
		order_ranks(first, late, nh, ni, a, u);
		change = fmin(1, (double)n_steps * order_change(u, ni, nh, &split));
		told = change <= STRAGGLER_MAX_CHANCE ? split : 0;
		/* no change in its place: in its size? */
		if (change > STRAGGLER_DATE_CHANCE &&
		    (double)n_steps * size_change(late, ni, a, floor, nh, &split, sized, tmp) >
			    STRAGGLER_DATE_CHANCE)
			split = 0;
		for (size_t it = told; it < ni && !err; it++) {
			double l = late[a * ni + it];

			if (!late_in(late, nh, ni, a, it, floor))
				continue;
			if (since == SIZE_MAX)
				since = it;
			steady += l > threshold;
			if (it < split)
				continue;
			above += l > threshold;
			err = late_at(c, &an, &seen, it, l, first[a * ni + it]);
		}
		if (err || seen < STRAGGLER_MIN_ITERATIONS) {
			free(an.iters);
			continue;
		}
		/*
		 * Its order since the change where the change is told from
		 * chance, else over the whole capture (the split, the best of
		 * several, would flatter it); the change's split still dates it.
		 */
		from = change <= STRAGGLER_MAX_CHANCE ? (size_t)an.onset : 0;
		order = fmin(1, (double)n_steps *
					by_chance(sum_of(u, from, ni, &of) / sqrt((double)of), nh));
		if (above < STRAGGLER_MIN_ITERATIONS && order > STRAGGLER_MAX_CHANCE) {
			free(an.iters);
			continue;
		}
		an.seen = (unsigned)seen;
		sum_of(u, (size_t)an.onset, ni, &dated);
		an.of = (unsigned)dated;
		finding_value(c, &an, seen, tmp);
		/*
		 * How steadily it is late beyond the job's spread (the
		 * iterations since the start where the change is not told from
		 * chance) and how far; or how far from chance its place in the
		 * order is and its change (a member last from the capture's
		 * start may be the job's own make: low). A member late beyond
		 * the spread in every iteration since it was first late, and
		 * in STRAGGLER_STEADY or more, is steady from there: so it
		 * pages while a window still holds more of its iterations
		 * before the onset than after.
		 */
		sum_of(u, since, ni, &since_of);
		by_spread =
			steady == since_of && steady >= STRAGGLER_STEADY ? 1 : (double)above / of;
		by_spread *= fmin(1, fmax(0, an.value / threshold - 1));
		an.confidence = fmax(by_spread,
				     fmin(1, -log10(fmax(order, change)) / STRAGGLER_SURE_LOG10));
		fresh = held_fresh(&an, seen, dated, ni);
		snprintf(an.evidence, sizeof(an.evidence),
			 "it enters the collectives a median %.3g ms (%.1f%% of the %.3g ms "
			 "iteration) after the other %zu hosts of its %s collective (step %zu of "
			 "%zu), last in %zu of %u iterations from iteration %ld (by chance: %.2g; "
			 "a change there: %.2g); the step's spread is %.3g ms, flagged from %.3g "
			 "ms",
			 an.value * 1e3, an.share * 100, c->period_s * 1e3, nh - 1,
			 ct_class_name(cls), step + 1, n_steps, seen, an.of, an.onset, order,
			 change, spread * 1e3, threshold * 1e3);
		if (fresh)
			snprintf(
				an.evidence + strlen(an.evidence),
				sizeof(an.evidence) - strlen(an.evidence),
				"; late in %zu iterations, judged in %u of the %zu since: below an "
				"alarm until one more",
				seen, an.of, ni - (size_t)an.onset);
		keep_surer(&an, fmax(order, change), &best[a], &best_chance[a]);
	}
	return err;
}

/*
 * The bytes step k of iteration it carries: its members' sends from its
 * start to the next step, of the iteration or the next one (or half a
 * period on; 0: no such step). b: the collective's n sends, sorted by start.
 */
static uint64_t step_bytes(const struct anom_ctx *c, const struct ct_burst *b, size_t n,
			   const uint64_t *gate, size_t n_steps, size_t k, size_t it)
{
	size_t ni = c->n_iter, lo = 0, hi = n;
	uint64_t from = gate[k * ni + it], to, bytes = 0;

	if (from == UINT64_MAX)
		return 0;
	to = from + (uint64_t)(c->period_s * 0.5e9);
	for (size_t j = 0; j < n_steps; j++) /* its next step, or the next iteration's first */
		for (size_t t = it; t <= it + 1 && t < ni; t++)
			if (gate[j * ni + t] > from && gate[j * ni + t] < to)
				to = gate[j * ni + t];
	while (lo < hi) { /* the first send from the step's start */
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].start < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && b[i].start < to; i++)
		bytes += b[i].bytes;
	return bytes;
}

/* Iteration it holds a held wait (held_waits): one member ended one there. */
static int held_in(const double *held, size_t nh, size_t ni, size_t it)
{
	for (size_t a = 0; a < nh; a++)
		if (held[a * ni + it] > 0)
			return 1;
	return 0;
}

/*
 * Whom send x, that ended a wait of gap, answers (lead, its sender: none):
 * where its receiver said it was in during the silence, on the way back
 * (a message on the reverse flow, which carries no data and is none of
 * the collective's sends) a round trip or more before x
 * (STRAGGLER_ANSWER_NS), x is the data that waited for that message, and
 * the wait was for its receiver. A gloo ring's receiver asks for its
 * data on the way back (ddp8-straggler-r7 of set T: its late rank 7's
 * message to rank 0, and rank 0's data to it 0.05 ms after, ended the
 * wait in 5 of its 7 late iterations, and rank 0 was named at 0.80).
 * The receiver's member: the member sending on one of b's flows from its
 * address.
 */
static size_t answered(const struct anom_ctx *c, const struct ct_burst *b, size_t n,
		       const size_t *member, const struct ct_burst *x, uint64_t gap, size_t lead)
{
	const struct ct_flow_summary *f = &c->set->flows[x->flow];
	const struct ct_flow_periodicity *back;
	int asked = 0;

	if (f->reverse < 0 || !c->per || (size_t)f->reverse >= c->per->n_flows)
		return lead;
	back = &c->per->flows[f->reverse];
	for (size_t i = 0; i < back->n_bursts && !asked; i++)
		asked = anom_carries_message(&back->bursts[i]) &&
			back->bursts[i].start + gap >= x->start &&
			back->bursts[i].start + STRAGGLER_ANSWER_NS <= x->start;
	for (size_t i = 0; i < n && asked; i++)
		if (!memcmp(&c->set->flows[b[i].flow].key.src, &f->key.dst, sizeof(f->key.dst)))
			return member[b[i].flow];
	return lead;
}

/*
 * The collective's held waits: a wait of every member (runs apart by more
 * than STRAGGLER_STEP_JOIN of the period, as a step's start) that begins a
 * step every member sends in (its runs apart by that or less), each
 * member's first send there data, none of them saying first that it is
 * in. Each member's data waited for another's part, so the member whose
 * send ends the wait, alone, is the one waited for. Its lateness there:
 * its send against the median of the others' entries, each one's first
 * send since the last step every member sent in and within a period (as
 * a step's entries, judge_step), or the wait's start where it sent none
 * (its entry unseen, queued behind that step: gloo's second bucket).
 * held[a * n_iter + it]: member a's largest such lateness in iteration
 * it, in seconds (0: none), at[a * n_iter + it] that send's start. b: the
 * collective's n sends, sorted by start; seen: nh scratch; entry: nh
 * more. Returns the iterations with one.
 */
static size_t held_waits(const struct anom_ctx *c, const struct ct_burst *b, size_t n,
			 const size_t *member, size_t nh, double *held, uint64_t *at, char *seen,
			 double *entry)
{
	uint64_t join = (uint64_t)(c->period_s * STRAGGLER_STEP_JOIN * 1e9), end = 0, all_end = 0,
		 period = (uint64_t)(c->period_s * 1e9);
	size_t ni = c->n_iter, it = 0, with = 0;

	for (size_t k = 0; k < nh * ni; k++)
		held[k] = 0;
	for (size_t i = 0; i < n;) {
		uint64_t s = b[i].start, gap = i ? s - end : 0, since = all_end;
		size_t lead = member[b[i].flow], senders = 0, first = i, k = 0;
		int data = 1;

		/* the step the wait ends: its runs, apart by a join or less */
		memset(seen, 0, nh);
		do {
			for (end = b[i].end; i < n && b[i].start <= end; i++) {
				size_t who = member[b[i].flow];

				if (!seen[who]) { /* each member's first send: data */
					seen[who] = 1;
					senders++;
					data &= !says_in(&b[i]);
				}
				if (b[i].end > end)
					end = b[i].end;
			}
		} while (i < n && b[i].start - end <= join);
		if (senders == nh)
			all_end = end;
		/* not a held wait; or two members ending it at once: neither told */
		if (!first || gap <= join || senders < nh || !data ||
		    (first + 1 < n && b[first + 1].start == s &&
		     member[b[first + 1].flow] != lead) ||
		    s < c->bounds[0] || s >= c->bounds[ni])
			continue;
		while (it + 1 < ni && c->bounds[it + 1] <= s)
			it++;
		lead = answered(c, b, n, member, &b[first], gap, lead);
		/* the others' entries: first sends since the last step every member sent in */
		for (size_t a = 0; a < nh; a++)
			entry[a] = (double)gap / 1e9;
		for (size_t j = first; j-- && b[j].start >= since && b[j].start + period > s;)
			if (member[b[j].flow] != lead)
				entry[member[b[j].flow]] = (double)(s - b[j].start) / 1e9;
		for (size_t a = 0; a < nh; a++)
			if (a != lead)
				entry[k++] = entry[a];
		entry[0] = anom_median(entry, k);
		if (entry[0] > held[lead * ni + it]) {
			held[lead * ni + it] = entry[0];
			at[lead * ni + it] = s;
		}
	}
	for (size_t k = 0; k < ni; k++)
		with += held_in(held, nh, ni, k);
	return with;
}

/*
 * Each member found waited for in the collective's held waits, against
 * chance: in an iteration with a held wait, a member ends one with chance
 * 1/nh where none holds the collective up (its standardised place there:
 * the indicator against that); in one without, no member held it up (an
 * even place, 0). The same tests as the entries' order (order_change,
 * by_chance), one more family of tests: the chances are multiplied by the
 * steps judged and one. A member that holds it up from the capture's
 * start may be the job's own make, as in the entries' order: low. gate:
 * the collective's first step each iteration (where it ran); at: when
 * each held wait ended (held_waits); u: n_iter scratch, vals: n_iter more.
 */
static int judge_waits(struct anom_ctx *c, int cls, const struct anom_hosts *h, const size_t *m,
		       size_t nh, const uint64_t *gate, const double *held, const uint64_t *at,
		       size_t n_steps, double *u, double *vals, struct ct_anomaly *best,
		       double *best_chance)
{
	size_t ni = c->n_iter;
	double p = 1.0 / (double)nh, sd = sqrt(p * (1 - p)), tries = (double)n_steps + 1;
	int err = 0;

	for (size_t a = 0; a < nh && !err; a++) {
		struct ct_anomaly an = {.kind = CT_ANOMALY_STRAGGLER,
					.scope = CT_ANOMALY_AT_HOST,
					.priority = -1,
					.cls = -1,
					.host = h->a[m[a]],
					.onset = -1};
		size_t seen = 0, split, of, dated, from;
		double order, change;

		for (size_t it = 0; it < ni; it++) {
			u[it] = held_in(held, nh, ni, it) ? ((held[a * ni + it] > 0) - p) / sd : 0;
			if (gate[it] == UINT64_MAX)
				u[it] = NAN;
		}
		change = fmin(1, tries * order_change(u, ni, nh, &split));
		if (change > STRAGGLER_DATE_CHANCE)
			split = 0;
		for (size_t it = split; it < ni && !err; it++)
			if (held[a * ni + it] > 0)
				err = late_at(c, &an, &seen, it, held[a * ni + it],
					      at[a * ni + it]);
		if (err || seen < STRAGGLER_MIN_ITERATIONS) {
			free(an.iters);
			continue;
		}
		from = change <= STRAGGLER_MAX_CHANCE ? (size_t)an.onset : 0;
		order = fmin(1, tries * by_chance(sum_of(u, from, ni, &of) / sqrt((double)of), nh));
		if (order > STRAGGLER_MAX_CHANCE) {
			free(an.iters);
			continue;
		}
		an.seen = (unsigned)seen;
		sum_of(u, (size_t)an.onset, ni, &dated);
		an.of = (unsigned)dated;
		finding_value(c, &an, seen, vals);
		an.confidence = fmin(1, -log10(fmax(order, change)) / STRAGGLER_SURE_LOG10);
		held_fresh(&an, seen, dated, ni);
		snprintf(an.evidence, sizeof(an.evidence),
			 "its %s collective waited for it: in %zu of %u iterations from iteration "
			 "%ld every other member sent its part and fell silent until its data "
			 "came first, a median %.3g ms (%.1f%% of the %.3g ms iteration) after "
			 "the others had entered (by chance: %.2g; a change there: %.2g)",
			 ct_class_name(cls), seen, an.of, an.onset, an.value * 1e3, an.share * 100,
			 c->period_s * 1e3, order, change);
		keep_surer(&an, fmax(order, change), &best[a], &best_chance[a]);
	}
	return err;
}

/* An iteration's steps carry the usual bytes of the exchange (NAN: no step). */
static int carries(double bytes, double usual)
{
	return fabs(bytes - usual) <= STRAGGLER_PIECES * usual;
}

/*
 * Steps matched by what they are, not by their place. Step k is the k-th
 * step after the iteration's longest wait; where that wait falls before
 * another exchange than usual (the loaded machine's MoE iterations run 114
 * to 212 ms), the places shift and step k is another exchange there than in the other
 * iterations: moe-straggler-r0's late rank, last in its step in 9 of 13
 * iterations by place. The heaviest step (the backward pass's gradients,
 * twice the bytes of a forward exchange) anchors each iteration: its steps
 * are renumbered so that it sits at its usual place (the place it holds
 * in most iterations), round the iteration's cycle of steps: those before
 * it are the iteration's first ones, after the wait that was longest there.
 * An iteration with one step (the capture's last, cut short) has no anchor
 * and keeps its places.
 *
 * Nor do steps that are pieces of one exchange: where iterations carry
 * the collective's usual bytes (the median of its iterations') in one step
 * in some (two or more) and in several in others, a pause inside the
 * exchange parted it there (gloo's ring of 8 on two loaded cores: its
 * ranks reduce in turns, and one sends a ready message after 2-4 ms of
 * silence). Which part is the heavier moves with where the pause falls, and
 * renumbered by it the part holding the members' entries went to the second
 * place in 5 of 18 iterations (ddp8-straggler-h1: its late rank, last in 9
 * of 11 iterations by the ranks' clocks, read at 0.00 or not at all). The
 * pieces are joined into the first step; the places still seen in half the
 * iterations or more are the steps (*n_steps). gate, after: renumbered in
 * place; at: n_iter scratch; whole: 2 n_iter.
 */
static void match_steps(const struct anom_ctx *c, const struct ct_burst *b, size_t n,
			uint64_t *gate, uint64_t *after, size_t *n_steps, size_t *at, double *whole)
{
	size_t ni = c->n_iter, votes[STRAGGLER_MAX_STEPS] = {0}, usual = 0, n_whole = 0, lone = 0;
	size_t steps = *n_steps;
	double usual_bytes;

	if (steps < 2)
		return;
	for (size_t it = 0; it < ni; it++) {
		uint64_t most = 0, all = 0;
		size_t found = 0;

		at[it] = SIZE_MAX;
		for (size_t k = 0; k < steps; k++) {
			uint64_t bytes = step_bytes(c, b, n, gate, steps, k, it);

			found += gate[k * ni + it] != UINT64_MAX;
			all += bytes;
			if (bytes > most) {
				most = bytes;
				at[it] = k;
			}
		}
		whole[it] = found ? (double)all : NAN;
		if (found && it + 1 < ni) /* the capture's last may be cut short */
			whole[ni + n_whole++] = (double)all;
		if (found < 2) /* one step alone is its own heaviest: no anchor */
			at[it] = SIZE_MAX;
	}
	if (!n_whole)
		return;
	usual_bytes = anom_median(whole + ni, n_whole);
	for (size_t it = 0; it + 1 < ni; it++)
		lone += at[it] == SIZE_MAX && carries(whole[it], usual_bytes);
	/* pieces of one exchange: joined into the first step, no anchor */
	for (size_t it = 0; it < ni && lone >= STRAGGLER_MIN_ITERATIONS; it++) {
		if (!carries(whole[it], usual_bytes))
			continue;
		at[it] = SIZE_MAX;
		for (size_t k = 1; k < steps; k++)
			gate[k * ni + it] = after[k * ni + it] = UINT64_MAX;
	}
	/* the places still seen in half the iterations or more */
	for (*n_steps = 1; *n_steps < steps; (*n_steps)++) {
		size_t seen = 0;

		for (size_t it = 0; it < ni; it++)
			seen += gate[*n_steps * ni + it] != UINT64_MAX;
		if (2 * seen < ni)
			break;
	}
	steps = *n_steps;
	if (steps < 2)
		return;
	for (size_t it = 0; it < ni; it++)
		if (at[it] < steps)
			votes[at[it]]++;
	for (size_t k = 1; k < steps; k++)
		if (votes[k] > votes[usual])
			usual = k;
	for (size_t it = 0; it < ni; it++) {
		uint64_t g[STRAGGLER_MAX_STEPS], a[STRAGGLER_MAX_STEPS];
		size_t shift = at[it] >= steps ? 0 : (usual + steps - at[it]) % steps;

		if (!shift)
			continue;
		for (size_t k = 0; k < steps; k++) {
			g[(k + shift) % steps] = gate[k * ni + it];
			a[(k + shift) % steps] = after[k * ni + it];
		}
		for (size_t k = 0; k < steps; k++) {
			gate[k * ni + it] = g[k];
			after[k * ni + it] = a[k];
		}
	}
}

/*
 * One collective: the nh hosts h->a[m[...]] joined by flows of class cls,
 * each of its steps judged, each member's surest finding kept. first,
 * late: nh * n_iter + 1 scratch, tmp that, nh and 2 n_iter more; bursts:
 * room for the bursts of every flow; longest: n_iter.
 */
static int group(struct anom_ctx *c, int cls, const struct anom_hosts *h, const size_t *m,
		 size_t nh, uint64_t *first, double *late, double *tmp, struct ct_burst *bursts,
		 uint64_t *longest)
{
	size_t ni = c->n_iter, nb = 0, n_steps = 0, steps_ni = STRAGGLER_MAX_STEPS * ni;
	uint64_t *gate = malloc(2 * (steps_ni + 1) * sizeof(*gate)), *after = gate + steps_ni + 1;
	size_t *member = malloc((c->set->count + 1) * sizeof(*member));
	struct ct_anomaly *best = calloc(nh, sizeof(*best));
	double *best_chance = calloc(nh, sizeof(*best_chance));
	char *seen_by = malloc(nh + 1);
	size_t *anchor = malloc((ni + 1) * sizeof(*anchor));
	int err = 0;

	if (!gate || !member || !seen_by || !best || !best_chance || !anchor) {
		err = -ENOMEM;
		goto out;
	}
	/* the collective's start each iteration: its members' first send after their common wait */
	for (size_t a = 0; a < nh; a++) {
		size_t from = nb;

		nb += host_sends(c, cls, &h->a[m[a]], bursts + nb);
		for (size_t k = from; k < nb; k++)
			member[bursts[k].flow] = a;
	}
	starts(c, bursts, nb, member, nh, gate, after, longest, seen_by, &n_steps);
	match_steps(c, bursts, nb, gate, after, &n_steps, anchor, tmp);
	for (size_t a = 0; a < nh; a++) {
		best[a].confidence = -1;
		best_chance[a] = 2;
	}
	/* its held waits first: the steps' entries reuse bursts, late and first */
	if (held_waits(c, bursts, nb, member, nh, late, first, seen_by, tmp) >=
	    STRAGGLER_MIN_ITERATIONS)
		err = judge_waits(c, cls, h, m, nh, gate, late, first, n_steps, tmp, tmp + ni, best,
				  best_chance);
	for (size_t k = 0; k < n_steps && !err; k++)
		err = judge_step(c, cls, h, m, nh, gate + k * ni, after + k * ni, k, n_steps, first,
				 late, tmp, bursts, best, best_chance);
	for (size_t a = 0; a < nh; a++) {
		if (err || best[a].confidence < 0 || reported(c, &h->a[m[a]], best[a].confidence)) {
			free(best[a].iters);
			continue;
		}
		err = anom_add(c, &best[a]);
	}
out:
	free(gate);
	free(member);
	free(seen_by);
	free(anchor);
	free(best);
	free(best_chance);
	return err;
}

int anom_straggler(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct anom_hosts h = {0};
	struct ct_burst *bursts = NULL;
	uint64_t *first = NULL, *longest = NULL;
	double *late = NULL, *tmp = NULL;
	size_t *parent = NULL, *m = NULL, nh, ni = c->n_iter, nb = 0, groups = 0;
	unsigned char *metered = NULL;
	int err = 0;

	if (!ni) {
		anom_not_looked(c, CT_ANOMALY_STRAGGLER, "no iteration period");
		return 0;
	}
	if (c->starting) {
		anom_not_looked(c, CT_ANOMALY_STRAGGLER,
				"the job is starting: the rendezvous's flows beat at its period "
				"(its ranks still poll the store)");
		return 0;
	}
	for (size_t f = 0; f < set->count && !err; f++) {
		/* room for every flow's bursts */
		nb += c->per ? c->per->flows[f].n_bursts : 0;
		if (anom_job_data_flow(c, f) && anom_collective_class(anom_class(c, f))) {
			err = anom_hosts_add(&h, &set->flows[f].key.src);
			err = err ?: anom_hosts_add(&h, &set->flows[f].key.dst);
		}
	}
	if (err)
		goto out;
	anom_hosts_done(&h);
	nh = h.n;
	parent = malloc((nh + 1) * sizeof(*parent));
	m = malloc((nh + 1) * sizeof(*m));
	first = malloc((nh * ni + 1) * sizeof(*first));
	late = malloc((nh * ni + 1) * sizeof(*late));
	tmp = malloc((nh * ni + 1 + nh + 2 * ni) * sizeof(*tmp));
	longest = malloc(ni * sizeof(*longest));
	bursts = malloc((nb + 1) * sizeof(*bursts));
	metered = malloc(set->count + 1);
	if (!parent || !m || !first || !late || !tmp || !longest || !bursts || !metered) {
		err = -ENOMEM;
		goto out;
	}
	err = anom_metered_flows(c, metered);
	if (err)
		goto out;
	c->metered = metered;
	/* per class, the collectives: hosts joined by its flows */
	for (int cls = 0; cls < CT_CLASS_COUNT && !err; cls++) {
		if (!anom_collective_class(cls))
			continue;
		for (size_t i = 0; i < nh; i++)
			parent[i] = i;
		for (size_t f = 0; f < set->count; f++)
			if (anom_job_data_flow(c, f) && anom_class(c, f) == cls)
				parent[anom_find_root(
					parent,
					(size_t)anom_hosts_find(&h, &set->flows[f].key.src))] =
					anom_find_root(parent, (size_t)anom_hosts_find(
								       &h, &set->flows[f].key.dst));
		for (size_t r = 0; r < nh && !err; r++) {
			size_t n = 0;

			if (anom_find_root(parent, r) != r)
				continue;
			for (size_t i = 0; i < nh; i++)
				if (anom_find_root(parent, i) == r)
					m[n++] = i;
			if (n < STRAGGLER_MIN_HOSTS)
				continue;
			groups++;
			err = group(c, cls, &h, m, n, first, late, tmp, bursts, longest);
		}
	}
	if (!err && !groups)
		anom_not_looked(
			c, CT_ANOMALY_STRAGGLER,
			"no collective joins three or more hosts: lateness has no reference");
out:
	c->metered = NULL;
	free(metered);
	free(parent);
	free(m);
	free(first);
	free(longest);
	free(bursts);
	free(late);
	free(tmp);
	anom_hosts_free(&h);
	return err;
}
