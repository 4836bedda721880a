/* SPDX-License-Identifier: MIT */
/*
 * Fixed-capacity flow table.
 *
 * All memory is taken once, at creation, from a byte budget: an array of flow
 * records (free ones chained through their key) and an open-addressing index (linear probing, at most half full,
 * backward-shift deletion so no tombstones build up). Lookups touch one index
 * cache line and the flow's first line.
 *
 * Eviction:
 *  - idle: ct_flow_table_expire() advances a clock hand over the records and
 *    evicts flows idle longer than the timeout (time is packet time);
 *  - full: an insert into a full table evicts the stalest (oldest last_ts)
 *    of the next CT_EVICT_SAMPLE live flows after a second clock hand
 *    ("sampled LRU").
 * Every evicted flow is handed to the eviction callback before its record is
 * reused, so its counters are never lost, and counted by reason.
 */
#ifndef COMMTAP_FLOW_TABLE_H
#define COMMTAP_FLOW_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/flow.h>

#define CT_EVICT_SAMPLE	  8
#define CT_FLOW_TABLE_MIN 4 /* the smallest table a budget may buy */

enum ct_evict_reason {
	CT_EVICT_IDLE = 0,
	CT_EVICT_FULL = 1,
	CT_EVICT_FLUSH = 2, /* handed out at the end (ct_flow_table_flush), not counted */
};

typedef void (*ct_evict_fn)(void *ctx, const struct ct_flow *flow, enum ct_evict_reason why);

struct ct_allocator {
	void *(*alloc)(size_t size, size_t align, void *ctx); /* zeroed memory */
	void (*free)(void *ptr, void *ctx);
	void *ctx;
};

/* Aligned, zeroed heap memory: what a table or an engine uses when given no allocator. */
extern const struct ct_allocator ct_default_allocator;

struct ct_flow_table_stats {
	uint64_t inserts;
	uint64_t evicted_idle;
	uint64_t evicted_full;
	uint32_t live;
	uint32_t capacity;
	size_t memory_bytes;
};

struct ct_flow_table;

/* Bytes one flow costs in the table (record, index share, free list). */
size_t ct_flow_table_bytes_per_flow(void);

/* The number of flows a budget holds; 0 if too small for even one. */
uint32_t ct_flow_table_capacity_for(size_t budget_bytes);

/*
 * Create a table within budget_bytes. alloc may be NULL (aligned calloc).
 * Returns 0, -EINVAL (budget too small for CT_FLOW_TABLE_MIN flows) or -ENOMEM.
 */
int ct_flow_table_create(size_t budget_bytes, uint64_t idle_timeout_ns,
			 const struct ct_allocator *alloc, ct_evict_fn on_evict, void *evict_ctx,
			 struct ct_flow_table **out);
void ct_flow_table_destroy(struct ct_flow_table *t);

uint32_t ct_flow_key_hash(const struct ct_flow_key *key);

/* Find a flow, or NULL. */
struct ct_flow *ct_flow_table_lookup(struct ct_flow_table *t, const struct ct_flow_key *key,
				     uint32_t hash);

/*
 * Find a flow or insert a zeroed one with this key (evicting one if full).
 * *created is set to 1 for a new flow. Never fails.
 */
struct ct_flow *ct_flow_table_get(struct ct_flow_table *t, const struct ct_flow_key *key,
				  uint32_t hash, uint64_t now, int *created);

/* Examine up to n records for idle flows at packet time now. */
void ct_flow_table_expire(struct ct_flow_table *t, uint64_t now, unsigned n);

/* Hand every live flow to the eviction callback and empty the table. */
void ct_flow_table_flush(struct ct_flow_table *t);

/* Visit every live flow. */
void ct_flow_table_foreach(struct ct_flow_table *t, void (*fn)(struct ct_flow *f, void *ctx),
			   void *ctx);

void ct_flow_table_get_stats(const struct ct_flow_table *t, struct ct_flow_table_stats *st);

#endif
