// SPDX-License-Identifier: MIT
/*
 * The job's layout read from the wire's structure (no profile, no labels):
 * the classes named from the operations the wire shows (collectives.c) and
 * the schedule, as the analytic model predicts them.
 *
 * 1. Streams (streams.c): the flows of one direction between two hosts
 *    with the same bursts as one logical connection, and each one's mode
 *    against the way back: both ways at once (a collective), both ways at
 *    other times (a pipeline, a parameter server), one way (a ring's step).
 * 2. Stars (collectives.c): hubs exchanging push and pull with three or
 *    more hosts that talk to hubs only: a parameter server, DP.
 * 3. Pipelines: the other shifted streams join hosts into chains of
 *    stages (send/recv). A host with three or more such neighbours is no
 *    pipeline stage (a stage has two at most): its streams are read as a
 *    collective's whose directions end apart.
 * 4. Collectives (collectives.c): families of equal bytes per iteration,
 *    rings closed, each family's shape and groups of hosts; families over
 *    groups that share two hosts or more are one kind, one parallel
 *    dimension (a TP group and a DP group meet in one host at most).
 * 5. Names: a family between the two ends of one pipeline chain is the
 *    embedding sync (EmbTableSyn). Of the kinds, where message rates (or,
 *    where a socket merges messages, bytes) differ, the faster is TP (per
 *    layer and micro-batch) and the slower DP; beside a pipeline, TP sends
 *    at least as often as the pipeline. A job's only kind is DP: sharded
 *    (ZeRO's all-gather and reduce-scatter) when it carries two operations
 *    over its one group, plain when busy for a short share of the
 *    iteration; busy through forward and backward it is sharded DP or TP
 *    across every host, which the wire alone does not tell, and the
 *    confidence says so.
 * The groups (connected hosts of each class) give p, t, d and ep.
 */
#include "classify_internal.h"
#include "collectives.h"

#include <commtap/log.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
/* The highest message rate over the lowest that tells TP from DP families. */
#define TP_RATE_RATIO 2.0
/* TP's bytes over a pipeline stream's, at least (see name_kinds). */
#define TP_PP_BYTES 8.0
/*
 * Confidences, each the strength of the rule that gave it (never above
 * what the corpus shows the rule earns; docs/accuracy.md):
 *   SURE     two independent signs agree (rate or bytes and the busy span;
 *            a star's shape; a pipeline's chain ends);
 *   LIKELY   one sign decides;
 *   UNSURE   the wire cannot tell between two layouts: the class is the
 *            common one, said at a confidence no operator acts on alone.
 */
#define CONF_SURE   0.9
#define CONF_LIKELY 0.7
#define CONF_UNSURE 0.45
/*
 * A rule the development share shows right every time (calibrated there,
 * checked on the frozen part: docs/accuracy.md): a job's lone collective
 * busy for a third to half of the iteration (DP 2-55%, TP 59-80% measured;
 * real DDP, gradient accumulation, Open MPI, synthesized ResNet-50 and
 * BERT DDP, all right at 0.6 before), and a lone kind of two shapes
 * (real ZeRO-3's ring and mesh).
 */
#define CONF_CALIBRATED 0.8
/* A pipeline stage exchanges activations and gradients with the stages before and after it. */
#define PIPELINE_PEERS_MAX 2

struct job_shape {
	int pipeline;			  /* the job has pipeline streams */
	double pp_msgs, pp_bytes;	  /* per pipeline stream and iteration, the largest */
	double pp_msgs_min, pp_bytes_min; /* and the smallest */
	size_t pp_streams;
	unsigned pp_degree_max; /* the most pipeline neighbours of one host */
	int kinds;		/* its kinds of collective, the embedding sync aside */
};

/* Families over the same groups of hosts: one parallel dimension. */
struct kind {
	int job;
	size_t streams, families;
	double bytes, msgs;	 /* per iteration, summed over its streams */
	double hist[PHASE_BINS]; /* its streams' bytes by phase */
	double span;
	unsigned shapes; /* bit per enum family_shape of its families */
	int cls;
	uint8_t sharded;
	double confidence;
	char why[160];
};

static const char *const shape_names[] = {"a ring", "pairs", "an all-to-all mesh", "a tree",
					  "a chain"};

