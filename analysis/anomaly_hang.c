// SPDX-License-Identifier: MIT
/*
 * Hang: the job's traffic stopped while the capture went on (a rank killed
 * or stopped, a collective that never completes). The job's last data burst
 * ends, and the capture's last packet (other traffic, or the capture's own
 * end) comes HANG_PERIODS periods or more later: the job sent nothing for
 * two iterations' time. Its last iteration tells a hang from an end: where
 * some host sent less in it than it sends in an iteration (its median), the
 * iteration was cut short, a collective never completed. Where one host
 * sent clearly less of it than the others (HANG_UNEVEN), it stopped first
 * and the others waited for it: a hang, unless the job is a pipeline, whose
 * stages move different shares of the wire's iteration at any point (a
 * synthesized GPT pipeline stopped at its own iteration boundary read
 * uneven). Where every host stopped at the
 * same point of its iteration, the job may have ended at a boundary of its
 * own that the wire's iteration does not share (a pipeline's or an MoE
 * job's several collectives), or stopped all at once; where every host sent
 * its whole iteration, it may simply have finished. Both are said at a
 * confidence below an alarm's. A slow job
 * still completes iterations at a longer period: its traffic does not stop,
 * and it is no hang (the rhythm detector sees its long iterations). Nor is
 * a silence not much longer than one the job has already come back from:
 * its own rhythm holds stalls that long (HANG_NEW_STALL). Nor is a silence
 * of the job's flows while its hosts go on exchanging data on others (a
 * new connection, flows the wire reading does not count as the job's):
 * a stopped job's hosts send nothing to each other but acknowledgements
 * (HANG_MOVED_ITERATIONS). Nor is a job whose every host closed its
 * connections (TCP FIN or RST): it ended. Where some closed theirs and the
 * others did not, those left (killed, crashed) and the others wait for
 * them: a hang, the one that left named.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* silent this many periods before the capture's end: "within 2 periods" (issue 30) */
#define HANG_PERIODS 2.0
/*
 * A silence is new, past the job's own stalls, from this many times its
 * longest silence while it ran: clean real pipelines read with --interval 1
 * stalled 0.21-0.24 s (2.0-2.7 periods) after silences of up to 0.23 s and
 * came back; the real ddp-hang's 2.93 s follows 0.25 s at most.
 */
#define HANG_NEW_STALL 2.0
/* one host stopped first, the others waited for it */
#define HANG_CONF_PARTIAL 0.9
/* every host cut alike: a stop of all, or an end at the job's own boundary */
#define HANG_CONF_ALIKE 0.45
/*
 * One host stopped first where its share of an iteration is under this
 * share of the median host's: the others went on until they needed it.
 */
#define HANG_UNEVEN 0.75
/* every host sent in the last iteration: an end as much as a hang */
#define HANG_CONF_WHOLE 0.3
#define HANG_LAST_NAMED 4 /* hosts named as the last to send */
/*
 * A host's last iteration is whole from this share of its median bytes an
 * iteration: synthesized jobs move the same bytes every iteration (0.95 and
 * over with jitter), a collective cut in its middle leaves half or less.
 */
#define HANG_WHOLE_SHARE 0.8
/*
 * A host that sent under this share of its iteration in the last one sent
 * nothing of it but acknowledgements and control. Of those, the one whose
 * data stopped first stopped; the others sent on until they waited for it.
 * (A real ddp rank stopped before its step: its kernel went on
 * acknowledging what came to it, its neighbours sent data for 200 ms more.)
 */
#define HANG_SILENT_SHARE 0.01
/*
 * The job's hosts still work where they exchange this many of the job's
 * iterations (its hosts' median bytes an iteration, summed) on any flow
 * among them during its flows' silence: the real ddp-hang's hosts moved
 * nothing but acknowledgements in its 2.93 s; the clean real pipelines
 * and parameter servers whose classified flows paused 0.21-1.85 s (their
 * interval reports) moved 62 to 866 times those flows' iteration on
 * connections the reading had not (yet) classified.
 */
#define HANG_MOVED_ITERATIONS 1.0

/*
 * The job's longest silence while it ran, s: the longest gap between its
 * data flows' bursts (their union), before its last one.
 */
static int longest_silence(const struct anom_ctx *c, double *out)
{
	struct ct_burst *all;
	size_t n;
	uint64_t e;
	int err = anom_job_bursts(c, 1, &all, &n);

	*out = 0;
	if (err)
		return err;
	e = n ? all[0].end : 0;
	for (size_t i = 1; i < n; i++) {
		if (all[i].start > e && (double)(all[i].start - e) / 1e9 > *out)
			*out = (double)(all[i].start - e) / 1e9;
		if (all[i].end > e)
			e = all[i].end;
	}
	free(all);
	return 0;
}

