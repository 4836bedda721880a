// SPDX-License-Identifier: MIT
/*
 * The job's layout read from the wire's structure (no profile, no labels):
 * which flows form one collective, which form a pipeline, and what each
 * group is, as the analytic model predicts them.
 *
 * 1. Streams: the flows of one direction between two hosts that carry the
 *    same bursts (NCCL's channels: several QPs or sockets, one logical
 *    connection) are one stream; each has bytes and messages per iteration
 *    and a byte-weighted histogram of where in the iteration it sends.
 * 2. Mode: a stream's partner is the stream the other way between the same
 *    hosts that moves the most similar bytes. A collective's members send
 *    and receive at once (every step of a ring, both halves of a pair's
 *    all-reduce): the two directions' histograms line up at lag 0. A
 *    pipeline's activations go one way in the forward pass and its
 *    gradients come back later: the best lag is elsewhere. A stream with
 *    nothing coming back is one step of a one-way ring, and belongs to a
 *    collective only if its ring closes, or, in one host's view (a host
 *    agent's: that host on every stream), if the ring passes through the
 *    host, in and out, and closes outside the view.
 * 3. Pipelines: the non-aligned streams join hosts into chains of stages.
 * 4. Collectives: aligned streams of one job fall into families of equal
 *    bytes per iteration (a collective moves the same bytes on every edge of
 *    its ring). A family between the two ends of one pipeline chain is the
 *    embedding sync (first and last stage). Of the others, with a pipeline,
 *    the family whose bytes move after the pipeline's last transfer is
 *    gradient sync (DP) and the one that moves inside the pipeline's
 *    schedule is TP; with no pipeline the family with the most messages per
 *    iteration is TP (per layer and micro-batch) and a lone family is DP.
 * The groups (connected hosts of each class) give p, t, d and ep.
 */
#include "classify_internal.h"

#include <commtap/log.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PHASE_BINS 64 /* of a stream's histogram: ~1.5% of an iteration */
/*
 * A direction that carries less than this share of the other's bytes
 * carries its acknowledgements only (TCP ACKs, RoCE ACK/NAK: a few percent
 * of the data), not data of its own.
 */
#define BACK_DATA_SHARE 0.1
/*
 * The two directions of a pair are aligned when their cross-correlation at
 * lag 0 (±1 bin) reaches this share of its best lag. Measured on the
 * development corpus (matrix seeds 1-2, fresh real runs): every one of
 * 1,540 collective streams at 1.00; pipeline streams at 0.86 median, so
 * this alone does not tell them apart: the cool-down does (COOLDOWN_MIN).
 */
#define ALIGNED_MIN 0.95
/*
 * Streams of one collective move the same bytes on every edge; different
 * collectives of one job differ by more than this ratio (real gloo PTD:
 * TP/DP 1.43; synthesized GPT: 27 and more), stages of one collective by
 * less (synthesized GPT's last stage holds the head: 1.01).
 */
#define FAMILY_GAP 1.25
/* A family's busy span: the shortest share of the iteration holding this share of its bytes. */
#define BUSY_SHARE 0.8
/*
 * A collective busy for at most this share of the iteration is gradient
 * sync, not TP (a lone one is DP with confidence; a DP by rate gains it): TP runs through the
 * forward and backward of every micro-batch (busy 59-80% in the development corpus), DP 2-55%.
 */
#define DP_SPAN_SURE (1.0 / 3)
/* A TP family is busy for at least this share (59-80% measured; DP alone reached 55%). */
#define TP_SPAN_SURE 0.5
/*
 * A pipeline's cool-down: its last gradients come back after its last
 * activation went out, at least one micro-batch's backward later, which
 * is at least this share of the iteration for up to ~32 micro-batches;
 * the two directions of a collective end together. Measured on the
 * development corpus: every collective stream within 0.03%; pipeline
 * streams 10.9% median, and at least 4.0% among those whose two
 * directions line up at lag 0 (195 of 916: Megatron-style 1F1B sends an
 * activation and receives a gradient at once in its steady state).
 */
#define COOLDOWN_MIN 0.02
/* The highest message rate over the lowest that tells TP from DP families. */
#define TP_RATE_RATIO 2.0
/* TP's bytes over a pipeline stream's, at least (see name_families). */
#define TP_PP_BYTES 8.0

enum stream_mode {
	MODE_ALIGNED = 0, /* both ways at once: a collective */
	MODE_SHIFTED,	  /* both ways, at other times: a pipeline */
	MODE_ONE_WAY,	  /* nothing back: a ring's step, if the ring closes */
};