/* The shapes of a kind's families, for the evidence. */
static void shapes_text(unsigned shapes, char *out, size_t len)
{
	size_t w = 0;

	out[0] = 0;
	for (int k = 0; k < 5; k++)
		if (shapes & 1u << k)
			w += (size_t)snprintf(out + w, w < len ? len - w : 0, "%s%s",
					      w ? " and " : "", shape_names[k]);
}

/*
 * A job's only kind of collective with no pipeline: data parallel. Two
 * operations over its one group (a ring and a mesh, or families of
 * different bytes beside each other) are one dimension's: ZeRO's
 * all-gather and reduce-scatter, sharded. One operation busy for a short
 * share of the iteration is the gradients' all-reduce; busy through the
 * forward and backward it is ZeRO-3/FSDP's all-gathers or TP across every
 * host (t = hosts, d = 1), which look alike on the wire.
 */
static void name_lone_kind(struct kind *K)
{
	char shapes[96];

	shapes_text(K->shapes, shapes, sizeof(shapes));
	K->cls = CT_CLASS_DP;
	if (K->families >= 2) {
		/* two shapes (a ring and a mesh) are two operations for sure */
		K->sharded = 1;
		K->confidence = K->shapes & (K->shapes - 1) ? CONF_CALIBRATED : CONF_LIKELY;
		snprintf(K->why, sizeof(K->why),
			 "the job's one group of hosts carries %zu operations (%s): one "
			 "dimension's all-gather and reduce-scatter, sharded data parallel",
			 K->families, shapes);
	} else if (K->span <= DP_SPAN_SURE) {
		K->confidence = 0.85;
		snprintf(K->why, sizeof(K->why),
			 "the job's only collective (%s), no pipeline, busy %.0f%% of the "
			 "iteration: data parallel",
			 shapes, 100 * K->span);
	} else if (K->span <= TP_SPAN_SURE) {
		K->confidence = CONF_CALIBRATED;
		snprintf(K->why, sizeof(K->why),
			 "the job's only collective (%s), no pipeline, busy %.0f%% of the "
			 "iteration: data parallel",
			 shapes, 100 * K->span);
	} else {
		K->confidence = CONF_UNSURE;
		snprintf(K->why, sizeof(K->why),
			 "the job's only collective (%s), busy %.0f%% of the iteration: "
			 "sharded DP (ZeRO-3) or TP across every host, alike on the wire",
			 shapes, 100 * K->span);
	}
}

/*
 * The classes of a job's kinds: TP runs per layer and micro-batch, DP per
 * iteration (or bucket), so where the rates of two kinds differ by
 * TP_RATE_RATIO the faster are TP. Kinds alike: beside a pipeline, TP
 * sends at least as often as the pipeline (2 collectives a layer for each
 * micro-batch it forwards) or, where messages merge (a socket's
 * back-to-back sends), TP_PP_BYTES times its bytes (activations
 * all-reduced per layer against one activation per stage); otherwise DP.
 */
