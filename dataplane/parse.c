// SPDX-License-Identifier: MIT
/*
 * Packet parser. Each layer checks that the bytes it reads were captured
 * before it reads them, and takes lengths from the headers (IP total length,
 * UDP length) so that truncated mirror copies keep their true size.
 */
#include "parse_internal.h"

#include <commtap/byteorder.h>
#include <commtap/parse.h>
#include <commtap/roce_opcode.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define ETH_HLEN	  14
#define VLAN_HLEN	  4
#define IPV4_MIN_HLEN	  20
#define IPV6_HLEN	  40
#define UDP_HLEN	  8
#define TCP_MIN_HLEN	  20
#define BTH_LEN		  12
#define ICRC_LEN	  4
#define ERSPAN_II_HLEN	  8
#define ERSPAN_III_HLEN	  12
#define ERSPAN_III_PLAT	  8
#define MAX_ENCAP_DEPTH	  2
#define IPPROTO_GRE_	  47

#define GRE_F_CSUM	0x8000
#define GRE_F_ROUTING	0x4000
#define GRE_F_KEY	0x2000
#define GRE_F_SEQ	0x1000
#define GRE_VERSION	0x0007

struct frame {
	const uint8_t *d;
	uint32_t cap;	   /* captured bytes */
	uint32_t orig_len; /* frame length as captured by the pcap header */
	uint32_t *ip_off;  /* where the last IP header read starts (the inner one for GRE) */
};

/* True when len bytes starting at off were captured. */
static inline int have(const struct frame *f, uint32_t off, uint32_t len)
{
	return off <= f->cap && len <= f->cap - off;
}

static inline enum ct_pkt_kind malformed(struct ct_pkt *pkt, enum ct_malformed why)
{
	pkt->malformed = why;
	pkt->kind = CT_PKT_MALFORMED;
	return CT_PKT_MALFORMED;
}

static enum ct_pkt_kind parse_eth(const struct frame *f, uint32_t off, int depth,
				  struct ct_pkt *pkt);

/* Bytes of each extension header, in the order ct_read_roce_ext walks them. */
static const struct {
	uint16_t bit;
	uint8_t len;
} ext_sizes[] = {
	{CT_EXT_DETH, 8},	{CT_EXT_XRCETH, 4}, {CT_EXT_RETH, 16},
	{CT_EXT_ATOMICETH, 28}, {CT_EXT_AETH, 4},   {CT_EXT_ATOMICACKETH, 8},
	{CT_EXT_IMMDT, 4},	{CT_EXT_IETH, 4},   {CT_EXT_CNP, 16},
};

/*
 * The copy ends inside the extension headers (a 64-byte SPAN copy of a
 * WRITE FIRST keeps its BTH, not its RETH). The headers captured whole are
 * read; the fields of the others read as zero and their bits leave r->ext,
 * so a WRITE's size comes from its payload lengths. The payload length,
 * from the UDP length, is exact either way.
 */
static __attribute__((noinline)) enum ct_pkt_kind
ext_cut(const struct frame *f, uint32_t off, const struct ct_opcode_info *info, struct ct_pkt *pkt)
{
	struct ct_roce *r = &pkt->roce;
	uint8_t ext[64] = {0}; /* the headers captured whole, then zeros */
	uint32_t got = f->cap > off ? f->cap - off : 0, whole = 0;

	r->ext = 0;
	for (unsigned i = 0; i < sizeof(ext_sizes) / sizeof(ext_sizes[0]); i++) {
		if (!(info->ext & ext_sizes[i].bit))
			continue;
		if (whole + ext_sizes[i].len > got)
			break;
		whole += ext_sizes[i].len;
		r->ext |= ext_sizes[i].bit;
	}
	memcpy(ext, f->d + off, whole);
	r->reth_len = 0;
	ct_read_roce_ext(ext, info->ext, r);
	r->payload = NULL;
	r->payload_cap = 0;
	pkt->hdr_cut = CT_CUT_ROCE_EXT;
	pkt->kind = CT_PKT_ROCE;
	return CT_PKT_ROCE;
}

/*
 * The copy ends inside the BTH. With the destination QPN captured the packet
 * stays on its QP flow (no PSN: no message assembly); without it, it goes on
 * its address pair's flow, CT_QPN_CUT(why). The opcode, where it was
 * captured, must still be a valid one.
 */
