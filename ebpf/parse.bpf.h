/* SPDX-License-Identifier: MIT */
/*
 * The host probe's packet parser, shared by the XDP (ingress) and TC
 * (egress) programs: Ethernet, up to CTP_MAX_VLAN 802.1Q/802.1ad tags,
 * IPv4 with options, IPv6 with up to CTP_MAX_IPV6_EXT extension headers,
 * UDP/4791 (RoCEv2 BTH, RETH, AETH, CNP) and TCP.
 *
 * The same decisions as the engine's parser (dataplane/parse.c), so a flow
 * counts the same packets, bytes and messages here as in `commtap analyze`:
 * sizes come from the L3 length fields, never from the frame length.
 *
 * Every loop has a constant bound and every read is checked against
 * data_end right before it, so the verifier accepts it as written.
 */
#ifndef COMMTAP_PARSE_BPF_H
#define COMMTAP_PARSE_BPF_H

#include <bpf/bpf_endian.h>

#include "probe_abi.h"

#define CTP_MAX_VLAN	 4
#define CTP_MAX_IPV6_EXT 8
#define CTP_ROCE_PORT	 4791
#define CTP_BTH_LEN	 12
#define CTP_ICRC_LEN	 4

enum ctp_kind {
	CTP_PKT_MALFORMED = 0,
	CTP_PKT_ROCE,
	CTP_PKT_TCP,
	CTP_PKT_OTHER_IP,
	CTP_PKT_OTHER_L2,
};

struct ctp_pkt {
	union {
		struct ctp_flow_key4 key4; /* IPv4 (ipv6 == 0) */
		struct ctp_flow_key key;   /* IPv6 */
	};
	__u32 wire_len;	   /* 14 + 4 per VLAN tag + IP length */
	__u32 hdr_len;	   /* bytes before the L4 payload (GSO: repeated per segment) */
	__u32 payload_len; /* RoCE: verbs payload; TCP: segment payload */
	__u32 psn;	   /* RoCE PSN; TCP sequence number */
	__u32 reth_len;
	__u32 opinfo; /* the opcode's CTP_OP_* entry */
	__u8 kind;    /* enum ctp_kind */
	__u8 opcode;
	__u8 ecn;
	__u8 dscp;
	__u8 pcp; /* innermost 802.1Q PCP, 0xff untagged */
	__u8 tcp_flags;
	__u8 aeth_syndrome;
	__u8 vlans;
	__u8 ipv6; /* the flow's key is key (IPv6), else key4 */
};

/*
 * Where the L4 parsers write the flow's id and transport: key4's or key's,
 * fixed per call site (they are inlined into the IPv4 and IPv6 paths).
 */
struct ctp_key_ref {
	__u32 *id;
	__u8 *transport;
};

/* Written by the loader from the engine's opcode table before load. */
const volatile __u32 ctp_opcode_info[256];

#define CTP_HAVE(p, n, end) ((void *)(p) + (n) <= (end))

/*
 * Big-endian fields by one load each (the verifier allows unaligned packet
 * loads where the CPU does them efficiently; headers are 2- or 4-aligned
 * behind NET_IP_ALIGN elsewhere).
 */
static __always_inline __u16 ctp_get16(const __u8 *p)
{
	return bpf_ntohs(*(const __u16 *)p);
}

static __always_inline __u32 ctp_get24(const __u8 *p)
{
	return (__u32)p[0] << 16 | (__u32)p[1] << 8 | p[2];
}

static __always_inline __u32 ctp_get32(const __u8 *p)
{
	return bpf_ntohl(*(const __u32 *)p);
}

/*
 * Copy n (a multiple of 4) bytes of addresses by 4-byte loads and stores:
 * __builtin_memcpy from a byte pointer is expanded byte by byte (an IPv6
 * address pair took about 90 instructions per packet, now 16).
 */
static __always_inline void ctp_copy_words(void *dst, const __u8 *src, int n)
{
#pragma unroll
	for (int i = 0; i < n; i += 4)
		*(__u32 *)(dst + i) = *(const __u32 *)(src + i);
}

static __always_inline int ctp_parse_bth(__u8 *p, void *end, __u32 udp_payload, struct ctp_pkt *pkt,
					 struct ctp_key_ref k)
{
	__u32 info, ext, need;
	__u8 *e;

