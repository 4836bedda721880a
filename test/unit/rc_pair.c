// SPDX-License-Identifier: MIT
#include "rc_pair.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

const uint8_t rc_host_a[4] = {10, 0, 0, 1};
const uint8_t rc_host_b[4] = {10, 0, 0, 2};

/* A RoCE frame from A to B's QP, on the request flow. */
struct roce_frame rc_a_to_b(uint8_t opcode, uint32_t psn, uint32_t payload)
{
	return (struct roce_frame){
		.src4 = {10, 0, 0, 1},
		.dst4 = {10, 0, 0, 2},
		.dqpn = RC_QP_B,
		.opcode = opcode,
		.psn = psn,
		.payload_len = payload,
		.va = 0x7f0000000000ull,
		.rkey = 0x1234,
	};
}

/* A RoCE frame from B back to A's QP, on the response flow. */
struct roce_frame rc_b_to_a(uint8_t opcode, uint32_t psn, uint32_t payload)
{
	struct roce_frame r = rc_a_to_b(opcode, psn, payload);

	memcpy(r.src4, rc_host_b, 4);
	memcpy(r.dst4, rc_host_a, 4);
	r.dqpn = RC_QP_A;
	r.sport = 50000;
	return r;
}

void rc_req(struct harness *h, uint8_t opcode, uint32_t psn, uint32_t payload)
{
	struct roce_frame r = rc_a_to_b(opcode, psn, payload);

	harness_feed_roce(h, &r);
}

/* A request carrying a RETH (WRITE FIRST/ONLY, READ request) with its DMA length. */
void rc_req_reth(struct harness *h, uint8_t opcode, uint32_t psn, uint32_t payload,
		 uint32_t dma_len)
{
	struct roce_frame r = rc_a_to_b(opcode, psn, payload);

	r.dma_len = dma_len;
	harness_feed_roce(h, &r);
}

/* A request to another QP of B, for a second independent request flow. */
void rc_req_to(struct harness *h, uint32_t dqpn, uint8_t opcode, uint32_t psn, uint32_t payload)
{
	struct roce_frame r = rc_a_to_b(opcode, psn, payload);

	r.dqpn = dqpn;
	harness_feed_roce(h, &r);
}

void rc_resp(struct harness *h, uint8_t opcode, uint32_t psn, uint32_t payload, uint8_t syndrome)
{
	struct roce_frame r = rc_b_to_a(opcode, psn, payload);

	r.syndrome = syndrome;
	harness_feed_roce(h, &r);
}

const struct ct_flow *rc_request_flow(const struct harness *h)
{
	const struct ct_flow *f = harness_roce_flow(h, rc_host_a, rc_host_b, RC_QP_B);

	assert_non_null(f);
	return f;
}

const struct ct_flow *rc_response_flow(const struct harness *h)
{
	const struct ct_flow *f = harness_roce_flow(h, rc_host_b, rc_host_a, RC_QP_A);

	assert_non_null(f);
	return f;
}