static __attribute__((noinline)) enum ct_pkt_kind bth_cut(const struct frame *f, uint32_t off,
							  uint32_t udp_payload,
							  enum ct_malformed why, struct ct_pkt *pkt)
{
	struct ct_roce *r = &pkt->roce;
	uint32_t got = f->cap > off ? f->cap - off : 0;
	const uint8_t *b = f->d + off;

	memset(r, 0, sizeof(*r));
	if (udp_payload < BTH_LEN + ICRC_LEN)
		return malformed(pkt, CT_MAL_ROCE_BAD_LENGTH);
	if (got >= 1 && !ct_opcode_table[b[0]].valid)
		return malformed(pkt, CT_MAL_BTH_BAD_OPCODE);
	if (got >= 2 && (b[1] & 0x0f) != 0)
		return malformed(pkt, CT_MAL_BTH_BAD_OPCODE);
	if (got >= 8) {
		r->opcode = b[0];
		r->se = b[1] >> 7;
		r->pad = (b[1] >> 4) & 3;
		r->pkey = ct_get16(b + 2);
		r->dqpn = ct_rd24_after(b + 5);
		pkt->hdr_cut = CT_CUT_AFTER_QPN;
	} else {
		r->dqpn = CT_QPN_CUT(why);
		pkt->hdr_cut = CT_CUT_BEFORE_QPN;
	}
	pkt->kind = CT_PKT_ROCE;
	return CT_PKT_ROCE;
}

static enum ct_pkt_kind parse_bth(const struct frame *f, uint32_t off, uint32_t udp_payload,
				  struct ct_pkt *pkt)
{
	struct ct_roce *r = &pkt->roce;
	const struct ct_opcode_info *info;
	uint32_t need;

	if (!have(f, off, BTH_LEN))
		return bth_cut(f, off, udp_payload, CT_MAL_BTH_TRUNCATED, pkt);
	const uint8_t *b = f->d + off;

	r->opcode = b[0];
	info = &ct_opcode_table[r->opcode];
	if (!info->valid || (b[1] & 0x0f) != 0) /* reserved opcode, or TVer != 0 */
		return malformed(pkt, CT_MAL_BTH_BAD_OPCODE);
	r->se = b[1] >> 7;
	r->pad = (b[1] >> 4) & 3;
	r->pkey = ct_get16(b + 2);
	r->dqpn = ct_rd24_after(b + 5);
	r->ackreq = b[8] >> 7;
	r->psn = ct_rd24_after(b + 9);
	r->ext = info->ext;

	need = BTH_LEN + info->ext_len + r->pad + ICRC_LEN;
	if (udp_payload < need)
		return malformed(pkt, CT_MAL_ROCE_BAD_LENGTH);
	r->payload_len = udp_payload - need;

	off += BTH_LEN;
	if (__builtin_expect(!have(f, off, info->ext_len), 0))
		return ext_cut(f, off, info, pkt);
	r->reth_len = 0;
	/* Most packets (MIDDLE) carry no extension header: one test skips them all. */
	if (info->ext)
		ct_read_roce_ext(f->d + off, info->ext, r);
	off += info->ext_len;
	r->payload = f->d + off;
	r->payload_cap = f->cap - off;
	if (r->payload_cap > r->payload_len)
		r->payload_cap = r->payload_len;
	pkt->kind = CT_PKT_ROCE;
	return CT_PKT_ROCE;
}

static enum ct_pkt_kind parse_udp(const struct frame *f, uint32_t off, uint32_t l4_len,
				  struct ct_pkt *pkt)
{
	uint16_t udp_len;

	if (__builtin_expect(!have(f, off, UDP_HLEN), 0)) {
		/* A RoCE copy cut inside its UDP header still counts, by its ports. */
		if (!have(f, off, 4) || ct_get16(f->d + off + 2) != CT_ROCE_UDP_PORT)
			return malformed(pkt, CT_MAL_UDP_TRUNCATED);
		pkt->udp_sport = ct_get16(f->d + off);
		udp_len = have(f, off, 6) ? ct_get16(f->d + off + 4) : l4_len;
		if (udp_len < UDP_HLEN || udp_len > l4_len)
			return malformed(pkt, CT_MAL_UDP_BAD_LENGTH);
		return bth_cut(f, f->cap, udp_len - UDP_HLEN, CT_MAL_UDP_TRUNCATED, pkt);
	}
	udp_len = ct_get16(f->d + off + 4);
	if (udp_len < UDP_HLEN || udp_len > l4_len)
		return malformed(pkt, CT_MAL_UDP_BAD_LENGTH);
	pkt->udp_sport = ct_get16(f->d + off);
	if (ct_get16(f->d + off + 2) != CT_ROCE_UDP_PORT) {
		pkt->kind = CT_PKT_OTHER_IP;
		return CT_PKT_OTHER_IP;
	}
	return parse_bth(f, off + UDP_HLEN, udp_len - UDP_HLEN, pkt);
}

