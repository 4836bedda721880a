// SPDX-License-Identifier: MIT
/*
 * Jobs on a shared fabric. The period estimated from all bursts is the
 * rhythm of the job with the most traffic; a host belongs to it when its
 * own traffic (sent and received) repeats one such period later: the
 * autocorrelation of its byte series at that lag. Hosts that do not, and
 * the flows only between them, are estimated again on their own, which
 * finds the next job, and so on. Flows of a job are then measured against
 * its period. Storage and other unrelated traffic follows no job's rhythm,
 * so it joins none and cannot bridge two jobs into one.
 */
#include "periodicity_internal.h"

#include <commtap/log.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOB_FIT_MIN	   0.5	/* a host's autocorrelation one iteration later */
#define JOB_PROFILE_MIN	   0.6	/* its even and odd iterations alike by phase */
#define JOB_HOST_MIN_SHARE 0.01 /* of the bytes the busiest host sends */
#define JOB_BINS_PER_ITER  16	/* of a host's byte series */
#define JOB_WINDOW_ITERS   128	/* the latest iterations a host is tested on */
#define JOB_MIN_SHARE	   0.02 /* bytes left over worth a search for a further job */
#define JOB_SAME_PERIOD	   0.02 /* periods this close: the same job */

struct host_series {
	float *x; /* hosts x bins: JOB_BINS_PER_ITER bins an iteration */
	size_t bins;
	size_t first; /* the first iteration of the window */
};

/* Where t falls in the iterations of p: iteration + phase, -1 outside. */
static double iteration_position(const struct ct_period *p, uint64_t t)
{
	long k = ct_period_iteration(p, t);
	double len;

	if (k < 0)
		return -1;
	len = (size_t)k + 1 < p->iterations ? (double)(p->starts[k + 1] - p->starts[k])
					    : p->period_s * 1e9;
	return (double)k + (double)(t - p->starts[k]) / len;
}

/*
 * Every host's bytes sent over the latest iterations of period (every
 * host of a training job sends: ring neighbours, pipeline stages both ways,
 * all-to-all), by iteration and phase (the iterations' own starts absorb their
 * jitter), each burst spread over the bins it spans.
 */
static int series_fill(const struct ct_flow_set *set, const struct ct_hosts *h,
		       const struct ct_periodicity *per, const struct ct_period *period,
		       struct host_series *s)
{
	size_t iters =
		period->iterations < JOB_WINDOW_ITERS ? period->iterations : JOB_WINDOW_ITERS;

	s->first = period->iterations - iters;
	s->bins = iters * JOB_BINS_PER_ITER;
	s->x = calloc(h->n * s->bins + 1, sizeof(*s->x));
	if (!s->x)
		return -ENOMEM;
	for (size_t f = 0; f < set->count; f++) {
		const struct ct_flow_periodicity *fp = &per->flows[f];
		float *src = s->x + (size_t)h->src[f] * s->bins;

		for (size_t i = 0; i < fp->n_bursts; i++) {
			const struct ct_burst *b = &fp->bursts[i];
			double a = iteration_position(period, b->start) - (double)s->first;
			double e = iteration_position(period, b->end) - (double)s->first;
			size_t first, last;
			float share;

			if (a < 0)
				continue;
			if (e < a) /* past the last iteration */
				e = a;
			first = (size_t)(a * JOB_BINS_PER_ITER);
			last = (size_t)(e * JOB_BINS_PER_ITER);
			if (last >= s->bins)
				last = s->bins - 1;
			share = (float)b->bytes / (float)(last - first + 1);
			for (size_t k = first; k <= last; k++)
				src[k] += share;
		}
	}
	return 0;
}

/*
 * The correlation of a host's traffic with itself one iteration later,
 * each bin smoothed with its neighbours (the iteration starts are found to
 * a few per cent): about 1 for a host of the job, low for one on another
 * rhythm or none.
 */
static double series_fit(const float *x, size_t bins)
{
	const size_t lag = JOB_BINS_PER_ITER;
	double mean = 0, xy = 0, xx = 0, yy = 0;

	if (bins < 3 * lag)
		return 0; /* fewer than three iterations */
	for (size_t i = 0; i < bins; i++)
		mean += x[i];
	mean /= (double)bins;
	if (mean <= 0)
		return 0;
	for (size_t i = 1; i + lag + 1 < bins; i++) {
		double a = (x[i - 1] + 2 * x[i] + x[i + 1]) / 4 - mean;
		double b = (x[i + lag - 1] + 2 * x[i + lag] + x[i + lag + 1]) / 4 - mean;

		xy += a * b;
		xx += a * a;
		yy += b * b;
	}
	return xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : 0;
}

