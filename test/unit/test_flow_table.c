// SPDX-License-Identifier: MIT
/*
 * The fixed-capacity flow table: eviction when full (nothing lost), sampled
 * LRU, idle expiry, flush, the memory budget, and a long randomized run
 * checked against a plain reference model.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/flow_table.h>

#include "flow_table_internal.h"

/* ---- keys and budgets ---- */

/* Flow number n: 10.(n>>16).(n>>8).n -> 10.255.0.1, destination QP n. */
static struct ct_flow_key key_of(uint32_t n)
{
	struct ct_flow_key k;

	memset(&k, 0, sizeof(k));
	k.src.b[10] = 0xff;
	k.src.b[11] = 0xff;
	k.src.b[12] = 10;
	k.src.b[13] = (uint8_t)(n >> 16);
	k.src.b[14] = (uint8_t)(n >> 8);
	k.src.b[15] = (uint8_t)n;
	k.dst.b[10] = 0xff;
	k.dst.b[11] = 0xff;
	k.dst.b[12] = 10;
	k.dst.b[13] = 255;
	k.dst.b[15] = 1;
	k.id = n;
	k.transport = CT_TRANSPORT_ROCE;
	return k;
}

/* Flow number from a key made by key_of. */
static uint32_t number_of(const struct ct_flow_key *k)
{
	return k->id;
}

/* The smallest budget (in 16-byte steps) that holds at least `flows` flows. */
static size_t budget_for(uint32_t flows)
{
	size_t b = flows * ct_flow_table_bytes_per_flow();

	while (ct_flow_table_capacity_for(b) < flows)
		b += 16;
	return b;
}

static struct ct_flow *get(struct ct_flow_table *t, uint32_t n, uint64_t now, int *created)
{
	struct ct_flow_key k = key_of(n);

	return ct_flow_table_get(t, &k, ct_flow_key_hash(&k), now, created);
}

static struct ct_flow *lookup(struct ct_flow_table *t, uint32_t n)
{
	struct ct_flow_key k = key_of(n);

	return ct_flow_table_lookup(t, &k, ct_flow_key_hash(&k));
}

static struct ct_flow_table_stats stats_of(const struct ct_flow_table *t)
{
	struct ct_flow_table_stats st;

	ct_flow_table_get_stats(t, &st);
	return st;
}

/* ---- what the eviction callback saw ---- */

#define MAX_EVENTS 64

struct evict_event {
	uint32_t flow;
	enum ct_evict_reason why;
	uint64_t packets;
	uint64_t last_ts;
};

struct evict_log {
	uint64_t by_reason[3];
	uint64_t packets; /* summed over every evicted flow */
	unsigned n;	  /* events since the last reset */
	struct evict_event ev[MAX_EVENTS];
	uint8_t *times_evicted; /* per flow number, when the test wants it */
	uint32_t flows_tracked;
};

static void on_evict(void *ctx, const struct ct_flow *flow, enum ct_evict_reason why)
{
	struct evict_log *log = ctx;
	uint32_t n = number_of(&flow->key);

	assert_int_equal(flow->key.transport, CT_TRANSPORT_ROCE);
	assert_true(why <= CT_EVICT_FLUSH);
	log->by_reason[why]++;
	log->packets += flow->packets;
	if (log->times_evicted) {
		assert_true(n < log->flows_tracked);
		log->times_evicted[n]++;
	}
	assert_true(log->n < MAX_EVENTS);
	log->ev[log->n++] = (struct evict_event){n, why, flow->packets, flow->last_ts};
}

/* ---- the default allocator ---- */

/*
 * An array of a huge page or more starts on one (flow_table.c asks for huge
 * pages there: a TLB miss before each flow's line otherwise), zeroed; the
 * deployed table's records and index are such arrays.
 */
