// SPDX-License-Identifier: MIT
#include "flow_table_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EXPIRE_PREFETCH 8 /* records of the next idle scan fetched ahead */

/*
 * The flow table and its index are read at random, a line per flow: with
 * 4 KiB pages 10,000 busy QPs (20,000 flows, 10 MB of records) need more
 * TLB entries than the core has, and a page walk before each flow's line.
 * An array of at least a huge page is aligned to one and asks for them
 * (where transparent huge pages are "madvise", the usual default).
 */
#define HUGE_PAGE_BYTES (2u << 20)

static void *default_alloc(size_t size, size_t align, void *ctx)
{
	void *p;

	(void)ctx;
	if (size >= HUGE_PAGE_BYTES && align < HUGE_PAGE_BYTES)
		align = HUGE_PAGE_BYTES;
	size = (size + align - 1) / align * align;
	p = aligned_alloc(align, size);
	if (!p)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == HUGE_PAGE_BYTES)
		madvise(p, size, MADV_HUGEPAGE); /* advice only: 4 KiB pages work too */
#endif
	memset(p, 0, size);
	return p;
}

static void default_free(void *ptr, void *ctx)
{
	(void)ctx;
	free(ptr);
}

const struct ct_allocator ct_default_allocator = {default_alloc, default_free, NULL};

static uint32_t slots_for(uint32_t capacity)
{
	uint32_t n = 16;

	while (n < 2 * (uint64_t)capacity)
		n <<= 1;
	return n;
}

size_t ct_flow_table_bytes_per_flow(void)
{
	return sizeof(struct ct_flow) + 2 * sizeof(struct ct_slot);
}

uint32_t ct_flow_table_capacity_for(size_t budget_bytes)
{
	size_t overhead = sizeof(struct ct_flow_table) + 4096;
	uint64_t cap, room;

	if (budget_bytes <= overhead)
		return 0;
	room = budget_bytes - overhead;
	cap = room / ct_flow_table_bytes_per_flow();
	if (cap > (1u << 30))
		cap = 1u << 30;
	/* The index is a power of two: take what is left after it, until that fits. */
	for (;;) {
		uint64_t index = (uint64_t)slots_for((uint32_t)cap) * sizeof(struct ct_slot);
		uint64_t fit = index < room ? (room - index) / sizeof(struct ct_flow) : 0;

		if (fit >= cap || !fit)
			return (uint32_t)(fit >= cap ? cap : 0);
		cap = fit;
	}
}

int ct_flow_table_create(size_t budget_bytes, uint64_t idle_timeout_ns,
			 const struct ct_allocator *alloc, ct_evict_fn on_evict, void *evict_ctx,
			 struct ct_flow_table **out)
{
	struct ct_allocator a = ct_default_allocator;
	struct ct_flow_table *t;
	uint32_t cap = ct_flow_table_capacity_for(budget_bytes);

	if (cap < CT_FLOW_TABLE_MIN)
		return -EINVAL;
	if (alloc)
		a = *alloc;
	t = a.alloc(sizeof(*t), 64, a.ctx);
	if (!t)
		return -ENOMEM;
	t->alloc = a;
	t->capacity = cap;
	t->slot_mask = slots_for(cap) - 1;
	t->idle_timeout_ns = idle_timeout_ns;
	t->on_evict = on_evict;
	t->evict_ctx = evict_ctx;
	t->flows = a.alloc((size_t)cap * sizeof(struct ct_flow), 64, a.ctx);
	t->slots = a.alloc((size_t)(t->slot_mask + 1) * sizeof(struct ct_slot), 64, a.ctx);
	if (!t->flows || !t->slots) {
		ct_flow_table_destroy(t);
		return -ENOMEM;
	}
	/* Hand out low indices first so a small workload stays compact. */
	for (uint32_t i = 0; i < cap; i++)
		t->flows[i].key.id = i + 1 < cap ? i + 1 : UINT32_MAX;
	t->free_head = 0;
	t->memory_bytes = sizeof(*t) + (size_t)cap * sizeof(struct ct_flow) +
			  (size_t)(t->slot_mask + 1) * sizeof(struct ct_slot);
	*out = t;
	return 0;
}

void ct_flow_table_destroy(struct ct_flow_table *t)
{
	if (!t)
		return;
	struct ct_allocator a = t->alloc;

	if (t->flows)
		a.free(t->flows, a.ctx);
	if (t->slots)
		a.free(t->slots, a.ctx);
	a.free(t, a.ctx);
}

int ct_flow_hash_crc32c;

#if defined(__x86_64__)
/* Chosen once, before main: the hash must not change while tables exist. */
__attribute__((constructor)) static void choose_key_hash(void)
{
	__builtin_cpu_init();
	ct_flow_hash_crc32c = __builtin_cpu_supports("sse4.2");
}
#endif

uint32_t ct_flow_key_hash(const struct ct_flow_key *key)
{
	return ct_flow_key_hash_inline(key, ct_flow_hash_crc32c);
}

