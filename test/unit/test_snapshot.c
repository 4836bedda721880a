// SPDX-License-Identifier: MIT
/*
 * Snapshots of an engine (cumulative, the engine left running) and their
 * merge across engines; engine memory from a caller's allocator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/snapshot.h>

#include "engine_harness.h"
#include "rc_pair.h"

static const struct ct_flow *find(const struct ct_snapshot *s, const uint8_t src[4], uint32_t qp)
{
	for (size_t i = 0; i < s->n_flows; i++)
		if (!memcmp(s->flows[i].key.src.b + 12, src, 4) && s->flows[i].key.id == qp)
			return &s->flows[i];
	return NULL;
}

static void test_take_is_cumulative(void **state)
{
	struct harness *h = harness_new(1000000);
	struct ct_snapshot s;

	(void)state;
	ct_snapshot_init(&s);
	rc_req(h, RC(CT_OP_SEND_ONLY), 1, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 2, 100);
	assert_int_equal(ct_snapshot_take(h->engine, &s), 0);
	assert_int_equal(s.n_flows, 1);
	assert_int_equal(s.n_ended, 0);
	assert_int_equal(s.counters.packets, 2);
	assert_int_equal(find(&s, rc_host_a, RC_QP_B)->packets, 2);

	/* the engine goes on; the next take replaces the live copies */
	rc_req(h, RC(CT_OP_SEND_ONLY), 3, 100);
	rc_resp(h, RC(CT_OP_ACK), 3, 0, 0);
	assert_int_equal(ct_snapshot_take(h->engine, &s), 0);
	assert_int_equal(s.n_flows, 2);
	assert_int_equal(s.counters.packets, 4);
	assert_int_equal(find(&s, rc_host_a, RC_QP_B)->packets, 3);
	assert_int_equal(find(&s, rc_host_b, RC_QP_A)->packets, 1);

	assert_int_equal(ct_snapshot_finish(h->engine, &s), 0);
	assert_int_equal(s.n_flows, 2);
	assert_int_equal(s.n_ended, 2);
	assert_int_equal(find(&s, rc_host_a, RC_QP_B)->cold.messages, 3);
	ct_snapshot_free(&s);
	harness_free(h);
}

static void test_evicted_flows_kept_once(void **state)
{
	struct ct_engine_config cfg = {
		.memory_budget = 64u << 10, /* about a hundred flows: the clock hand wraps */
		.idle_timeout_ns = 1000000,
		.tcp_msg_gap_ns = 1000000,
	};
	struct harness *h = harness_new_config(&cfg);
	struct ct_snapshot s;

	(void)state;
	ct_snapshot_init(&s);
	rc_req(h, RC(CT_OP_SEND_ONLY), 1, 100);
	h->now += 10000000; /* A -> B goes idle while another flow is busy */
	for (uint32_t i = 0; i < 500; i++)
		rc_req_to(h, 0x55, RC(CT_OP_SEND_ONLY), i, 8);
	assert_int_equal(ct_snapshot_take(h->engine, &s), 0);
	assert_int_equal(ct_snapshot_take(h->engine, &s), 0);
	assert_int_equal(s.counters.packets, 501);
	assert_int_equal(s.n_flows, 2);
	assert_int_equal(s.n_ended, 1);
	assert_int_equal(s.flows[0].key.id, RC_QP_B);
	assert_int_equal(s.flows[1].packets, 500);
	assert_int_equal(ct_snapshot_finish(h->engine, &s), 0);
	assert_int_equal(s.n_flows, 2);
	assert_int_equal(s.n_ended, 2);
	ct_snapshot_free(&s);
	harness_free(h);
}

