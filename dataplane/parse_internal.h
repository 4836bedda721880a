/* SPDX-License-Identifier: MIT */
/*
 * The shape of the frame a RoCE mirror port sees nearly always, and the
 * RoCE extension header reader: shared by ct_parse (parse.c) and the
 * engine's own shortcut for that frame (engine.c).
 */
#ifndef COMMTAP_PARSE_INTERNAL_H
#define COMMTAP_PARSE_INTERNAL_H

#include <commtap/byteorder.h>
#include <commtap/parse.h>

#include <netinet/in.h>
#include <string.h>

/* What a native 4-byte load of the bytes of v in network byte order gives. */
static inline uint32_t ct_wire32(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

#define CT_ETH_HLEN	      14
#define CT_IPV4_MIN_HLEN      20
#define CT_UDP_HLEN	      8
#define CT_BTH_LEN	      12
#define CT_ICRC_LEN	      4
#define CT_PLAIN_V4_ROCE_HLEN (CT_ETH_HLEN + CT_IPV4_MIN_HLEN + CT_UDP_HLEN)

/*
 * Untagged Ethernet, IPv4 without options, not a later fragment, UDP to
 * port 4791, consistent IP and UDP lengths, and a whole BTH captured. Each
 * test is a fixed-offset load; they are combined without early exits, so
 * the whole shape costs one branch.
 */
static inline int ct_plain_v4_roce(const uint8_t *d, uint32_t cap, uint32_t *udp_len)
{
	uint32_t eth_ip, frag_proto, port;
	int32_t total, ulen;

	if (cap < CT_PLAIN_V4_ROCE_HLEN + CT_BTH_LEN)
		return 0;
	total = ct_get16(d + 16);
	ulen = ct_get16(d + 38);
	/* EtherType and IP version/IHL; flags/fragment offset and protocol; port */
	memcpy(&eth_ip, d + 12, 4);
	memcpy(&frag_proto, d + 20, 4);
	memcpy(&port, d + 36, 4); /* and the UDP length */
	*udp_len = (uint32_t)ulen;
	/* compared in wire byte order; each difference leaves bits set */
	return !(((eth_ip ^ ct_wire32(CT_ETHERTYPE_IPV4 << 16 | 0x45 << 8)) &
		  ct_wire32(0xffffff00u)) |
		 ((frag_proto ^ ct_wire32(IPPROTO_UDP)) & ct_wire32(0x1fff00ffu)) |
		 ((port ^ ct_wire32((uint32_t)CT_ROCE_UDP_PORT << 16)) & ct_wire32(0xffff0000u))) &
	       (ulen >= CT_UDP_HLEN) &
	       (ulen <= total - CT_IPV4_MIN_HLEN); /* total < 20 fails too */
}

/*
 * 24 bits (QPN, PSN) as the low bytes of a 4-byte load ending at p + 2:
 * one load instead of three. p[-1] belongs to the same header.
 */
static inline uint32_t ct_rd24_after(const uint8_t *p)
{
	return ct_get32(p - 1) & 0xffffffu;
}

/* The extension headers named by ext, in wire order (IBTA 9.2): routing, then operation. */
static inline void ct_read_roce_ext(const uint8_t *b, uint16_t ext, struct ct_roce *r)
{
	if (ext & CT_EXT_DETH) {
		r->deth_sqpn = ct_rd24_after(b + 5);
		b += 8;
	}
	if (ext & CT_EXT_XRCETH)
		b += 4;
	if (ext & CT_EXT_RETH) {
		r->reth_va = ct_get64(b);
		r->reth_rkey = ct_get32(b + 8);
		r->reth_len = ct_get32(b + 12);
		b += 16;
	}
	if (ext & CT_EXT_ATOMICETH) {
		r->reth_va = ct_get64(b);
		r->reth_rkey = ct_get32(b + 8);
		b += 28;
	}
	if (ext & CT_EXT_AETH) {
		r->aeth_syndrome = b[0];
		r->aeth_msn = ct_rd24_after(b + 1);
		b += 4;
	}
	if (ext & CT_EXT_ATOMICACKETH)
		b += 8;
	if (ext & (CT_EXT_IMMDT | CT_EXT_IETH))
		r->imm = ct_get32(b);
}

#endif