static void name_kinds(struct kind *kind, int nk, const struct job_shape *shape)
{
	for (int k = 0; k < nk; k++) {
		struct kind *K = &kind[k];
		const struct job_shape *js = &shape[K->job];
		double top = 0, low = INFINITY, btop = 0, blow = INFINITY, rate, bytes;
		int tp;

		if (!K->streams)
			continue;
		if (js->kinds == 1 && !js->pipeline) {
			name_lone_kind(K);
			continue;
		}
		for (int g = 0; g < nk; g++) {
			const struct kind *G = &kind[g];

			if (G->job != K->job || !G->streams)
				continue;
			top = fmax(top, G->msgs / (double)G->streams);
			low = fmin(low, G->msgs / (double)G->streams);
			btop = fmax(btop, G->bytes / (double)G->streams);
			blow = fmin(blow, G->bytes / (double)G->streams);
		}
		rate = K->msgs / (double)K->streams;
		bytes = K->bytes / (double)K->streams;
		K->confidence = CONF_LIKELY;
		if (top < TP_RATE_RATIO * fmax(low, 1e-9) && btop >= TP_PP_BYTES * blow) {
			/* messages merged (a socket's back-to-back sends): the volume tells */
			tp = bytes * TP_PP_BYTES > btop;
			snprintf(K->why, sizeof(K->why),
				 "%.0f B an iteration, the job's collectives %.0f-%.0f: %s", bytes,
				 blow, btop,
				 tp ? "activations per layer and micro-batch (TP)"
				    : "gradients once an iteration (DP)");
		} else if (top >= TP_RATE_RATIO * fmax(low, 1e-9)) {
			tp = rate * TP_RATE_RATIO > top;
			snprintf(K->why, sizeof(K->why),
				 "%.1f messages an iteration, the job's collectives %.1f-%.1f: %s",
				 rate, low, top,
				 tp ? "per layer and micro-batch (TP)"
				    : "per iteration or bucket (DP)");
		} else if (js->pipeline) {
			tp = rate >= js->pp_msgs || bytes >= TP_PP_BYTES * js->pp_bytes;
			snprintf(K->why, sizeof(K->why),
				 "%.1f messages and %.0f B an iteration against the pipeline's "
				 "%.1f and %.0f: %s",
				 rate, bytes, js->pp_msgs, js->pp_bytes,
				 tp ? "per layer and micro-batch (TP)" : "per iteration (DP)");
		} else {
			/* kinds alike with no pipeline: neither rate nor bytes tell */
			tp = 0;
			K->confidence = CONF_UNSURE;
			snprintf(K->why, sizeof(K->why),
				 "%zu kinds of collective alike (%.1f messages, %.0f B an "
				 "iteration), no pipeline: data parallel, the wire does not tell",
				 (size_t)js->kinds, rate, bytes);
		}
		/* the busy span says the same: TP through every pass, DP in one sync */
		if (K->confidence == CONF_LIKELY &&
		    (tp ? K->span >= TP_SPAN_SURE : K->span <= DP_SPAN_SURE))
			K->confidence = CONF_SURE;
		K->cls = tp ? CT_CLASS_TP : CT_CLASS_DP;
		/* two operations over one group are one dimension's: ZeRO's, if DP */
		K->sharded = !tp && K->families >= 2;
	}
}

static int u32_pair_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
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
		parent[ct_uf_find(parent, x)] = ct_uf_find(parent, y);
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

/*
 * A pipeline link whose two directions happen to line up (1F1B's steady
 * state sends an activation and receives a gradient at once, and a short
 * cool-down can end within COOLDOWN_MIN): a pair exchanging at once that
 * completes the chains — continues one (one of its hosts ends a chain, the
 * other is in none) or, where every chain is a single link (p = 2), is one
 * between two hosts in none — and moves the pipeline's bytes per iteration
 * (within FAMILY_GAP of its streams') at its rate (within TP_RATE_RATIO);
 * of the candidates between two hosts, the one closest to the pipeline's
 * rate (the embedding sync between the same two hosts moves about its
 * bytes, less often). TP moves TP_PP_BYTES times the bytes and more.
 * Real 1F1B: one of 12 links lined up (p = 4, d = 2) and one of 8 (p = 2,
 * t = 2, d = 2); each was read as TP or DP, and the embedding sync beside
 * it as DP. Returns how many streams.
 */
static size_t pipeline_links_aligned(struct groups_ctx *c, struct job_shape *shape,
				     const unsigned *degree)
{
	size_t marked = 0;

	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];
		struct job_shape *js = &shape[s->job];

		if (!s->data || s->cls != CT_CLASS_PP)
			continue;
		if (!js->pp_streams++) {
			js->pp_bytes_min = s->bytes;
			js->pp_msgs_min = s->msgs;
		}
		js->pp_bytes_min = fmin(js->pp_bytes_min, s->bytes);
		js->pp_msgs_min = fmin(js->pp_msgs_min, s->msgs);
		js->pp_degree_max =
			degree[s->src] > js->pp_degree_max ? degree[s->src] : js->pp_degree_max;
		js->pp_degree_max =
			degree[s->dst] > js->pp_degree_max ? degree[s->dst] : js->pp_degree_max;
	}
	for (size_t a = 0; a < c->n; a++) {
		struct stream *s = &c->s[a];
		const struct job_shape *js = &shape[s->job];
		double centre = sqrt(js->pp_msgs * js->pp_msgs_min), off;
		int completes, best = 1;

		if (!s->data || s->mode != MODE_ALIGNED || s->star || js->pp_streams < 2)
			continue;
		completes = (degree[s->src] == 1 && !degree[s->dst]) ||
			    (degree[s->dst] == 1 && !degree[s->src]) ||
			    (!degree[s->src] && !degree[s->dst] && js->pp_degree_max == 1);
		if (!completes || s->bytes < js->pp_bytes_min / FAMILY_GAP ||
		    s->bytes > js->pp_bytes * FAMILY_GAP ||
		    s->msgs < js->pp_msgs_min / TP_RATE_RATIO ||
		    s->msgs > js->pp_msgs * TP_RATE_RATIO)
			continue;
		off = fabs(log(fmax(s->msgs, 1e-9) / centre));
		for (size_t b = 0; b < c->n && best; b++) { /* another candidate of the two hosts */
			const struct stream *o = &c->s[b];

			if (b != a && o->data && o->mode == MODE_ALIGNED && o->job == s->job &&
			    ((o->src == s->src && o->dst == s->dst) ||
			     (o->src == s->dst && o->dst == s->src)) &&
			    fabs(log(fmax(o->msgs, 1e-9) / centre)) < off)
				best = 0;
		}
		if (!best)
			continue;
		s->mode = MODE_SHIFTED;
		s->cls = CT_CLASS_PP;
		s->op = CT_OP_SENDRECV;
		marked++;
	}
	return marked;
}