/* Correlation of two phase profiles, each circularly smoothed. */
static double profile_corr(const double *x, const double *y)
{
	const size_t nb = JOB_BINS_PER_ITER;
	double mx = 0, my = 0, xy = 0, xx = 0, yy = 0;

	for (size_t b = 0; b < nb; b++) {
		mx += x[b];
		my += y[b];
	}
	mx /= nb;
	my /= nb;
	for (size_t b = 0; b < nb; b++) {
		double a = (x[(b + nb - 1) % nb] + 2 * x[b] + x[(b + 1) % nb]) / 4 - mx;
		double c = (y[(b + nb - 1) % nb] + 2 * y[b] + y[(b + 1) % nb]) / 4 - my;

		xy += a * c;
		xx += a * a;
		yy += c * c;
	}
	return xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : 0;
}

/*
 * How alike a host's traffic is, by phase in the iteration, in the even and
 * the odd iterations (circularly smoothed): a host of the job puts its bytes
 * at the same phases every iteration; on another rhythm, or none, they fall
 * anywhere and the two profiles do not match.
 */
static double profile_fit(const float *x, size_t bins)
{
	const size_t nb = JOB_BINS_PER_ITER;
	double even[JOB_BINS_PER_ITER] = {0}, odd[JOB_BINS_PER_ITER] = {0};

	if (bins < 3 * nb)
		return 0; /* fewer than three iterations */
	for (size_t i = 0; i < bins; i++)
		*((i / nb) % 2 ? &odd[i % nb] : &even[i % nb]) += x[i];
	return profile_corr(even, odd);
}

/* Hosts not yet in a job that follow period join job j. Returns how many. */
static int hosts_join(const struct ct_flow_set *set, const struct ct_hosts *h,
		      const struct ct_periodicity *per, const struct ct_period *period, int j,
		      int *member, size_t *joined)
{
	struct host_series s = {0};
	double *sent = malloc((h->n + 1) * sizeof(*sent)), most = 0;
	int err = sent ? series_fill(set, h, per, period, &s) : -ENOMEM;

	*joined = 0;
	if (err) {
		free(sent);
		return err;
	}
	for (size_t k = 0; k < h->n; k++) {
		double sum = 0;

		for (size_t i = 0; i < s.bins; i++)
			sum += s.x[k * s.bins + i];
		sent[k] = sum;
		if (sum > most)
			most = sum;
	}
	for (size_t k = 0; k < h->n; k++) {
		if (member[k] >= 0)
			continue;
		double fit = series_fit(s.x + k * s.bins, s.bins);
		double profile = profile_fit(s.x + k * s.bins, s.bins);

		if (ct_log_enabled(CT_LOG_DEBUG)) {
			char a[64];

			ct_log(CT_LOG_DEBUG, "job %d period %.6f host %s fit %.3f profile %.3f\n",
			       j, period->period_s, ct_addr_format(&h->addr[k], a, sizeof(a)), fit,
			       profile);
		}
		/* a host that sends next to nothing (a server's acknowledgements) joins none */
		if (sent[k] >= JOB_HOST_MIN_SHARE * most &&
		    (fit >= JOB_FIT_MIN || profile >= JOB_PROFILE_MIN)) {
			member[k] = j;
			(*joined)++;
		}
	}
	free(s.x);
	free(sent);
	return 0;
}

/* The bursts of the flows between hosts in no job yet, for a further estimate. */
static size_t leftover_bursts(const struct ct_flow_set *set, const struct ct_hosts *h,
			      const struct ct_periodicity *per, const int *member,
			      struct ct_burst *out, uint64_t *bytes)
{
	size_t n = 0;

	*bytes = 0;
	for (size_t f = 0; f < set->count; f++) {
		const struct ct_flow_periodicity *fp = &per->flows[f];

		if (member[h->src[f]] >= 0 || member[h->dst[f]] >= 0)
			continue;
		for (size_t i = 0; i < fp->n_bursts; i++) {
			out[n] = fp->bursts[i];
			*bytes += out[n++].bytes;
		}
	}
	return n;
}