static enum ct_pkt_kind parse_tcp(const struct frame *f, uint32_t off, uint32_t l4_len,
				  struct ct_pkt *pkt)
{
	const uint8_t *t;
	uint32_t doff;

	if (!have(f, off, TCP_MIN_HLEN))
		return malformed(pkt, CT_MAL_TCP_TRUNCATED);
	t = f->d + off;
	doff = (uint32_t)(t[12] >> 4) * 4;
	/* Options are skipped by the data offset; their bytes need not be captured. */
	if (doff < TCP_MIN_HLEN || doff > l4_len)
		return malformed(pkt, CT_MAL_TCP_BAD_HEADER);
	pkt->tcp.sport = ct_get16(t);
	pkt->tcp.dport = ct_get16(t + 2);
	pkt->tcp.seq = ct_get32(t + 4);
	pkt->tcp.ack = ct_get32(t + 8);
	pkt->tcp.flags = t[13];
	pkt->tcp.payload_len = l4_len - doff;
	pkt->kind = CT_PKT_TCP;
	return CT_PKT_TCP;
}

/* GRE carrying a mirror copy: ERSPAN type I/II (0x88be), III (0x22eb) or TEB. */
static enum ct_pkt_kind parse_gre(const struct frame *f, uint32_t off, int depth,
				  struct ct_pkt *pkt)
{
	uint16_t flags, proto;
	uint32_t hlen = 4;

	if (depth >= MAX_ENCAP_DEPTH)
		return malformed(pkt, CT_MAL_ENCAP_TOO_DEEP);
	if (!have(f, off, 4))
		return malformed(pkt, CT_MAL_GRE_TRUNCATED);
	flags = ct_get16(f->d + off);
	proto = ct_get16(f->d + off + 2);
	if ((flags & GRE_VERSION) || (flags & GRE_F_ROUTING))
		return malformed(pkt, CT_MAL_GRE_UNSUPPORTED);
	hlen += (flags & GRE_F_CSUM) ? 4 : 0;
	hlen += (flags & GRE_F_KEY) ? 4 : 0;
	hlen += (flags & GRE_F_SEQ) ? 4 : 0;
	if (!have(f, off, hlen))
		return malformed(pkt, CT_MAL_GRE_TRUNCATED);
	off += hlen;

	switch (proto) {
	case CT_GRE_ERSPAN_II:
		/* Type I has no sequence number and no ERSPAN header. */
		if (flags & GRE_F_SEQ) {
			if (!have(f, off, ERSPAN_II_HLEN))
				return malformed(pkt, CT_MAL_ERSPAN_TRUNCATED);
			off += ERSPAN_II_HLEN;
		}
		break;
	case CT_GRE_ERSPAN_III:
		if (!have(f, off, ERSPAN_III_HLEN))
			return malformed(pkt, CT_MAL_ERSPAN_TRUNCATED);
		if (f->d[off + 11] & 0x01) { /* O bit: platform-specific subheader */
			if (!have(f, off, ERSPAN_III_HLEN + ERSPAN_III_PLAT))
				return malformed(pkt, CT_MAL_ERSPAN_TRUNCATED);
			off += ERSPAN_III_PLAT;
		}
		off += ERSPAN_III_HLEN;
		break;
	case CT_ETHERTYPE_TEB:
		break;
	default:
		return malformed(pkt, CT_MAL_GRE_UNSUPPORTED);
	}
	pkt->encap = 1;
	return parse_eth(f, off, depth + 1, pkt);
}

static enum ct_pkt_kind parse_l4(const struct frame *f, uint8_t proto, uint32_t off,
				 uint32_t l4_len, int depth, struct ct_pkt *pkt)
{
	pkt->ip_proto = proto;
	switch (proto) {
	case IPPROTO_UDP:
		return parse_udp(f, off, l4_len, pkt);
	case IPPROTO_TCP:
		return parse_tcp(f, off, l4_len, pkt);
	case IPPROTO_GRE_:
		return parse_gre(f, off, depth, pkt);
	default:
		pkt->kind = CT_PKT_OTHER_IP;
		return CT_PKT_OTHER_IP;
	}
}

