// SPDX-License-Identifier: MIT
/*
 * Classification by a profile. A flow's addresses name two hosts of the
 * profile; the classes the profile sends from one to the other are the
 * candidates. Where there is one, it is the class. Where there are several
 * (DP and EP between the same two hosts), the flow's bursts are placed in
 * the iteration and matched against when each class's transfers run.
 *
 * The observed iteration starts where the capture's first quiet phase ends,
 * the profile's at the start of the forward pass: the offset between them is
 * found once, by sliding the job's observed byte phases over the predicted
 * ones (PHASE_BINS bins, circular).
 */
#include "classify_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PHASE_BINS	 256
#define PHASE_SLACK	 3    /* bins a burst may miss a transfer by (jitter, offset) */
#define LIKELIHOOD_FLOOR 1e-6 /* a phase no transfer of the class covers */
#define COUNT_WEIGHT	 2.0  /* log-likelihood per byte one e-fold of burst count is worth */

static int addr_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_addr));
}

struct ct_profile_host *ct_profile_hosts(const struct ct_class_expect *expect, unsigned *n)
{
	unsigned nics = expect->nic_addr ? expect->hosts * expect->nics_per_host : 0, w = 0;
	struct ct_profile_host *h = calloc(expect->hosts + nics + 1, sizeof(*h));

	if (!h)
		return NULL;
	for (unsigned k = 0; k < expect->hosts; k++)
		h[w++] = (struct ct_profile_host){expect->host_addr[k], k};
	/* rail-optimized hosts: every NIC's address is its host's */
	for (unsigned k = 0; k < nics; k++)
		h[w++] = (struct ct_profile_host){expect->nic_addr[k], k / expect->nics_per_host};
	qsort(h, w, sizeof(*h), addr_cmp);
	*n = 0;
	for (unsigned k = 0; k < w; k++) /* a host's address may also be its first NIC's */
		if (!*n || addr_cmp(&h[k], &h[*n - 1]))
			h[(*n)++] = h[k];
	return h;
}

long ct_profile_host_of(const struct ct_profile_host *h, unsigned n, const struct ct_addr *a)
{
	const struct ct_profile_host *e = bsearch(a, h, n, sizeof(*h), addr_cmp);

	return e ? (long)e->host : -1;
}

static int xfer_pair_cmp(const void *a, const void *b)
{
	const struct ct_expect_xfer *x = a, *y = b;

	if (x->src_host != y->src_host)
		return x->src_host < y->src_host ? -1 : 1;
	return (x->dst_host > y->dst_host) - (x->dst_host < y->dst_host);
}

static unsigned phase_bin(double phase)
{
	long b = (long)floor(phase * PHASE_BINS);

	return (unsigned)(((b % PHASE_BINS) + PHASE_BINS) % PHASE_BINS);
}

/* Add bytes spread over a transfer's phases. */
static void spread(double *hist, const struct ct_expect_xfer *x)
{
	unsigned first = phase_bin(x->phase_start);
	unsigned n = (unsigned)floor((x->phase_end - x->phase_start) * PHASE_BINS) + 1;

	if (n > PHASE_BINS)
		n = PHASE_BINS;
	for (unsigned k = 0; k < n; k++)
		hist[(first + k) % PHASE_BINS] += x->bytes / n;
}

/* Bins to add to an observed phase to land on the profile's schedule. */
static unsigned schedule_offset(const struct ct_periodicity *per,
				const struct ct_class_expect *expect)
{
	double obs[PHASE_BINS] = {0}, pred[PHASE_BINS] = {0}, best = -1;
	unsigned offset = 0;

	for (size_t i = 0; i < per->bursts; i++) {
		double ph = ct_period_phase(&per->job, per->by_flow[i].start);

		if (ph >= 0)
			obs[phase_bin(ph)] += (double)per->by_flow[i].bytes;
	}
	for (size_t i = 0; i < expect->n_xfers; i++)
		spread(pred, &expect->xfers[i]);
	for (unsigned d = 0; d < PHASE_BINS; d++) {
		double s = 0;

		for (unsigned b = 0; b < PHASE_BINS; b++)
			s += obs[b] * pred[(b + d) % PHASE_BINS];
		if (s > best) {
			best = s;
			offset = d;
		}
	}
	return offset;
}

