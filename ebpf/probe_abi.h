/* SPDX-License-Identifier: MIT */
/*
 * What the host probe's BPF programs and the agent share: the flow key and
 * record in the LRU hash, the ring-buffer records, the per-CPU totals.
 * Included by probe.bpf.c (with vmlinux.h) and by agent/ (with linux/types.h).
 */
#ifndef COMMTAP_PROBE_ABI_H
#define COMMTAP_PROBE_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CTP_TRANSPORT_ROCE 1 /* = CT_TRANSPORT_ROCE */
#define CTP_TRANSPORT_TCP  2 /* = CT_TRANSPORT_TCP */

/*
 * The layout of the maps and records below. A probe left attached with
 * --persist keeps counting into maps of the layout it was built with: an
 * agent reads pins only of its own version (the "abi" pin holds it; pins
 * without one are version 1: a single 40-byte-key flow map).
 * 2: IPv4 flows in their own map with a 16-byte key (ctp_flows), IPv6 flows
 *    in ctp_flows6 with the 40-byte key.
 */
#define CTP_ABI_VERSION 2

/*
 * Byte for byte struct ct_flow_key (dataplane/include/commtap/flow.h): the
 * key of IPv6 flows (ctp_flows6) and of every ring record.
 */
struct ctp_flow_key {
	__u8 src[16]; /* IPv4 as ::ffff:a.b.c.d */
	__u8 dst[16];
	__u32 id; /* RoCE: destination QPN; TCP: sport << 16 | dport */
	__u8 transport;
	__u8 zero[3];
};

/*
 * The key of IPv4 flows (ctp_flows): the same flow as the ct_flow_key with
 * the addresses as ::ffff:a.b.c.d, in 16 bytes instead of 40, which the
 * kernel hashes and compares on every packet.
 */
struct ctp_flow_key4 {
	__u8 src[4];
	__u8 dst[4];
	__u32 id; /* as ctp_flow_key.id */
	__u8 transport;
	__u8 zero[3];
};

/* ctp_flow.state bits */
#define CTP_FS_REQ_IN_MSG  0x01
#define CTP_FS_RESP_IN_MSG 0x02
#define CTP_FS_REQ_PSN_OK  0x04
#define CTP_FS_TCP_SEQ_OK  0x08
#define CTP_FS_MSG_SEND	   0x10
#define CTP_FS_RESP_PSN_OK 0x20
#define CTP_FS_TCP_CLOSED  0x40 /* TCP: a FIN or RST seen (CT_FS_TCP_CLOSED) */

/* ctp_flow.seen bits: as CT_SEEN_* */
#define CTP_SEEN_REQ_PSN  0x01
#define CTP_SEEN_RESP_PSN 0x02
#define CTP_SEEN_DSCP_MIX 0x04

/*
 * One flow in the LRU hash. A flow's packets arrive on one CPU (RSS hashes
 * the 5-tuple to one queue), so the record is updated without atomics.
 */
struct ctp_flow {
	__u64 first_ts; /* CLOCK_MONOTONIC ns; also tells a re-created entry apart */
	__u64 last_ts;
	__u64 packets;
	__u64 bytes; /* 14 + 4 per VLAN tag + IP length, per segment */
	__u64 messages;
	__u64 message_bytes;
	__u64 cnp;
	__u64 ecn_ce;
	__u64 retransmits;
	__u64 msg_bytes;	/* payload of the request (TCP: message) in progress */
	__u64 tcp_last_data_ts; /* TCP: last segment with payload */
	__u64 burst_start_ts;	/* the open burst */
	__u64 burst_start_bytes;
	__u32 burst_start_packets;
	__u32 burst_start_messages;
	__u32 msg_len;	/* RETH length of the WRITE in progress, 0 unknown; TCP: a hole's start */
	__u32 next_psn; /* request PSN expected next; TCP: next sequence number */
	__u32 resp_next_psn;
	__u32 resp_msg_bytes;
	__u32 gap_ewma; /* usual gap between packets inside a burst, ns */
	__u32 psn_gaps;
	__u32 psn_missing;
	__u32 partial_messages;
	__u32 req_first_psn;
	__u32 resp_first_psn;
	__u16 naks_seq; /* NAK: PSN sequence error */
	__u16 naks_rnr;
	__u16 naks_other;
	__u16 pmtu;
	__u8 state; /* CTP_FS_* */
	__u8 seen;  /* CTP_SEEN_* */
	__u8 dscp;
	__u8 pcp; /* 0xff untagged */
	__u8 ecn_seen;
	__u8 pad[3];
	__u32 burst_start_loss;	 /* ctp_flow_loss when the open burst started */
	__u32 burst_start_marks; /* ctp_flow_marks then */
};

