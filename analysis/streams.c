// SPDX-License-Identifier: MIT
/*
 * Streams (streams.h): the flows of one direction between two hosts with
 * the same bursts as one logical connection, measured per iteration, and
 * each data stream's mode against the way back:
 *   - aligned at lag 0 and ending together: both ways at once, a
 *     collective's members (every step of a ring of two, both halves of a
 *     pair's all-reduce, an all-to-all);
 *   - both ways at other times, one direction ending later: a pipeline's
 *     activations and gradients, a parameter server's push and pull;
 *   - one way: one step of a ring, if its ring closes (classify_ops.c).
 */
#include "streams.h"
#include "classify_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* By job, source, destination, then bursts: a stream's channels are neighbours. */
static int member_cmp(const void *a, const void *b, void *arg)
{
	const struct groups_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct ct_hosts *h = c->hosts;

	if (stream_job_of(c->per, i) != stream_job_of(c->per, j))
		return stream_job_of(c->per, i) < stream_job_of(c->per, j) ? -1 : 1;
	if (h->src[i] != h->src[j])
		return h->src[i] < h->src[j] ? -1 : 1;
	if (h->dst[i] != h->dst[j])
		return h->dst[i] < h->dst[j] ? -1 : 1;
	if (c->per->flows[i].n_bursts != c->per->flows[j].n_bursts)
		return c->per->flows[i].n_bursts < c->per->flows[j].n_bursts ? -1 : 1;
	return (i > j) - (i < j);
}

static int same_stream(const struct groups_ctx *c, size_t i, size_t j)
{
	return stream_job_of(c->per, i) == stream_job_of(c->per, j) &&
	       c->hosts->src[i] == c->hosts->src[j] && c->hosts->dst[i] == c->hosts->dst[j] &&
	       c->per->flows[i].n_bursts == c->per->flows[j].n_bursts;
}

/* Bytes, messages and the phase histogram of a stream's flows. */
static void stream_measure(const struct groups_ctx *c, struct stream *s)
{
	const struct ct_period *job = ct_periodicity_period_of(c->per, c->members[s->first]);
	double iters = job->iterations ? (double)job->iterations : 1;

	for (size_t k = 0; k < s->n; k++) {
		size_t i = c->members[s->first + k];
		const struct ct_flow_periodicity *fp = &c->per->flows[i];

		for (size_t b = 0; b < fp->n_bursts; b++) {
			uint64_t start = fp->bursts[b].start, end = fp->bursts[b].end;
			long it = ct_period_iteration(job, start);
			double ph = ct_period_phase_in(job, it, start), ph_end;
			int first, last;

			if (ph < 0 || ph >= 1)
				continue;
			if (!ct_burst_carries_data(&fp->bursts[b]))
				continue;
			/* one search where the burst ends in the iteration it began in */
			ph_end = (size_t)it + 1 < job->iterations && end < job->starts[it + 1]
					 ? ct_period_phase_in(job, it, end)
					 : ct_period_phase(job, end);
			/* spread over the bins it spans inside its iteration */
			first = (int)(ph * PHASE_BINS);
			last = ph_end >= ph && ph_end < 1 ? (int)(ph_end * PHASE_BINS) : first;
			for (int x = first; x <= last; x++)
				s->hist[x] += (double)fp->bursts[b].bytes / (last - first + 1);
			s->bytes += (double)fp->bursts[b].bytes;
			s->msgs += fp->bursts[b].messages;
		}
	}
	s->bytes /= iters;
	s->msgs /= iters;
}

/*
 * Where a stream's exchange ends in each window (cut at pause; 0: none):
 * on each of its channels, the end of the burst of data by which all but
 * share of the channel's bytes in the window have gone (0: its last); the
 * latest of its channels. tail: room for the windows' allowances.
 */