struct stream {
	uint32_t src, dst; /* host ranks (hosts.h) */
	int job;
	size_t first, n;	/* its flows: members[first .. first + n) */
	int data;		/* 1: data directions (classified); 0: a socket's other direction */
	double bytes, msgs;	/* per iteration */
	float hist[PHASE_BINS]; /* float: 256 B a stream, for 100,000s of them */
	double lag0;		/* aligned share, 1 for one-way */
	double cooldown;	/* median lag of the partner's last byte of an iteration, share */
	int best_lag;		/* bins */
	uint8_t mode;		/* enum stream_mode */
	int family;		/* among the job's collective families, -1 none */
	int cls;		/* -1 undecided */
};

struct groups_ctx {
	const struct ct_flow_set *set;
	const struct ct_periodicity *per;
	size_t *members;
	struct stream *s;
	size_t n;
	int64_t *stream_of; /* per flow of the set: its stream, -1 none */
	const struct ct_hosts *hosts;
};

static int job_of(const struct ct_periodicity *per, size_t i)
{
	return per->flows[i].job;
}

/* By job, source, destination, then bursts: a stream's channels are neighbours. */
static int member_cmp(const void *a, const void *b, void *arg)
{
	const struct groups_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct ct_hosts *h = c->hosts;

	if (job_of(c->per, i) != job_of(c->per, j))
		return job_of(c->per, i) < job_of(c->per, j) ? -1 : 1;
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
	return job_of(c->per, i) == job_of(c->per, j) && c->hosts->src[i] == c->hosts->src[j] &&
	       c->hosts->dst[i] == c->hosts->dst[j] &&
	       c->per->flows[i].n_bursts == c->per->flows[j].n_bursts;
}

/*
 * A burst that carries data, not only the acknowledgements of the other
 * direction's (a socket used both ways acknowledges in its data's gaps):
 * a message ended in it, or its frames average more than a bare TCP ACK
 * with options or a RoCE ACK (66-90 bytes), or its frames are not known.
 */
#define DATA_FRAME_MIN 128