/* Job k has the most bytes: it goes first, its period into per->job. */
static void job_swap_first(struct ct_periodicity *per, size_t k)
{
	struct ct_job first = per->jobs[0];

	first.period = per->job;
	per->jobs[0] = per->jobs[k];
	per->job = per->jobs[0].period;
	memset(&per->jobs[0].period, 0, sizeof(per->jobs[0].period));
	per->jobs[k] = first;
	for (size_t f = 0; f < per->n_flows; f++) {
		if (per->flows[f].job == 0)
			per->flows[f].job = (int)k;
		else if (per->flows[f].job == (int)k)
			per->flows[f].job = 0;
	}
}

/*
 * Hosts, flows and bytes of each job, and the flows measured on their job's
 * period: those of further jobs, or every flow when the first job's period
 * was replaced (all: the flows of no job too, against the new first).
 */
static int jobs_fill(const struct ct_flow_set *set, const struct ct_hosts *h, const int *member,
		     int all, struct ct_periodicity *per)
{
	size_t room = 0, used = 0, top = 0;

	for (size_t f = 0; f < set->count; f++) {
		struct ct_flow_periodicity *fp = &per->flows[f];
		int j = member[h->src[f]] >= 0 ? member[h->src[f]] : member[h->dst[f]];

		fp->job = j;
		if (j >= 0) {
			per->jobs[j].flows++;
			per->jobs[j].bytes += set->flows[f].bytes;
		}
		if (fp->n_bursts && (all || j > 0))
			room += 2 * ct_periodicity_period_of(per, f)->iterations;
	}
	for (size_t k = 0; k < h->n; k++)
		if (member[k] >= 0)
			per->jobs[member[k]].n_hosts++;
	for (size_t j = 0; j < per->n_jobs; j++) {
		per->jobs[j].hosts = malloc((per->jobs[j].n_hosts + 1) * sizeof(struct ct_addr));
		if (!per->jobs[j].hosts)
			return -ENOMEM;
		per->jobs[j].n_hosts = 0;
	}
	for (size_t k = 0; k < h->n; k++) /* in address order */
		if (member[k] >= 0) {
			struct ct_job *job = &per->jobs[member[k]];

			job->hosts[job->n_hosts++] = h->addr[k];
		}
	if (room) {
		per->job_room = malloc(room * sizeof(*per->job_room));
		if (!per->job_room)
			return -ENOMEM;
	}
	for (size_t f = 0; f < set->count; f++) {
		struct ct_flow_periodicity *fp = &per->flows[f];
		const struct ct_period *p = ct_periodicity_period_of(per, f);
		int err;

		if (!fp->n_bursts || !(all || fp->job > 0))
			continue;
		err = ct_flow_periodicity_against(fp, p, per->job_room + used);
		if (err)
			return err;
		used += 2 * p->iterations;
	}
	for (size_t j = 1; j < per->n_jobs; j++)
		if (per->jobs[j].bytes > per->jobs[top].bytes)
			top = j;
	if (top)
		job_swap_first(per, top);
	return 0;
}

static size_t find_root(size_t *parent, size_t k)
{
	while (parent[k] != k)
		k = parent[k] = parent[parent[k]];
	return k;
}

/*
 * Hosts joined by flows, among those that send at least a share of what the
 * busiest host sends (a server that only acknowledges, like storage taking
 * checkpoints, joins none and so bridges no two jobs): comp[k] is the
 * component's root, or SIZE_MAX for the others. Returns how many components
 * carry at least JOB_MIN_SHARE of the bytes between their hosts.
 */