static void addr_from_v4(struct ct_addr *a, const uint8_t *v4)
{
	memset(a->b, 0, 10);
	a->b[10] = 0xff;
	a->b[11] = 0xff;
	memcpy(a->b + 12, v4, 4);
}

static enum ct_pkt_kind parse_ipv4(const struct frame *f, uint32_t off, uint32_t l2_len,
				   int depth, struct ct_pkt *pkt)
{
	const uint8_t *ip;
	uint32_t ihl, total;

	if (!have(f, off, IPV4_MIN_HLEN))
		return malformed(pkt, CT_MAL_IPV4_TRUNCATED);
	*f->ip_off = off;
	ip = f->d + off;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if ((ip[0] >> 4) != 4 || ihl < IPV4_MIN_HLEN)
		return malformed(pkt, CT_MAL_IPV4_BAD_HEADER);
	if (!have(f, off, ihl)) /* options cut off */
		return malformed(pkt, CT_MAL_IPV4_TRUNCATED);
	total = ct_get16(ip + 2);
	if (total < ihl)
		return malformed(pkt, CT_MAL_IPV4_BAD_LENGTH);

	pkt->ip_version = 4;
	pkt->dscp = ip[1] >> 2;
	pkt->ecn = ip[1] & 3;
	pkt->wire_len = l2_len + total;
	addr_from_v4(&pkt->src, ip + 12);
	addr_from_v4(&pkt->dst, ip + 16);
	if (ct_get16(ip + 6) & 0x1fff) { /* a later fragment has no L4 header */
		pkt->ip_proto = ip[9];
		pkt->kind = CT_PKT_OTHER_IP;
		return CT_PKT_OTHER_IP;
	}
	return parse_l4(f, ip[9], off + ihl, total - ihl, depth, pkt);
}

static enum ct_pkt_kind parse_ipv6(const struct frame *f, uint32_t off, uint32_t l2_len,
				   int depth, struct ct_pkt *pkt)
{
	const uint8_t *ip;
	uint32_t remaining;
	uint8_t next;

	if (!have(f, off, IPV6_HLEN))
		return malformed(pkt, CT_MAL_IPV6_TRUNCATED);
	*f->ip_off = off;
	ip = f->d + off;
	if ((ip[0] >> 4) != 6)
		return malformed(pkt, CT_MAL_IPV6_BAD_HEADER);
	uint8_t tclass = (uint8_t)((ct_get16(ip) >> 4) & 0xff);

	remaining = ct_get16(ip + 4);
	pkt->ip_version = 6;
	pkt->dscp = tclass >> 2;
	pkt->ecn = tclass & 3;
	pkt->wire_len = l2_len + IPV6_HLEN + remaining;
	memcpy(pkt->src.b, ip + 8, 16);
	memcpy(pkt->dst.b, ip + 24, 16);
	next = ip[6];
	off += IPV6_HLEN;

	for (int n = 0;; n++) {
		uint32_t hlen;

		switch (next) {
		case 0:	 /* hop-by-hop options */
		case 43: /* routing */
		case 44: /* fragment */
		case 51: /* authentication header */
		case 60: /* destination options */
			break;
		default:
			return parse_l4(f, next, off, remaining, depth, pkt);
		}
		if (n == CT_MAX_IPV6_EXT)
			return malformed(pkt, CT_MAL_IPV6_EXT_TOO_MANY);
		if (!have(f, off, 8))
			return malformed(pkt, CT_MAL_IPV6_EXT_TRUNCATED);
		const uint8_t *ext = f->d + off;

		if (next == 44)
			hlen = 8;
		else if (next == 51)
			hlen = ((uint32_t)ext[1] + 2) * 4;
		else
			hlen = ((uint32_t)ext[1] + 1) * 8;
		if (hlen > remaining)
			return malformed(pkt, CT_MAL_IPV6_BAD_HEADER);
		if (next == 44 && (ct_get16(ext + 2) & 0xfff8)) { /* not the first fragment */
			pkt->ip_proto = ext[0];
			pkt->kind = CT_PKT_OTHER_IP;
			return CT_PKT_OTHER_IP;
		}
		next = ext[0];
		off += hlen;
		remaining -= hlen;
	}
}

/* IEEE 802.3 annex 31B (PAUSE) and 802.1Qbb (PFC) MAC control frames. */
static enum ct_pkt_kind parse_mac_control(const struct frame *f, uint32_t off,
					  struct ct_pkt *pkt)
{
	uint16_t opcode;

