/* SPDX-License-Identifier: MIT */
/*
 * Representative frames for BPF_PROG_TEST_RUN: the probe's load test and
 * its benchmark feed the programs these (198.18.0.0/15 addresses).
 */
#ifndef COMMTAP_AGENT_FRAMES_H
#define COMMTAP_AGENT_FRAMES_H

#include <stddef.h>
#include <stdint.h>

/*
 * A RoCEv2 frame (Ethernet, IPv4, UDP 4791, BTH, the opcode's extension
 * headers with RETH length reth_len, payload bytes, ICRC) into buf; returns
 * its length, or 0 when it does not fit.
 */
size_t ct_frame_roce(uint8_t *buf, size_t cap, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		     uint32_t payload, uint32_t reth_len);

/* A TCP segment (Ethernet, IPv4, TCP without options) with payload bytes. */
size_t ct_frame_tcp(uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport, uint32_t seq,
		    uint32_t payload);

/*
 * The IPv4 frame v4 (len bytes, from the builders above) as IPv6,
 * 2001:db8::1 -> 2001:db8::2, the same traffic class and L4, into out;
 * returns its length (len + 20), or 0 when it does not fit.
 */
size_t ct_frame_ipv6(uint8_t *out, size_t cap, const uint8_t *v4, size_t len);

#endif
