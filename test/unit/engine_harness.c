// SPDX-License-Identifier: MIT
#include "engine_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct harness *harness_new_config(const struct ct_engine_config *cfg)
{
	struct harness *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	assert_int_equal(ct_engine_create(cfg, &h->engine), 0);
	h->now = 1000000000ull;
	h->step_ns = 1000;
	return h;
}

struct harness *harness_new(uint64_t tcp_msg_gap_ns)
{
	const struct ct_engine_config cfg = {
		.memory_budget = 1u << 20,
		.idle_timeout_ns = 0,
		.tcp_msg_gap_ns = tcp_msg_gap_ns,
		.evict_ring_slots = 64,
		.burst_ring_slots = 64,
	};

	return harness_new_config(&cfg);
}

void harness_free(struct harness *h)
{
	ct_engine_destroy(h->engine);
	free(h);
}

void harness_feed_frame(struct harness *h, const uint8_t *frame, size_t cap, size_t wire_len)
{
	uint8_t *copy = malloc(cap ? cap : 1);
	struct ct_packet pkt;

	assert_non_null(copy);
	memcpy(copy, frame, cap);
	pkt.data = copy;
	pkt.cap_len = (uint32_t)cap;
	pkt.wire_len = (uint32_t)wire_len;
	pkt.ts_ns = h->now;
	ct_engine_feed(h->engine, &pkt, 1);
	free(copy);
	h->now += h->step_ns;
}

void harness_feed_roce(struct harness *h, const struct roce_frame *r)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	size_t len = roce_frame_build(frame, sizeof(frame), r);

	harness_feed_frame(h, frame, len, len);
}

static void collect(const struct ct_flow *flow, void *ctx)
{
	struct harness *h = ctx;

	assert_true(h->n_flows < HARNESS_MAX_FLOWS);
	h->flows[h->n_flows++] = *flow;
}

void harness_finish(struct harness *h)
{
	ct_engine_finish(h->engine, collect, h);
	ct_engine_get_counters(h->engine, &h->counters);
}

static void addr_v4(struct ct_addr *a, const uint8_t v4[4])
{
	memset(a->b, 0, 10);
	a->b[10] = 0xff;
	a->b[11] = 0xff;
	memcpy(a->b + 12, v4, 4);
}

static const struct ct_flow *find(const struct harness *h, const struct ct_flow_key *key)
{
	for (unsigned i = 0; i < h->n_flows; i++)
		if (!memcmp(&h->flows[i].key, key, sizeof(*key)))
			return &h->flows[i];
	return NULL;
}

const struct ct_flow *harness_roce_flow(const struct harness *h, const uint8_t src[4],
					const uint8_t dst[4], uint32_t dqpn)
{
	struct ct_flow_key key;

	memset(&key, 0, sizeof(key));
	addr_v4(&key.src, src);
	addr_v4(&key.dst, dst);
	key.id = dqpn;
	key.transport = CT_TRANSPORT_ROCE;
	return find(h, &key);
}

const struct ct_flow *harness_tcp_flow(const struct harness *h, const uint8_t src[4],
				       const uint8_t dst[4], uint16_t sport, uint16_t dport)
{
	struct ct_flow_key key;

	memset(&key, 0, sizeof(key));
	addr_v4(&key.src, src);
	addr_v4(&key.dst, dst);
	key.id = (uint32_t)sport << 16 | dport;
	key.transport = CT_TRANSPORT_TCP;
	return find(h, &key);
}