static void test_default_alloc_huge_page_aligned(void **state)
{
	const size_t huge = 2u << 20;
	const struct ct_allocator a = ct_default_allocator;
	struct ct_flow_table *t = NULL;
	unsigned char *p = a.alloc(huge + 4096, 64, a.ctx);
	unsigned char *q = a.alloc(4096, 64, a.ctx);
	size_t nonzero = 0;

	(void)state;
	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal((uintptr_t)p % huge, 0);
	assert_int_equal((uintptr_t)q % 64, 0);
	for (size_t i = 0; i < huge + 4096; i++)
		nonzero += p[i] != 0;
	assert_int_equal(nonzero, 0);
	a.free(p, a.ctx);
	a.free(q, a.ctx);
	assert_int_equal(ct_flow_table_create(64u << 20, 0, NULL, NULL, NULL, &t), 0);
	assert_int_equal((uintptr_t)t->flows % huge, 0);
	assert_int_equal((uintptr_t)t->slots % huge, 0);
	ct_flow_table_destroy(t);
}

/* ---- the budget ---- */

static void test_budget_too_small(void **state)
{
	struct ct_flow_table *t = (struct ct_flow_table *)0x1;
	size_t smallest = budget_for(CT_FLOW_TABLE_MIN);

	(void)state;
	assert_int_equal(ct_flow_table_capacity_for(0), 0);
	assert_int_equal(ct_flow_table_capacity_for(4096), 0);
	assert_int_equal(ct_flow_table_create(0, 0, NULL, NULL, NULL, &t), -EINVAL);
	assert_int_equal(ct_flow_table_create(4096, 0, NULL, NULL, NULL, &t), -EINVAL);
	/* one step below the smallest budget buys fewer than CT_FLOW_TABLE_MIN flows */
	assert_true(ct_flow_table_capacity_for(smallest - 16) < CT_FLOW_TABLE_MIN);
	assert_int_equal(ct_flow_table_create(smallest - 16, 0, NULL, NULL, NULL, &t), -EINVAL);
	assert_ptr_equal(t, (struct ct_flow_table *)0x1); /* untouched on failure */
	assert_int_equal(ct_flow_table_create(smallest, 0, NULL, NULL, NULL, &t), 0);
	assert_int_equal(stats_of(t).capacity, CT_FLOW_TABLE_MIN);
	ct_flow_table_destroy(t);
}

struct counting_alloc {
	size_t outstanding;
	unsigned allocs, frees;
};

static void *counting_alloc_fn(size_t size, size_t align, void *ctx)
{
	struct counting_alloc *c = ctx;
	size_t rounded = (size + align - 1) / align * align;
	size_t *p = aligned_alloc(align, rounded + align);

	assert_non_null(p);
	memset(p, 0, rounded + align);
	*p = rounded;
	c->outstanding += rounded;
	c->allocs++;
	return (uint8_t *)p + align;
}

static void counting_free_fn(void *ptr, void *ctx)
{
	struct counting_alloc *c = ctx;
	/* every allocation here asks for 64-byte alignment */
	size_t *p = (size_t *)((uint8_t *)ptr - 64);

	c->outstanding -= *p;
	c->frees++;
	free(p);
}

static void test_budget_is_respected(void **state)
{
	static const size_t budgets[] = {100000, 1u << 20, 3u << 20, 10000000};

	(void)state;
	for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		struct counting_alloc c = {0};
		const struct ct_allocator a = {counting_alloc_fn, counting_free_fn, &c};
		struct ct_flow_table *t;
		struct ct_flow_table_stats st;

		assert_int_equal(ct_flow_table_create(budgets[i], 0, &a, NULL, NULL, &t), 0);
		st = stats_of(t);
		assert_int_equal(st.capacity, ct_flow_table_capacity_for(budgets[i]));
		assert_true(st.memory_bytes <= budgets[i]);
		assert_true(c.outstanding <= budgets[i]);
		/* a budget 1% larger than it needs is mostly spent on flows */
		assert_true((uint64_t)st.capacity * ct_flow_table_bytes_per_flow() >
			    budgets[i] / 2);
		ct_flow_table_destroy(t);
		assert_int_equal(c.outstanding, 0);
		assert_int_equal(c.allocs, c.frees);
	}
}

/* ---- eviction when full ---- */