/*
 * A flow's loss signals and marks so far, counted as the engine's bursts
 * count them (dataplane/message.c): retransmissions, PSN gaps, sequence
 * and other NAKs (not RNR: a receiver not ready loses nothing); CE-marked
 * packets and CNPs. A burst carries their growth while it was open.
 */
static inline __u32 ctp_flow_loss(const struct ctp_flow *f)
{
	return (__u32)(f->retransmits + f->psn_gaps + f->naks_seq + f->naks_other);
}

static inline __u32 ctp_flow_marks(const struct ctp_flow *f)
{
	return (__u32)(f->ecn_ce + f->cnp);
}

/* A burst's count as its record carries it: saturating at 255, as the engine's. */
static inline __u8 ctp_burst_count(__u32 now, __u32 at_start)
{
	__u32 d = now - at_start;

	return d > 255 ? 255 : (__u8)d;
}

/* Ring-buffer records: one per completed message or finished burst. */
enum ctp_record_type {
	CTP_REC_MESSAGE = 1,
	CTP_REC_BURST = 2,
};

struct ctp_record {
	struct ctp_flow_key key;
	__u32 type;	/* enum ctp_record_type */
	__u32 packets;	/* burst: packets in it */
	__u32 messages; /* burst: messages completed in it */
	__u8 loss;	/* burst: loss signals in it (ctp_flow_loss), saturating */
	__u8 marks;	/* burst: CE marks and CNPs in it (ctp_flow_marks), saturating */
	__u16 pad;
	__u64 start; /* burst: first packet; message: completion */
	__u64 end;   /* burst: last packet */
	__u64 bytes; /* burst: wire bytes; message: its size */
};

/* Per-CPU totals (array index); they outlive LRU eviction. */
enum ctp_total {
	CTP_T_PACKETS,
	CTP_T_BYTES,
	CTP_T_ROCE_PACKETS,
	CTP_T_ROCE_BYTES,
	CTP_T_TCP_PACKETS,
	CTP_T_TCP_BYTES,
	CTP_T_OTHER_L2,
	CTP_T_OTHER_IP,
	CTP_T_MALFORMED,
	CTP_T_MESSAGES,
	CTP_T_MESSAGE_BYTES,
	CTP_T_CNP,
	CTP_T_ECN_CE,
	CTP_T_RETRANSMITS,
	CTP_T_FLOWS_INSERTED,
	CTP_T_FLOW_INSERT_FAILED,
	CTP_T_BURSTS,
	CTP_T_RING_DROPS, /* records the ring had no room for */
	CTP_T_RING_DROPS_BURST,
	CTP_T_GSO_PACKETS, /* super-packets counted by their segments */
	CTP_T_SAMPLED_OUT, /* packets skipped by sampling */
	CTP_T_COUNT
};

/*
 * The opcode table the loader writes into the programs' settings from the
 * engine's ct_opcode_table, so kernel and engine agree by construction.
 */
#define CTP_OP_VALID	 0x1u
#define CTP_OP_RESPONSE	 0x2u
#define CTP_OP_KIND(x)	 (((x) >> 2) & 0x7u) /* enum ct_msg_kind */
#define CTP_OP_POS(x)	 (((x) >> 5) & 0x7u) /* enum ct_msg_pos */
#define CTP_OP_EXTLEN(x) (((x) >> 8) & 0x3fu)
#define CTP_OP_EXT(x)	 ((x) >> 16) /* enum ct_roce_ext bits */

/* Enabled transports (setting ctp_transports). */
#define CTP_EN_ROCE 0x1
#define CTP_EN_TCP  0x2

#endif
