/* SPDX-License-Identifier: MIT */
/*
 * Test helper: build Ethernet frames byte by byte into a caller's buffer.
 *
 * Headers are appended in wire order. The length fields of IPv4, IPv6 and
 * UDP headers are left open and filled in by fb_finish() from the bytes that
 * follow each header (every header here runs to the end of the frame), so
 * a test only says what goes on the wire. A test that wants a wrong length
 * patches it afterwards with fb_put16() at the offset the header call
 * returned.
 *
 * The buffer must be large enough; running past it aborts the test.
 */
#ifndef COMMTAP_TEST_FRAME_BUILDER_H
#define COMMTAP_TEST_FRAME_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#define FB_MAX_OPEN	8 /* nested length fields (outer and inner IP + UDP) */
#define FB_MAX_IPV6_EXT 8

enum fb_len_field {
	FB_LEN_IPV4, /* total length and header checksum */
	FB_LEN_IPV6, /* payload length */
	FB_LEN_UDP,  /* UDP length */
};

struct frame_builder {
	uint8_t *buf;
	size_t size; /* bytes available at buf */
	size_t len;  /* bytes written so far */
	unsigned n_open;
	struct {
		size_t off;
		size_t hdr_len;
		enum fb_len_field field;
	} open[FB_MAX_OPEN];
};

void fb_init(struct frame_builder *fb, uint8_t *buf, size_t size);

/* Raw bytes; each returns the offset where it wrote. */
size_t fb_bytes(struct frame_builder *fb, const void *data, size_t n);
size_t fb_fill(struct frame_builder *fb, uint8_t byte, size_t n);
size_t fb_u8(struct frame_builder *fb, uint8_t v);
size_t fb_u16(struct frame_builder *fb, uint16_t v);
size_t fb_u24(struct frame_builder *fb, uint32_t v);
size_t fb_u32(struct frame_builder *fb, uint32_t v);
size_t fb_u64(struct frame_builder *fb, uint64_t v);
/* Overwrite a big-endian field already written. */
void fb_put16(struct frame_builder *fb, size_t off, uint16_t v);

/* ---- layer 2 ---- */

/* Destination and source MAC, then the EtherType (or TPID) of what follows. */
size_t fb_eth(struct frame_builder *fb, uint16_t ethertype);
/* The TCI of a tag whose TPID the previous header carried, then the next type. */
size_t fb_vlan(struct frame_builder *fb, uint8_t pcp, uint16_t vid, uint16_t ethertype);

/* ---- IP ---- */

struct fb_ipv4 {
	uint8_t src[4], dst[4];
	uint8_t proto;
	uint8_t dscp, ecn;
	uint8_t options_len; /* bytes of options, a multiple of 4, at most 40 */
	uint16_t frag;	     /* flags (DF 0x4000, MF 0x2000) and fragment offset */
};

size_t fb_ipv4(struct frame_builder *fb, const struct fb_ipv4 *ip);

enum fb_ipv6_ext_type {
	FB_IPV6_HOP_BY_HOP = 0,
	FB_IPV6_ROUTING = 43,
	FB_IPV6_FRAGMENT = 44,
	FB_IPV6_DEST_OPTS = 60,
};

struct fb_ipv6_ext {
	uint8_t type;	    /* enum fb_ipv6_ext_type */
	uint8_t len8;	    /* Hdr Ext Len: 8-byte units beyond the first 8 (not fragment) */
	uint16_t frag_off;  /* fragment header: offset in 8-byte units */
	uint8_t more_frags; /* fragment header: M flag */
};

struct fb_ipv6 {
	uint8_t src[16], dst[16];
	uint8_t proto; /* what follows the last extension header */
	uint8_t dscp, ecn;
	uint32_t flow_label;
	unsigned n_ext;
	struct fb_ipv6_ext ext[FB_MAX_IPV6_EXT];
};

/* The fixed header and then its extension headers in the order given. */
size_t fb_ipv6(struct frame_builder *fb, const struct fb_ipv6 *ip);

/* ---- UDP, TCP ---- */

size_t fb_udp(struct frame_builder *fb, uint16_t sport, uint16_t dport);

struct fb_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;	     /* FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10 */
	uint8_t options_len; /* a multiple of 4, at most 40: MSS, then NOPs and timestamps */
	uint16_t window;
};

size_t fb_tcp(struct frame_builder *fb, const struct fb_tcp *tcp);

/* ---- InfiniBand transport headers (RoCEv2) ---- */

struct fb_bth {
	uint8_t opcode;
	uint8_t se;
	uint8_t pad; /* pad count, 0..3 */
	uint8_t tver;
	uint16_t pkey;
	uint32_t dqpn;
	uint8_t ackreq;
	uint32_t psn;
};

size_t fb_bth(struct frame_builder *fb, const struct fb_bth *bth);
size_t fb_reth(struct frame_builder *fb, uint64_t va, uint32_t rkey, uint32_t dma_len);
size_t fb_aeth(struct frame_builder *fb, uint8_t syndrome, uint32_t msn);
size_t fb_atomic_ack_eth(struct frame_builder *fb, uint64_t orig_data);
size_t fb_immdt(struct frame_builder *fb, uint32_t imm);
size_t fb_ieth(struct frame_builder *fb, uint32_t rkey);
size_t fb_atomic_eth(struct frame_builder *fb, uint64_t va, uint32_t rkey, uint64_t swap_add,
		     uint64_t compare);
size_t fb_deth(struct frame_builder *fb, uint32_t qkey, uint32_t sqpn);
size_t fb_xrceth(struct frame_builder *fb, uint32_t srqn);
size_t fb_cnp_reserved(struct frame_builder *fb); /* the 16 reserved bytes of a CNP */
/* n payload bytes of a recognisable pattern */
size_t fb_payload(struct frame_builder *fb, size_t n);
size_t fb_icrc(struct frame_builder *fb);

/* ---- GRE mirror encapsulation ---- */

struct fb_gre {
	uint16_t proto; /* 0x88be ERSPAN I/II, 0x22eb ERSPAN III, 0x6558 TEB */
	uint8_t has_csum, has_key, has_seq;
	uint32_t key, seq;
};

size_t fb_gre(struct frame_builder *fb, const struct fb_gre *gre);
/* ERSPAN type II header (8 bytes): version 1, VLAN, COS, session id. */
size_t fb_erspan2(struct frame_builder *fb, uint16_t session, uint16_t vlan);
/* ERSPAN type III header (12 bytes), and the 8-byte platform subheader with the O bit. */
size_t fb_erspan3(struct frame_builder *fb, uint16_t session, uint32_t timestamp, int platform);

/* ---- MAC control ---- */

/* 802.1Qbb PFC body after an EtherType 0x8808 header: opcode, vector, 8 quanta. */
size_t fb_pfc(struct frame_builder *fb, uint8_t class_enable, const uint16_t quanta[8]);
/* 802.3x PAUSE body: opcode 0x0001 and one pause time. */
size_t fb_pause(struct frame_builder *fb, uint16_t quanta);

/* Fill every open length field (innermost first). Returns the frame length. */
size_t fb_finish(struct frame_builder *fb);

#endif
