/* SPDX-License-Identifier: MIT */
/*
 * Test helper: one RC connection between two hosts, and frames along it.
 *
 * Host A (10.0.0.1, QP 0x11) is the requester, host B (10.0.0.2, QP 0x22)
 * the responder: requests travel on flow (A, B, 0x22); ACKs, NAKs, READ
 * responses and CNPs on flow (B, A, 0x11).
 */
#ifndef COMMTAP_TEST_RC_PAIR_H
#define COMMTAP_TEST_RC_PAIR_H

#include <stdint.h>

#include <commtap/flow.h>
#include <commtap/roce_opcode.h>

#include "engine_harness.h"
#include "roce_frame.h"

#define RC(op)	((uint8_t)(CT_TR_RC | (op)))
#define RC_QP_A 0x000011u
#define RC_QP_B 0x000022u

/* Frame length of a plain IPv4 RoCE packet carrying ext_and_payload bytes after the BTH. */
#define ROCE_LEN(ext_and_payload) (14 + 20 + 8 + 12 + (ext_and_payload) + 4)

extern const uint8_t rc_host_a[4];
extern const uint8_t rc_host_b[4];

/* A frame from A to B's QP (the request flow), and from B back to A's QP. */
struct roce_frame rc_a_to_b(uint8_t opcode, uint32_t psn, uint32_t payload);
struct roce_frame rc_b_to_a(uint8_t opcode, uint32_t psn, uint32_t payload);

/* Feed a request A -> B; with a RETH and its DMA length; to another QP of B. */
void rc_req(struct harness *h, uint8_t opcode, uint32_t psn, uint32_t payload);
void rc_req_reth(struct harness *h, uint8_t opcode, uint32_t psn, uint32_t payload,
		 uint32_t dma_len);
void rc_req_to(struct harness *h, uint32_t dqpn, uint8_t opcode, uint32_t psn, uint32_t payload);
/* Feed a response B -> A with this AETH syndrome (when the opcode carries one). */
void rc_resp(struct harness *h, uint8_t opcode, uint32_t psn, uint32_t payload, uint8_t syndrome);

/* The two flows after harness_finish; the test fails if one is missing. */
const struct ct_flow *rc_request_flow(const struct harness *h);
const struct ct_flow *rc_response_flow(const struct harness *h);

#endif