static size_t components(const struct ct_flow_set *set, const struct ct_hosts *h, size_t *comp,
			 double *bytes)
{
	double most = 0, total = 0;
	size_t big = 0;

	for (size_t k = 0; k < h->n; k++) {
		comp[k] = k;
		bytes[k] = 0;
	}
	for (size_t f = 0; f < set->count; f++) {
		bytes[h->src[f]] += (double)set->flows[f].bytes;
		total += (double)set->flows[f].bytes;
	}
	for (size_t k = 0; k < h->n; k++)
		if (bytes[k] > most)
			most = bytes[k];
	for (size_t f = 0; f < set->count; f++) {
		uint32_t a = h->src[f], b = h->dst[f];

		if (bytes[a] < JOB_HOST_MIN_SHARE * most || bytes[b] < JOB_HOST_MIN_SHARE * most)
			continue;
		comp[find_root(comp, a)] = find_root(comp, b);
	}
	for (size_t k = 0; k < h->n; k++)
		comp[k] = bytes[k] < JOB_HOST_MIN_SHARE * most ? SIZE_MAX : find_root(comp, k);
	/* bytes of each component's own flows, at its root */
	for (size_t k = 0; k < h->n; k++)
		bytes[k] = 0;
	for (size_t f = 0; f < set->count; f++)
		if (comp[h->src[f]] != SIZE_MAX && comp[h->src[f]] == comp[h->dst[f]])
			bytes[comp[h->src[f]]] += (double)set->flows[f].bytes;
	for (size_t k = 0; k < h->n; k++)
		big += comp[k] == k && bytes[k] >= JOB_MIN_SHARE * total;
	return big;
}

/*
 * The job's rhythm is that of the traffic between its own hosts: flows to a
 * host outside it (storage, checkpoints, monitoring) come at their own times
 * and can fill the idle gap that marks an iteration's start. When such flows
 * are there, the period is estimated again on the members' flows alone and,
 * when periodic, replaces that of all bursts (*replaced set).
 */
static int period_of_members(const struct ct_flow_set *set, const struct ct_hosts *h,
			     double min_period_s, const int *member, struct ct_burst *buf,
			     struct ct_periodicity *per, int *replaced)
{
	struct ct_period p;
	size_t n = 0;
	int err;

	for (size_t f = 0; f < set->count; f++) {
		const struct ct_flow_periodicity *fp = &per->flows[f];

		if (member[h->src[f]] != 0 || member[h->dst[f]] != 0 || !fp->n_bursts)
			continue; /* a flow without bursts has no array (NULL) */
		memcpy(buf + n, fp->bursts, fp->n_bursts * sizeof(*buf));
		n += fp->n_bursts;
	}
	if (n == per->bursts)
		return 0; /* no outside traffic: the estimate stands */
	err = ct_period_estimate(buf, n, min_period_s, &p);
	if (err || !p.periodic) {
		ct_period_free(&p);
		return err;
	}
	ct_period_free(&per->job);
	per->job = p;
	*replaced = 1;
	return 0;
}

/*
 * Disjoint groups of hosts, each with traffic of its own: a job each (when
 * periodic), estimated on the flows between its hosts, the biggest first.
 * With one group, its hosts are marked members of the first job and no job
 * is counted yet (the period of all bursts is that job's). Returns 0 or a
 * negative errno.
 */
static int jobs_by_component(const struct ct_flow_set *set, const struct ct_hosts *h,
			     double min_period_s, int *member, struct ct_burst *buf,
			     struct ct_periodicity *per, int *replaced)
{
	size_t *comp = malloc((h->n + 1) * sizeof(*comp));
	double *bytes = malloc((h->n + 1) * sizeof(*bytes)), total = 0;
	size_t big;
	int err = 0;

	if (!comp || !bytes) {
		err = -ENOMEM;
		goto out;
	}
	big = components(set, h, comp, bytes);
	for (size_t f = 0; f < set->count; f++)
		total += (double)set->flows[f].bytes;
	if (big == 1) { /* one job (or jobs sharing hosts): its hosts, for a start */
		for (size_t k = 0; k < h->n; k++)
			if (comp[k] != SIZE_MAX && bytes[comp[k]] >= JOB_MIN_SHARE * total)
				member[k] = 0;
		err = period_of_members(set, h, min_period_s, member, buf, per, replaced);
		goto out;
	}
	if (!big)
		goto out;
	while (per->n_jobs < CT_MAX_JOBS) {
		struct ct_period *p = &per->jobs[per->n_jobs].period;
		size_t root = SIZE_MAX, n = 0;

		for (size_t k = 0; k < h->n; k++) /* the biggest component left */
			if (comp[k] == k && bytes[k] >= JOB_MIN_SHARE * total &&
			    (root == SIZE_MAX || bytes[k] > bytes[root]))
				root = k;
		if (root == SIZE_MAX)
			break;
		bytes[root] = 0;
		for (size_t f = 0; f < set->count; f++) {
			const struct ct_flow_periodicity *fp = &per->flows[f];

			if (comp[h->src[f]] != root || comp[h->dst[f]] != root || !fp->n_bursts)
				continue;
			memcpy(buf + n, fp->bursts, fp->n_bursts * sizeof(*buf));
			n += fp->n_bursts;
		}
		err = ct_period_estimate(buf, n, min_period_s, p);
		if (err)
			break;
		if (!p->periodic) {
			ct_period_free(p);
			continue;
		}
		for (size_t k = 0; k < h->n; k++)
			if (comp[k] == root)
				member[k] = (int)per->n_jobs;
		per->n_jobs++;
	}
out:
	free(comp);
	free(bytes);
	return err;
}