struct ct_flow *ct_flow_table_lookup(struct ct_flow_table *t, const struct ct_flow_key *key,
				     uint32_t hash)
{
	int found;
	uint32_t i = ct_flow_table_find_slot(t, key, hash, &found);

	return found ? &t->flows[t->slots[i].idx1 - 1] : NULL;
}

/* Remove index slot i, shifting later entries of its probe run back. */
static void slot_delete(struct ct_flow_table *t, uint32_t i)
{
	uint32_t j = i;

	for (;;) {
		j = (j + 1) & t->slot_mask;
		if (!t->slots[j].idx1)
			break;
		uint32_t home = t->slots[j].hash & t->slot_mask;

		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].idx1 = 0;
	t->slots[i].hash = 0;
}

static void evict(struct ct_flow_table *t, uint32_t idx, enum ct_evict_reason why)
{
	struct ct_flow *f = &t->flows[idx];
	uint32_t hash = ct_flow_key_hash(&f->key);
	int found;
	uint32_t s = ct_flow_table_find_slot(t, &f->key, hash, &found);

	if (t->on_evict)
		t->on_evict(t->evict_ctx, f, why);
	if (found)
		slot_delete(t, s);
	f->key.transport = 0;
	f->key.id = t->free_head;
	t->free_head = idx;
	t->live--;
	if (why == CT_EVICT_IDLE)
		t->evicted_idle++;
	else if (why == CT_EVICT_FULL)
		t->evicted_full++;
}

/* Sampled LRU: of the next CT_EVICT_SAMPLE live records, evict the stalest. */
static void evict_one_for_space(struct ct_flow_table *t)
{
	uint32_t best = UINT32_MAX, seen = 0;
	uint64_t best_ts = UINT64_MAX;

	for (uint32_t n = 0; n < t->capacity && seen < CT_EVICT_SAMPLE; n++) {
		uint32_t i = t->evict_hand;

		t->evict_hand = (t->evict_hand + 1 == t->capacity) ? 0 : t->evict_hand + 1;
		if (!t->flows[i].key.transport)
			continue;
		seen++;
		if (t->flows[i].last_ts < best_ts) {
			best_ts = t->flows[i].last_ts;
			best = i;
		}
	}
	evict(t, best, CT_EVICT_FULL);
}

struct ct_flow *ct_flow_table_insert(struct ct_flow_table *t, const struct ct_flow_key *key,
				     uint32_t hash, uint64_t now, uint32_t s)
{
	struct ct_flow *f;
	uint32_t idx;
	int found;

	if (t->free_head == UINT32_MAX) {
		evict_one_for_space(t);
		/* the shift may have moved the run */
		s = ct_flow_table_find_slot(t, key, hash, &found);
	}
	idx = t->free_head;
	f = &t->flows[idx];
	t->free_head = f->key.id;
	memset(f, 0, sizeof(*f));
	f->key = *key;
	f->pcp = 0xff;
	f->cold.first_ts = now;
	f->last_ts = now;
	t->slots[s].hash = hash;
	t->slots[s].idx1 = idx + 1;
	t->live++;
	t->inserts++;
	return f;
}

struct ct_flow *ct_flow_table_get(struct ct_flow_table *t, const struct ct_flow_key *key,
				  uint32_t hash, uint64_t now, int *created)
{
	return ct_flow_table_get_inline(t, ct_flow_table_index(t), key, hash, now, created);
}

void ct_flow_table_expire(struct ct_flow_table *t, uint64_t now, unsigned n)
{
	if (!t->idle_timeout_ns || !t->live)
		return;
	while (n--) {
		uint32_t i = t->expire_hand;
		struct ct_flow *f = &t->flows[i];

		t->expire_hand = (i + 1 == t->capacity) ? 0 : i + 1;
		if (f->key.transport && now > f->last_ts && now - f->last_ts > t->idle_timeout_ns)
			evict(t, i, CT_EVICT_IDLE);
	}
	/*
	 * The next call starts where this one stopped: fetch the first lines it
	 * will read now, so the scan does not wait on memory (each record is a
	 * cache line of its own, far from the flows the packets touch).
	 */
	for (uint32_t k = 0, i = t->expire_hand; k < EXPIRE_PREFETCH; k++) {
		__builtin_prefetch(&t->flows[i]);
		i = (i + 1 == t->capacity) ? 0 : i + 1;
	}
}

void ct_flow_table_flush(struct ct_flow_table *t)
{
	for (uint32_t i = 0; i < t->capacity && t->live; i++)
		if (t->flows[i].key.transport)
			evict(t, i, CT_EVICT_FLUSH);
}

void ct_flow_table_foreach(struct ct_flow_table *t, void (*fn)(struct ct_flow *f, void *ctx),
			   void *ctx)
{
	for (uint32_t i = 0; i < t->capacity; i++)
		if (t->flows[i].key.transport)
			fn(&t->flows[i], ctx);
}

void ct_flow_table_get_stats(const struct ct_flow_table *t, struct ct_flow_table_stats *st)
{
	st->inserts = t->inserts;
	st->evicted_idle = t->evicted_idle;
	st->evicted_full = t->evicted_full;
	st->live = t->live;
	st->capacity = t->capacity;
	st->memory_bytes = t->memory_bytes;
}