/*
 * The data bytes the job's hosts sent each other on any flow after t
 * (acknowledgements aside).
 */
static double moved_after(const struct anom_ctx *c, const struct anom_hosts *hosts, uint64_t t)
{
	double moved = 0;

	for (size_t f = 0; f < c->set->count; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];

		if (anom_hosts_find(hosts, &c->set->flows[f].key.src) < 0 ||
		    anom_hosts_find(hosts, &c->set->flows[f].key.dst) < 0)
			continue;
		for (size_t b = 0; b < fp->n_bursts; b++)
			if (fp->bursts[b].start > t && !anom_acks_only(&fp->bursts[b]))
				moved += (double)fp->bursts[b].bytes;
	}
	return moved;
}

/*
 * Where the iteration the job never finished began: one period after the
 * last whole one's start, or earlier where the job's data went quiet
 * within half a period before that point (its longest wait there) and the
 * data before the quiet already made a whole iteration (HANG_WHOLE_SHARE
 * of its median bytes): the next iteration's first exchange began there.
 * (A real ddp rank stopped before its step: on four of five recordings the
 * two ranks upstream of it began the next iteration 1-28 ms before the
 * extrapolated start, and their sixth of it read as the last whole one's.)
 */
static int unfinished_start(const struct anom_ctx *c, uint64_t *cut)
{
	size_t ni = c->n_iter, n, m = 0;
	uint64_t half = (uint64_t)(c->period_s / 2 * 1e9), e, best_s = 0, gap = 0;
	uint64_t from = c->bounds[ni] > half ? c->bounds[ni] - half : 0; /* a capture from 0 too */
	double *total = calloc(ni + 1, sizeof(*total)), before = 0;
	struct ct_burst *all = NULL;
	int err = total ? anom_job_bursts(c, 1, &all, &n) : -ENOMEM;

	*cut = c->bounds[ni];
	if (err || ni < 4)
		goto out;
	for (size_t i = 0; i < n; i++) {
		long it = anom_iteration(c, all[i].start);

		if (it >= 0)
			total[it] += (double)all[i].bytes;
	}
	e = n ? all[0].end : 0;
	for (size_t i = 1; i < n; i++) {
		if (all[i].start > e && all[i].start >= from && all[i].start < c->bounds[ni] &&
		    all[i].start - e > gap && anom_carries_message(&all[i])) {
			gap = all[i].start - e;
			best_s = all[i].start;
		}
		if (all[i].end > e)
			e = all[i].end;
	}
	for (size_t i = 0; i < n && best_s; i++)
		if (all[i].start >= c->bounds[ni - 1] && all[i].start < best_s)
			before += (double)all[i].bytes;
	/* the whole iterations before the last (the first may be cut by the capture) */
	for (size_t it = 1; it + 1 < ni; it++)
		total[m++] = total[it];
	if (best_s && before >= HANG_WHOLE_SHARE * anom_median(total, m))
		*cut = best_s;
out:
	free(all);
	free(total);
	return err;
}

struct hang_host {
	uint64_t last_end; /* its last data burst's end (acknowledgements aside) */
	uint64_t last_msg; /* its last burst's end that carries a message (a ready one too) */
	double share;	   /* its last iteration's bytes over its median iteration's */
	int closed;	   /* a job data flow of its closed (TCP FIN or RST) */
};

static int later_first(const void *a, const void *b, void *arg)
{
	const struct hang_host *h = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return h[x].last_end < h[y].last_end ? 1 : h[x].last_end > h[y].last_end ? -1 : 0;
}

/*
 * The watch a producer keeps between its reports (ct_anomalies.hang_after_s):
 * the silence from which a hang pages, HANG_PERIODS periods or, where the
 * job has come back from longer stalls, HANG_NEW_STALL times its longest
 * silence (before), and the flows it is of.
 */
static int watch(const struct anom_ctx *c, double before)
{
	struct ct_anomalies *o = c->out;
	size_t n = 0;

	for (size_t f = 0; f < c->set->count; f++)
		n += anom_job_data_flow(c, f);
	o->hang_flows = n ? malloc(n * sizeof(*o->hang_flows)) : NULL;
	if (n && !o->hang_flows)
		return -ENOMEM;
	for (size_t f = 0; f < c->set->count; f++)
		if (anom_job_data_flow(c, f))
			o->hang_flows[o->n_hang_flows++] = c->set->flows[f].key;
	o->hang_after_s = n ? fmax(HANG_PERIODS * c->period_s, HANG_NEW_STALL * before) : 0;
	return 0;
}