/*
 * One group of hosts (or jobs that share hosts): the period of all bursts
 * is the first job's; its hosts are those that follow it; the hosts left,
 * and the flows between them, are estimated again for a further job.
 */
static int jobs_by_peeling(const struct ct_flow_set *set, const struct ct_hosts *h,
			   double min_period_s, int *member, struct ct_burst *left,
			   struct ct_periodicity *per)
{
	uint64_t total = 0;
	size_t joined;
	int err;

	for (size_t f = 0; f < set->count; f++)
		total += set->flows[f].bytes;
	per->n_jobs = 1;
	err = hosts_join(set, h, per, &per->job, 0, member, &joined);
	while (!err && per->n_jobs < CT_MAX_JOBS) {
		struct ct_period *p = &per->jobs[per->n_jobs].period;
		uint64_t bytes;
		size_t n = leftover_bursts(set, h, per, member, left, &bytes);
		int same = -1;

		if (!n || (double)bytes < JOB_MIN_SHARE * (double)total)
			break;
		err = ct_period_estimate(left, n, min_period_s, p);
		if (err || !p->periodic)
			break;
		for (size_t j = 0; j < per->n_jobs; j++) {
			double other = ct_periodicity_job_period(per, j)->period_s;

			if (fabs(p->period_s - other) <= JOB_SAME_PERIOD * other)
				same = (int)j;
		}
		/* hosts that follow the period of a job found before join that one */
		err = hosts_join(set, h, per, same >= 0 ? ct_periodicity_job_period(per, same) : p,
				 same >= 0 ? same : (int)per->n_jobs, member, &joined);
		if (err || !joined)
			break;
		if (same >= 0) {
			ct_period_free(p);
			continue;
		}
		per->n_jobs++;
	}
	if (per->n_jobs < CT_MAX_JOBS)
		ct_period_free(&per->jobs[per->n_jobs].period); /* a search that found none */
	return err;
}

int ct_jobs_find(const struct ct_flow_set *set, const struct ct_hosts *h, double min_period_s,
		 struct ct_periodicity *per)
{
	int *member = NULL, replaced = 0;
	struct ct_burst *buf = NULL;
	int err;

	for (size_t f = 0; f < per->n_flows; f++)
		per->flows[f].job = -1;
	member = malloc((h->n + 1) * sizeof(*member));
	buf = malloc((per->bursts + 1) * sizeof(*buf));
	per->jobs = calloc(CT_MAX_JOBS, sizeof(*per->jobs));
	if (!member || !buf || !per->jobs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < h->n; k++)
		member[k] = -1;
	err = jobs_by_component(set, h, min_period_s, member, buf, per, &replaced);
	if (!err && per->n_jobs) {
		/* the period of all bursts together mixes the jobs: the first job's replaces it */
		ct_period_free(&per->job);
		per->job = per->jobs[0].period;
		memset(&per->jobs[0].period, 0, sizeof(per->jobs[0].period));
		replaced = 1;
	} else if (!err && per->job.periodic && per->job.iterations) {
		err = jobs_by_peeling(set, h, min_period_s, member, buf, per);
	}
	err = err ?: per->n_jobs ? jobs_fill(set, h, member, replaced, per) : 0;
out:
	free(member);
	free(buf);
	return err;
}

void ct_jobs_free(struct ct_periodicity *per)
{
	for (size_t j = 0; per->jobs && j < per->n_jobs; j++) {
		if (j)
			ct_period_free(&per->jobs[j].period);
		free(per->jobs[j].hosts);
	}
	free(per->jobs);
	free(per->job_room);
	per->jobs = NULL;
	per->job_room = NULL;
	per->n_jobs = 0;
}
