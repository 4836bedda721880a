// SPDX-License-Identifier: MIT
/*
 * The operation layer: what a person reading the wire reads first, before
 * naming any parallelism: which collective operation a stream carries,
 * among which hosts (collectives.h).
 *
 *   - a star: hubs that exchange both ways with three or more hosts (push,
 *     then pull), whose peers talk to hubs only: a parameter server's
 *     PushPull;
 *   - families: the job's collective streams moving equal bytes per
 *     iteration, or the very same directed host pairs (one ring);
 *   - a family's shape: one-way steps that close a ring (ring all-reduce,
 *     all-gather, reduce-scatter), pairs exchanging at once, a whole mesh
 *     of three or more hosts (all-to-all), or another both-ways pattern
 *     (trees, recursive doubling: all-reduce);
 *   - its groups (connected hosts) and kind: families whose groups share two
 *     hosts or more belong to one parallel dimension (a TP group and a DP
 *     group share one host at most), so two operations over one group are
 *     one dimension's, as ZeRO's all-gather and reduce-scatter are.
 * The pipeline's send/recv chains are the shifted streams that are no star.
 */
#include "collectives.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A hub of a star exchanges push and pull with at least this many hosts;
 * a pipeline stage exchanges its activations and gradients with two at
 * most (the stages before and after it, interleaved or not).
 */
#define STAR_MIN_PEERS 3

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
int collectives_families(struct groups_ctx *c, size_t *idx)
{
	size_t n = 0;
	int families = 0;

	for (size_t a = 0; a < c->n; a++)
		if (c->s[a].data && c->s[a].mode != MODE_SHIFTED && !c->s[a].star &&
		    c->s[a].bytes > 0)
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

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return (x->from > y->from) - (x->from < y->from);
}

size_t collectives_edges(const struct groups_ctx *c, struct edge *e)
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
int collectives_rings_close(struct groups_ctx *c, size_t n_hosts, const struct edge *e,
			    size_t n_edges, size_t *idx)
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
				s->op = CT_OP_OTHER;
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
double busy_span(const double *hist, double share)
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

static int u32_pair_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/*
 * The distinct undirected neighbours of each host over the streams both
 * ways (at once or at other times: a server's pull can end with the push
 * when the update is short): pairs sorted, duplicates gone. Returns how
 * many pairs (each stored both ways).
 */
static size_t shifted_neighbours(const struct groups_ctx *c, uint32_t *pairs)
{
	size_t n = 0, w = 0;

	for (size_t a = 0; a < c->n; a++) {
		const struct stream *s = &c->s[a];

		if (!s->data || s->mode == MODE_ONE_WAY)
			continue;
		pairs[2 * n] = s->src;
		pairs[2 * n + 1] = s->dst;
		n++;
		pairs[2 * n] = s->dst;
		pairs[2 * n + 1] = s->src;
		n++;
	}
	qsort(pairs, n, 2 * sizeof(*pairs), u32_pair_cmp);
	for (size_t k = 0; k < n; k++)
		if (!k || u32_pair_cmp(&pairs[2 * k], &pairs[2 * k - 2])) {
			pairs[2 * w] = pairs[2 * k];
			pairs[2 * w + 1] = pairs[2 * k + 1];
			w++;
		}
	return w;
}