/* Choose among the pair's classes by when the flow's bursts run. */
/* Transfers per iteration of class c between one pair of ranks of the host pair, on average. */
static double transfers_per_pair(const struct ct_expect_xfer *x, size_t nx, int c)
{
	size_t count = 0, pairs = 0;

	for (size_t i = 0; i < nx; i++) {
		int first = 1;

		if (x[i].cls != c)
			continue;
		count++;
		for (size_t j = 0; j < i && first; j++)
			first = !(x[j].cls == c && x[j].src_rank == x[i].src_rank &&
				  x[j].dst_rank == x[i].dst_rank);
		pairs += (size_t)first;
	}
	return pairs ? (double)count / (double)pairs : 0;
}

static void by_phase(const struct ct_flow_periodicity *fp, const struct ct_period *job,
		     const struct ct_expect_xfer *x, size_t nx, unsigned offset, long s, long d,
		     const double *class_bytes, struct ct_flow_class *fc)
{
	double mask[CT_CLASS_COUNT][PHASE_BINS];
	double score[CT_CLASS_COUNT] = {0}, likelihood[CT_CLASS_COUNT] = {0}, total = 0;
	int best = -1, second = -1;

	memset(mask, 0, sizeof(mask));
	for (size_t i = 0; i < nx; i++)
		for (int k = -PHASE_SLACK; k <= PHASE_SLACK; k++) {
			struct ct_expect_xfer w = x[i];

			w.phase_start += (double)k / PHASE_BINS;
			w.phase_end += (double)k / PHASE_BINS;
			spread(mask[x[i].cls], &w);
		}
	/* each class's share of its bytes per phase: where its transfers run */
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		double sum = 0;

		for (unsigned b = 0; b < PHASE_BINS; b++)
			sum += mask[c][b];
		for (unsigned b = 0; b < PHASE_BINS && sum > 0; b++)
			mask[c][b] /= sum;
	}
	/*
	 * The class under which the flow's phases are likeliest wins: a class
	 * running all through the iteration (PP) explains a burst at any phase
	 * a little, one running once (EmbTableSyn) explains its own moment much
	 * better.
	 */
	for (size_t b = 0; b < fp->n_bursts; b++) {
		double ph = ct_period_phase(job, fp->bursts[b].start), w;

		if (ph < 0)
			continue;
		unsigned bin = (phase_bin(ph) + offset) % PHASE_BINS;

		w = (double)fp->bursts[b].bytes;
		total += w;
		for (int c = 0; c < CT_CLASS_COUNT; c++) {
			likelihood[c] += w * log(LIKELIHOOD_FLOOR + mask[c][bin]);
			if (mask[c][bin] > 0)
				score[c] += w;
		}
	}
	/*
	 * How often: a flow carries one burst per transfer of its class between
	 * its two ranks (EmbTableSyn once an iteration, PP once per micro-batch
	 * each way). Phases alone mislead when the iteration's start is placed
	 * differently from the schedule's; counts do not depend on it.
	 */
	if (total > 0 && job && job->iterations) {
		double seen = (double)fp->n_bursts / (double)job->iterations;

		for (int c = 0; c < CT_CLASS_COUNT; c++)
			if (class_bytes[c] > 0)
				likelihood[c] =
					likelihood[c] / total -
					COUNT_WEIGHT *
						fabs(log((seen + 0.5) /
							 (transfers_per_pair(x, nx, c) + 0.5)));
	}
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		if (class_bytes[c] <= 0)
			continue;
		if (best < 0 || likelihood[c] > likelihood[best] ||
		    (likelihood[c] == likelihood[best] && class_bytes[c] > class_bytes[best])) {
			second = best;
			best = c;
		} else if (second < 0 || likelihood[c] > likelihood[second]) {
			second = c;
		}
	}
	if (total <= 0) {
		/* nothing placed: the pair's largest class */
		int big = 0;
		double sum = 0;

		for (int c = 0; c < CT_CLASS_COUNT; c++) {
			sum += class_bytes[c];
			if (class_bytes[c] > class_bytes[big])
				big = c;
		}
		ct_class_set(fc, (enum ct_class)big, CT_CLASS_BY_PROFILE, class_bytes[big] / sum,
			     "profile: the largest class from host %ld to host %ld (%.0f%% of its "
			     "bytes); the flow's bursts are not placed in the iteration",
			     s, d, 100 * class_bytes[big] / sum);
		return;
	}
	double lead = score[best] / total, other = second >= 0 ? score[second] / total : 0;
	double seen = (double)fp->n_bursts / (double)job->iterations;

	if (second < 0) {
		ct_class_set(
			fc, (enum ct_class)best, CT_CLASS_BY_PROFILE, 0.5 + 0.5 * lead,
			"profile: %.0f%% of its bytes fall when %s runs from host %ld to host %ld",
			100 * lead, ct_class_name(best), s, d);
		return;
	}
	/* confidence: the logistic of how much likelier the winner is */
	ct_class_set(fc, (enum ct_class)best, CT_CLASS_BY_PROFILE,
		     1 / (1 + exp(likelihood[second] - likelihood[best])),
		     "profile: host %ld to host %ld carries %s and %s; %.1f bursts an iteration "
		     "(transfers per rank pair: %s %.1f, %s %.1f); %.0f%% of its bytes fall when "
		     "%s runs, %.0f%% when %s does",
		     s, d, ct_class_name(best), ct_class_name(second), seen, ct_class_name(best),
		     transfers_per_pair(x, nx, best), ct_class_name(second),
		     transfers_per_pair(x, nx, second), 100 * lead, ct_class_name(best),
		     100 * other, ct_class_name(second));
}