static void test_full_table_evicts_one_per_insert(void **state)
{
	struct evict_log log = {0};
	struct ct_flow_table *t;
	const size_t budget = budget_for(32);
	uint32_t cap, inserted;
	uint64_t packets_in = 0, packets_live = 0;
	uint8_t *times;

	(void)state;
	assert_int_equal(ct_flow_table_create(budget, 0, NULL, on_evict, &log, &t), 0);
	cap = stats_of(t).capacity;
	assert_true(cap >= 32 && cap < 40);
	inserted = 5 * cap;
	times = calloc(inserted, 1);
	assert_non_null(times);
	log.times_evicted = times;
	log.flows_tracked = inserted;

	for (uint32_t i = 0; i < inserted; i++) {
		int created = -1;
		struct ct_flow *f = get(t, i, 100 + i, &created);
		struct ct_flow_table_stats st = stats_of(t);
		uint64_t want_evicted = i + 1 > cap ? i + 1 - cap : 0;

		assert_int_equal(created, 1);
		assert_int_equal(number_of(&f->key), i);
		assert_int_equal(f->packets, 0);
		assert_int_equal(f->last_ts, 100 + i);
		f->packets = i + 1;
		f->bytes = 1000 * (i + 1);
		packets_in += i + 1;
		/* every insert beyond capacity evicted exactly one flow */
		assert_int_equal(st.inserts, i + 1);
		assert_int_equal(st.evicted_full, want_evicted);
		assert_int_equal(st.evicted_idle, 0);
		assert_int_equal(log.by_reason[CT_EVICT_FULL], want_evicted);
		assert_int_equal(st.live, i + 1 < cap ? i + 1 : cap);
		assert_true(st.live <= cap);
		/* a live flow seen again keeps its record and counters */
		if (i % 3 == 0) {
			struct ct_flow *again = get(t, i, 100 + i, &created);

			assert_int_equal(created, 0);
			assert_ptr_equal(again, f);
			again->packets++;
			packets_in++;
		}
		log.n = 0;
	}
	/* every flow is either still live or was handed out exactly once */
	for (uint32_t i = 0; i < inserted; i++) {
		struct ct_flow *f = lookup(t, i);

		if (f) {
			assert_int_equal(times[i], 0);
			assert_int_equal(number_of(&f->key), i);
			packets_live += f->packets;
		} else {
			assert_int_equal(times[i], 1);
		}
	}
	assert_int_equal(stats_of(t).live, cap);
	assert_int_equal(log.packets + packets_live, packets_in);
	ct_flow_table_destroy(t);
	free(times);
}

static void test_sampled_lru_evicts_stalest_of_sample(void **state)
{
	struct evict_log log = {0};
	struct ct_flow_table *t;
	uint32_t cap;
	int created;

	(void)state;
	assert_int_equal(ct_flow_table_create(budget_for(24), 0, NULL, on_evict, &log, &t), 0);
	cap = stats_of(t).capacity;
	assert_true(cap >= 2 * CT_EVICT_SAMPLE);
	/*
	 * Records are handed out in insertion order and the clock hand starts
	 * at record 0, so the first sample is flows 0..7 and the next 8..15.
	 * Flow 10 is the stalest of all, flow 5 the stalest of the first sample.
	 */
	for (uint32_t i = 0; i < cap; i++) {
		struct ct_flow *f = get(t, i, 1000 + i, &created);

		f->last_ts = i == 5 ? 500 : i == 10 ? 100 : 1000 + i;
	}
	get(t, cap, 5000, &created);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.ev[0].why, CT_EVICT_FULL);
	assert_int_equal(log.ev[0].flow, 5);
	assert_int_equal(log.ev[0].last_ts, 500);
	assert_null(lookup(t, 5));
	assert_non_null(lookup(t, 10));

	get(t, cap + 1, 5001, &created);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ev[1].flow, 10);
	assert_null(lookup(t, 10));

	/* whatever the sample, never a flow newer than most of the table */
	for (uint32_t i = cap + 2; i < 4 * cap; i++) {
		unsigned at_least_as_new = 0;

		log.n = 0;
		get(t, i, 6000 + i, &created)->last_ts = 6000 + (i * 37) % 101;
		assert_int_equal(log.n, 1);
		for (uint32_t j = 0; j <= i; j++) {
			struct ct_flow *f = lookup(t, j);

			if (f && f->last_ts >= log.ev[0].last_ts)
				at_least_as_new++;
		}
		/* the other flows of the sample are still there, none staler */
		assert_true(at_least_as_new >= CT_EVICT_SAMPLE - 1);
	}
	ct_flow_table_destroy(t);
}