/*
 * The data a socket carries back beside a sharded kind's all-gather is the
 * kind's reduce-scatter (gloo and NCCL's sockets carry one process group
 * both ways: real ZeRO-3 gathered one way around the ring and reduced the
 * other way on the same sockets, 17% of its bytes). Other ways back take
 * their data direction's operation (classify.c).
 */
static void back_operation(const struct groups_ctx *c, const struct stream *s,
			   const struct family *fam, const uint8_t *kind_sharded,
			   struct ct_classification *out)
{
	for (size_t k = 0; k < s->n; k++) {
		size_t i = c->members[s->first + k];
		int64_t r = c->set->flows[i].reverse;
		const struct stream *d;

		if (r < 0 || c->stream_of[r] < 0)
			continue;
		d = &c->s[c->stream_of[r]];
		if (d->data && d->family >= 0 && fam[d->family].op == CT_OP_ALLGATHER &&
		    kind_sharded[fam[d->family].kind])
			out->flows[i].op = CT_OP_REDUCESCATTER;
	}
}

/*
 * A pipeline link joins two stages; a TP or DP group lies within one stage.
 * Streams both ways at other times between two hosts of one collective's
 * group are no pipeline link but that collective's, its directions ending
 * apart (a real ZeRO-3 ring step, its all-gather one way and
 * reduce-scatter back, ended 9.7% apart in one of five development runs,
 * and was read as PP at 0.95). They join the family; a job left with no
 * pipeline has no embedding sync either. Returns how many streams.
 */
static size_t pipeline_links_in_groups(struct groups_ctx *c, struct family *fam, int nf,
				       const uint64_t *items, struct job_shape *shape)
{
	size_t moved = 0;

	for (size_t a = 0; a < c->n; a++) {
		struct stream *s = &c->s[a];

		if (!s->data || s->cls != CT_CLASS_PP)
			continue;
		for (int f = 0; f < nf; f++) {
			struct family *F = &fam[f];

			if (!F->streams || F->emb || F->job != s->job ||
			    !collectives_same_group(F, items, s->src, s->dst))
				continue;
			s->cls = -1;
			s->op = CT_OP_UNKNOWN;
			s->mode = MODE_ALIGNED;
			s->family = f;
			F->streams++;
			F->bytes += s->bytes;
			F->msgs += s->msgs;
			for (int k = 0; k < PHASE_BINS; k++)
				F->hist[k] += s->hist[k];
			moved++;
			break;
		}
	}
	if (!moved)
		return 0;
	for (size_t a = 0; a < c->n; a++) /* the pipelines left */
		shape[c->s[a].job].pipeline = 0;
	for (size_t a = 0; a < c->n; a++)
		if (c->s[a].data && c->s[a].cls == CT_CLASS_PP)
			shape[c->s[a].job].pipeline = 1;
	for (int f = 0; f < nf; f++)
		if (!shape[fam[f].job].pipeline)
			fam[f].emb = 0;
	return moved;
}

/*
 * Streams both ways at once along paths of three hosts or more (each host
 * exchanging with two at most, no cycle) are a pipeline in its steady
 * state: 1F1B sends an activation and receives a gradient at once, and on
 * a loaded host its cool-down can end within COOLDOWN_MIN (real p = 4,
 * d = 2: its links lined up in four of five development runs, read as TP
 * at 0.9). No collective of gloo or NCCL runs along a path: rings close,
 * all-to-alls are meshes, NCCL's trees branch; a path whose two hosts
 * another stream both ways joins is a ring one of whose steps was read
 * otherwise. Marks the families' flows in found; returns how many streams.
 */