static int carries_data(const struct ct_burst *b)
{
	/* packets unknown: nothing tells it apart, so it counts */
	return b->messages || !b->packets || b->bytes > (uint64_t)DATA_FRAME_MIN * b->packets;
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
			double ph = ct_period_phase(job, fp->bursts[b].start);
			double ph_end = ct_period_phase(job, fp->bursts[b].end);
			int first, last;

			if (ph < 0 || ph >= 1)
				continue;
			if (!carries_data(&fp->bursts[b]))
				continue;
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

/* The end of a stream's last burst that starts in each iteration (0: none). */
static void stream_ends(const struct groups_ctx *c, const struct stream *s,
			const struct ct_period *job, double pause, uint64_t *end)
{
	memset(end, 0, (job->iterations + 1) * sizeof(*end));
	for (size_t m = 0; m < s->n; m++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[c->members[s->first + m]];

		for (size_t b = 0; b < fp->n_bursts; b++) {
			long it = ct_period_iteration(job, fp->bursts[b].start);
			size_t w;

			if (it < 0 || !carries_data(&fp->bursts[b]))
				continue;
			w = (size_t)it + (ct_period_phase(job, fp->bursts[b].start) >= pause);
			if (fp->bursts[b].end > end[w])
				end[w] = fp->bursts[b].end;
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
 * pair's pause; the first and last may be cut by the capture). Returns 0
 * when there are none.
 */
static double cooldown_of(const struct groups_ctx *c, const struct stream *s,
			  const struct stream *partner, uint64_t *room, double *d)
{
	const struct ct_period *job = ct_periodicity_period_of(c->per, c->members[s->first]);
	uint64_t *a = room, *b = room + job->iterations + 1;
	double pause = pair_pause(s->hist, partner->hist);
	size_t n = 0;

	if (job->iterations < 3)
		return 0;
	stream_ends(c, s, job, pause, a);
	stream_ends(c, partner, job, pause, b);
	/* windows 1 .. iterations-1 are whole */
	for (size_t k = 1; k < job->iterations; k++)
		if (a[k] && b[k])
			d[n++] = ((double)b[k] - (double)a[k]) / (job->period_s * 1e9);
	if (!n)
		return 0;
	qsort(d, n, sizeof(*d), double_cmp);
	return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
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
static int stream_key_cmp(const struct stream *x, int job, uint32_t src, uint32_t dst)
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
static void streams_pair(struct groups_ctx *c, size_t *by_pair, uint64_t *room, double *lags)
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
		s->cooldown = cooldown_of(c, s, partner, room, lags);
		s->mode = s->lag0 >= ALIGNED_MIN && fabs(s->cooldown) < COOLDOWN_MIN ? MODE_ALIGNED
										     : MODE_SHIFTED;
	}
}

static int stream_bytes_cmp(const void *a, const void *b, void *arg)
{
	const struct stream *s = arg;
	const struct stream *x = &s[*(const size_t *)a], *y = &s[*(const size_t *)b];

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static int stream_edge_cmp(const void *a, const void *b, void *arg)
{
	const struct stream *s = arg;
	const struct stream *x = &s[*(const size_t *)a], *y = &s[*(const size_t *)b];

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return (x->dst > y->dst) - (x->dst < y->dst);
}

struct family_edges {
	uint64_t hash; /* of its directed host pairs, in order */
	int family, job;
};

static int family_edges_cmp(const void *a, const void *b)
{
	const struct family_edges *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->family > y->family) - (x->family < y->family);
}

/*
 * Families that run over the same directed host pairs, every one, are one
 * collective on one ring: DDP's buckets of different sizes, NCCL's
 * channels with different shares. TP and DP groups join different ranks,
 * so they never share a ring's every edge. Renumbers the families; returns
 * how many are left.
 */
static int families_merge_rings(struct groups_ctx *c, size_t *idx, size_t n, int families)
{
	struct family_edges *fe = calloc((size_t)families + 1, sizeof(*fe));
	int *to = malloc(((size_t)families + 1) * sizeof(*to)), left = 0;

	if (!fe || !to) { /* out of memory: keep them apart */
		free(fe);
		free(to);
		return families;
	}
	qsort_r(idx, n, sizeof(*idx), stream_edge_cmp, c->s);
	for (int f = 0; f < families; f++)
		fe[f] = (struct family_edges){1469598103934665603ull, f, 0};
	for (size_t k = 0; k < n; k++) {
		const struct stream *s = &c->s[idx[k]];
		uint64_t pair = (uint64_t)s->src << 32 | s->dst;

		fe[s->family].job = s->job;
		for (int i = 0; i < 8; i++) /* FNV-1a over the pair's bytes */
			fe[s->family].hash = (fe[s->family].hash ^ ((pair >> (8 * i)) & 0xff)) *
					     1099511628211ull;
	}
	qsort(fe, (size_t)families, sizeof(*fe), family_edges_cmp);
	for (int f = 0; f < families; f++) {
		if (!f || fe[f].hash != fe[f - 1].hash || fe[f].job != fe[f - 1].job)
			left++;
		to[fe[f].family] = left - 1;
	}
	for (size_t k = 0; k < n; k++)
		c->s[idx[k]].family = to[c->s[idx[k]].family];
	free(fe);
	free(to);
	return left;
}

/* Families of one job's collective streams, by bytes per iteration. Returns how many. */
static int streams_family(struct groups_ctx *c, size_t *idx)
{
	size_t n = 0;
	int families = 0;

	for (size_t a = 0; a < c->n; a++)
		if (c->s[a].data && c->s[a].mode != MODE_SHIFTED && c->s[a].bytes > 0)
			idx[n++] = a;
	qsort_r(idx, n, sizeof(*idx), stream_bytes_cmp, c->s);
	for (size_t k = 0; k < n; k++) {
		struct stream *s = &c->s[idx[k]], *prev = k ? &c->s[idx[k - 1]] : NULL;

		if (!prev || prev->job != s->job || s->bytes > FAMILY_GAP * prev->bytes)
			families++;
		s->family = families - 1;
	}
	return families_merge_rings(c, idx, n, families);
}

/* Union-find over host indices. */
static size_t uf_find(size_t *parent, size_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/* A directed edge of a family's graph: an aligned stream gives one each way. */
struct edge {
	int family;
	uint32_t from, to;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return (x->from > y->from) - (x->from < y->from);
}

static size_t edges_build(const struct groups_ctx *c, struct edge *e)
{
	size_t n = 0;

	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];
		uint32_t x, y;

		if (!s->data || s->family < 0)
			continue;
		x = s->src;
		y = s->dst;
		e[n++] = (struct edge){s->family, x, y};
		if (s->mode == MODE_ALIGNED)
			e[n++] = (struct edge){s->family, y, x};
	}
	qsort(e, n, sizeof(*e), edge_cmp);
	return n;
}

/* The first edge of family f from host v in e (sorted by edge_cmp). */
static size_t edges_from(const struct edge *e, size_t n_edges, int f, uint32_t v)
{
	struct edge key = {f, v, 0};
	size_t lo = 0, hi = n_edges;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (edge_cmp(&e[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct scc_room {
	long *index, *low; /* per host, -1: not visited in this family */
	long *scc;	   /* per host: its component in this family */
	uint32_t *stack, *nodes;
	struct {
		uint32_t v;
		size_t next; /* its next edge to follow */
	} * frames;
};

/*
 * The strongly connected components of family f's graph (Tarjan's,
 * iterative): a one-way stream is a ring's step when its two hosts are in
 * one component (its destination reaches its source). Fills room->scc for
 * the family's hosts, listed in room->nodes; returns how many.
 */
static size_t family_scc(const struct edge *e, size_t n_edges, size_t lo, size_t hi,
			 struct scc_room *r)
{
	size_t n_nodes = 0, top = 0;
	long counter = 0, comp = 0;

	for (size_t k = lo; k < hi; k++)
		for (int end = 0; end < 2; end++) {
			uint32_t v = end ? e[k].to : e[k].from;

			if (r->index[v] == -1) {
				r->index[v] = -2; /* listed */
				r->nodes[n_nodes++] = v;
			}
		}
	for (size_t k = 0; k < n_nodes; k++)
		r->index[r->nodes[k]] = -1;
	for (size_t k = 0; k < n_nodes; k++) {
		size_t depth = 0;

		if (r->index[r->nodes[k]] >= 0)
			continue;
		r->frames[depth].v = r->nodes[k];
		r->frames[depth++].next = edges_from(e, n_edges, e[lo].family, r->nodes[k]);
		r->index[r->nodes[k]] = r->low[r->nodes[k]] = counter++;
		r->stack[top++] = r->nodes[k];
		r->scc[r->nodes[k]] = -1; /* on the stack */
		while (depth) {
			uint32_t v = r->frames[depth - 1].v;
			size_t *next = &r->frames[depth - 1].next;

			if (*next < hi && e[*next].from == v) {
				uint32_t w = e[(*next)++].to;

				if (r->index[w] < 0) {
					r->index[w] = r->low[w] = counter++;
					r->stack[top++] = w;
					r->scc[w] = -1; /* on the stack */
					r->frames[depth].v = w;
					r->frames[depth++].next =
						edges_from(e, n_edges, e[lo].family, w);
				} else if (r->scc[w] == -1 && r->index[w] < r->low[v]) {
					r->low[v] = r->index[w];
				}
				continue;
			}
			if (r->low[v] == r->index[v]) { /* v roots a component */
				uint32_t w;

				do {
					w = r->stack[--top];
					r->scc[w] = comp;
				} while (w != v);
				comp++;
			}
			if (--depth && r->low[v] < r->low[r->frames[depth - 1].v])
				r->low[r->frames[depth - 1].v] = r->low[v];
		}
	}
	return n_nodes;
}

/*
 * The host every data stream starts or ends at, when exactly one is (a
 * third host sends or receives): the capture is that host's view, as its
 * agent sees it. -1 otherwise.
 */
static long vantage_host(const struct groups_ctx *c)
{
	long cand[2] = {-1, -1};
	int seen = 0;

	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];

		if (!s->data)
			continue;
		if (!seen++) {
			cand[0] = s->src;
			cand[1] = s->dst;
		}
		for (int k = 0; k < 2; k++)
			if (cand[k] != (long)s->src && cand[k] != (long)s->dst)
				cand[k] = -1;
	}
	return cand[1] < 0 ? cand[0] : cand[0] < 0 ? cand[1] : -1;
}

/*
 * A ring through the vantage host of a host's view closes outside it: the
 * view holds the family's step into the host and the step out of it (the
 * same bytes per iteration), never the rest of the ring.
 */
static int passes_through(const struct edge *e, size_t lo, size_t hi, long v)
{
	int in = 0, out = 0;

	for (size_t x = lo; x < hi && v >= 0; x++) {
		in |= (long)e[x].to == v;
		out |= (long)e[x].from == v;
	}
	return in && out;
}

/* Mark the one-way streams that close no ring of their family as Other. */
static int rings_close(struct groups_ctx *c, size_t n_hosts, const struct edge *e, size_t n_edges,
		       size_t *idx)
{
	long vantage = vantage_host(c);
	struct scc_room r = {0};
	size_t n = 0;
	int err = -ENOMEM;

	r.index = malloc((n_hosts + 1) * sizeof(*r.index));
	r.low = malloc((n_hosts + 1) * sizeof(*r.low));
	r.scc = malloc((n_hosts + 1) * sizeof(*r.scc));
	r.stack = malloc((n_hosts + 1) * sizeof(*r.stack));
	r.nodes = malloc((n_hosts + 1) * sizeof(*r.nodes));
	r.frames = malloc((n_hosts + 1) * sizeof(*r.frames));
	if (!r.index || !r.low || !r.scc || !r.stack || !r.nodes || !r.frames)
		goto cleanup;
	for (size_t x = 0; x < n_hosts; x++)
		r.index[x] = -1;
	/* the one-way streams by family */
	for (size_t a = 0; a < c->n; a++)
		if (c->s[a].data && c->s[a].mode == MODE_ONE_WAY && c->s[a].family >= 0)
			idx[n++] = a;
	qsort_r(idx, n, sizeof(*idx), stream_edge_cmp, c->s);
	for (size_t k = 0, lo = 0; k < n;) {
		int f = c->s[idx[k]].family, through;
		size_t hi, n_nodes;

		lo = edges_from(e, n_edges, f, 0);
		for (hi = lo; hi < n_edges && e[hi].family == f; hi++)
			;
		for (size_t x = lo; x < hi; x++) /* -1: "on the stack" in family_scc */
			r.scc[e[x].from] = r.scc[e[x].to] = -2;
		n_nodes = family_scc(e, n_edges, lo, hi, &r);
		through = passes_through(e, lo, hi, vantage);
		for (; k < n && c->s[idx[k]].family == f; k++) {
			struct stream *s = &c->s[idx[k]];

			if (r.scc[s->src] != r.scc[s->dst] && !through) {
				s->cls = CT_CLASS_OTHER;
				s->family = -1;
			}
		}
		for (size_t x = 0; x < n_nodes; x++)
			r.index[r.nodes[x]] = -1;
	}
	err = 0;
cleanup:
	free(r.index);
	free(r.low);
	free(r.scc);
	free(r.stack);
	free(r.nodes);
	free(r.frames);
	return err;
}

struct family {
	int job;
	size_t streams;
	double bytes, msgs;	 /* per iteration, summed over its streams */
	double hist[PHASE_BINS]; /* its streams' bytes by phase */
	double span;		 /* the shortest share of the iteration with BUSY_SHARE of them */
	int emb;		 /* every stream joins the two ends of one pipeline chain */
	int cls;
	double confidence;
	char why[160];
};

struct job_shape {
	int pipeline;		  /* the job has pipeline streams */
	double pp_msgs, pp_bytes; /* per pipeline stream and iteration, the largest */
};

/*
 * The shortest share of the iteration (circular: where it starts is the
 * estimator's choice) that holds share of a histogram's bytes.
 */
static double busy_span(const double *hist, double share)
{
	double total = 0;
	int best = PHASE_BINS;

	for (int k = 0; k < PHASE_BINS; k++)
		total += hist[k];
	if (total <= 0)
		return 1;
	for (int k = 0; k < PHASE_BINS; k++) {
		double run = 0;
		int len = 0;

		while (len < PHASE_BINS && run < share * total)
			run += hist[(k + len++) % PHASE_BINS];
		if (len < best)
			best = len;
	}
	return (double)best / PHASE_BINS;
}

/*
 * The classes of a job's collective families: the embedding sync between
 * the ends of a chain; then TP runs per layer and micro-batch, DP per
 * iteration (or bucket), so where the rates of two families differ by
 * TP_RATE_RATIO the faster are TP. Families alike are one kind: beside a
 * pipeline, TP sends at least as often as the pipeline (2 collectives a
 * layer for each micro-batch it forwards) or, where messages merge (a
 * socket's back-to-back sends), TP_PP_BYTES times its bytes (activations
 * all-reduced per layer against one activation per stage); otherwise DP.
 */
static void name_families(struct family *fam, int nf, const struct job_shape *shape)
{
	for (int f = 0; f < nf; f++) {
		struct family *F = &fam[f];
		const struct job_shape *js = &shape[F->job];
		double top = 0, low = INFINITY, btop = 0, blow = INFINITY, rate, bytes;
		int tp;

		if (!F->streams)
			continue;
		if (F->emb) {
			F->cls = CT_CLASS_EMB;
			F->confidence = 0.9;
			snprintf(F->why, sizeof(F->why),
				 "a collective between the two ends of a pipeline chain");
			continue;
		}
		for (int g = 0; g < nf; g++) {
			const struct family *G = &fam[g];

			if (G->job != F->job || !G->streams || G->emb)
				continue;
			top = fmax(top, G->msgs / (double)G->streams);
			low = fmin(low, G->msgs / (double)G->streams);
			btop = fmax(btop, G->bytes / (double)G->streams);
			blow = fmin(blow, G->bytes / (double)G->streams);
		}
		rate = F->msgs / (double)F->streams;
		bytes = F->bytes / (double)F->streams;
		if (top < TP_RATE_RATIO * fmax(low, 1e-9) && btop >= TP_PP_BYTES * blow) {
			/* messages merged (a socket's back-to-back sends): the volume tells */
			tp = bytes * TP_PP_BYTES > btop;
			F->confidence = 0.7;
			snprintf(F->why, sizeof(F->why),
				 "%.0f B an iteration, the job's collectives %.0f-%.0f: %s", bytes,
				 blow, btop,
				 tp ? "activations per layer and micro-batch (TP)"
				    : "gradients once an iteration (DP)");
		} else if (top >= TP_RATE_RATIO * fmax(low, 1e-9)) {
			tp = rate * TP_RATE_RATIO > top;
			F->confidence = 0.7;
			snprintf(F->why, sizeof(F->why),
				 "%.1f messages an iteration, the job's collectives %.1f-%.1f: %s",
				 rate, low, top,
				 tp ? "per layer and micro-batch (TP)"
				    : "per iteration or bucket (DP)");
		} else if (js->pipeline) {
			tp = rate >= js->pp_msgs || bytes >= TP_PP_BYTES * js->pp_bytes;
			F->confidence = 0.7;
			snprintf(F->why, sizeof(F->why),
				 "%.1f messages and %.0f B an iteration against the pipeline's "
				 "%.1f and "
				 "%.0f: %s",
				 rate, bytes, js->pp_msgs, js->pp_bytes,
				 tp ? "per layer and micro-batch (TP)" : "per iteration (DP)");
		} else {
			/* a sync this short cannot be TP, which runs through every pass */
			tp = 0;
			F->confidence = F->span <= DP_SPAN_SURE ? 0.85 : 0.6;
			snprintf(F->why, sizeof(F->why),
				 "the job's only kind of collective, no pipeline, busy %.0f%% of "
				 "the "
				 "iteration: data parallel",
				 100 * F->span);
			F->cls = CT_CLASS_DP;
			continue;
		}
		/* the busy span says the same: TP through every pass, DP in one sync */
		if (tp ? F->span >= TP_SPAN_SURE : F->span <= DP_SPAN_SURE)
			F->confidence = 0.9;
		F->cls = tp ? CT_CLASS_TP : CT_CLASS_DP;
	}
}

/* At most one stream per member flow: the steady flows and the sockets' ways back. */
static size_t streams_bound(const struct ct_flow_set *set, const struct ct_periodicity *per,
			    const uint8_t *steady)
{
	size_t n = 0;

	for (size_t i = 0; i < set->count; i++)
		if (steady[i] && per->flows[i].n_bursts)
			n += 1 + (set->flows[i].reverse >= 0);
	return n;
}

/* Streams of the data flows marked in steady, then of their sockets' other directions. */
static int streams_build(struct groups_ctx *c, const uint8_t *steady)
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
		s->job = job_of(c->per, c->members[k]) < 0 ? 0 : job_of(c->per, c->members[k]);
		s->first = k;
		s->n = e - k;
		for (size_t x = k; x < e; x++)
			c->stream_of[c->members[x]] = (int64_t)(c->n - 1);
		s->data = k < data_members;
		s->family = -1;
		s->cls = -1;
		stream_measure(c, s);
	}
	return 0;
}

static int pair_cmp(const void *a, const void *b)
{
	const size_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/*
 * Pipeline chains: components of the shifted streams, and each host's
 * distinct pipeline neighbours (pairs: room for 2 entries per stream).
 */
static size_t pipeline_chains(const struct groups_ctx *c, size_t n_hosts, size_t *parent,
			      unsigned *degree, size_t *pairs)
{
	size_t n = 0, w = 0;

	for (size_t x = 0; x < n_hosts; x++) {
		parent[x] = x;
		degree[x] = 0;
	}
	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];
		size_t x, y;

		if (!s->data || s->cls != CT_CLASS_PP)
			continue;
		x = s->src;
		y = s->dst;
		pairs[2 * n] = x < y ? x : y;
		pairs[2 * n + 1] = x < y ? y : x;
		n++;
		parent[uf_find(parent, x)] = uf_find(parent, y);
	}
	qsort(pairs, n, 2 * sizeof(*pairs), pair_cmp);
	for (size_t k = 0; k < n; k++)
		if (!k || pair_cmp(&pairs[2 * k], &pairs[2 * k - 2])) {
			degree[pairs[2 * k]]++;
			degree[pairs[2 * k + 1]]++;
			pairs[2 * w] = pairs[2 * k];
			pairs[2 * w + 1] = pairs[2 * k + 1];
			w++;
		}
	return w; /* distinct neighbour pairs, sorted */
}

/* Whether hosts x and y are pipeline neighbours (pairs from pipeline_chains). */
static int pipeline_neighbours(const size_t *pairs, size_t n, size_t x, size_t y)
{
	size_t key[2] = {x < y ? x : y, x < y ? y : x};

	return bsearch(key, pairs, n, 2 * sizeof(*pairs), pair_cmp) != NULL;
}

static void classify_streams(const struct groups_ctx *c, const struct family *fam,
			     struct ct_classification *out)
{
	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];

		if (!s->data)
			continue;
		for (size_t k = 0; k < s->n; k++) {
			struct ct_flow_class *fc = &out->flows[c->members[s->first + k]];

			if (s->cls == CT_CLASS_PP)
				ct_class_set(
					fc, CT_CLASS_PP, CT_CLASS_BY_SIGNATURE,
					fmax(1 - s->lag0, fmin(0.95, 0.5 + 10 * fabs(s->cooldown))),
					"p2p both ways, not as one collective (aligned %.2f, one "
					"direction ends %.1f%% of the iteration after the "
					"other), %.1f messages an iteration: a pipeline's "
					"activations and gradients",
					s->lag0, 100 * fabs(s->cooldown), s->msgs);
			else if (s->cls == CT_CLASS_OTHER)
				ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE, 0.7,
					     "one way with nothing back, and no ring of its size "
					     "closes through it: no collective");
			else if (s->family >= 0)
				ct_class_set(fc, (enum ct_class)fam[s->family].cls,
					     CT_CLASS_BY_SIGNATURE, fam[s->family].confidence,
					     "%s (%s, %.0f B an iteration, %zu streams alike): %s",
					     s->mode == MODE_ONE_WAY ? "a ring's step"
								     : "both ways at once",
					     s->n > 1 ? "several channels" : "one channel",
					     s->bytes, fam[s->family].streams, fam[s->family].why);
		}
	}
}