static void stream_ends(const struct groups_ctx *c, const struct stream *s,
			const struct ct_period *job, double pause, double share, uint64_t *end,
			double *tail)
{
	memset(end, 0, (job->iterations + 1) * sizeof(*end));
	for (size_t m = 0; m < s->n; m++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[c->members[s->first + m]];

		memset(tail, 0, (job->iterations + 1) * sizeof(*tail));
		for (int pass = 0; pass < 2; pass++)
			for (size_t k = 0; k < fp->n_bursts; k++) {
				/* the first pass sums the windows, the second walks back */
				const struct ct_burst *b =
					&fp->bursts[pass ? fp->n_bursts - 1 - k : k];
				long it = ct_period_iteration(job, b->start);
				size_t w;

				if (it < 0 || !ct_burst_carries_data(b))
					continue;
				w = (size_t)it + (ct_period_phase_in(job, it, b->start) >= pause);
				if (!pass) {
					tail[w] += share * (double)b->bytes;
					continue;
				}
				if (isnan(tail[w]))
					continue; /* its end is found */
				tail[w] -= (double)b->bytes;
				if (tail[w] <= 0) {
					end[w] = b->end > end[w] ? b->end : end[w];
					tail[w] = NAN;
				}
			}
	}
}

/*
 * Where a pair of streams pauses: the middle of the longest run of phase
 * bins (circular) in which neither sends. Windows cut there hold one
 * iteration of the pair each, wherever the job's iteration starts fall.
 */
