/* SPDX-License-Identifier: MIT */
/*
 * The operation layer (internal to the classifier): which collective each
 * stream carries, among which hosts, read from the streams' shape before
 * any parallelism is named (collectives.c). classify_groups.c names the
 * classes from what it finds.
 */
#ifndef COMMTAP_COLLECTIVES_H
#define COMMTAP_COLLECTIVES_H

#include "streams.h"

/* The shape of a family's streams among its hosts. */
enum family_shape {
	SHAPE_RING = 0, /* one way from each host to the next, closing: ring steps */
	SHAPE_PAIRS,	/* groups of two hosts exchanging at once */
	SHAPE_MESH,	/* every host of a group of three or more with every other, at once */
	SHAPE_TREE,	/* both ways at once, neither pairs nor a whole mesh (tree, hypercube) */
	SHAPE_CHAIN,	/* both ways at once along paths of three hosts or more */
};

/*
 * A family: collective streams of one job moving equal bytes per iteration
 * (FAMILY_GAP), or running over the very same directed host pairs (one
 * ring: DDP's buckets, NCCL's channels).
 */
struct family {
	int job;
	size_t streams;
	double bytes, msgs;	 /* per iteration, summed over its streams */
	double hist[PHASE_BINS]; /* its streams' bytes by phase */
	double span;		 /* the shortest share of the iteration with BUSY_SHARE of them */
	int emb;		 /* every stream joins the two ends of one pipeline chain */
	uint8_t shape;		 /* enum family_shape */
	unsigned hosts, groups;	 /* its hosts, and the connected groups they form */
	size_t first_item;	 /* its hosts and their groups (collectives.c) */
	int kind;		 /* families of the job whose groups overlap: one dimension */
	uint8_t op;		 /* enum ct_op, once named */
	int cls;
	double confidence;
	char why[160];
};

/* A directed edge of a family's graph: an aligned stream gives one each way. */
struct edge {
	int family;
	uint32_t from, to;
};

/*
 * Stars (parameter servers): hosts that exchange push and pull both ways
 * with three or more hosts whose peers exchange with nothing but such hubs
 * (a pipeline stage has two such neighbours at most; in a job of TP, DP or
 * all-to-all groups every host is a hub, and hubs joined are no star). Marks their
 * streams star, op PushPull. n_hosts: ranked hosts. Returns how many
 * streams, or -ENOMEM.
 */
long collectives_stars(struct groups_ctx *c, size_t n_hosts);
/*
 * Families of the job's collective streams (aligned or one way, not
 * pipeline nor star), by bytes per iteration, rings merged. idx: room for
 * c->n. Returns how many.
 */
int collectives_families(struct groups_ctx *c, size_t *idx);
/* The edges of the families (room for 2 c->n), sorted by family then source. */
size_t collectives_edges(const struct groups_ctx *c, struct edge *e);
/*
 * One-way streams that close no ring of their family (nor pass through
 * the vantage host of a host's view) are no collective: class Other.
 * Returns 0 or -ENOMEM.
 */
int collectives_rings_close(struct groups_ctx *c, size_t n_hosts, const struct edge *e,
			    size_t n_edges, size_t *idx);
/*
 * Each family's shape, groups and kind, from its edges (sorted); *items
 * (free()) holds each family's hosts with their groups. Returns how many
 * kinds, or -ENOMEM.
 */
int collectives_shapes(const struct groups_ctx *c, struct family *fam, int nf, const struct edge *e,
		       size_t n_edges, size_t n_hosts, uint64_t **items);
/* Whether hosts x and y are in one group of family F (items from collectives_shapes). */
int collectives_same_group(const struct family *F, const uint64_t *items, uint32_t x, uint32_t y);
/*
 * The operation of each family once its class is named: the embedding sync
 * and TP all-reduce; a sharded DP kind's ring or pairs all-gather (the
 * heavier: twice an iteration) and reduce-scatter; an all-to-all mesh.
 */
void collectives_name_ops(struct family *fam, int nf, const uint8_t *kind_sharded);
/* The shortest share of the iteration that holds share of a histogram's bytes. */
double busy_span(const double *hist, double share);

#endif