int ct_classify_groups(const struct ct_flow_set *set, const struct ct_periodicity *per,
		       const struct ct_hosts *hosts, const uint8_t *steady,
		       struct ct_classification *out)
{
	struct groups_ctx c = {set, per, NULL, NULL, 0, NULL, hosts};
	struct family *fam = NULL;
	struct job_shape *shape = NULL;
	size_t *idx = NULL, *parent = NULL, *pairs = NULL;
	struct edge *edges = NULL;
	unsigned *degree = NULL;
	size_t jobs = per->n_jobs ? per->n_jobs : 1;
	size_t n_edges, n_pp_pairs;
	int nf, err = -ENOMEM;

	c.members = malloc((2 * set->count + 1) * sizeof(*c.members));
	c.s = malloc((streams_bound(set, per, steady) + 1) * sizeof(*c.s));
	idx = malloc((2 * set->count + 1) * sizeof(*idx));
	shape = calloc(jobs, sizeof(*shape));
	c.stream_of = malloc((set->count + 1) * sizeof(*c.stream_of));
	if (!c.members || !c.s || !idx || !shape || !c.stream_of)
		goto cleanup;
	for (size_t i = 0; i < set->count; i++)
		c.stream_of[i] = -1;
	streams_build(&c, steady);
	{
		size_t iters = 0;
		uint64_t *room;
		double *lags;

		for (size_t j = 0; j < per->n_jobs; j++)
			if (ct_periodicity_job_period(per, j)->iterations > iters)
				iters = ct_periodicity_job_period(per, j)->iterations;
		if (per->job.iterations > iters)
			iters = per->job.iterations;
		room = malloc((2 * iters + 2) * sizeof(*room));
		lags = malloc((iters + 1) * sizeof(*lags));
		if (room && lags)
			streams_pair(&c, idx, room, lags);
		free(room);
		free(lags);
		if (!room || !lags)
			goto cleanup;
	}