static size_t chain_families(const struct groups_ctx *c, const struct family *fam, int nf,
			     const uint64_t *items, const struct ct_classification *out,
			     uint8_t *found)
{
	uint8_t *closed = calloc((size_t)nf + 1, 1);
	size_t n = 0;

	if (!closed)
		return 0; /* out of memory: read as they are */
	/* a path whose hosts another stream joins (or an all-to-all's flow) is a ring read in part
	 */
	for (size_t i = 0; i < c->set->count; i++)
		for (int f = 0; f < nf && out->flows[i].cls == CT_CLASS_EP; f++)
			if (fam[f].shape == SHAPE_CHAIN && c->per->flows[i].job == fam[f].job &&
			    collectives_same_group(&fam[f], items, c->hosts->src[i],
						   c->hosts->dst[i]))
				closed[f] = 1;
	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];

		if (!s->data || s->mode != MODE_SHIFTED || s->star)
			continue;
		for (int f = 0; f < nf; f++)
			if (fam[f].shape == SHAPE_CHAIN && fam[f].job == s->job &&
			    collectives_same_group(&fam[f], items, s->src, s->dst))
				closed[f] = 1;
	}
	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];

		if (!s->data || s->family < 0 || fam[s->family].shape != SHAPE_CHAIN ||
		    closed[s->family])
			continue;
		for (size_t k = 0; k < s->n; k++)
			found[c->members[s->first + k]] = 1;
		n++;
	}
	free(closed);
	return n;
}

/* A flow's class and operation, with its stream's evidence. */
static void classify_streams(const struct groups_ctx *c, const struct family *fam,
			     const uint8_t *kind_sharded, struct ct_classification *out)
{
	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];

		if (!s->data) {
			back_operation(c, s, fam, kind_sharded, out);
			continue;
		}
		if (!s->star && s->cls != CT_CLASS_PP && s->cls != CT_CLASS_OTHER &&
		    s->family < 0)
			continue; /* nothing said of it here */
		for (size_t k = 0; k < s->n; k++) {
			struct ct_flow_class *fc = &out->flows[c->members[s->first + k]];

			/* the stream's channels say the same: the first one's words,
			 * formatted once (per flow they were 15% of the pass) */
			if (k) {
				ct_class_copy(fc, &out->flows[c->members[s->first]]);
				continue;
			}
			if (s->star)
				ct_class_set(fc, CT_CLASS_DP, CT_CLASS_BY_SIGNATURE, CONF_SURE,
					     "push and pull between a hub and hosts that talk to "
					     "hubs only (a star, %.1f messages an iteration): a "
					     "parameter server's data parallelism",
					     s->msgs);
			else if (s->cls == CT_CLASS_PP)
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
			fc->op = s->op;
		}
	}
}

/*
 * Shifted streams of a host with STAR_PEERS or more shifted neighbours
 * that is no star's: no pipeline stage has so many (two at most), so they
 * are a collective's whose two directions end apart (an all-to-all's,
 * read pairwise). Returns 0 or -ENOMEM.
 */
static int not_pipelines(struct groups_ctx *c, size_t n_hosts)
{
	uint32_t *pairs = malloc((4 * c->n + 2) * sizeof(*pairs));
	unsigned *degree = calloc(n_hosts + 1, sizeof(*degree));
	size_t n = 0;

	if (!pairs || !degree) {
		free(pairs);
		free(degree);
		return -ENOMEM;
	}
	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];

		if (!s->data || s->mode != MODE_SHIFTED || s->star)
			continue;
		pairs[2 * n] = s->src < s->dst ? s->src : s->dst;
		pairs[2 * n + 1] = s->src < s->dst ? s->dst : s->src;
		n++;
	}
	qsort(pairs, n, 2 * sizeof(*pairs), u32_pair_cmp);
	for (size_t k = 0; k < n; k++)
		if (!k || u32_pair_cmp(&pairs[2 * k], &pairs[2 * k - 2])) {
			degree[pairs[2 * k]]++;
			degree[pairs[2 * k + 1]]++;
		}
	for (size_t a = 0; a < c->n; a++) {
		struct stream *s = &c->s[a];

		if (s->data && s->mode == MODE_SHIFTED && !s->star &&
		    (degree[s->src] > PIPELINE_PEERS_MAX || degree[s->dst] > PIPELINE_PEERS_MAX))
			s->mode = MODE_ALIGNED;
	}
	free(pairs);
	free(degree);
	return 0;
}

