/* SPDX-License-Identifier: MIT */
/*
 * Test helper: a whole RoCEv2 frame from a short description. The extension
 * headers are the ones ct_opcode_table lists for the opcode, written in the
 * order the parser reads them (DETH, XRCETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt/IETH, CNP reserved bytes).
 */
#ifndef COMMTAP_TEST_ROCE_FRAME_H
#define COMMTAP_TEST_ROCE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "frame_builder.h"

#define ROCE_FRAME_MAX 9216 /* a jumbo frame and then some */

struct roce_vlan_tag {
	uint16_t tpid; /* 0x8100, 0x88a8 or 0x9100 */
	uint8_t pcp;
	uint16_t vid;
};

struct roce_frame {
	/* layer 2 */
	unsigned n_vlan;
	struct roce_vlan_tag vlan[6];
	/* layer 3: IPv4 unless ipv6 is set */
	uint8_t ipv6;
	uint8_t src4[4], dst4[4];
	uint8_t src6[16], dst6[16];
	uint8_t dscp, ecn;
	uint8_t ipv4_options_len;
	/* UDP */
	uint16_t sport; /* 0: 49152 */
	/* BTH */
	uint8_t opcode;
	uint8_t pad;
	uint32_t dqpn;
	uint32_t psn;
	uint8_t ackreq;
	uint8_t se;
	/* extension headers (used when the opcode carries them) */
	uint64_t va; /* RETH and AtomicETH */
	uint32_t rkey;
	uint32_t dma_len; /* RETH */
	uint8_t syndrome; /* AETH */
	uint32_t msn;
	uint32_t imm;  /* ImmDt, or the IETH R_Key */
	uint32_t qkey; /* DETH */
	uint32_t sqpn; /* DETH source QP */
	uint32_t srqn; /* XRCETH */
	/* payload: the verbs message bytes of this packet (pad bytes are added) */
	uint32_t payload_len;
	const uint8_t *payload; /* NULL: a pattern */
};

/* Append the UDP header and everything after it; the caller has written L2/L3. */
void roce_frame_udp_on(struct frame_builder *fb, const struct roce_frame *r);

/* Build the whole frame into buf; returns its length. */
size_t roce_frame_build(uint8_t *buf, size_t size, const struct roce_frame *r);

/* Bytes of the headers before the BTH: Ethernet, tags, IP (with options) and UDP. */
size_t roce_frame_bth_offset(const struct roce_frame *r);

#endif