	parent = malloc((hosts->n + 1) * sizeof(*parent));
	degree = malloc((hosts->n + 1) * sizeof(*degree));
	pairs = malloc((2 * c.n + 1) * sizeof(*pairs));
	edges = malloc((2 * c.n + 1) * sizeof(*edges));
	if (!parent || !degree || !pairs || !edges)
		goto cleanup;

	/* pipelines: both ways, at other times */
	for (size_t a = 0; a < c.n; a++)
		if (c.s[a].data && c.s[a].mode == MODE_SHIFTED) {
			struct job_shape *js = &shape[c.s[a].job];

			c.s[a].cls = CT_CLASS_PP;
			js->pipeline = 1;
			js->pp_msgs = fmax(js->pp_msgs, c.s[a].msgs);
			js->pp_bytes = fmax(js->pp_bytes, c.s[a].bytes);
		}
	n_pp_pairs = pipeline_chains(&c, hosts->n, parent, degree, pairs);

	/* collectives: families of equal bytes; a one-way step must close a ring */
	nf = streams_family(&c, idx);
	n_edges = edges_build(&c, edges);
	if (rings_close(&c, hosts->n, edges, n_edges, idx))
		goto cleanup;
	fam = calloc((size_t)nf + 1, sizeof(*fam));
	if (!fam)
		goto cleanup;
	for (int f = 0; f < nf; f++)
		fam[f].emb = 1;
	for (size_t a = 0; a < c.n; a++) {
		const struct stream *s = &c.s[a];
		struct family *F;
		const struct job_shape *js;
		size_t x, y;

		if (!s->data || s->family < 0)
			continue;
		F = &fam[s->family];
		js = &shape[s->job];
		x = s->src;
		y = s->dst;
		F->job = s->job;
		F->streams++;
		F->bytes += s->bytes;
		F->msgs += s->msgs;
		for (int k = 0; k < PHASE_BINS; k++)
			F->hist[k] += s->hist[k];
		/*
		 * The first and last stage: the two ends of one chain (the same
		 * component, one pipeline neighbour each), or neighbours (two
		 * stages; or interleaved stages, whose chain closes into a ring
		 * through that pair). TP and DP groups join hosts of one stage.
		 */
		if (!js->pipeline || !(pipeline_neighbours(pairs, n_pp_pairs, x, y) ||
				       (uf_find(parent, x) == uf_find(parent, y) &&
					degree[x] == 1 && degree[y] == 1)))
			F->emb = 0;
	}
	for (int f = 0; f < nf; f++)
		fam[f].span = busy_span(fam[f].hist, BUSY_SHARE);
	name_families(fam, nf, shape);
	for (int f = 0; f < nf; f++)
		ct_log(CT_LOG_DEBUG,
		       "groups: family %d job %d: %zu streams, %.0f B/it, %.1f msgs/it, busy "
		       "%.0f%% "
		       "of the iteration, %s%s\n",
		       f, fam[f].job, fam[f].streams, fam[f].bytes, fam[f].msgs, 100 * fam[f].span,
		       ct_class_name(fam[f].cls), fam[f].emb ? " (chain ends)" : "");
	for (size_t a = 0; a < c.n; a++)
		if (c.s[a].data && c.s[a].family >= 0)
			c.s[a].cls = fam[c.s[a].family].cls;
	for (size_t a = 0; a < c.n; a++) {
		const struct stream *s = &c.s[a];

		if (s->data)
			ct_log(CT_LOG_DEBUG,
			       "groups: stream %zu job %d %zu flows, %.0f B/it %.1f msgs/it, mode "
			       "%d "
			       "aligned %.2f lag %d cooldown %.4f, family %d, class %s\n",
			       c.members[s->first], s->job, s->n, s->bytes, s->msgs, s->mode,
			       s->lag0, s->best_lag, s->cooldown, s->family,
			       s->cls < 0 ? "-" : ct_class_name(s->cls));
	}
	classify_streams(&c, fam, out);
	err = 0;
cleanup:
	free(c.members);
	free(c.s);
	free(c.stream_of);
	free(idx);
	free(shape);
	free(parent);
	free(pairs);
	free(edges);
	free(degree);
	free(fam);
	return err;
}