/* Each kind's aggregates from its families, the embedding sync apart. */
static void kinds_gather(struct kind *kind, int nk, struct family *fam, int nf,
			 struct job_shape *shape)
{
	for (int f = 0; f < nf; f++) {
		const struct family *F = &fam[f];
		struct kind *K;

		if (!F->streams || F->emb)
			continue;
		K = &kind[F->kind];
		if (!K->streams)
			shape[F->job].kinds++;
		K->job = F->job;
		K->streams += F->streams;
		K->families++;
		K->bytes += F->bytes;
		K->msgs += F->msgs;
		K->shapes |= 1u << F->shape;
		for (int b = 0; b < PHASE_BINS; b++)
			K->hist[b] += F->hist[b];
	}
	for (int k = 0; k < nk; k++)
		kind[k].span = busy_span(kind[k].hist, BUSY_SHARE);
}

/* The kinds' classes on their families; the families' operations from them. */
static void families_named(struct family *fam, int nf, const struct kind *kind, int nk,
			   uint8_t *kind_sharded)
{
	for (int k = 0; k < nk; k++)
		kind_sharded[k] = kind[k].sharded;
	for (int f = 0; f < nf; f++) {
		struct family *F = &fam[f];

		if (!F->streams)
			continue;
		if (F->emb) {
			F->cls = CT_CLASS_EMB;
			F->confidence = CONF_SURE;
			snprintf(F->why, sizeof(F->why),
				 "a collective between the two ends of a pipeline chain");
			continue;
		}
		F->cls = kind[F->kind].cls;
		F->confidence = kind[F->kind].confidence;
		memcpy(F->why, kind[F->kind].why, sizeof(F->why));
	}
	collectives_name_ops(fam, nf, kind_sharded);
}

/*
 * One reading of the groups. chain: flows whose streams are a pipeline's
 * whatever their alignment (NULL: none); found: where a family both ways at
 * once along paths of three hosts or more shows such flows, they are marked
 * there and the pass returns 1 without classifying (the caller reads
 * again). Returns 0, 1 or -ENOMEM.
 */
static int groups_pass(const struct ct_flow_set *set, const struct ct_periodicity *per,
		       const struct ct_hosts *hosts, const uint8_t *steady,
		       struct ct_classification *out, const uint8_t *chain, uint8_t *found)
{
	struct groups_ctx c = {set, per, NULL, NULL, 0, NULL, hosts};
	struct family *fam = NULL;
	struct kind *kind = NULL;
	struct job_shape *shape = NULL;
	size_t *idx = NULL, *parent = NULL, *pairs = NULL;
	struct edge *edges = NULL;
	unsigned *degree = NULL;
	uint8_t *kind_sharded = NULL;
	uint64_t *items = NULL;
	size_t jobs = per->n_jobs ? per->n_jobs : 1;
	size_t n_edges, n_pp_pairs;
	int nf, nk, err = -ENOMEM;

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
	for (size_t a = 0; a < c.n && chain; a++)
		for (size_t k = 0; k < c.s[a].n; k++)
			if (c.s[a].data && chain[c.members[c.s[a].first + k]])
				c.s[a].mode = MODE_SHIFTED;

	parent = malloc((hosts->n + 1) * sizeof(*parent));
	degree = malloc((hosts->n + 1) * sizeof(*degree));
	pairs = malloc((2 * c.n + 1) * sizeof(*pairs));
	edges = malloc((2 * c.n + 1) * sizeof(*edges));
	if (!parent || !degree || !pairs || !edges)
		goto cleanup;

	/* stars first, then what no pipeline stage can be */
	if (collectives_stars(&c, hosts->n) < 0 || not_pipelines(&c, hosts->n))
		goto cleanup;
	/* pipelines: both ways, at other times */
	for (size_t a = 0; a < c.n; a++)
		if (c.s[a].data && c.s[a].mode == MODE_SHIFTED && !c.s[a].star) {
			struct job_shape *js = &shape[c.s[a].job];

			c.s[a].cls = CT_CLASS_PP;
			c.s[a].op = CT_OP_SENDRECV;
			js->pipeline = 1;
			js->pp_msgs = fmax(js->pp_msgs, c.s[a].msgs);
			js->pp_bytes = fmax(js->pp_bytes, c.s[a].bytes);
		}
	n_pp_pairs = pipeline_chains(&c, hosts->n, parent, degree, pairs);
	if (pipeline_links_aligned(&c, shape, degree))
		n_pp_pairs = pipeline_chains(&c, hosts->n, parent, degree, pairs);