/* ---- idle expiry ---- */

static void test_idle_expiry(void **state)
{
	struct evict_log log = {0};
	struct ct_flow_table *t;
	const uint64_t timeout = 1000;
	uint32_t cap;
	int created;

	(void)state;
	assert_int_equal(ct_flow_table_create(budget_for(16), timeout, NULL, on_evict, &log, &t),
			 0);
	cap = stats_of(t).capacity;
	/* flows 0..9 last seen at 0, 200, ..., 1800; flow 10 in the "future" */
	for (uint32_t i = 0; i < 10; i++)
		get(t, i, 200 * i, &created)->packets = 7;
	get(t, 10, 5000, &created);
	ct_flow_table_expire(t, 2000, cap);
	/* idle longer than 1000 ns: last seen before 1000 (1000 itself is exactly 1000) */
	assert_int_equal(log.n, 5);
	for (unsigned e = 0; e < log.n; e++) {
		assert_int_equal(log.ev[e].why, CT_EVICT_IDLE);
		assert_true(log.ev[e].flow < 5);
		assert_int_equal(log.ev[e].packets, 7);
	}
	for (uint32_t i = 0; i <= 10; i++) {
		if (i < 5)
			assert_null(lookup(t, i));
		else
			assert_non_null(lookup(t, i));
	}
	assert_int_equal(stats_of(t).evicted_idle, 5);
	assert_int_equal(stats_of(t).evicted_full, 0);
	assert_int_equal(stats_of(t).live, 6);
	/* nothing more is idle at the same time */
	ct_flow_table_expire(t, 2000, cap);
	assert_int_equal(log.n, 5);
	/*
	 * One record per call: the clock hand (back at record 0 after a whole
	 * turn) reaches flows 5 and 6 after 7 calls, the rest later.
	 */
	for (uint32_t i = 0; i < 7; i++)
		ct_flow_table_expire(t, 2801, 1);
	assert_int_equal(log.n, 7);
	for (uint32_t i = 7; i < cap; i++)
		ct_flow_table_expire(t, 2801, 1);
	assert_int_equal(log.n, 10); /* flows 5..9: last seen 1000..1800 */
	assert_int_equal(stats_of(t).evicted_idle, 10);
	assert_non_null(lookup(t, 10));
	ct_flow_table_destroy(t);
}

static void test_no_expiry_without_timeout(void **state)
{
	struct evict_log log = {0};
	struct ct_flow_table *t;
	int created;

	(void)state;
	assert_int_equal(ct_flow_table_create(budget_for(8), 0, NULL, on_evict, &log, &t), 0);
	for (uint32_t i = 0; i < 8; i++)
		get(t, i, i, &created);
	ct_flow_table_expire(t, UINT64_MAX, 1000);
	assert_int_equal(log.n, 0);
	assert_int_equal(stats_of(t).live, 8);
	ct_flow_table_destroy(t);
}

/* ---- flush ---- */

static void test_flush(void **state)
{
	struct evict_log log = {0};
	struct ct_flow_table *t;
	int created;

	(void)state;
	assert_int_equal(ct_flow_table_create(budget_for(16), 1000, NULL, on_evict, &log, &t), 0);
	for (uint32_t i = 0; i < 7; i++)
		get(t, i, 10, &created)->packets = i + 1;
	ct_flow_table_flush(t);
	assert_int_equal(log.n, 7);
	assert_int_equal(log.by_reason[CT_EVICT_FLUSH], 7);
	assert_int_equal(log.packets, 1 + 2 + 3 + 4 + 5 + 6 + 7);
	for (unsigned e = 0; e < log.n; e++)
		assert_int_equal(log.ev[e].why, CT_EVICT_FLUSH);
	assert_int_equal(stats_of(t).live, 0);
	assert_int_equal(stats_of(t).evicted_idle, 0);
	assert_int_equal(stats_of(t).evicted_full, 0);
	for (uint32_t i = 0; i < 7; i++)
		assert_null(lookup(t, i));
	/* the table is usable again */
	get(t, 3, 20, &created);
	assert_int_equal(created, 1);
	assert_non_null(lookup(t, 3));
	assert_int_equal(stats_of(t).inserts, 8);
	ct_flow_table_destroy(t);
}

