// SPDX-License-Identifier: MIT
/*
 * Classification by traffic signatures alone, the way a person reads a
 * heatmap of a training job:
 *   - traffic that does not recur every iteration is Other (storage,
 *     checkpoints, control);
 *   - bursts at any moment of the iteration are Other too;
 *   - bursts whose sizes do not repeat are expert all-to-all (EP): token
 *     routing moves different bytes each time, every other class moves the
 *     same tensors every iteration;
 *   - data both ways between two hosts, several bursts an iteration, is a
 *     pipeline (PP: activations forward, gradients back, per micro-batch);
 *   - with a pipeline present, data both ways between two hosts that are
 *     not neighbours in it is EmbTableSyn (first and last stage);
 *   - the rest repeats once an iteration around a ring: DP.
 */
#include "classify_internal.h"
#include "streams.h"

#include <commtap/log.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EP_SIZE_VARIETY 0.5 /* share of a flow's bursts with a size of their own */
#define PHASE_STEADY	0.6 /* phase concentration of a flow that belongs to the iteration */
/*
 * Bytes per iteration vary (cut at the flow's own pause): the other
 * classes repeat to the byte. On the development corpus collectives vary
 * by at most 0.33% (real gloo DP; TP 0.14%), all-to-all flows by 0.66-5.8%
 * (5th percentile 1.09%); the channels below it follow their siblings.
 */
#define EP_VOLUME_SPREAD 0.01
#define EP_MIN_BURSTS	 2.0 /* all-to-all runs per MoE layer: several times an iteration */
/* an all-to-all's data comes back: more than the ACKs of what was sent (see classify_groups.c) */
#define EP_BACK_SHARE 0.1

static int pair_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 2 * sizeof(struct ct_addr));
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A flow's few values: an insertion sort beats qsort's calls below this. */
#define SMALL_SORT 48