	/* collectives: families of equal bytes; a one-way step must close a ring */
	nf = collectives_families(&c, idx);
	n_edges = collectives_edges(&c, edges);
	if (collectives_rings_close(&c, hosts->n, edges, n_edges, idx))
		goto cleanup;
	n_edges = collectives_edges(&c, edges); /* without the steps that closed no ring */
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
				       (ct_uf_find(parent, x) == ct_uf_find(parent, y) &&
					degree[x] == 1 && degree[y] == 1)))
			F->emb = 0;
	}
	for (int f = 0; f < nf; f++)
		fam[f].span = busy_span(fam[f].hist, BUSY_SHARE);
	nk = collectives_shapes(&c, fam, nf, edges, n_edges, hosts->n, &items);
	if (nk < 0)
		goto cleanup;
	if (found && chain_families(&c, fam, nf, items, out, found)) {
		err = 1;
		goto cleanup;
	}
	if (pipeline_links_in_groups(&c, fam, nf, items, shape))
		for (int f = 0; f < nf; f++)
			fam[f].span = busy_span(fam[f].hist, BUSY_SHARE);
	kind = calloc((size_t)nk + 1, sizeof(*kind));
	kind_sharded = calloc((size_t)nk + 1, 1);
	if (!kind || !kind_sharded)
		goto cleanup;
	kinds_gather(kind, nk, fam, nf, shape);
	name_kinds(kind, nk, shape);
	families_named(fam, nf, kind, nk, kind_sharded);
	for (int k = 0; k < nk; k++)
		out->layout.sharded |=
			kind[k].streams && kind[k].cls == CT_CLASS_DP && kind[k].sharded;
	for (int f = 0; f < nf; f++)
		ct_log(CT_LOG_DEBUG,
		       "groups: family %d job %d kind %d: %zu streams, %.0f B/it, %.1f msgs/it, "
		       "busy %.0f%% of the iteration, %s over %u hosts in %u groups, %s %s%s\n",
		       f, fam[f].job, fam[f].kind, fam[f].streams, fam[f].bytes, fam[f].msgs,
		       100 * fam[f].span, shape_names[fam[f].shape], fam[f].hosts, fam[f].groups,
		       ct_op_name(fam[f].op), ct_class_name(fam[f].cls),
		       fam[f].emb ? " (chain ends)" : "");
	for (size_t a = 0; a < c.n; a++)
		if (c.s[a].data && c.s[a].family >= 0) {
			c.s[a].cls = fam[c.s[a].family].cls;
			c.s[a].op = fam[c.s[a].family].op;
		}
	for (size_t a = 0; a < c.n; a++) {
		const struct stream *s = &c.s[a];

		if (s->data)
			ct_log(CT_LOG_DEBUG,
			       "groups: stream %zu job %d %zu flows, %.0f B/it %.1f msgs/it, mode "
			       "%d%s aligned %.2f lag %d cooldown %.4f, family %d, %s %s\n",
			       c.members[s->first], s->job, s->n, s->bytes, s->msgs, s->mode,
			       s->star ? " star" : "", s->lag0, s->best_lag, s->cooldown, s->family,
			       ct_op_name(s->op), s->cls < 0 ? "-" : ct_class_name(s->cls));
	}
	classify_streams(&c, fam, kind_sharded, out);
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
	free(kind);
	free(kind_sharded);
	free(items);
	return err;
}

int ct_classify_groups(const struct ct_flow_set *set, const struct ct_periodicity *per,
		       const struct ct_hosts *hosts, const uint8_t *steady,
		       struct ct_classification *out)
{
	uint8_t *chain = calloc(set->count + 1, 1);
	int err;

	if (!chain)
		return -ENOMEM;
	err = groups_pass(set, per, hosts, steady, out, NULL, chain);
	if (err == 1) /* pipelines in their steady state: read again with them */
		err = groups_pass(set, per, hosts, steady, out, chain, NULL);
	free(chain);
	return err;
}
