// SPDX-License-Identifier: MIT
/*
 * Straggler: the host whose sends in the job's collectives start last,
 * iteration after iteration, while the others start together (and wait for
 * it). The sends of collective data (DP, TP, EP, EmbTableSyn: collectives
 * every member enters at once; a pipeline's stages start one after another
 * by design and are left out) of a collective's members are joined into
 * busy spans; in each iteration the collective starts with the span after
 * their longest common wait (the compute before the step: the job's
 * iteration starts are found the same way, period.c), looked for within
 * half a period of the iteration's start. A member's entry is its first
 * send from then on (within half a period): a late member's comes later,
 * while the others, having sent, wait inside the collective for it. Its
 * lateness is its entry against the median of the other members'. The job's own spread
 * of lateness (1.4826 x the median absolute lateness, robust to one late
 * host among three or more) is the noise floor; a host is late in an
 * iteration when it is the latest and beyond the threshold, and a straggler
 * when that holds in STRAGGLER_MIN_ITERATIONS iterations.
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
/* "Iteration after iteration": one late iteration is a hiccup, not a straggler. */
#define STRAGGLER_MIN_ITERATIONS 2

static int start_cmp(const void *a, const void *b)
{
	const struct ct_burst *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * One host's entry into each iteration (UINT64_MAX: none): over its bursts
 * b (sorted here), the start of the busy span after the longest wait
 * within half a period of the iteration's start. longest: n_iter scratch.
 */
static void entries(const struct anom_ctx *c, struct ct_burst *b, size_t n, uint64_t *entry,
		    uint64_t *longest)
{
	uint64_t half = (uint64_t)(c->period_s * 0.5e9), end = 0;
	size_t it = 0;

	qsort(b, n, sizeof(*b), start_cmp);
	for (size_t k = 0; k < c->n_iter; k++) {
		entry[k] = UINT64_MAX;
		longest[k] = 0;
	}
	for (size_t i = 0; i < n;) {
		uint64_t s = b[i].start, gap = i ? s - end : UINT64_MAX;

		for (end = b[i].end, i++; i < n && b[i].start <= end; i++)
			if (b[i].end > end)
				end = b[i].end;
		/* spans come by start: the iteration whose start is nearest */
		while (it + 1 < c->n_iter && c->bounds[it + 1] <= s + half)
			it++;
		if (s + half < c->bounds[it] || s >= c->bounds[it] + half)
			continue;
		if (entry[it] == UINT64_MAX || gap > longest[it]) {
			longest[it] = gap;
			entry[it] = s;
		}
	}
}

static int collective(int cls)
{
	return cls == CT_CLASS_DP || cls == CT_CLASS_TP || cls == CT_CLASS_EP ||
	       cls == CT_CLASS_EMB;
}

/* A host already found straggling in another collective is said once. */
static int reported(const struct anom_ctx *c, const struct ct_addr *host)
{
	for (size_t i = 0; i < c->out->n; i++)
		if (c->out->list[i].kind == CT_ANOMALY_STRAGGLER &&
		    !memcmp(&c->out->list[i].host, host, sizeof(*host)))
			return 1;
	return 0;
}

static int sender_in(const struct anom_ctx *c, size_t f, int cls, const struct ct_addr *host)
{
	return anom_job_data_flow(c, f) && anom_class(c, f) == cls &&
	       !memcmp(&c->set->flows[f].key.src, host, sizeof(*host));
}

/*
 * One collective: the nh hosts h->a[m[...]] joined by flows of class cls.
 * first, late: nh * n_iter + 1 scratch, tmp that and nh more; bursts: room for the bursts
 * of every flow; longest: n_iter.
 */
static int group(struct anom_ctx *c, int cls, const struct anom_hosts *h, const size_t *m,
		 size_t nh, uint64_t *first, double *late, double *tmp, struct ct_burst *bursts,
		 uint64_t *longest)
{
	const struct ct_flow_set *set = c->set;
	size_t ni = c->n_iter, n_late = 0;
	double spread, threshold;
	int err = 0;

	uint64_t *gate = malloc((ni + 1) * sizeof(*gate)), half = (uint64_t)(c->period_s * 0.5e9);
	size_t nb = 0;

	if (!gate)
		return -ENOMEM;
	/* the collective's start each iteration: its members' first send after their common wait */
	for (size_t a = 0; a < nh; a++)
		for (size_t f = 0; f < set->count; f++) {
			const struct ct_flow_periodicity *fp = &c->per->flows[f];

			if (!sender_in(c, f, cls, &h->a[m[a]]))
				continue;
			memcpy(bursts + nb, fp->bursts, fp->n_bursts * sizeof(*bursts));
			nb += fp->n_bursts;
		}
	entries(c, bursts, nb, gate, longest);
	/* each member's entry: its first send from then on */
	for (size_t a = 0; a < nh; a++) {
		uint64_t *e = first + a * ni;

		for (size_t it = 0; it < ni; it++)
			e[it] = UINT64_MAX;
		for (size_t f = 0; f < set->count; f++) {
			const struct ct_flow_periodicity *fp = &c->per->flows[f];

			if (!sender_in(c, f, cls, &h->a[m[a]]))
				continue;
			for (size_t b = 0; b < fp->n_bursts; b++) {
				uint64_t t = fp->bursts[b].start;

				for (size_t it = 0; it < ni; it++)
					if (gate[it] != UINT64_MAX && t >= gate[it] &&
					    t < gate[it] + half && t < e[it])
						e[it] = t;
			}
		}
	}
	free(gate);
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
	threshold = fmax(STRAGGLER_SPREADS * spread, STRAGGLER_MIN_SHARE * c->period_s);
	/* the report's figure: the noisiest collective's */
	if (spread > c->out->straggler_jitter_s) {
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
		size_t seen = 0;

		for (size_t it = 0; it < ni; it++) {
			double l = late[a * ni + it];
			int latest = 1;

			if (isnan(l) || l <= threshold)
				continue;
			for (size_t o = 0; o < nh && latest; o++)
				latest =
					o == a || isnan(late[o * ni + it]) || late[o * ni + it] < l;
			if (!latest)
				continue;
			err = anom_seen_in(c, &an, &seen, ni, it, l);
			if (err)
				break;
		}
		if (err || seen < STRAGGLER_MIN_ITERATIONS || reported(c, &h->a[m[a]])) {
			free(an.iters);
			continue;
		}
		an.seen = (unsigned)seen;
		an.of = (unsigned)(ni - (size_t)an.onset);
		for (size_t k = 0; k < seen; k++)
			tmp[k] = an.iters[k].value;
		an.value = anom_median(tmp, seen);
		an.share = an.value / c->period_s;
		/* how steadily it is late since it began, and how far above the floor */
		an.confidence = (double)seen / an.of * fmin(1, an.value / threshold - 1);
		snprintf(
			an.evidence, sizeof(an.evidence),
			"it enters the collectives a median %.3g ms (%.1f%% of the "
			"%.3g ms iteration) after the other %zu hosts of its %s collective in %zu "
			"of %u iterations "
			"from iteration %ld; the job's own spread is %.3g ms, flagged from %.3g ms",
			an.value * 1e3, an.share * 100, c->period_s * 1e3, nh - 1,
			ct_class_name(cls), seen, an.of, an.onset, spread * 1e3, threshold * 1e3);
		err = anom_add(c, &an);
	}
	return err;
}

static size_t find_root(size_t *parent, size_t i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

int anom_straggler(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct anom_hosts h = {0};
	struct ct_burst *bursts = NULL;
	uint64_t *first = NULL, *longest = NULL;
	double *late = NULL, *tmp = NULL;
	size_t *parent = NULL, *m = NULL, nh, ni = c->n_iter, nb = 0, groups = 0;
	int err = 0;

	if (!ni) {
		anom_not_looked(c, CT_ANOMALY_STRAGGLER, "no iteration period");
		return 0;
	}
	for (size_t f = 0; f < set->count && !err; f++)
		if (anom_job_data_flow(c, f) && collective(anom_class(c, f))) {
			err = anom_hosts_add(&h, &set->flows[f].key.src);
			err = err ?: anom_hosts_add(&h, &set->flows[f].key.dst);
			nb += c->per->flows[f].n_bursts;
		}
	if (err)
		goto out;
	anom_hosts_done(&h);
	nh = h.n;
	parent = malloc((nh + 1) * sizeof(*parent));
	m = malloc((nh + 1) * sizeof(*m));
	first = malloc((nh * ni + 1) * sizeof(*first));
	late = malloc((nh * ni + 1) * sizeof(*late));
	tmp = malloc((nh * ni + 1 + nh) * sizeof(*tmp));
	longest = malloc(ni * sizeof(*longest));
	bursts = malloc((nb + 1) * sizeof(*bursts));
	if (!parent || !m || !first || !late || !tmp || !longest || !bursts) {
		err = -ENOMEM;
		goto out;
	}
	/* per class, the collectives: hosts joined by its flows */
	for (int cls = 0; cls < CT_CLASS_COUNT && !err; cls++) {
		if (!collective(cls))
			continue;
		for (size_t i = 0; i < nh; i++)
			parent[i] = i;
		for (size_t f = 0; f < set->count; f++)
			if (anom_job_data_flow(c, f) && anom_class(c, f) == cls)
				parent[find_root(parent, (size_t)anom_hosts_find(
								 &h, &set->flows[f].key.src))] =
					find_root(parent, (size_t)anom_hosts_find(
								  &h, &set->flows[f].key.dst));
		for (size_t r = 0; r < nh && !err; r++) {
			size_t n = 0;

			if (find_root(parent, r) != r)
				continue;
			for (size_t i = 0; i < nh; i++)
				if (find_root(parent, i) == r)
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