static void test_merge_two_engines(void **state)
{
	struct harness *a = harness_new(1000000), *b = harness_new(1000000);
	struct ct_snapshot sa, sb, all;

	(void)state;
	ct_snapshot_init(&sa);
	ct_snapshot_init(&sb);
	ct_snapshot_init(&all);
	a->now = 5000;
	b->now = 1000;
	rc_req(a, RC(CT_OP_SEND_ONLY), 1, 100);
	rc_req(a, RC(CT_OP_SEND_ONLY), 2, 100);
	rc_resp(b, RC(CT_OP_ACK), 2, 0, 0);
	b->now = 9000;
	rc_req_to(b, 0x33, RC(CT_OP_SEND_ONLY), 7, 200);
	ct_snapshot_finish(a->engine, &sa);
	ct_snapshot_take(b->engine, &sb);

	assert_int_equal(ct_snapshot_merge(&all, &sa), 0);
	assert_int_equal(ct_snapshot_merge(&all, &sb), 0);
	assert_int_equal(all.n_flows, 3);
	assert_int_equal(all.n_ended, 3);
	assert_int_equal(all.counters.packets, 4);
	assert_int_equal(all.counters.roce_packets, 4);
	assert_int_equal(all.counters.bytes, sa.counters.bytes + sb.counters.bytes);
	assert_int_equal(all.counters.first_ts, 1000);
	assert_int_equal(all.counters.last_ts, 9000);
	assert_int_equal(all.counters.table.capacity,
			 sa.counters.table.capacity + sb.counters.table.capacity);
	assert_non_null(find(&all, rc_host_a, 0x33));
	ct_snapshot_free(&all);
	ct_snapshot_free(&sa);
	ct_snapshot_free(&sb);
	harness_free(a);
	harness_free(b);
}

/* An allocator that hands out slices of one arena and counts its calls. */
struct arena {
	uint8_t *base;
	size_t used, size;
	unsigned allocs, frees;
};

static void *arena_alloc(size_t size, size_t align, void *ctx)
{
	struct arena *a = ctx;
	size_t at = (a->used + align - 1) & ~(align - 1);

	if (at + size > a->size)
		return NULL;
	a->used = at + size;
	a->allocs++;
	memset(a->base + at, 0, size);
	return a->base + at;
}

static void arena_free(void *p, void *ctx)
{
	struct arena *a = ctx;

	if (p)
		a->frees++;
}

static void test_engine_memory_from_allocator(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct arena ar = {.size = 64 << 20};
	struct ct_allocator alloc = {arena_alloc, arena_free, &ar};
	struct ct_engine_config cfg = {.memory_budget = 1 << 20, .alloc = &alloc};
	struct ct_engine *e;
	struct ct_packet p;
	struct roce_frame r = rc_a_to_b(RC(CT_OP_SEND_ONLY), 1, 100);
	unsigned allocs;

	(void)state;
	ar.base = aligned_alloc(64, ar.size);
	assert_non_null(ar.base);
	assert_int_equal(ct_engine_create(&cfg, &e), 0);
	assert_true(ar.allocs > 0);
	assert_true((uint8_t *)e >= ar.base && (uint8_t *)e < ar.base + ar.size);
	allocs = ar.allocs;
	p.cap_len = p.wire_len = (uint32_t)roce_frame_build(frame, sizeof(frame), &r);
	p.data = frame;
	for (int i = 0; i < 1000; i++) {
		p.ts_ns = 1000 + (uint64_t)i;
		ct_engine_feed(e, &p, 1);
	}
	assert_int_equal(ar.allocs, allocs); /* nothing allocated while feeding */
	ct_engine_destroy(e);
	assert_int_equal(ar.frees, ar.allocs);

	/* a budget the arena cannot hold fails cleanly */
	ar.used = 0;
	cfg.memory_budget = 128 << 20;
	assert_int_equal(ct_engine_create(&cfg, &e), -ENOMEM);
	free(ar.base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_is_cumulative),
		cmocka_unit_test(test_evicted_flows_kept_once),
		cmocka_unit_test(test_merge_two_engines),
		cmocka_unit_test(test_engine_memory_from_allocator),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
