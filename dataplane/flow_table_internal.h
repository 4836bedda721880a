/* SPDX-License-Identifier: MIT */
/*
 * The flow table's layout, for flow_table.c and the engine's fast path:
 * the lookup of a flow that exists is inlined into the engine's feed loop
 * (no call, no saved registers); inserting one stays in flow_table.c.
 */
#ifndef COMMTAP_FLOW_TABLE_INTERNAL_H
#define COMMTAP_FLOW_TABLE_INTERNAL_H

#include <commtap/flow_table.h>

#include <string.h>

/* One index slot: the key's hash and the record index + 1 (0: empty). */
struct ct_slot {
	uint32_t hash;
	uint32_t idx1;
};

struct ct_flow_table {
	struct ct_flow *flows; /* capacity records; key.transport == 0 marks a free one */
	struct ct_slot *slots; /* slot_mask + 1 entries */
	uint32_t free_head;    /* free records are chained through key.id; UINT32_MAX ends */
	uint32_t capacity;
	uint32_t slot_mask;
	uint32_t live;
	uint32_t expire_hand;
	uint32_t evict_hand;
	uint64_t idle_timeout_ns;
	uint64_t inserts;
	uint64_t evicted_idle;
	uint64_t evicted_full;
	size_t memory_bytes;
	ct_evict_fn on_evict;
	void *evict_ctx;
	struct ct_allocator alloc;
};

static inline int ct_flow_key_equal(const struct ct_flow_key *a, const struct ct_flow_key *b)
{
	uint64_t x[5], y[5];

	memcpy(x, a, sizeof(x));
	memcpy(y, b, sizeof(y));
	return !((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) | (x[4] ^ y[4]));
}

/*
 * The index slot of key: where it is (*found = 1) or the empty slot that
 * ends its probe run, where it would go (*found = 0).
 */
static inline uint32_t ct_flow_table_find_slot(const struct ct_flow_table *t,
					       const struct ct_flow_key *key, uint32_t hash,
					       int *found)
{
	uint32_t i = hash & t->slot_mask;

	for (;;) {
		const struct ct_slot *s = &t->slots[i];

		if (!s->idx1) {
			*found = 0;
			return i;
		}
		if (s->hash == hash && ct_flow_key_equal(&t->flows[s->idx1 - 1].key, key)) {
			*found = 1;
			return i;
		}
		i = (i + 1) & t->slot_mask;
	}
}

/* Insert key at empty index slot s (from ct_flow_table_find_slot), evicting if full. */
struct ct_flow *ct_flow_table_insert(struct ct_flow_table *t, const struct ct_flow_key *key,
				     uint32_t hash, uint64_t now, uint32_t s);

/* ct_flow_table_get, inlined: the existing flow costs a probe and a key compare. */
static inline struct ct_flow *ct_flow_table_get_inline(struct ct_flow_table *t,
						       const struct ct_flow_key *key,
						       uint32_t hash, uint64_t now, int *created)
{
	int found;
	uint32_t s = ct_flow_table_find_slot(t, key, hash, &found);

	*created = !found;
	if (__builtin_expect(found, 1))
		return &t->flows[t->slots[s].idx1 - 1];
	return ct_flow_table_insert(t, key, hash, now, s);
}

static inline void ct_flow_table_prefetch_slot_inline(const struct ct_flow_table *t,
						      uint32_t hash)
{
	__builtin_prefetch(&t->slots[hash & t->slot_mask]);
}

/* Once the slot's line has arrived: both hot lines of the flow it names. */
static inline void ct_flow_table_prefetch_flow_inline(const struct ct_flow_table *t,
						      uint32_t hash)
{
	const struct ct_slot *s = &t->slots[hash & t->slot_mask];

	/* the first probe is usually the flow */
	if (s->idx1 && s->hash == hash) {
		const char *f = (const char *)&t->flows[s->idx1 - 1];

		__builtin_prefetch(f, 1);
		__builtin_prefetch(f + 64, 1);
	}
}

#endif
