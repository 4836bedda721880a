/* SPDX-License-Identifier: MIT */
/*
 * Packet parser: one frame in, one struct ct_pkt out.
 *
 * Ethernet, 802.1Q/802.1ad (any depth up to CT_MAX_VLAN), GRE mirror
 * encapsulation (ERSPAN II/III, transparent Ethernet bridging: the inner
 * frame is analysed), IPv4 with options, IPv6 with extension headers,
 * UDP/4791 (RoCEv2 BTH and its extension headers), TCP, PFC/PAUSE.
 *
 * Every read is bounds-checked against the captured length. Sizes come from
 * the L3 length fields, never from the captured length, so a header-truncated
 * mirror copy is counted at its true size. A RoCEv2 copy cut inside its
 * headers is still a RoCE packet: ct_pkt.hdr_cut says how much of it is
 * missing (see enum ct_hdr_cut).
 */
#ifndef COMMTAP_PARSE_H
#define COMMTAP_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#define CT_MAX_VLAN	     4
#define CT_MAX_IPV6_EXT	     8
#define CT_ROCE_UDP_PORT     4791
#define CT_ETHERTYPE_IPV4    0x0800
#define CT_ETHERTYPE_IPV6    0x86dd
#define CT_ETHERTYPE_VLAN    0x8100
#define CT_ETHERTYPE_QINQ    0x88a8
#define CT_ETHERTYPE_QINQ_OLD 0x9100
#define CT_ETHERTYPE_MACCTRL 0x8808
#define CT_ETHERTYPE_TEB     0x6558 /* GRE transparent Ethernet bridging */
#define CT_GRE_ERSPAN_II     0x88be
#define CT_GRE_ERSPAN_III    0x22eb

/* What a frame turned out to be. */
enum ct_pkt_kind {
	CT_PKT_MALFORMED = 0, /* see ct_pkt.malformed */
	CT_PKT_ROCE,	      /* RoCEv2: UDP destination port 4791 */
	CT_PKT_TCP,
	CT_PKT_PFC,	  /* MAC control: PFC (0x0101) or 802.3x PAUSE (0x0001) */
	CT_PKT_OTHER_L2,  /* not IP and not MAC control (ARP, LLDP, ...) */
	CT_PKT_OTHER_IP,  /* IP but neither RoCEv2 nor TCP (ICMP, other UDP, fragments) */
};

/* Why a frame was not analysed. Counted per reason by the engine. */
enum ct_malformed {
	CT_MAL_NONE = 0,
	CT_MAL_ETH_TRUNCATED,
	CT_MAL_VLAN_TRUNCATED,
	CT_MAL_VLAN_TOO_DEEP,
	CT_MAL_GRE_TRUNCATED,
	CT_MAL_GRE_UNSUPPORTED,
	CT_MAL_ERSPAN_TRUNCATED,
	CT_MAL_ENCAP_TOO_DEEP,
	CT_MAL_IPV4_TRUNCATED,
	CT_MAL_IPV4_BAD_HEADER, /* version or IHL wrong */
	CT_MAL_IPV4_BAD_LENGTH, /* total length shorter than the header */
	CT_MAL_IPV6_TRUNCATED,
	CT_MAL_IPV6_BAD_HEADER,
	CT_MAL_IPV6_EXT_TRUNCATED,
	CT_MAL_IPV6_EXT_TOO_MANY,
	CT_MAL_UDP_TRUNCATED, /* RoCE: the destination port was cut too */
	CT_MAL_UDP_BAD_LENGTH,
	CT_MAL_BTH_TRUNCATED,	/* only as a CT_QPN_CUT reason: such copies count */
	CT_MAL_BTH_BAD_OPCODE,	/* reserved opcode or transport version != 0 */
	CT_MAL_ROCE_BAD_LENGTH, /* UDP length too short for the headers it must carry */
	CT_MAL_TCP_TRUNCATED,
	CT_MAL_TCP_BAD_HEADER, /* data offset < 5 or beyond the IP payload */
	CT_MAL_MACCTRL_TRUNCATED,
	CT_MAL_COUNT
};

/*
 * How much of a RoCEv2 packet's headers the copy lost (ct_pkt.hdr_cut). Once
 * the IP header and the UDP destination port were captured, a cut copy still
 * counts as RoCE, at its wire length from the IP header.
 */
enum ct_hdr_cut {
	CT_CUT_NONE = 0,
	CT_CUT_ROCE_EXT,   /* BTH whole, some extension headers cut: their bits leave roce.ext */
	CT_CUT_AFTER_QPN,  /* BTH cut after the destination QPN: no PSN, no message assembly */
	CT_CUT_BEFORE_QPN, /* BTH cut before the QPN: roce.dqpn is CT_QPN_CUT(reason) */
	CT_CUT_COUNT
};

/*
 * The flow id of a RoCE copy cut before its destination QPN: QPNs are 24
 * bits, so an id with the top byte set names no QP. The low byte is where the
 * copy ended (CT_MAL_UDP_TRUNCATED: inside the UDP header after the ports;
 * CT_MAL_BTH_TRUNCATED: inside the BTH), so such packets gather on one flow
 * per address pair and reason.
 */