/* ---- hashing ---- */

/* One of the two key hashes (flow_table_internal.h): 1 CRC32C, 0 multiplies. */
static void check_key_hash(int crc32c)
{
	const struct ct_flow_key base = key_of(0x123456);
	const uint32_t h = ct_flow_key_hash_inline(&base, crc32c);
	struct ct_flow_key copy = base;

	assert_int_equal(ct_flow_key_hash_inline(&copy, crc32c), h);
	for (size_t i = 0; i < sizeof(base); i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct ct_flow_key k = base;

			((uint8_t *)&k)[i] ^= (uint8_t)(1u << bit);
			assert_int_not_equal(ct_flow_key_hash_inline(&k, crc32c), h);
		}
	}
	/* neighbouring flow numbers spread over the low bits the index uses */
	unsigned low_bits_seen[16] = {0};

	for (uint32_t n = 0; n < 1600; n++) {
		struct ct_flow_key k = key_of(n);

		low_bits_seen[ct_flow_key_hash_inline(&k, crc32c) & 15]++;
	}
	for (int b = 0; b < 16; b++)
		assert_true(low_bits_seen[b] > 50 && low_bits_seen[b] < 150);
}

/* The hash of an IPv4 key from its three non-zero words (the engine's shortcut) is the same. */
static void check_key_hash_v4(int crc32c)
{
	uint64_t r = 0x9e3779b97f4a7c15ull;

	for (int n = 0; n < 10000; n++) {
		struct ct_flow_key k = key_of((uint32_t)n * 2654435761u);
		uint64_t w[5];

		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		memcpy(k.src.b + 12, &r, 4);
		k.id = (uint32_t)(r >> 40);
		memcpy(w, &k, sizeof(w));
		assert_int_equal(w[0], 0);
		assert_int_equal(w[2], 0);
		assert_int_equal(ct_flow_key_hash_v4(w[1], w[3], w[4], crc32c),
				 ct_flow_key_hash_inline(&k, crc32c));
	}
}

static void test_key_hash_sensitive_to_every_byte(void **state)
{
	const struct ct_flow_key k = key_of(77);

	(void)state;
	/* the table's hash is the one chosen for this CPU */
	assert_int_equal(ct_flow_key_hash(&k), ct_flow_key_hash_inline(&k, ct_flow_hash_crc32c));
	check_key_hash(0);
	check_key_hash_v4(0);
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2")) {
		check_key_hash(1);
		check_key_hash_v4(1);
	} else
		print_message("no SSE4.2 here: the CRC32C key hash is not checked\n");
#endif
}

/* ---- randomized, against a reference model ---- */

struct model_flow {
	uint8_t live;
	uint64_t last_ts;
	uint64_t packets;
};

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* Apply what the callback reported to the model, checking each event was due. */
static void model_take_evictions(struct model_flow *m, uint32_t *live, struct evict_log *log,
				 uint64_t now, uint64_t timeout, enum ct_evict_reason expect)
{
	for (unsigned e = 0; e < log->n; e++) {
		struct model_flow *mf = &m[log->ev[e].flow];

		assert_int_equal(log->ev[e].why, expect);
		assert_int_equal(mf->live, 1);
		assert_int_equal(log->ev[e].packets, mf->packets);
		assert_int_equal(log->ev[e].last_ts, mf->last_ts);
		if (expect == CT_EVICT_IDLE)
			assert_true(now > mf->last_ts && now - mf->last_ts > timeout);
		mf->live = 0;
		(*live)--;
	}
	log->n = 0;
}

static void model_check_all(struct ct_flow_table *t, const struct model_flow *m, uint32_t n,
			    uint32_t live)
{
	for (uint32_t k = 0; k < n; k++) {
		struct ct_flow *f = lookup(t, k);

		if (!m[k].live) {
			assert_null(f);
			continue;
		}
		assert_non_null(f);
		assert_int_equal(number_of(&f->key), k);
		assert_int_equal(f->packets, m[k].packets);
		assert_int_equal(f->last_ts, m[k].last_ts);
	}
	assert_int_equal(stats_of(t).live, live);
}