long collectives_stars(struct groups_ctx *c, size_t n_hosts)
{
	uint32_t *pairs = malloc((4 * c->n + 2) * sizeof(*pairs));
	unsigned *degree = calloc(n_hosts + 1, sizeof(*degree));
	uint8_t *hub = calloc(n_hosts + 1, 1), *spoke_bad = calloc(n_hosts + 1, 1);
	size_t n, hubs = 0;
	long marked = 0;

	if (!pairs || !degree || !hub || !spoke_bad) {
		marked = -ENOMEM;
		goto cleanup;
	}
	n = shifted_neighbours(c, pairs);
	for (size_t k = 0; k < n; k++)
		degree[pairs[2 * k]]++;
	for (size_t x = 0; x < n_hosts; x++)
		if (degree[x] >= STAR_MIN_PEERS) {
			hub[x] = 1;
			hubs++;
		}
	if (!hubs)
		goto cleanup;
	/* a spoke talks to hubs only; two hubs joined directly are no star's */
	for (size_t k = 0; k < n; k++) {
		uint32_t x = pairs[2 * k], y = pairs[2 * k + 1];

		if (!hub[x] && !hub[y])
			spoke_bad[x] = spoke_bad[y] = 1;
		if (hub[x] && hub[y])
			spoke_bad[x] = spoke_bad[y] = 1;
	}
	for (size_t a = 0; a < c->n; a++) {
		struct stream *s = &c->s[a];
		uint32_t spoke;

		if (!s->data || s->mode == MODE_ONE_WAY || hub[s->src] == hub[s->dst])
			continue;
		spoke = hub[s->src] ? s->dst : s->src;
		if (spoke_bad[spoke] || spoke_bad[hub[s->src] ? s->src : s->dst])
			continue;
		s->star = 1;
		s->op = CT_OP_PUSHPULL;
		marked++;
	}
cleanup:
	free(pairs);
	free(degree);
	free(hub);
	free(spoke_bad);
	return marked;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Scratch for family_shape, per host (identity / zero / UINT32_MAX outside a call). */
struct shape_room {
	size_t *parent;
	uint32_t *low;	 /* per group root: its lowest host */
	uint32_t *deg;	 /* per host: its edges out in the family */
	uint32_t *size;	 /* per lowest host: its group's hosts */
	uint32_t *least; /* per lowest host: the fewest edges out of any of its hosts */
	uint32_t *most;	 /* per lowest host: the most edges out of any of its hosts */
	uint32_t *sum;	 /* per lowest host: its hosts' edges out */
	uint32_t *hosts; /* the family's hosts, listed once */
	uint64_t *pairs; /* the family's edges as from << 32 | to, sorted */
	uint64_t *items; /* every family's hosts as host << 32 | its group's lowest host */
	size_t n_items;
};

/*
 * One family's shape and groups from its edges [lo, hi): union-find over
 * its hosts, each host labelled with its group's lowest host; the hash of
 * (host, label) in host order names the partition. Linear in the edges
 * but for one sort of them.
 */
static void family_shape(struct family *F, const struct edge *e, size_t lo, size_t hi,
			 struct shape_room *r)
{
	size_t n_hosts = 0, n_pairs = 0, mesh_groups = 0, pair_groups = 0, chain_groups = 0;
	int one_way = 0;

	for (size_t k = lo; k < hi; k++) {
		size_t a = ct_uf_find(r->parent, e[k].from), b = ct_uf_find(r->parent, e[k].to);

		if (a != b)
			r->parent[a] = b;
		r->pairs[n_pairs++] = (uint64_t)e[k].from << 32 | e[k].to;
		for (int end = 0; end < 2; end++) {
			uint32_t v = end ? e[k].to : e[k].from;

			if (r->size[v] == 0 && r->least[v] == 0) { /* not listed yet */
				r->least[v] = UINT32_MAX;
				r->hosts[n_hosts++] = v;
			}
		}
	}
	qsort(r->hosts, n_hosts, sizeof(*r->hosts), u32_cmp);
	qsort(r->pairs, n_pairs, sizeof(*r->pairs), u64_cmp);
	{
		/*
		 * each directed pair once: both directions of a pair may be data
		 * streams (RoCE QPs each way), each giving the edge both ways
		 */
		size_t w = 0;

		for (size_t k = 0; k < n_pairs; k++)
			if (!w || r->pairs[k] != r->pairs[w - 1])
				r->pairs[w++] = r->pairs[k];
		n_pairs = w;
	}
	for (size_t k = 0; k < n_pairs; k++) /* distinct hosts sent to */
		r->deg[r->pairs[k] >> 32]++;
	for (size_t k = 0; k < n_hosts; k++) {
		size_t root = ct_uf_find(r->parent, r->hosts[k]);

		if (r->low[root] == UINT32_MAX) /* hosts in order: the first is the lowest */
			r->low[root] = r->hosts[k];
	}
	for (size_t k = 0; k < n_hosts; k++) {
		uint32_t v = r->hosts[k], g = r->low[ct_uf_find(r->parent, v)];
		uint64_t item = (uint64_t)v << 32 | g;

		r->size[g]++;
		if (r->deg[v] < r->least[g])
			r->least[g] = r->deg[v];
		if (r->deg[v] > r->most[g])
			r->most[g] = r->deg[v];
		r->sum[g] += r->deg[v];
		r->items[r->n_items + k] = item;
	}
	F->first_item = r->n_items;
	r->n_items += n_hosts;
	/* an edge with none the other way is a ring's step */
	for (size_t k = 0; k < n_pairs && !one_way; k++) {
		uint64_t back = r->pairs[k] << 32 | r->pairs[k] >> 32;

		one_way = !bsearch(&back, r->pairs, n_pairs, sizeof(*r->pairs), u64_cmp);
	}
	F->hosts = (unsigned)n_hosts;
	F->groups = 0;
	for (size_t k = 0; k < n_hosts; k++) {
		uint32_t v = r->hosts[k];

		if (r->low[ct_uf_find(r->parent, v)] != v)
			continue; /* not its group's lowest host */
		F->groups++;
		if (r->size[v] == 2)
			pair_groups++;
		else if (r->least[v] == r->size[v] - 1)
			mesh_groups++;
		else if (r->most[v] <= 2 && r->sum[v] == 2 * (r->size[v] - 1))
			chain_groups++; /* a path: two neighbours at most, no cycle */
	}
	F->shape = one_way				     ? SHAPE_RING
		   : pair_groups == F->groups		     ? SHAPE_PAIRS
		   : mesh_groups + pair_groups == F->groups  ? SHAPE_MESH
		   : chain_groups + pair_groups == F->groups ? SHAPE_CHAIN
							     : SHAPE_TREE;
	/* leave the room as found */
	for (size_t k = 0; k < n_hosts; k++)
		r->low[ct_uf_find(r->parent, r->hosts[k])] = UINT32_MAX;
	for (size_t k = 0; k < n_hosts; k++) {
		uint32_t v = r->hosts[k];

		r->parent[v] = v;
		r->deg[v] = r->size[v] = r->least[v] = r->most[v] = r->sum[v] = 0;
	}
}

/*
 * Whether a group of family f shares two hosts or more with a group of
 * family g (their hosts' items, each sorted by host): then they are one
 * parallel dimension. Groups of two dimensions of one job share one host
 * at most (a TP group and a DP group meet in one rank), which is also why
 * NCCL's and gloo's sockets of one process group never join two of them.
 * scratch: room for the smaller family's hosts.
 */
static int groups_overlap(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
			  uint64_t *scratch)
{
	size_t x = 0, y = 0, n = 0;

	while (x < na && y < nb) {
		uint32_t ha = (uint32_t)(a[x] >> 32), hb = (uint32_t)(b[y] >> 32);

		if (ha < hb) {
			x++;
		} else if (hb < ha) {
			y++;
		} else { /* a host of both: the pair of groups it is in */
			scratch[n++] = (uint64_t)(uint32_t)a[x] << 32 | (uint32_t)b[y];
			x++;
			y++;
		}
	}
	qsort(scratch, n, sizeof(*scratch), u64_cmp);
	for (size_t k = 1; k < n; k++)
		if (scratch[k] == scratch[k - 1])
			return 1;
	return 0;
}

/*
 * Kinds: families of one job joined where their groups overlap (two hosts
 * or more in common): ZeRO's all-gather on a ring and its reduce-scatter
 * among every pair, DDP's buckets. The embedding sync stays a kind of its
 * own. Returns how many kinds, or -ENOMEM.
 */
static int families_kinds(struct family *fam, int nf, const uint64_t *items, size_t hosts_max)
{
	size_t *parent = malloc(((size_t)nf + 1) * sizeof(*parent));
	int *id = malloc(((size_t)nf + 1) * sizeof(*id));
	uint64_t *scratch = malloc((hosts_max + 1) * sizeof(*scratch));
	int kinds = 0;

	if (!parent || !id || !scratch) {
		kinds = -ENOMEM;
		goto cleanup;
	}
	for (int f = 0; f < nf; f++) {
		parent[f] = (size_t)f;
		id[f] = -1;
	}
	for (int f = 0; f < nf; f++)
		for (int g = f + 1; g < nf; g++) {
			const struct family *F = &fam[f], *G = &fam[g];

			if (F->job != G->job || !F->hosts || !G->hosts || F->emb || G->emb)
				continue;
			if (groups_overlap(items + F->first_item, F->hosts, items + G->first_item,
					   G->hosts, scratch))
				parent[ct_uf_find(parent, (size_t)f)] =
					ct_uf_find(parent, (size_t)g);
		}
	for (int f = 0; f < nf; f++) {
		size_t root = ct_uf_find(parent, (size_t)f);

		if (id[root] < 0)
			id[root] = kinds++;
		fam[f].kind = id[root];
	}
cleanup:
	free(parent);
	free(id);
	free(scratch);
	return kinds;
}

int collectives_shapes(const struct groups_ctx *c, struct family *fam, int nf, const struct edge *e,
		       size_t n_edges, size_t n_hosts, uint64_t **items)
{
	struct shape_room r = {0};
	int err = -ENOMEM;

	(void)c;
	r.parent = malloc((n_hosts + 1) * sizeof(*r.parent));
	r.low = malloc((n_hosts + 1) * sizeof(*r.low));
	r.deg = calloc(n_hosts + 1, sizeof(*r.deg));
	r.size = calloc(n_hosts + 1, sizeof(*r.size));
	r.least = calloc(n_hosts + 1, sizeof(*r.least));
	r.most = calloc(n_hosts + 1, sizeof(*r.most));
	r.sum = calloc(n_hosts + 1, sizeof(*r.sum));
	r.hosts = malloc((n_hosts + 1) * sizeof(*r.hosts));
	r.pairs = malloc((n_edges + 1) * sizeof(*r.pairs));
	r.items = malloc((2 * n_edges + 1) * sizeof(*r.items));
	if (!r.parent || !r.low || !r.deg || !r.size || !r.least || !r.most || !r.sum || !r.hosts ||
	    !r.pairs || !r.items)
		goto cleanup;
	for (size_t x = 0; x < n_hosts; x++) {
		r.parent[x] = x;
		r.low[x] = UINT32_MAX;
	}
	for (size_t lo = 0, hi; lo < n_edges; lo = hi) {
		for (hi = lo + 1; hi < n_edges && e[hi].family == e[lo].family; hi++)
			;
		family_shape(&fam[e[lo].family], e, lo, hi, &r);
	}
	err = families_kinds(fam, nf, r.items, n_hosts);
cleanup:
	free(r.parent);
	free(r.low);
	free(r.deg);
	free(r.size);
	free(r.least);
	free(r.most);
	free(r.sum);
	free(r.hosts);
	free(r.pairs);
	if (err >= 0)
		*items = r.items;
	else
		free(r.items);
	return err;
}

void collectives_name_ops(struct family *fam, int nf, const uint8_t *kind_sharded)
{
	for (int f = 0; f < nf; f++) {
		struct family *F = &fam[f];
		int heaviest = 1;

		if (!F->streams)
			continue;
		if (F->emb || !kind_sharded[F->kind]) {
			F->op = F->shape == SHAPE_MESH ? CT_OP_ALLTOALL : CT_OP_ALLREDUCE;
			continue;
		}
		/*
		 * Sharded data parallelism: an all-gather of the parameters before
		 * each layer in forward and again in backward, one reduce-scatter of
		 * the gradients: the kind's heaviest family is the all-gather, and a
		 * mesh (an all-to-all beside a ring) the reduce-scatter.
		 */
		for (int g = 0; g < nf; g++)
			if (g != f && fam[g].streams && fam[g].kind == F->kind &&
			    fam[g].bytes / (double)fam[g].streams > F->bytes / (double)F->streams)
				heaviest = 0;
		if (F->shape == SHAPE_MESH)
			F->op = CT_OP_REDUCESCATTER;
		else
			F->op = heaviest ? CT_OP_ALLGATHER : CT_OP_REDUCESCATTER;
	}
}

int collectives_same_group(const struct family *F, const uint64_t *items, uint32_t x, uint32_t y)
{
	const uint64_t *hosts = items + F->first_item;
	long gx = -1, gy = -1;

	for (int end = 0; end < 2; end++) {
		uint32_t v = end ? y : x;
		size_t lo = 0, hi = F->hosts;

		while (lo < hi) { /* items are in host order */
			size_t mid = (lo + hi) / 2;

			if ((uint32_t)(hosts[mid] >> 32) < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < F->hosts && (uint32_t)(hosts[lo] >> 32) == v)
			*(end ? &gy : &gx) = (long)(uint32_t)hosts[lo];
	}
	return gx >= 0 && gx == gy;
}
