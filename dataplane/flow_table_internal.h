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

/*
 * Which key hash this process uses (flow_table.c sets it once, at start):
 * 1 where the CPU has SSE4.2's CRC32 instruction, else 0. Both are
 * deterministic; the value is never stored outside this process.
 */
extern int ct_flow_hash_crc32c;

static inline uint64_t ct_crc32c_u64(uint64_t crc, uint64_t v)
{
#if defined(__x86_64__)
	/* inline asm: the instruction is used without building for SSE4.2 */
	__asm__("crc32q %1, %0" : "+r"(crc) : "rm"(v));
#else
	(void)v;
#endif
	return crc;
}

/* 64x64 -> 128-bit multiply, folded: the mixing step of wyhash-style hashes. */
static inline uint64_t ct_mix64(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/*
 * The key's five words (a key's bytes in memory). With CRC32C: two
 * independent chains (they overlap in the pipeline), each changed by any
 * one-bit change of its words, then a bijective 32-bit mix so that the
 * index's low bits depend on all of them. Without: three independent
 * 128-bit multiplies and one more to spread the bits (the constants are
 * arbitrary odd numbers with mixed bits).
 */
static inline uint32_t ct_flow_key_hash_words(const uint64_t w[5], int crc32c)
{
	uint64_t h;

	if (crc32c) {
		uint32_t a, b, x;

		a = (uint32_t)ct_crc32c_u64(ct_crc32c_u64(ct_crc32c_u64(0, w[0]), w[2]), w[4]);
		b = (uint32_t)ct_crc32c_u64(ct_crc32c_u64(0x9e3779b9u, w[1]), w[3]);
		x = a ^ (b << 16 | b >> 16);
		x *= 0x9e3779b1u;
		return x ^ (x >> 16);
	}
	h = ct_mix64(w[0] ^ 0xa0761d6478bd642full, w[1] ^ 0xe7037ed1a0b428dbull) ^
	    ct_mix64(w[2] ^ 0x8ebc6af09c88c6e3ull, w[3] ^ 0x589965cc75374cc3ull) ^
	    ct_mix64(w[4] ^ 0x1d8e4e27c47d124full, 0xeb44accab455d165ull);
	h = ct_mix64(h, 0x9e3779b97f4a7c15ull);
	return (uint32_t)(h ^ (h >> 32));
}

/*
 * ct_flow_key_hash_words of an IPv4 key, whose words 0 and 2 are zero: the
 * same value (test_flow_table checks), since CRC32C of zero data from a
 * zero CRC is zero.
 */
static inline uint32_t ct_flow_key_hash_v4(uint64_t w1, uint64_t w3, uint64_t w4, int crc32c)
{
	if (crc32c) {
		uint32_t a, b, x;

		a = (uint32_t)ct_crc32c_u64(0, w4);
		b = (uint32_t)ct_crc32c_u64(ct_crc32c_u64(0x9e3779b9u, w1), w3);
		x = a ^ (b << 16 | b >> 16);
		x *= 0x9e3779b1u;
		return x ^ (x >> 16);
	}
	const uint64_t w[5] = {0, w1, 0, w3, w4};

	return ct_flow_key_hash_words(w, 0);
}

/* The same hash of a key in memory. */
static inline uint32_t ct_flow_key_hash_inline(const struct ct_flow_key *key, int crc32c)
{
	uint64_t w[5];

	memcpy(w, key, sizeof(w));
	return ct_flow_key_hash_words(w, crc32c);
}

static inline uint64_t ct_key_word(const struct ct_flow_key *k, unsigned i)
{
	uint64_t w;

	memcpy(&w, (const char *)k + 8 * i, sizeof(w));
	return w;
}

/* Word by word into registers (copying both keys to arrays costs stack stores). */
static inline int ct_flow_key_equal(const struct ct_flow_key *a, const struct ct_flow_key *b)
{
	return !((ct_key_word(a, 0) ^ ct_key_word(b, 0)) | (ct_key_word(a, 1) ^ ct_key_word(b, 1)) |
		 (ct_key_word(a, 2) ^ ct_key_word(b, 2)) | (ct_key_word(a, 3) ^ ct_key_word(b, 3)) |
		 (ct_key_word(a, 4) ^ ct_key_word(b, 4)));
}

/*
 * The table's arrays and index mask, fixed from its creation: a caller that
 * writes flows (whose byte fields may alias anything) keeps them in
 * registers instead of reloading them from the table per packet.
 */
struct ct_flow_index {
	const struct ct_slot *slots;
	struct ct_flow *flows;
	uint32_t mask;
};

static inline struct ct_flow_index ct_flow_table_index(const struct ct_flow_table *t)
{
	return (struct ct_flow_index){t->slots, t->flows, t->slot_mask};
}

/*
 * The index slot of key: where it is (*found = 1) or the empty slot that
 * ends its probe run, where it would go (*found = 0).
 */
static inline uint32_t ct_flow_index_find_slot(struct ct_flow_index x,
					       const struct ct_flow_key *key, uint32_t hash,
					       int *found)
{
	uint32_t i = hash & x.mask;

	for (;;) {
		const struct ct_slot *s = &x.slots[i];

		if (!s->idx1) {
			*found = 0;
			return i;
		}
		if (s->hash == hash && ct_flow_key_equal(&x.flows[s->idx1 - 1].key, key)) {
			*found = 1;
			return i;
		}
		i = (i + 1) & x.mask;
	}
}

static inline uint32_t ct_flow_table_find_slot(const struct ct_flow_table *t,
					       const struct ct_flow_key *key, uint32_t hash,
					       int *found)
{
	return ct_flow_index_find_slot(ct_flow_table_index(t), key, hash, found);
}

/* Insert key at empty index slot s (from ct_flow_table_find_slot), evicting if full. */
struct ct_flow *ct_flow_table_insert(struct ct_flow_table *t, const struct ct_flow_key *key,
				     uint32_t hash, uint64_t now, uint32_t s);

/*
 * ct_flow_table_get, inlined: the existing flow costs a probe and a key
 * compare. x is ct_flow_table_index(t).
 */
static inline struct ct_flow *ct_flow_table_get_inline(struct ct_flow_table *t,
						       struct ct_flow_index x,
						       const struct ct_flow_key *key, uint32_t hash,
						       uint64_t now, int *created)
{
	int found;
	uint32_t s = ct_flow_index_find_slot(x, key, hash, &found);

	*created = !found;
	if (__builtin_expect(found, 1))
		return &x.flows[x.slots[s].idx1 - 1];
	return ct_flow_table_insert(t, key, hash, now, s);
}

static inline void ct_flow_table_prefetch_slot_inline(struct ct_flow_index x, uint32_t hash)
{
	__builtin_prefetch(&x.slots[hash & x.mask]);
}

/*
 * Once the slot's line has arrived: the flow it names, its two per-packet
 * lines and line 2 (struct ct_flow_cold's first line), which a burst's end
 * and start touch: with thousands of QPs sending at once nearly every
 * packet ends its flow's burst (each flow's gap exceeds the burst gap),
 * and a message's end touches it too.
 */
static inline void ct_flow_table_prefetch_flow_inline(struct ct_flow_index x, uint32_t hash)
{
	const struct ct_slot *s = &x.slots[hash & x.mask];

	/* the first probe is usually the flow */
	if (s->idx1 && s->hash == hash) {
		const char *f = (const char *)&x.flows[s->idx1 - 1];

		__builtin_prefetch(f, 1);
		__builtin_prefetch(f + 64, 1);
		__builtin_prefetch(f + 128, 1);
	}
}

#endif
