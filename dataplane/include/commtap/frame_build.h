/* SPDX-License-Identifier: MIT */
/*
 * Frames written from a description: the parser's inverse, for the
 * synthesizer, the engine's benchmark, the host probe's test frames and the
 * unit tests. One RoCEv2 builder: the extension headers are the ones
 * ct_opcode_table lists for the opcode, in the order the parser reads them
 * (RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt/IETH, CNP).
 *
 * Library commtap-frame-build, beside the engine but not in it: the fast
 * path never writes a frame.
 */
#ifndef COMMTAP_FRAME_BUILD_H
#define COMMTAP_FRAME_BUILD_H

#include <stddef.h>
#include <stdint.h>

#define CT_FRAME_MAX_VLANS 4 /* the parser reads up to 4 tags */

struct ct_frame_vlan {
	uint16_t tpid; /* 0x8100, 0x88a8 or 0x9100 */
	uint8_t pcp;
	uint16_t vid;
};

/* Ethernet, its tags and the IP header. */
struct ct_frame_ip {
	uint8_t dst_mac[6], src_mac[6];
	unsigned n_vlan;
	struct ct_frame_vlan vlan[CT_FRAME_MAX_VLANS]; /* outermost first */
	uint8_t ipv6;
	uint8_t src[16], dst[16]; /* IPv4: the first 4 bytes */
	uint8_t tos;		  /* DSCP << 2 | ECN; IPv6's traffic class */
};

/* Bytes ct_frame_ip_write writes: 14, 4 a tag, then 20 (IPv4) or 40 (IPv6). */
size_t ct_frame_ip_len(const struct ct_frame_ip *h);

/*
 * Write Ethernet, tags and IP for an L4 header of protocol proto with l4_len
 * bytes from it to the frame's end; returns ct_frame_ip_len(h). IPv4: no
 * options, ID 0, DF, TTL 64 and the header checksum left 0 (no reader of
 * these frames checks it, and the synthesizer's frozen captures have it 0);
 * IPv6: flow label 0, hop limit 64.
 */
size_t ct_frame_ip_write(uint8_t *buf, const struct ct_frame_ip *h, uint8_t proto, uint32_t l4_len);

/* The BTH and the extension headers its opcode carries. */
struct ct_roce_hdr {
	uint8_t opcode;
	uint8_t se, ackreq;	    /* flags: solicited event, acknowledge request */
	uint8_t pad;		    /* pad count, 0..3 */
	uint16_t pkey;		    /* 0: the default P_Key 0xffff */
	uint32_t dqpn, psn;	    /* 24 bits each */
	uint64_t va;		    /* RETH, AtomicETH */
	uint32_t rkey;		    /* RETH, AtomicETH */
	uint32_t dma_len;	    /* RETH */
	uint64_t swap_add, compare; /* AtomicETH */
	uint8_t syndrome;	    /* AETH: 0x1f an ACK with no credit limit, 0x60 | n a NAK */
	uint32_t msn;		    /* AETH */
	uint64_t orig;		    /* AtomicAckETH */
	uint32_t imm;		    /* ImmDt, or IETH's R_Key */
	uint32_t qkey, sqpn;	    /* DETH */
	uint32_t srqn;		    /* XRCETH */
};

/*
 * Bytes of the BTH and the opcode's extension headers. An opcode the table
 * does not know carries none: its frame is one the parser must refuse.
 */
size_t ct_roce_hdr_len(uint8_t opcode);

/* Write them at p (ct_roce_hdr_len bytes); returns that length. */
size_t ct_roce_hdr_write(uint8_t *p, const struct ct_roce_hdr *h);

/* A whole RoCEv2 frame: Ethernet to UDP 4791, the BTH and its extension headers. */
struct ct_roce_frame {
	struct ct_frame_ip ip;
	uint16_t sport; /* the UDP source port (the flow's entropy) */
	struct ct_roce_hdr bth;
	uint32_t payload; /* bytes between the headers and the ICRC, pad bytes included */
};

/*
 * Write f's headers into buf (cap bytes): Ethernet to the last extension
 * header, with lengths that count the whole frame. The payload and the ICRC
 * are the caller's to write, or to leave out of a truncated copy (a
 * mirror's). Returns the frame's length (headers, payload, 4 bytes of ICRC),
 * or 0 when the headers do not fit in cap;
 * *hdr_len (may be NULL) gets the headers' length.
 */
size_t ct_roce_frame_write(uint8_t *buf, size_t cap, const struct ct_roce_frame *f,
			   size_t *hdr_len);

#endif
