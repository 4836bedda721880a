/* SPDX-License-Identifier: MIT */
/*
 * Test helper: an engine fed one frame at a time, and the flows it hands out
 * at the end, kept for the test to look up by key.
 */
#ifndef COMMTAP_TEST_ENGINE_HARNESS_H
#define COMMTAP_TEST_ENGINE_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/dataplane.h>

#include "roce_frame.h"

#define HARNESS_MAX_FLOWS 64

struct harness {
	struct ct_engine *engine;
	uint64_t now;	  /* timestamp of the next frame */
	uint64_t step_ns; /* added to now after each frame */
	/* filled by harness_finish */
	unsigned n_flows;
	struct ct_flow flows[HARNESS_MAX_FLOWS];
	struct ct_engine_counters counters;
};

/* An engine with a 1 MiB budget, no idle eviction and the given TCP message gap. */
struct harness *harness_new(uint64_t tcp_msg_gap_ns);
struct harness *harness_new_config(const struct ct_engine_config *cfg);
void harness_free(struct harness *h);

/* Feed the first cap bytes of a frame from a heap copy of exactly that size. */
void harness_feed_frame(struct harness *h, const uint8_t *frame, size_t cap, size_t wire_len);
/* Build a RoCE frame and feed it whole. */
void harness_feed_roce(struct harness *h, const struct roce_frame *r);

/* End of input: collect every flow and the counters. */
void harness_finish(struct harness *h);

/* A flow collected by harness_finish, or NULL. */
const struct ct_flow *harness_roce_flow(const struct harness *h, const uint8_t src[4],
					const uint8_t dst[4], uint32_t dqpn);
const struct ct_flow *harness_tcp_flow(const struct harness *h, const uint8_t src[4],
				       const uint8_t dst[4], uint16_t sport, uint16_t dport);

#endif