static void sort_doubles(double *v, size_t n)
{
	if (n > SMALL_SORT) {
		qsort(v, n, sizeof(*v), double_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;

		for (; j && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The median of n >= 1 values (v is sorted). */
static double median_of(double *v, size_t n)
{
	sort_doubles(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Where each of a flow's bursts falls in its job: found once per burst. */
struct burst_place {
	long it;   /* iteration, -1 outside them */
	double ph; /* phase in it, -1 where the job has none */
};

static void place_bursts(const struct ct_flow_periodicity *fp, const struct ct_period *job,
			 struct burst_place *at)
{
	for (size_t i = 0; i < fp->n_bursts; i++) {
		at[i].it = ct_period_iteration(job, fp->bursts[i].start);
		at[i].ph = ct_period_phase_in(job, at[i].it, fp->bursts[i].start);
	}
}

/*
 * The share of a flow's bursts whose size no other burst shares (within
 * 1%): the classes that move the same tensors every iteration repeat their
 * sizes, token routing (EP) gives every all-to-all a size of its own.
 */
static double size_variety(const struct ct_flow_periodicity *fp, double *scratch)
{
	size_t groups = 0;

	if (fp->n_bursts < 2)
		return 0;
	for (size_t i = 0; i < fp->n_bursts; i++)
		scratch[i] = (double)fp->bursts[i].bytes;
	sort_doubles(scratch, fp->n_bursts);
	for (size_t i = 0; i < fp->n_bursts; i++)
		groups += !i || scratch[i] > scratch[i - 1] * 1.01;
	return (double)(groups - 1) / (double)(fp->n_bursts - 1);
}

/*
 * cos and sin of a phase given in turns (0..1), from a table of 256 angles
 * and the short series of the remainder (under 1/256 turn: the series'
 * error is below 1e-19, the sum's a few ulp). libm's sincos was 18% of the
 * signatures' pass: two calls per flow and iteration.
 */
#define TURN_STEPS 256

static double turn_cos[TURN_STEPS + 1], turn_sin[TURN_STEPS + 1];
static pthread_once_t turn_once = PTHREAD_ONCE_INIT;

static void turn_table(void)
{
	for (int k = 0; k <= TURN_STEPS; k++) {
		turn_cos[k] = cos(2 * M_PI * k / TURN_STEPS);
		turn_sin[k] = sin(2 * M_PI * k / TURN_STEPS);
	}
}

static void turn_sincos(double turns, double *sn, double *cs)
{
	double at = turns * TURN_STEPS, r, r2, sr, cr;
	int k;

	if (!(at >= 0 && at < TURN_STEPS)) { /* outside one turn: libm */
		*sn = sin(2 * M_PI * turns);
		*cs = cos(2 * M_PI * turns);
		return;
	}
	k = (int)at;
	r = (at - k) * (2 * M_PI / TURN_STEPS);
	r2 = r * r;
	sr = r * (1 - r2 / 6 * (1 - r2 / 20 * (1 - r2 / 42)));
	cr = 1 - r2 / 2 * (1 - r2 / 12 * (1 - r2 / 30 * (1 - r2 / 56)));
	*sn = turn_sin[k] * cr + turn_cos[k] * sr;
	*cs = turn_cos[k] * cr - turn_sin[k] * sr;
}

/* The length of the mean of n unit vectors summed in (x, y). */
static double resultant(double x, double y, size_t n)
{
	return n ? sqrt(x * x + y * y) / (double)n : 0;
}

/*
 * How steadily a flow's first burst of each iteration sits at one phase:
 * the length of the mean of the phases as unit vectors (1: always the same
 * moment; about 1/sqrt(iterations): anywhere, like storage traffic). Taken
 * three ways, and the steadiest counts:
 *   - inside the iterations found (they follow the jitter);
 *   - on a grid of the mean period from the first iteration (right where
 *     the iteration starts were misplaced by traffic as large as the
 *     job's, drifting only by the period's error);
 *   - from one iteration to the next: the mean cosine of the change of
 *     phase (1: the flow stays put). Where the job's rhythm changes once,
 *     a rank slowed from some iteration on, the iterations' starts are
 *     found at another point of the schedule and every flow's phase moves
 *     at once (real 2-2-2, rank 6 asleep 50 ms: its DP flows from 0.82 to
 *     0.46, each read at 0.51-0.58), while from one iteration to the next
 *     the flow stays put (0.81-0.83). Traffic that is not the job's
 *     changes its phase at random (about 0), and traffic of a period of
 *     its own moves on by the same step each time (synthesized storage
 *     writes: a mean step of half an iteration, -0.46; the length of the
 *     mean step, 0.47, would have read it steadier than its phases).
 * data_only: the first burst of data (ct_burst_carries_data), else the
 * first of any.
 */
static double phase_steadiness(const struct ct_flow_periodicity *fp, const struct ct_period *job,
			       const struct burst_place *at, int data_only)
{
	double x = 0, y = 0, gx = 0, gy = 0, dx = 0, grid_ns = job->period_s * 1e9;
	double pc = 0, ps = 0, found, grid, change;
	long last = -1, glast = -1;
	size_t n = 0, gn = 0, dn = 0;

	for (size_t i = 0; i < fp->n_bursts; i++) {
		uint64_t t = fp->bursts[i].start;
		long it = at[i].it;
		double sn, cs;

		if (data_only && !ct_burst_carries_data(&fp->bursts[i]))
			continue;
		if (grid_ns > 0 && job->iterations && t >= job->starts[0]) {
			double on_grid = (double)(t - job->starts[0]) / grid_ns;
			long g = (long)on_grid;

			if (g != glast) {
				glast = g;
				turn_sincos(on_grid - (double)g, &sn, &cs);
				gx += cs;
				gy += sn;
				gn++;
			}
		}
		if (it < 0 || it == last)
			continue;
		turn_sincos(at[i].ph, &sn, &cs);
		if (n && it == last + 1) { /* the cosine of the change from the last */
			dx += cs * pc + sn * ps;
			dn++;
		}
		last = it;
		pc = cs;
		ps = sn;
		x += cs;
		y += sn;
		n++;
	}
	found = resultant(x, y, n);
	grid = resultant(gx, gy, gn);
	change = dn ? dx / (double)dn : 0; /* staying put, not a steady drift */
	return fmax(found, fmax(grid, change));
}

/*
 * A flow's phase concentration: the steadier of its first bursts of any
 * kind and its first bursts of data. A socket used both ways acknowledges
 * the other direction's data in its gaps: a bare acknowledgement first
 * placed real 2-2-2 DP iterations at random (5 of 19 at 0.04-0.13 against
 * 0.44-0.50 for the data), while a late rank's acknowledgements keep the
 * rhythm its peers set where its own data wanders (real MoE, rank 1
 * asleep 40 ms: 0.58-0.59 by its data, 0.89 by all its bursts).
 */
static double phase_concentration(const struct ct_flow_periodicity *fp, const struct ct_period *job,
				  const struct burst_place *at)
{
	double any;

	pthread_once(&turn_once, turn_table);
	any = phase_steadiness(fp, job, at, 0);
	for (size_t i = 0; i < fp->n_bursts; i++)
		if (!ct_burst_carries_data(&fp->bursts[i])) /* else both read alike */
			return fmax(any, phase_steadiness(fp, job, at, 1));
	return any;
}

#define OWN_BINS 16 /* phase bins in which a flow's own pause is looked for */

/*
 * How much a flow's bytes per iteration vary, robustly: 1.4826 MAD over the
 * median. The iterations are cut where the flow itself pauses (the phase
 * bin where it sends least), not at the job's iteration starts: a
 * collective at the end of the iteration straddles those starts as they
 * jitter, and would seem to move different bytes each time. The first and
 * last iterations may be cut by the capture and are left out. scratch:
 * room for job->iterations + 1 doubles and the flow's bursts.
 */
static double variation_cut_at(const struct ct_flow_periodicity *fp, const struct ct_period *job,
			       const struct burst_place *at, double pause, double *scratch);

static double volume_variation(const struct ct_flow_periodicity *fp, const struct ct_period *job,
			       const struct burst_place *at, double *scratch)
{
	double hist[OWN_BINS] = {0};
	size_t quiet = 0;

	if (job->iterations < 4)
		return 0;
	for (size_t i = 0; i < fp->n_bursts; i++) {
		double ph = at[i].ph;

		if (ph >= 0 && ph < 1)
			hist[(int)(ph * OWN_BINS)] += (double)fp->bursts[i].bytes;
	}
	for (size_t k = 1; k < OWN_BINS; k++)
		if (hist[k] < hist[quiet])
			quiet = k;
	/*
	 * A flow busy through most of the iteration has no clear pause, and
	 * its quietest bin can fall inside its traffic, cutting its windows
	 * unevenly (a real ZeRO-3 all-gather step: 23-26% where its ring
	 * neighbours gave 0.03%): cut at the iteration starts too, and take
	 * the steadier. Token routing varies under any cut.
	 */
	return fmin(variation_cut_at(fp, job, at, (double)quiet / OWN_BINS, scratch),
		    variation_cut_at(fp, job, at, 0, scratch));
}

/* The variation of bytes per window, windows cut at phase pause (see volume_variation). */
static double variation_cut_at(const struct ct_flow_periodicity *fp, const struct ct_period *job,
			       const struct burst_place *at, double pause, double *scratch)
{
	double median, mad;
	size_t n = 0, iters = job->iterations;

	memset(scratch, 0, (iters + 1) * sizeof(*scratch));
	for (size_t i = 0; i < fp->n_bursts; i++) {
		if (at[i].it < 0)
			continue;
		/* before its pause: the end of the window that began in the previous iteration */
		scratch[(size_t)at[i].it + (at[i].ph >= pause)] += (double)fp->bursts[i].bytes;
	}
	/* windows 1 .. iters-1 are whole (window 0 and the last may be cut) */
	for (size_t k = 2; k + 1 < iters; k++)
		scratch[n++] = scratch[k];
	if (n < 3)
		return 0;
	median = median_of(scratch, n);
	if (median <= 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(scratch[i] - median);
	mad = median_of(scratch, n);
	return 1.4826 * mad / median;
}

#define SIBLING_MAJORITY 0.66 /* of a group's bytes, to carry its other flows */

/*
 * By source, destination, then bursts: the channels (QPs, sockets) of one
 * collective. Hosts by rank (address order, as the addresses compare) and
 * the rest packed in one word: two integer compares, no memcmp of the keys.
 */
struct sibling_key {
	uint64_t pair;	      /* source rank << 32 | destination rank */
	uint64_t bursts_flow; /* bursts << 32 | flow */
};

static int sibling_cmp(const void *a, const void *b)
{
	const struct sibling_key *x = a, *y = b;

	if (x->pair != y->pair)
		return x->pair < y->pair ? -1 : 1;
	return (x->bursts_flow > y->bursts_flow) - (x->bursts_flow < y->bursts_flow);
}

/*
 * NCCL spreads one collective over several channels, each a QP (or socket)
 * between the same two hosts with the same bursts: they share a class. Where
 * most of such a group's bytes (SIBLING_MAJORITY) read as one class, the
 * group's other flows — read otherwise on a weaker signal, say an
 * all-to-all whose sizes happened to repeat on one channel — follow it.
 */
static int siblings_agree(const struct ct_flow_set *set, const struct ct_periodicity *per,
			  const struct ct_hosts *hosts, const uint8_t *to_classify, uint8_t *steady,
			  struct ct_classification *out)
{
	struct sibling_key *key;
	size_t *idx, n = 0;

	if (!per)
		return 0; /* no periodicity (out of memory for it): no bursts to group by */
	if (set->count > UINT32_MAX)
		return -EOVERFLOW;
	key = malloc((set->count + 1) * sizeof(*key));
	idx = malloc((set->count + 1) * sizeof(*idx));
	if (!key || !idx) {
		free(key);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < set->count; i++) {
		uint64_t bursts = per->flows[i].n_bursts;

		if (!to_classify[i] || !bursts)
			continue;
		key[n].pair = (uint64_t)hosts->src[i] << 32 | hosts->dst[i];
		key[n].bursts_flow = (bursts < UINT32_MAX ? bursts : UINT32_MAX) << 32 | i;
		n++;
	}
	qsort(key, n, sizeof(*key), sibling_cmp);
	for (size_t k = 0; k < n; k++)
		idx[k] = (uint32_t)key[k].bursts_flow;
	free(key);
	for (size_t a = 0, b; a < n; a = b) {
		uint64_t by_class[CT_CLASS_COUNT + 1] = {0}, total = 0;
		unsigned best = 0;

		for (b = a + 1; b < n && hosts->src[idx[a]] == hosts->src[idx[b]] &&
				hosts->dst[idx[a]] == hosts->dst[idx[b]] &&
				per->flows[idx[a]].n_bursts == per->flows[idx[b]].n_bursts;
		     b++)
			;
		if (b - a < 3)
			continue;
		for (size_t k = a; k < b; k++) {
			/* before the groups: steady flows are not classified yet */
			if (!steady || !steady[idx[k]])
				by_class[out->flows[idx[k]].cls] += set->flows[idx[k]].bytes;
			total += set->flows[idx[k]].bytes;
		}
		for (unsigned c = 1; c <= CT_CLASS_COUNT; c++)
			if (by_class[c] > by_class[best])
				best = c;
		if ((double)by_class[best] < SIBLING_MAJORITY * (double)total ||
		    (steady && best != CT_CLASS_EP))
			continue;
		for (size_t k = a; k < b; k++) {
			struct ct_flow_class *fc = &out->flows[idx[k]];

			if (steady ? !steady[idx[k]] : fc->cls == best)
				continue;
			if (steady)
				steady[idx[k]] = 0;
			fc->op = best == CT_CLASS_EP ? CT_OP_ALLTOALL : fc->op;
			ct_class_set(
				fc, (enum ct_class)best, CT_CLASS_BY_SIGNATURE, 0.7,
				"like %.0f%% of the bytes of its %zu sibling channels (same hosts, "
				"same bursts): one collective; read alone as %s",
				100.0 * (double)by_class[best] / (double)total, b - a,
				steady ? "a collective's steady channel" : ct_class_name(fc->cls));
		}
	}
	free(idx);
	return 0;
}

/* Bytes sent from src to dst by every flow, for the question "does data come back?". */
struct pair_bytes {
	struct ct_addr src, dst;
	uint64_t bytes;
};

static struct pair_bytes *pair_bytes_build(const struct ct_flow_set *set, size_t *n_out)
{
	struct pair_bytes *p = malloc((set->count + 1) * sizeof(*p));
	size_t w = 0;

	if (!p)
		return NULL;
	for (size_t i = 0; i < set->count; i++)
		p[i] = (struct pair_bytes){set->flows[i].key.src, set->flows[i].key.dst,
					   set->flows[i].bytes};
	qsort(p, set->count, sizeof(*p), pair_cmp);
	for (size_t i = 0; i < set->count; i++) {
		if (w && !pair_cmp(&p[i], &p[w - 1]))
			p[w - 1].bytes += p[i].bytes;
		else
			p[w++] = p[i];
	}
	*n_out = w;
	return p;
}

static uint64_t bytes_back(const struct pair_bytes *p, size_t n, const struct ct_flow_key *k)
{
	struct pair_bytes probe = {k->dst, k->src, 0};
	const struct pair_bytes *hit = bsearch(&probe, p, n, sizeof(*p), pair_cmp);

	return hit ? hit->bytes : 0;
}

/*
 * Token routing sends from every host of an expert group to every other:
 * among three hosts or more, a mesh. Flows read as EP on their varying
 * volume alone (their sizes repeat) whose hosts form a path of three or
 * more (each with two such neighbours at most, no cycle) are no
 * all-to-all: a pipeline's links or a ring's steps whose windows cut
 * unevenly (real 1F1B p = 4: one chain's links varied 8-10%, read as EP
 * at 0.8; a real ZeRO-3 all-gather step 9.5%). They go back to the steady
 * flows, for the groups to read. An expert group of two hosts is one
 * edge, and stays. Returns 0 or -ENOMEM.
 */
static int ep_paths_demote(const struct ct_flow_set *set, const struct ct_hosts *hosts,
			   const uint8_t *by_volume, uint8_t *steady, struct ct_classification *out)
{
	size_t n = hosts->n, n_pairs = 0;
	size_t *parent = malloc((n + 1) * sizeof(*parent));
	unsigned *deg = calloc(n + 1, sizeof(*deg)), *size = calloc(n + 1, sizeof(*size));
	unsigned *edges = calloc(n + 1, sizeof(*edges)), *most = calloc(n + 1, sizeof(*most));
	uint64_t *pairs = malloc((set->count + 1) * sizeof(*pairs));
	int err = -ENOMEM;

	if (!parent || !deg || !size || !edges || !most || !pairs)
		goto cleanup;
	for (size_t x = 0; x < n; x++)
		parent[x] = x;
	for (size_t i = 0; i < set->count; i++) {
		uint32_t a = hosts->src[i], b = hosts->dst[i];

		if (by_volume[i])
			pairs[n_pairs++] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
	}
	qsort(pairs, n_pairs, sizeof(*pairs), u64_cmp);
	for (size_t k = 0; k < n_pairs; k++) {
		size_t a = pairs[k] >> 32, b = (uint32_t)pairs[k];

		if (k && pairs[k] == pairs[k - 1])
			continue; /* both directions: one edge */
		deg[a]++;
		deg[b]++;
		parent[ct_uf_find(parent, a)] = ct_uf_find(parent, b);
	}
	for (size_t k = 0; k < n_pairs; k++) {
		size_t a = pairs[k] >> 32, b = (uint32_t)pairs[k], r = ct_uf_find(parent, a);

		if (k && pairs[k] == pairs[k - 1])
			continue;
		edges[r]++;
		for (int end = 0; end < 2; end++) {
			size_t v = end ? b : a;

			if (deg[v] > most[r])
				most[r] = deg[v];
			if (!(deg[v] & 0x80000000u)) { /* count each host once */
				size[r]++;
				deg[v] |= 0x80000000u;
			}
		}
	}
	for (size_t i = 0; i < set->count; i++) {
		size_t r;

		if (!by_volume[i])
			continue;
		r = ct_uf_find(parent, hosts->src[i]);
		if (size[r] < 3 || edges[r] != size[r] - 1 || (most[r] & 0x7fffffffu) > 2)
			continue;
		steady[i] = 1;
		ct_class_set(&out->flows[i], CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE, 0,
			     "steady, for the groups to read"); /* they name it */
		out->flows[i].op = CT_OP_UNKNOWN;
	}
	err = 0;
cleanup:
	free(parent);
	free(deg);
	free(size);
	free(edges);
	free(most);
	free(pairs);
	return err;
}

/* A steady flow by one of its hosts (its source or its destination), its job, then its bytes. */
struct host_step {
	uint32_t host, other;
	int job;
	uint64_t bytes;
};

static int host_step_cmp(const void *a, const void *b)
{
	const struct host_step *x = a, *y = b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/*
 * Whether a steady flow of by (sorted) at host, of job, moves bytes within
 * FAMILY_GAP of b, its other end not `except`: the first of the host's flows
 * of that job from b / FAMILY_GAP on, searched, then those up to
 * b * FAMILY_GAP.
 */
static int continues(const struct host_step *by, size_t n, uint32_t host, int job, double b,
		     uint32_t except)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct host_step *x = &by[mid];

		if (x->host < host ||
		    (x->host == host &&
		     (x->job < job || (x->job == job && (double)x->bytes < b / FAMILY_GAP))))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && by[lo].host == host && by[lo].job == job &&
	       (double)by[lo].bytes <= b * FAMILY_GAP;
	     lo++)
		if (by[lo].other != except)
			return 1;
	return 0;
}

/*
 * A ring's step whose phase wandered: a flow said Other for its phase alone
 * (its sizes and volume repeat) that continues steady flows of its bytes
 * (within FAMILY_GAP) at both ends, one into its source and one out of its
 * destination, is handed to the groups with them: there it closes its
 * ring, or it stays Other. The step into a late rank of a real gloo ring
 * of 8 begins each iteration with a 228-byte message at its sender's call
 * and then waits for the late rank (phase concentration 0.59): left out,
 * its ring did not close and the whole job read Other. Traffic that is no
 * collective of the job's seldom moves a ring step's bytes between two of
 * its hosts, and where it does, no ring of it closes. Returns 0 or -ENOMEM.
 */
static int ring_steps_rejoin(const struct ct_flow_set *set, const struct ct_periodicity *per,
			     const struct ct_hosts *hosts, const uint8_t *unplaced, uint8_t *steady)
{
	struct host_step *by_src = malloc((set->count + 1) * sizeof(*by_src));
	struct host_step *by_dst = malloc((set->count + 1) * sizeof(*by_dst));
	size_t n = 0;

	if (!by_src || !by_dst) {
		free(by_src);
		free(by_dst);
		return -ENOMEM;
	}
	for (size_t j = 0; j < set->count; j++) {
		if (!steady[j])
			continue;
		by_src[n] = (struct host_step){hosts->src[j], hosts->dst[j], per->flows[j].job,
					       set->flows[j].bytes};
		by_dst[n++] = (struct host_step){hosts->dst[j], hosts->src[j], per->flows[j].job,
						 set->flows[j].bytes};
	}
	qsort(by_src, n, sizeof(*by_src), host_step_cmp);
	qsort(by_dst, n, sizeof(*by_dst), host_step_cmp);
	for (size_t i = 0; i < set->count; i++) {
		double b = (double)set->flows[i].bytes;
		int job = per->flows[i].job;

		/* a step into its source (not from its destination), one out of its destination */
		if (unplaced[i])
			steady[i] = continues(by_dst, n, hosts->src[i], job, b, hosts->dst[i]) &&
				    continues(by_src, n, hosts->dst[i], job, b, hosts->src[i]);
	}
	free(by_src);
	free(by_dst);
	return 0;
}

int ct_classify_by_signature(const struct ct_flow_set *set, const struct ct_periodicity *per,
			     const uint8_t *to_classify, struct ct_classification *out)
{
	const struct ct_period *main_job = per ? &per->job : NULL;
	uint8_t *steady = calloc(set->count ? set->count : 1, 1);
	uint8_t *by_volume = calloc(set->count ? set->count : 1, 1);
	uint8_t *unplaced = calloc(set->count ? set->count : 1, 1);
	size_t room = 0;
	struct burst_place *places = NULL;
	double *sizes;

	/* one flow's bursts at most, or its job's iterations' windows */
	for (size_t i = 0; per && i < set->count; i++)
		if (per->flows[i].n_bursts > room)
			room = per->flows[i].n_bursts;
	places = malloc((room + 1) * sizeof(*places));
	for (size_t j = 0; per && j < per->n_jobs; j++)
		if (ct_periodicity_job_period(per, j)->iterations + 2 > room)
			room = ct_periodicity_job_period(per, j)->iterations + 2;
	if (per && per->job.iterations + 2 > room)
		room = per->job.iterations + 2;
	sizes = malloc((room + 1) * sizeof(*sizes));
	size_t n_pairs = 0;
	struct pair_bytes *pairs = pair_bytes_build(set, &n_pairs);
	struct ct_hosts hosts = {0};
	int err = -ENOMEM;

	if (!steady || !by_volume || !unplaced || !places || !sizes || !pairs)
		goto cleanup;
	/* Other and EP first; the rest are steady periodic flows */
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_periodicity *fp;
		const struct ct_period *job;
		struct ct_flow_class *fc = &out->flows[i];
		double conc, variety, spread, per_iter;
		int back;

		if (!to_classify[i])
			continue;
		if (!main_job || !main_job->periodic) {
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE, 0.5,
				     "no iteration period in the capture (%s)",
				     main_job && main_job->reason ? main_job->reason : "no bursts");
			continue;
		}
		fp = &per->flows[i];
		job = ct_periodicity_period_of(per, i); /* the flow's own job */
		if (!fp->periodic) {
			/* fewer bursts than iterations: it never paused, so nothing tells */
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE,
				     fp->n_bursts >= job->iterations ? 0.8 : 0.5,
				     "its %zu bursts do not recur every iteration", fp->n_bursts);
			continue;
		}
		place_bursts(fp, job, places);
		conc = phase_concentration(fp, job, places);
		if (conc < PHASE_STEADY) {
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE, 1 - conc,
				     "its bursts come at any moment of the iteration (phase "
				     "concentration %.2f)",
				     conc);
			/* a collective's step but for its phase: see ring_steps_rejoin */
			unplaced[i] = size_variety(fp, sizes) < EP_SIZE_VARIETY &&
				      volume_variation(fp, job, places, sizes) < EP_VOLUME_SPREAD;
			continue;
		}
		variety = size_variety(fp, sizes);
		spread = volume_variation(fp, job, places, sizes);
		ct_log(CT_LOG_DEBUG,
		       "signature: flow %zu: %.1f bursts an iteration, sizes %.0f%% unique, volume "
		       "varies %.2f%%\n",
		       i, (double)fp->n_bursts / (double)job->iterations, 100 * variety,
		       100 * spread);
		per_iter = (double)fp->n_bursts / (double)job->iterations;
		/* an all-to-all sends both ways between every two of its hosts */
		back = (double)bytes_back(pairs, n_pairs, &set->flows[i].key) >=
		       EP_BACK_SHARE * (double)set->flows[i].bytes;
		if ((variety >= EP_SIZE_VARIETY || spread >= EP_VOLUME_SPREAD) &&
		    per_iter >= EP_MIN_BURSTS && back) {
			ct_class_set(fc, CT_CLASS_EP, CT_CLASS_BY_SIGNATURE, 0.8,
				     "%.1f bursts an iteration whose sizes do not repeat (%.0f%% "
				     "unique, volume varies %.0f%%), data both ways: token routing "
				     "(all-to-all) moves different bytes each time",
				     per_iter, 100 * variety, 100 * spread);
			fc->op = CT_OP_ALLTOALL;
			by_volume[i] = variety < EP_SIZE_VARIETY;
			continue;
		}
		if (variety >= EP_SIZE_VARIETY) {
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE, 0.6,
				     "%.1f bursts an iteration of a different size each time%s: no "
				     "collective of the job",
				     per_iter, back ? "" : ", nothing back");
			continue;
		}
		steady[i] = 1;
	}
	/*
	 * channels of an all-to-all whose sizes happened to repeat follow their
	 * siblings before the groups are read; the steady flows' groups' structure
	 * then names them, and the channels of each collective agree
	 */
	err = ct_hosts_rank(set, &hosts);
	if (!err && per)
		err = ring_steps_rejoin(set, per, &hosts, unplaced, steady);
	if (!err)
		err = ep_paths_demote(set, &hosts, by_volume, steady, out);
	if (!err)
		err = siblings_agree(set, per, &hosts, to_classify, steady, out);
	if (!err && per) /* no periodicity: every flow was said Other above */
		err = ct_classify_groups(set, per, &hosts, steady, out);
	if (!err)
		err = siblings_agree(set, per, &hosts, to_classify, NULL, out);
	if (!err)
		err = ct_layout_groups(set, &hosts, to_classify, out);
cleanup:
	ct_hosts_free(&hosts);
	free(steady);
	free(by_volume);
	free(unplaced);
	free(places);
	free(sizes);
	free(pairs);
	return err;
}