int anom_hang(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct anom_hosts hosts = {0};
	struct hang_host *h = NULL;
	size_t *order = NULL, missing = 0, named = 0, ni = c->n_iter, shortest = 0, closed = 0;
	double *bytes = NULL, median_share, iteration = 0;
	int uneven, pipeline = 0;
	uint64_t job_last = 0, end, cut;
	long last_it;
	double silence, before;
	int err = 0;

	if (!c->n_iter || !c->counters) {
		anom_not_looked(c, CT_ANOMALY_HANG,
				c->n_iter ? "no capture counters" : "no iteration period");
		return 0;
	}
	end = c->counters->last_ts;
	for (size_t f = 0; f < set->count && !err; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];

		if (!anom_job_data_flow(c, f))
			continue;
		pipeline |= anom_class(c, f) == CT_CLASS_PP;
		err = anom_hosts_add(&hosts, &set->flows[f].key.src);
		for (size_t b = 0; b < fp->n_bursts; b++)
			if (fp->bursts[b].end > job_last)
				job_last = fp->bursts[b].end;
	}
	if (err || !hosts.n)
		goto out;
	err = longest_silence(c, &before);
	err = err ?: watch(c, before);
	if (err || end <= job_last)
		goto out;
	silence = (double)(end - job_last) / 1e9;
	if (silence < HANG_PERIODS * c->period_s)
		goto out;
	anom_hosts_done(&hosts);
	h = calloc(hosts.n, sizeof(*h));
	order = malloc(hosts.n * sizeof(*order));
	/* per host and iteration (the whole ones and the one it never finished), and scratch */
	bytes = calloc(hosts.n * (ni + 1) + ni + 1, sizeof(*bytes));
	if (!h || !order || !bytes) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * The last iteration the job was in, and what each host sent in it and
	 * in the others. Traffic from where the one it never finished began
	 * (unfinished_start) is that one's (index ni): no next start anchors
	 * it. (A real ddp rank stopped before its step: two of the others sent
	 * a sixth of their iteration after the last whole one, which was read
	 * as that one's, every host whole: "it may have ended", at 0.3.)
	 */
	err = unfinished_start(c, &cut);
	if (err)
		goto out;
	last_it = job_last >= cut ? (long)ni : anom_iteration(c, job_last);
	if (last_it < 0)
		last_it = (long)ni - 1;
	for (size_t f = 0; f < set->count; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];
		long k;

		if (!anom_job_data_flow(c, f))
			continue;
		k = anom_hosts_find(&hosts, &set->flows[f].key.src);
		if (k >= 0)
			h[k].closed |= set->flows[f].closed;
		for (size_t b = 0; b < fp->n_bursts && k >= 0; b++) {
			long it = fp->bursts[b].start >= cut
					  ? (long)ni
					  : anom_iteration(c, fp->bursts[b].start);

			if (fp->bursts[b].end > h[k].last_end && !anom_acks_only(&fp->bursts[b]))
				h[k].last_end = fp->bursts[b].end;
			if (fp->bursts[b].end > h[k].last_msg &&
			    anom_carries_message(&fp->bursts[b]))
				h[k].last_msg = fp->bursts[b].end;
			if (it >= 0 && it <= last_it)
				bytes[(size_t)k * (ni + 1) + (size_t)it] +=
					(double)fp->bursts[b].bytes;
		}
	}
	for (size_t i = 0; i < hosts.n; i++) {
		double *scratch = bytes + hosts.n * (ni + 1), typical;
		size_t m = 0;

		/* the whole iterations before the last (the first may be cut by the capture) */
		for (long it = 1; it < last_it; it++)
			scratch[m++] = bytes[i * (ni + 1) + (size_t)it];
		typical = anom_median(scratch, m);
		iteration += typical;
		h[i].share = typical > 0 ? bytes[i * (ni + 1) + (size_t)last_it] / typical : 1;
		order[i] = i;
		missing += h[i].share < HANG_WHOLE_SHARE;
		if (h[i].share < h[shortest].share)
			shortest = i;
	}
	if (iteration > 0 && moved_after(c, &hosts, job_last) >= HANG_MOVED_ITERATIONS * iteration)
		goto out; /* its hosts still exchange data: it went on elsewhere */
	for (size_t i = 0; i < hosts.n; i++)
		closed += h[i].closed;
	if (closed == hosts.n)
		goto out; /* every host closed its connections: the job ended */
	/*
	 * Among the silent, the one that said nothing last: the others entered
	 * the collective that never completed and said so (gloo's ready
	 * message), though their data waited for it (the real ddp-hang: the
	 * stopped rank 2's and its successor's data both ended in the last
	 * whole iteration, the successor's 3 ms first; only it sent a ready
	 * message after). Its data's end names it where messages do not.
	 */
	for (size_t i = 0; i < hosts.n; i++)
		if (h[i].share < HANG_SILENT_SHARE && h[shortest].share < HANG_SILENT_SHARE &&
		    (h[i].last_msg < h[shortest].last_msg ||
		     (h[i].last_msg == h[shortest].last_msg &&
		      h[i].last_end < h[shortest].last_end)))
			shortest = i;
	qsort_r(order, hosts.n, sizeof(*order), later_first, h);
	for (size_t i = 0; i < hosts.n; i++)
		bytes[i] = h[i].share; /* the scratch is free again */
	median_share = anom_median(bytes, hosts.n);
	/*
	 * Uneven where one host sent clearly less than the others; where most
	 * sent nothing of it (the median silent too), every host stopped
	 * alike, whichever of them is named.
	 */
	uneven = missing && median_share >= HANG_SILENT_SHARE &&
		 h[shortest].share < HANG_UNEVEN * median_share && !pipeline;
	/* some hosts left (their connections closed), the others wait: of those, the first */
	for (size_t i = 0; i < hosts.n && closed; i++)
		if (h[i].closed && (!h[shortest].closed || h[i].last_end < h[shortest].last_end))
			shortest = i;
	{
		struct ct_anomaly an = {.kind = CT_ANOMALY_HANG,
					.scope = CT_ANOMALY_AT_JOB,
					.priority = -1,
					.cls = -1,
					.host = hosts.a[order[0]],
					.value = silence,
					.share = silence / c->period_s,
					.confidence = uneven || closed ? HANG_CONF_PARTIAL
						      : missing	       ? HANG_CONF_ALIKE
								       : HANG_CONF_WHOLE,
					.onset = last_it,
					.onset_ns = job_last};
		char list[4 * 64] = "", buf[64];
		size_t at = 0;

		for (size_t i = 0; i < hosts.n && named < HANG_LAST_NAMED; i++, named++)
			at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
					       named ? ", " : "",
					       anom_addr(&hosts.a[order[i]], buf));
		if (missing || closed)
			an.peer = hosts.a[shortest]; /* the one that left, or sent least */
		if (silence < HANG_NEW_STALL * before && an.confidence > HANG_CONF_ALIKE)
			an.confidence = HANG_CONF_ALIKE; /* as long a stall came and went */
		at = (size_t)snprintf(
			an.evidence, sizeof(an.evidence),
			"the job sent nothing for its last %.3g s (%.1f periods of %.3g ms; "
			"before, "
			"%.3g s at most) while the capture went on; in its last iteration (%ld) "
			"%zu "
			"of its %zu hosts sent less than %.0f%% of an iteration (%s %.0f%%)%s",
			silence, silence / c->period_s, c->period_s * 1e3, before, last_it, missing,
			hosts.n, HANG_WHOLE_SHARE * 100, anom_addr(&hosts.a[shortest], buf),
			h[shortest].share * 100,
			closed	  ? ""
			: uneven  ? ": it stopped first, the others waited for it in a collective "
				    "that never completed"
			: missing ? (pipeline ? ": a pipeline's stages end apart in the wire's "
						"iteration (a stop, or an end at its own boundary)"
					      : ": every host stopped at the same point (a stop of "
						"all, or an end at the job's own boundary)")
				  : ": it may have ended");
		if (closed && at < sizeof(an.evidence))
			at += (size_t)snprintf(
				an.evidence + at, sizeof(an.evidence) - at,
				"; %zu of its %zu hosts closed their connections, %s "
				"first to fall silent: they left, the others wait for "
				"them",
				closed, hosts.n, anom_addr(&hosts.a[shortest], buf));
		/* the hosts last: what does not fit is cut */
		if (at < sizeof(an.evidence))
			snprintf(an.evidence + at, sizeof(an.evidence) - at,
				 "; the last to send: %s", list);
		err = anom_add(c, &an);
	}
out:
	free(h);
	free(order);
	free(bytes);
	anom_hosts_free(&hosts);
	return err;
}