#define CT_QPN_CUT_MARK	      0xff000000u
#define CT_QPN_CUT(reason)    (CT_QPN_CUT_MARK | (uint32_t)(reason))
#define CT_QPN_IS_CUT(id)     (((id)&CT_QPN_CUT_MARK) == CT_QPN_CUT_MARK)
#define CT_QPN_CUT_REASON(id) ((enum ct_malformed)((id)&0xff))

/* RoCE extension headers present on a packet (ct_pkt.roce.ext). */
enum ct_roce_ext {
	CT_EXT_RDETH = 1u << 0,
	CT_EXT_DETH = 1u << 1,
	CT_EXT_XRCETH = 1u << 2,
	CT_EXT_RETH = 1u << 3,
	CT_EXT_AETH = 1u << 4,
	CT_EXT_ATOMICACKETH = 1u << 5,
	CT_EXT_IMMDT = 1u << 6,
	CT_EXT_IETH = 1u << 7,
	CT_EXT_ATOMICETH = 1u << 8,
	CT_EXT_CNP = 1u << 9, /* the 16 reserved bytes of a CNP */
};

/* Addresses are kept as 16 bytes; IPv4 as ::ffff:a.b.c.d (RFC 4291 2.5.5.2). */
struct ct_addr {
	uint8_t b[16];
};

struct ct_roce {
	uint8_t opcode;
	uint8_t pad;	 /* BTH pad count */
	uint8_t ackreq;	 /* BTH A bit */
	uint8_t se;	 /* BTH solicited event */
	uint16_t pkey;
	uint16_t ext;	 /* enum ct_roce_ext bits of the headers captured */
	uint32_t dqpn;	 /* destination QP, 24 bits */
	uint32_t psn;	 /* 24 bits */
	uint32_t payload_len; /* from the UDP length: what the verbs message carries */
	uint32_t reth_rkey;
	uint64_t reth_va;
	uint32_t reth_len; /* RETH DMA length */
	uint8_t aeth_syndrome;
	uint32_t aeth_msn;
	uint32_t deth_sqpn; /* DETH source QP (UD) */
	uint32_t imm;	    /* ImmDt or IETH R_Key */
	/* Payload bytes present in the capture, for connection-management MADs. */
	const uint8_t *payload;
	uint32_t payload_cap;
};

struct ct_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint32_t payload_len; /* from the IP length */
};

struct ct_pfc {
	uint16_t opcode;       /* 0x0101 PFC, 0x0001 PAUSE */
	uint8_t class_enable;  /* PFC: bit per priority; PAUSE: 0xff */
	uint16_t quanta[8];    /* PAUSE: quanta[0] only */
};

struct ct_pkt {
	enum ct_pkt_kind kind;
	enum ct_malformed malformed;
	uint32_t wire_len; /* 14 + 4 per VLAN tag + IP length (inner frame for GRE) */
	uint8_t vlan_count;
	uint8_t pcp;	   /* innermost 802.1Q PCP, 0xff when untagged */
	uint16_t vlan_id;  /* innermost VLAN id */
	uint8_t encap;	   /* 1 when the frame was a GRE/ERSPAN mirror copy */
	uint8_t ip_version; /* 4 or 6, 0 when not IP */
	uint8_t dscp;
	uint8_t ecn;	   /* 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE */
	uint8_t ip_proto;
	uint8_t hdr_cut; /* enum ct_hdr_cut, for CT_PKT_ROCE */
	uint16_t udp_sport;
	struct ct_addr src, dst;
	union {
		struct ct_roce roce;
		struct ct_tcp tcp;
		struct ct_pfc pfc;
	};
};

/*
 * Parse one frame. Returns the kind (also stored in pkt->kind). cap_len is
 * the captured length; orig_len the frame's original length, used as
 * wire_len for frames without an IP header.
 */
enum ct_pkt_kind ct_parse(const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
			  struct ct_pkt *pkt);

/*
 * The same parse without ct_parse's shortcut for plain IPv4 RoCEv2 frames:
 * every layer in turn. Gives the same result; tests compare the two.
 */
enum ct_pkt_kind ct_parse_layered(const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
				  struct ct_pkt *pkt);

/*
 * ct_parse, and where the last IP header it read starts in data: after a
 * GRE or ERSPAN mirror encapsulation, the inner frame's (what a mirror
 * hashes and de-duplicates on; the outer one only when the inner frame was
 * cut before its IP header); 0 when the frame has no IP header captured.
 */
enum ct_pkt_kind ct_parse_ip(const uint8_t *data, uint32_t cap_len, uint32_t orig_len,
			     struct ct_pkt *pkt, uint32_t *ip_off);

/* Stable name of a malformed reason, for reports ("ipv4_truncated"). */
const char *ct_malformed_name(enum ct_malformed reason);

static inline bool ct_addr_is_v4(const struct ct_addr *a)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	for (int i = 0; i < 12; i++)
		if (a->b[i] != prefix[i])
			return false;
	return true;
}

/* Format an address as text (inet_ntop, IPv4 without the ::ffff: prefix). */
const char *ct_addr_format(const struct ct_addr *a, char *buf, unsigned len);
/* Parse an IPv4 or IPv6 address written as text; 0 or -EINVAL. */
int ct_addr_parse(const char *text, struct ct_addr *a);

#endif