	if (!have(f, off, 2))
		return malformed(pkt, CT_MAL_MACCTRL_TRUNCATED);
	opcode = ct_get16(f->d + off);
	pkt->pfc.opcode = opcode;
	if (opcode == 0x0101) {
		if (!have(f, off, 4 + 16))
			return malformed(pkt, CT_MAL_MACCTRL_TRUNCATED);
		pkt->pfc.class_enable = f->d[off + 3];
		for (int i = 0; i < 8; i++)
			pkt->pfc.quanta[i] = ct_get16(f->d + off + 4 + 2 * i);
	} else if (opcode == 0x0001) {
		if (!have(f, off, 4))
			return malformed(pkt, CT_MAL_MACCTRL_TRUNCATED);
		pkt->pfc.class_enable = 0xff;
		memset(pkt->pfc.quanta, 0, sizeof(pkt->pfc.quanta));
		pkt->pfc.quanta[0] = ct_get16(f->d + off + 2);
	} else {
		pkt->kind = CT_PKT_OTHER_L2;
		return CT_PKT_OTHER_L2;
	}
	pkt->kind = CT_PKT_PFC;
	return CT_PKT_PFC;
}

static enum ct_pkt_kind parse_eth(const struct frame *f, uint32_t off, int depth,
				  struct ct_pkt *pkt)
{
	uint32_t l2_start = off;
	uint16_t type;

	if (!have(f, off, ETH_HLEN))
		return malformed(pkt, CT_MAL_ETH_TRUNCATED);
	type = ct_get16(f->d + off + 12);
	off += ETH_HLEN;
	pkt->vlan_count = 0;
	pkt->pcp = 0xff;
	pkt->vlan_id = 0;
	while (type == CT_ETHERTYPE_VLAN || type == CT_ETHERTYPE_QINQ ||
	       type == CT_ETHERTYPE_QINQ_OLD) {
		if (pkt->vlan_count == CT_MAX_VLAN)
			return malformed(pkt, CT_MAL_VLAN_TOO_DEEP);
		if (!have(f, off, VLAN_HLEN))
			return malformed(pkt, CT_MAL_VLAN_TRUNCATED);
		uint16_t tci = ct_get16(f->d + off);

		/* The innermost tag's priority is the one RoCE/PFC traffic classes use. */
		pkt->pcp = tci >> 13;
		pkt->vlan_id = tci & 0x0fff;
		type = ct_get16(f->d + off + 2);
		off += VLAN_HLEN;
		pkt->vlan_count++;
	}

	uint32_t l2_len = off - l2_start;

	switch (type) {
	case CT_ETHERTYPE_IPV4:
		return parse_ipv4(f, off, l2_len, depth, pkt);
	case CT_ETHERTYPE_IPV6:
		return parse_ipv6(f, off, l2_len, depth, pkt);
	case CT_ETHERTYPE_MACCTRL:
		return parse_mac_control(f, off, pkt);
	default:
		pkt->kind = CT_PKT_OTHER_L2;
		return CT_PKT_OTHER_L2;
	}
}

static enum ct_pkt_kind parse_layered_at(const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
					 struct ct_pkt *pkt, uint32_t *ip_off)
{
	struct frame f = {.d = data, .cap = cap_len, .orig_len = orig_len, .ip_off = ip_off};

	*ip_off = 0;
	pkt->malformed = CT_MAL_NONE;
	pkt->wire_len = orig_len;
	pkt->encap = 0;
	pkt->ip_version = 0;
	pkt->ip_proto = 0;
	pkt->dscp = 0;
	pkt->ecn = 0;
	pkt->udp_sport = 0;
	pkt->hdr_cut = CT_CUT_NONE;
	return parse_eth(&f, 0, 0, pkt);
}

enum ct_pkt_kind ct_parse_layered(const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
				  struct ct_pkt *pkt)
{
	uint32_t ip_off;

	return parse_layered_at(data, cap_len, orig_len, pkt, &ip_off);
}

/*
 * The common RoCEv2 frame goes straight to its BTH, filling what the
 * layered parser would (test_parse checks that the two agree on every
 * byte of struct ct_pkt); every other frame takes the layered parser.
 */
enum ct_pkt_kind ct_parse(const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
			  struct ct_pkt *pkt)
{
	struct frame f = {.d = data, .cap = cap_len, .orig_len = orig_len, .ip_off = NULL};
	uint32_t udp_len;