	if (!CTP_HAVE(p, CTP_BTH_LEN, end))
		return CTP_PKT_MALFORMED;
	pkt->opcode = p[0];
	info = ctp_opcode_info[pkt->opcode];
	if (!(info & CTP_OP_VALID) || (p[1] & 0x0f))
		return CTP_PKT_MALFORMED;
	need = CTP_BTH_LEN + CTP_OP_EXTLEN(info) + ((p[1] >> 4) & 3) + CTP_ICRC_LEN;
	if (udp_payload < need)
		return CTP_PKT_MALFORMED;
	pkt->opinfo = info;
	pkt->payload_len = udp_payload - need;
	*k.id = ctp_get24(p + 5);
	pkt->psn = ctp_get24(p + 9);
	*k.transport = CTP_TRANSPORT_ROCE;
	pkt->hdr_len += CTP_BTH_LEN + CTP_OP_EXTLEN(info);

	/* Extension headers in wire order: DETH, XRCETH, RETH ... AETH. */
	ext = CTP_OP_EXT(info);
	e = p + CTP_BTH_LEN;
	if (ext & (1u << 1)) /* DETH */
		e += 8;
	if (ext & (1u << 2)) /* XRCETH */
		e += 4;
	if (ext & (1u << 3)) { /* RETH: VA 8, R_Key 4, DMA length 4 */
		if (!CTP_HAVE(e, 16, end))
			return CTP_PKT_MALFORMED;
		pkt->reth_len = ctp_get32(e + 12);
		e += 16;
	}
	if (ext & (1u << 8)) /* AtomicETH */
		e += 28;
	if (ext & (1u << 4)) { /* AETH */
		if (!CTP_HAVE(e, 4, end))
			return CTP_PKT_MALFORMED;
		pkt->aeth_syndrome = e[0];
	}
	return CTP_PKT_ROCE;
}

static __always_inline int ctp_parse_l4(__u8 *p, void *end, __u8 proto, __u32 l4_len,
					struct ctp_pkt *pkt, struct ctp_key_ref k)
{
	if (proto == 17) { /* UDP */
		__u32 udp_len;

		if (!CTP_HAVE(p, 8, end))
			return CTP_PKT_MALFORMED;
		udp_len = ctp_get16(p + 4);
		if (udp_len < 8 || udp_len > l4_len)
			return CTP_PKT_MALFORMED;
		if (ctp_get16(p + 2) != CTP_ROCE_PORT)
			return CTP_PKT_OTHER_IP;
		pkt->hdr_len += 8;
		return ctp_parse_bth(p + 8, end, udp_len - 8, pkt, k);
	}
	if (proto == 6) { /* TCP */
		__u32 doff;

		if (!CTP_HAVE(p, 20, end))
			return CTP_PKT_MALFORMED;
		doff = (__u32)(p[12] >> 4) * 4;
		if (doff < 20 || doff > l4_len)
			return CTP_PKT_MALFORMED;
		*k.id = (__u32)ctp_get16(p) << 16 | ctp_get16(p + 2);
		*k.transport = CTP_TRANSPORT_TCP;
		pkt->psn = ctp_get32(p + 4);
		pkt->tcp_flags = p[13];
		pkt->payload_len = l4_len - doff;
		pkt->hdr_len += doff;
		return CTP_PKT_TCP;
	}
	return CTP_PKT_OTHER_IP;
}

static __always_inline int ctp_parse_ipv4(__u8 *ip, void *end, __u32 l2_len, struct ctp_pkt *pkt)
{
	__u32 ihl, total;

	if (!CTP_HAVE(ip, 20, end))
		return CTP_PKT_MALFORMED;
	ihl = (__u32)(ip[0] & 0x0f) * 4;
	if ((ip[0] >> 4) != 4 || ihl < 20)
		return CTP_PKT_MALFORMED;
	total = ctp_get16(ip + 2);
	if (total < ihl)
		return CTP_PKT_MALFORMED;
	pkt->dscp = ip[1] >> 2;
	pkt->ecn = ip[1] & 3;
	pkt->wire_len = l2_len + total;
	/* the source address, then the destination */
	ctp_copy_words(pkt->key4.src, ip + 12, 8);
	if (ctp_get16(ip + 6) & 0x1fff) /* a later fragment has no L4 header */
		return CTP_PKT_OTHER_IP;
	pkt->hdr_len = l2_len + ihl;
	/* ihl <= 60: the offset stays in a range the verifier can follow */
	return ctp_parse_l4(ip + (ihl & 0x3c), end, ip[9], total - ihl, pkt,
			    (struct ctp_key_ref){&pkt->key4.id, &pkt->key4.transport});
}