static void run_randomized(uint32_t want_capacity, uint64_t seed, unsigned ops)
{
	struct evict_log log = {0};
	struct ct_flow_table *t;
	uint64_t timeout;
	uint32_t cap, universe, live = 0;
	uint64_t now = 1, evictions_idle = 0, evictions_full = 0;
	struct model_flow *m;

	rng_state = seed;
	cap = ct_flow_table_capacity_for(budget_for(want_capacity));
	universe = 2 * cap;
	/*
	 * A flow is asked for again about every universe / 0.6 operations, and
	 * time moves 3.5 ns per operation on average: with this timeout some
	 * flows go idle in between while the table still fills up, so both
	 * idle and full evictions happen thousands of times.
	 */
	timeout = 4 * (uint64_t)universe;
	m = calloc(universe, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(
		ct_flow_table_create(budget_for(want_capacity), timeout, NULL, on_evict, &log, &t),
		0);
	assert_int_equal(stats_of(t).capacity, cap);

	for (unsigned op = 0; op < ops; op++) {
		uint32_t k = rnd() % universe;
		uint32_t r = rnd() % 100;

		now += rnd() % 8;
		if (r < 60) {
			int created;
			int was_full = live == cap;
			struct ct_flow *f = get(t, k, now, &created);

			assert_int_equal(number_of(&f->key), k);
			if (m[k].live) {
				assert_int_equal(created, 0);
				assert_int_equal(log.n, 0);
				assert_int_equal(f->packets, m[k].packets);
			} else {
				assert_int_equal(created, 1);
				assert_int_equal(f->packets, 0);
				assert_int_equal(log.n, was_full ? 1 : 0);
				evictions_full += log.n;
				model_take_evictions(m, &live, &log, now, timeout, CT_EVICT_FULL);
				m[k].live = 1;
				m[k].packets = 0;
				live++;
			}
			f->packets++;
			f->last_ts = now;
			m[k].packets++;
			m[k].last_ts = now;
		} else if (r < 80) {
			struct ct_flow *f = lookup(t, k);

			if (m[k].live) {
				assert_non_null(f);
				assert_int_equal(f->packets, m[k].packets);
			} else {
				assert_null(f);
			}
		} else if (r < 95) {
			ct_flow_table_expire(t, now, 1 + rnd() % (cap / 2 + 1));
			evictions_idle += log.n;
			model_take_evictions(m, &live, &log, now, timeout, CT_EVICT_IDLE);
		} else {
			/* a whole turn of the clock hand leaves nothing idle behind */
			ct_flow_table_expire(t, now, cap);
			evictions_idle += log.n;
			model_take_evictions(m, &live, &log, now, timeout, CT_EVICT_IDLE);
			for (uint32_t j = 0; j < universe; j++)
				assert_false(m[j].live && now > m[j].last_ts &&
					     now - m[j].last_ts > timeout);
		}
		if (op % 997 == 0)
			model_check_all(t, m, universe, live);
	}
	model_check_all(t, m, universe, live);
	assert_int_equal(stats_of(t).evicted_idle, evictions_idle);
	assert_int_equal(stats_of(t).evicted_full, evictions_full);
	/* the run exercised both kinds of deletion, many times */
	assert_true(evictions_idle > ops / 50);
	assert_true(evictions_full > ops / 100);
	ct_flow_table_destroy(t);
	free(m);
}

static void test_randomized_against_model(void **state)
{
	(void)state;
	run_randomized(CT_FLOW_TABLE_MIN, 0x5eed0001, 20000); /* 16 slots: runs wrap */
	run_randomized(61, 0x5eed0002, 60000);
	run_randomized(500, 0x5eed0003, 60000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_alloc_huge_page_aligned),
		cmocka_unit_test(test_budget_too_small),
		cmocka_unit_test(test_budget_is_respected),
		cmocka_unit_test(test_full_table_evicts_one_per_insert),
		cmocka_unit_test(test_sampled_lru_evicts_stalest_of_sample),
		cmocka_unit_test(test_idle_expiry),
		cmocka_unit_test(test_no_expiry_without_timeout),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_key_hash_sensitive_to_every_byte),
		cmocka_unit_test(test_randomized_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