	if (__builtin_expect(!ct_plain_v4_roce(data, cap_len, &udp_len), 0))
		return ct_parse_layered(data, cap_len, orig_len, pkt);
	pkt->malformed = CT_MAL_NONE;
	pkt->encap = 0;
	pkt->vlan_count = 0;
	pkt->pcp = 0xff;
	pkt->vlan_id = 0;
	pkt->ip_version = 4;
	pkt->dscp = data[ETH_HLEN + 1] >> 2;
	pkt->ecn = data[ETH_HLEN + 1] & 3;
	pkt->wire_len = ETH_HLEN + ct_get16(data + ETH_HLEN + 2);
	addr_from_v4(&pkt->src, data + ETH_HLEN + 12);
	addr_from_v4(&pkt->dst, data + ETH_HLEN + 16);
	pkt->ip_proto = IPPROTO_UDP;
	pkt->hdr_cut = CT_CUT_NONE;
	pkt->udp_sport = ct_get16(data + ETH_HLEN + IPV4_MIN_HLEN);
	return parse_bth(&f, CT_PLAIN_V4_ROCE_HLEN, udp_len - UDP_HLEN, pkt);
}

enum ct_pkt_kind ct_parse_ip(const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
			     struct ct_pkt *pkt, uint32_t *ip_off)
{
	uint32_t udp_len;

	if (ct_plain_v4_roce(data, cap_len, &udp_len)) {
		*ip_off = ETH_HLEN;
		return ct_parse(data, cap_len, orig_len, pkt);
	}
	return parse_layered_at(data, cap_len, orig_len, pkt, ip_off);
}

static const char *const malformed_names[CT_MAL_COUNT] = {
	[CT_MAL_NONE] = "none",
	[CT_MAL_ETH_TRUNCATED] = "eth_truncated",
	[CT_MAL_VLAN_TRUNCATED] = "vlan_truncated",
	[CT_MAL_VLAN_TOO_DEEP] = "vlan_too_deep",
	[CT_MAL_GRE_TRUNCATED] = "gre_truncated",
	[CT_MAL_GRE_UNSUPPORTED] = "gre_unsupported",
	[CT_MAL_ERSPAN_TRUNCATED] = "erspan_truncated",
	[CT_MAL_ENCAP_TOO_DEEP] = "encap_too_deep",
	[CT_MAL_IPV4_TRUNCATED] = "ipv4_truncated",
	[CT_MAL_IPV4_BAD_HEADER] = "ipv4_bad_header",
	[CT_MAL_IPV4_BAD_LENGTH] = "ipv4_bad_length",
	[CT_MAL_IPV6_TRUNCATED] = "ipv6_truncated",
	[CT_MAL_IPV6_BAD_HEADER] = "ipv6_bad_header",
	[CT_MAL_IPV6_EXT_TRUNCATED] = "ipv6_ext_truncated",
	[CT_MAL_IPV6_EXT_TOO_MANY] = "ipv6_ext_too_many",
	[CT_MAL_UDP_TRUNCATED] = "udp_truncated",
	[CT_MAL_UDP_BAD_LENGTH] = "udp_bad_length",
	[CT_MAL_BTH_TRUNCATED] = "bth_truncated",
	[CT_MAL_BTH_BAD_OPCODE] = "bth_bad_opcode",
	[CT_MAL_ROCE_BAD_LENGTH] = "roce_bad_length",
	[CT_MAL_TCP_TRUNCATED] = "tcp_truncated",
	[CT_MAL_TCP_BAD_HEADER] = "tcp_bad_header",
	[CT_MAL_MACCTRL_TRUNCATED] = "macctrl_truncated",
};

const char *ct_malformed_name(enum ct_malformed reason)
{
	if ((unsigned)reason >= CT_MAL_COUNT)
		return "unknown";
	return malformed_names[reason];
}

const char *ct_addr_format(const struct ct_addr *a, char *buf, unsigned len)
{
	if (ct_addr_is_v4(a))
		return inet_ntop(AF_INET, a->b + 12, buf, len);
	return inet_ntop(AF_INET6, a->b, buf, len);
}

int ct_addr_parse(const char *text, struct ct_addr *a)
{
	uint8_t v4[4];

	if (inet_pton(AF_INET, text, v4) == 1) {
		memset(a->b, 0, 10);
		a->b[10] = a->b[11] = 0xff;
		memcpy(a->b + 12, v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, text, a->b) == 1 ? 0 : -EINVAL;
}