static double pair_pause(const float *a, const float *b)
{
	int best = 0, at = 0;

	for (int k = 0; k < PHASE_BINS; k++) {
		int len = 0;

		while (len < PHASE_BINS &&
		       a[(k + len) % PHASE_BINS] + b[(k + len) % PHASE_BINS] <= 0)
			len++;
		if (len > best) {
			best = len;
			at = k;
		}
	}
	return (double)((at + best / 2) % PHASE_BINS) / PHASE_BINS;
}

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * How much later than s the partner ends its iterations, as a share of the
 * period: the median over the whole windows both send in (cut at the
 * pair's pause, pause; the first and last may be cut by the capture), each
 * direction ending with its last burst of data, or, ignoring the last
 * tail share of each window's bytes, with its bulk. Returns NAN when no
 * window has both.
 */
static double cooldown_at(const struct groups_ctx *c, const struct stream *s,
			  const struct stream *partner, double pause, double tail, uint64_t *room,
			  double *d)
{
	const struct ct_period *job = ct_periodicity_period_of(c->per, c->members[s->first]);
	uint64_t *a = room, *b = room + job->iterations + 1;
	size_t n = 0;

	stream_ends(c, s, job, pause, tail, a, d);
	stream_ends(c, partner, job, pause, tail, b, d);
	/* windows 1 .. iterations-1 are whole */
	for (size_t k = 1; k < job->iterations; k++)
		if (a[k] && b[k])
			d[n++] = ((double)b[k] - (double)a[k]) / (job->period_s * 1e9);
	if (!n)
		return NAN;
	qsort(d, n, sizeof(*d), double_cmp);
	return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

/*
 * The pair's cool-down: by the last bursts, or by the bulks where only
 * they end together. Two directions whose bulks end together are one
 * exchange, though one sends a small message later (END_TAIL_SHARE); two
 * that end with their last bursts together are one, though their bulks
 * part (ZeRO's all-gather one way and reduce-scatter back). A pipeline's
 * last message is part of its bulk: both readings show its cool-down, and
 * the last bursts' is said.
 */
static double cooldown_of(const struct groups_ctx *c, const struct stream *s,
			  const struct stream *partner, uint64_t *room, double *d)
{
	const struct ct_period *job = ct_periodicity_period_of(c->per, c->members[s->first]);
	double pause = pair_pause(s->hist, partner->hist), last, bulk;

	if (job->iterations < 3)
		return NAN;
	last = cooldown_at(c, s, partner, pause, 0, room, d);
	if (fabs(last) < COOLDOWN_MIN)
		return last; /* they end together: the bulks need not be read */
	bulk = cooldown_at(c, s, partner, pause, END_TAIL_SHARE, room, d);
	if (isnan(last) || isnan(bulk))
		return isnan(last) ? bulk : last;
	return fabs(bulk) < COOLDOWN_MIN ? bulk : last;
}

/* The circular cross-correlation of two histograms: share at lag 0 (±1) of the best. */
static double aligned_share(const float *a, const float *b, int *best_lag)
{
	double c[PHASE_BINS], best = 0, at0;

	*best_lag = 0;
	for (int l = 0; l < PHASE_BINS; l++) {
		c[l] = 0;
		for (int k = 0; k < PHASE_BINS; k++)
			c[l] += (double)a[k] * b[(k + l) % PHASE_BINS];
		if (c[l] > best) {
			best = c[l];
			*best_lag = l;
		}
	}
	at0 = fmax(c[0], fmax(c[1], c[PHASE_BINS - 1]));
	return best > 0 ? at0 / best : 0;
}

/* By job, then source and destination host. */
int stream_key_cmp(const struct stream *x, int job, uint32_t src, uint32_t dst)
{
	if (x->job != job)
		return x->job < job ? -1 : 1;
	if (x->src != src)
		return x->src < src ? -1 : 1;
	return (x->dst > dst) - (x->dst < dst);
}

static int stream_pair_cmp(const void *a, const void *b, void *arg)
{
	const struct stream *s = arg;
	const struct stream *y = &s[*(const size_t *)b];

	return stream_key_cmp(&s[*(const size_t *)a], y->job, y->src, y->dst);
}

/* The first of the streams src -> dst of job in by_pair (sorted by stream_pair_cmp). */
static size_t streams_from(const struct groups_ctx *c, const size_t *by_pair, int job, uint32_t src,
			   uint32_t dst)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (stream_key_cmp(&c->s[by_pair[mid]], job, src, dst) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Partner and mode of every data stream. Where a stream's connection
 * carries data back (a socket used both ways, as gloo and NCCL's socket
 * transport do for one communicator), that is its partner. Otherwise it
 * is the stream the other way that lines up best among those moving
 * similar bytes (within FAMILY_GAP: one collective's two directions, or a
 * pipeline's activations and gradients): two collectives between the same
 * hosts (a pipeline's p2p and the embedding sync beside it) can move the
 * same bytes, and only their timing tells which is which. With none, the
 * stream is one way: what comes back is another collective's.
 */
void streams_pair(struct groups_ctx *c, size_t *by_pair, uint64_t *room, double *lags)
{
	for (size_t a = 0; a < c->n; a++)
		by_pair[a] = a;
	qsort_r(by_pair, c->n, sizeof(*by_pair), stream_pair_cmp, c->s);
	for (size_t a = 0; a < c->n; a++) {
		struct stream *s = &c->s[a];
		double back = 0, best_share = -1;
		const struct stream *partner = NULL;
		int best_lag = 0;

		if (!s->data)
			continue;
		for (size_t k = 0; k < s->n && !partner; k++) {
			int64_t r = c->set->flows[c->members[s->first + k]].reverse;

			if (r >= 0 && c->stream_of[r] >= 0 && !c->s[c->stream_of[r]].data &&
			    c->s[c->stream_of[r]].bytes > 0)
				partner = &c->s[c->stream_of[r]];
		}
		if (partner) { /* its own connection's other direction */
			best_share = aligned_share(s->hist, partner->hist, &best_lag);
			back = partner->bytes;
		}
		for (size_t b = streams_from(c, by_pair, s->job, s->dst, s->src); b < c->n && !back;
		     b++) {
			const struct stream *o = &c->s[by_pair[b]];
			double share;
			int lag;

			if (stream_key_cmp(o, s->job, s->dst, s->src))
				break;
			if (o->bytes <= 0 || fabs(log(o->bytes / s->bytes)) > log(FAMILY_GAP))
				continue;
			share = aligned_share(s->hist, o->hist, &lag);
			if (share > best_share) {
				best_share = share;
				best_lag = lag;
				partner = o;
			}
		}
		if (partner && !back)
			back = partner->bytes;
		/* nothing of its size comes back: one step of a ring (or no collective) */
		if (!partner || back < BACK_DATA_SHARE * s->bytes) {
			s->mode = MODE_ONE_WAY;
			s->lag0 = 1;
			continue;
		}
		s->lag0 = best_share;
		s->best_lag = best_lag;
		/*
		 * Both directions ending together (COOLDOWN_MIN) is a collective
		 * whatever the lag: a pipeline's last gradient comes back at
		 * least a micro-batch's backward after its last activation. Two
		 * operations on one socket (ZeRO's all-gather one way, its
		 * reduce-scatter back) line up at lag 0 only in part (0.94-0.97
		 * in real ZeRO-3 runs, read as a pipeline before). Where no
		 * whole window tells the ends (fewer than 3 iterations), the
		 * alignment alone decides.
		 */
		s->cooldown = cooldown_of(c, s, partner, room, lags);
		if (isnan(s->cooldown))
			s->cooldown = s->lag0 >= ALIGNED_MIN ? 0 : 1;
		s->mode = fabs(s->cooldown) < COOLDOWN_MIN ? MODE_ALIGNED : MODE_SHIFTED;
	}
}

size_t streams_bound(const struct ct_flow_set *set, const struct ct_periodicity *per,
		     const uint8_t *steady)
{
	size_t n = 0;

	for (size_t i = 0; i < set->count; i++)
		if (steady[i] && per->flows[i].n_bursts)
			n += 1 + (set->flows[i].reverse >= 0);
	return n;
}

/* Streams of the data flows marked in steady, then of their sockets' other directions. */
void streams_build(struct groups_ctx *c, const uint8_t *steady)
{
	const struct ct_flow_set *set = c->set;
	size_t m = 0, data_members;

	for (size_t i = 0; i < set->count; i++)
		if (steady[i] && c->per->flows[i].n_bursts)
			c->members[m++] = i;
	data_members = m;
	for (size_t i = 0; i < set->count; i++) {
		int64_t r = set->flows[i].reverse;

		/*
		 * gloo and NCCL's sockets carry data both ways on one connection;
		 * a RoCE QP's way back carries its ACKs (NCCL sends over QPs of its
		 * own the other way)
		 */
		if (steady[i] && r >= 0 && c->per->flows[r].n_bursts &&
		    set->flows[r].key.transport == CT_TRANSPORT_TCP &&
		    (double)set->flows[r].bytes >= BACK_DATA_SHARE * (double)set->flows[i].bytes)
			c->members[m++] = (size_t)r;
	}
	qsort_r(c->members, data_members, sizeof(*c->members), member_cmp, c);
	qsort_r(c->members + data_members, m - data_members, sizeof(*c->members), member_cmp, c);
	for (size_t k = 0, e; k < m; k = e) {
		struct stream *s = &c->s[c->n++];

		for (e = k + 1; e < m && (e < data_members) == (k < data_members) &&
				same_stream(c, c->members[k], c->members[e]);
		     e++)
			;
		memset(s, 0, sizeof(*s));
		s->src = c->hosts->src[c->members[k]];
		s->dst = c->hosts->dst[c->members[k]];
		s->job = stream_job_of(c->per, c->members[k]) < 0
				 ? 0
				 : stream_job_of(c->per, c->members[k]);
		s->first = k;
		s->n = e - k;
		for (size_t x = k; x < e; x++)
			c->stream_of[c->members[x]] = (int64_t)(c->n - 1);
		s->data = k < data_members;
		s->family = -1;
		s->cls = -1;
		s->op = CT_OP_UNKNOWN;
		stream_measure(c, s);
	}
}