static __always_inline int ctp_parse_ipv6(__u8 *ip, void *end, __u32 l2_len, struct ctp_pkt *pkt)
{
	__u32 remaining, hlen;
	__u8 next, tclass;
	__u8 *p;

	if (!CTP_HAVE(ip, 40, end))
		return CTP_PKT_MALFORMED;
	if ((ip[0] >> 4) != 6)
		return CTP_PKT_MALFORMED;
	tclass = (__u8)((ctp_get16(ip) >> 4) & 0xff);
	remaining = ctp_get16(ip + 4);
	pkt->dscp = tclass >> 2;
	pkt->ecn = tclass & 3;
	pkt->wire_len = l2_len + 40 + remaining;
	pkt->ipv6 = 1;
	/* the source address, then the destination */
	ctp_copy_words(pkt->key.src, ip + 8, 32);
	next = ip[6];
	p = ip + 40;
	pkt->hdr_len = l2_len + 40;

#pragma unroll
	for (int n = 0; n < CTP_MAX_IPV6_EXT; n++) {
		if (next != 0 && next != 43 && next != 44 && next != 51 && next != 60)
			return ctp_parse_l4(
				p, end, next, remaining, pkt,
				(struct ctp_key_ref){&pkt->key.id, &pkt->key.transport});
		if (!CTP_HAVE(p, 8, end))
			return CTP_PKT_MALFORMED;
		if (next == 44)
			hlen = 8;
		else if (next == 51)
			hlen = ((__u32)p[1] + 2) * 4;
		else
			hlen = ((__u32)p[1] + 1) * 8;
		if (hlen > remaining)
			return CTP_PKT_MALFORMED;
		if (next == 44 && (ctp_get16(p + 2) & 0xfff8))
			return CTP_PKT_OTHER_IP;
		next = p[0];
		p += hlen & 0x7f8; /* at most 2 KiB, as the length byte allows */
		remaining -= hlen;
		pkt->hdr_len += hlen;
	}
	return CTP_PKT_MALFORMED; /* more extension headers than the engine follows */
}

/*
 * Parse the frame at [data, end). vlan_tci_offloaded is a tag the driver
 * took out of the frame (TC: skb->vlan_present), counted like one in it.
 */
static __always_inline int ctp_parse(void *data, void *end, int vlan_offloaded, __u16 vlan_tci,
				     struct ctp_pkt *pkt)
{
	__u8 *p = data;
	__u32 l2_len = 14;
	__u16 type;

	pkt->pcp = 0xff;
	if (vlan_offloaded) {
		pkt->pcp = vlan_tci >> 13;
		pkt->vlans = 1;
		l2_len += 4;
	}
	if (!CTP_HAVE(p, 14, end))
		return CTP_PKT_MALFORMED;
	type = ctp_get16(p + 12);
	p += 14;
#pragma unroll
	for (int i = 0; i < CTP_MAX_VLAN; i++) {
		if (type != 0x8100 && type != 0x88a8 && type != 0x9100)
			break;
		if (!CTP_HAVE(p, 4, end))
			return CTP_PKT_MALFORMED;
		pkt->pcp = p[0] >> 5;
		type = ctp_get16(p + 2);
		p += 4;
		l2_len += 4;
		pkt->vlans++;
	}
	if (type == 0x8100 || type == 0x88a8 || type == 0x9100)
		return CTP_PKT_MALFORMED; /* deeper than the engine follows */
	if (type == 0x0800)
		return ctp_parse_ipv4(p, end, l2_len, pkt);
	if (type == 0x86dd)
		return ctp_parse_ipv6(p, end, l2_len, pkt);
	return CTP_PKT_OTHER_L2;
}

#endif