int ct_classify_by_profile(const struct ct_flow_set *set, const struct ct_periodicity *per,
			   const struct ct_class_expect *expect, const uint8_t *to_classify,
			   struct ct_classification *out)
{
	unsigned n_addr = 0;
	struct ct_profile_host *hosts = ct_profile_hosts(expect, &n_addr);
	struct ct_expect_xfer *x = malloc((expect->n_xfers ? expect->n_xfers : 1) * sizeof(*x));
	const struct ct_flow_periodicity unplaced = {0};
	int periodic = per && per->job.periodic;
	unsigned offset = 0;

	if (!hosts || !x) {
		free(hosts);
		free(x);
		return -ENOMEM;
	}
	memcpy(x, expect->xfers, expect->n_xfers * sizeof(*x));
	qsort(x, expect->n_xfers, sizeof(*x), xfer_pair_cmp);
	if (periodic)
		offset = schedule_offset(per, expect);

	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];
		struct ct_flow_class *fc = &out->flows[i];
		long s, d;
		size_t lo = 0, hi;
		double class_bytes[CT_CLASS_COUNT] = {0};
		int classes = 0, only = -1;

		if (!to_classify[i])
			continue;
		s = ct_profile_host_of(hosts, n_addr, &f->key.src);
		d = ct_profile_host_of(hosts, n_addr, &f->key.dst);
		if (s < 0 || d < 0) {
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_PROFILE, 0.9,
				     "profile: %s is not one of %s's hosts",
				     s < 0 ? "its source" : "its destination", expect->profile);
			continue;
		}
		/* the pair's transfers: a run of the sorted list */
		struct ct_expect_xfer probe = {.src_host = (uint16_t)s, .dst_host = (uint16_t)d};

		hi = expect->n_xfers;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (xfer_pair_cmp(&x[mid], &probe) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (hi = lo; hi < expect->n_xfers && !xfer_pair_cmp(&x[hi], &probe); hi++)
			class_bytes[x[hi].cls] += x[hi].bytes;
		for (int c = 0; c < CT_CLASS_COUNT; c++)
			if (class_bytes[c] > 0) {
				classes++;
				only = c;
			}
		if (!classes)
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_PROFILE, 0.8,
				     "profile: %s sends nothing from host %ld to host %ld",
				     expect->profile, s, d);
		else if (classes == 1)
			ct_class_set(fc, (enum ct_class)only, CT_CLASS_BY_PROFILE, 0.95,
				     "profile: only %s goes from host %ld to host %ld",
				     ct_class_name(only), s, d);
		else
			by_phase(periodic ? &per->flows[i] : &unplaced, periodic ? &per->job : NULL,
				 &x[lo], hi - lo, offset, s, d, class_bytes, fc);
	}
	free(hosts);
	free(x);
	return 0;
}
