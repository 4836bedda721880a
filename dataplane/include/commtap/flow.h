/* SPDX-License-Identifier: MIT */
/*
 * One flow's key and state.
 *
 * A RoCEv2 flow is (src IP, dst IP, destination QPN): the BTH names only the
 * destination QP, so the two directions of one RC connection are two flows.
 * A TCP flow is the 5-tuple.
 *
 * The record is split so that what every packet touches stays in the first
 * two cache lines (128 B); counters that change on rarer events (message
 * completion, PSN anomalies, CNPs) live behind it. The whole record is 512 B.
 */
#ifndef COMMTAP_FLOW_H
#define COMMTAP_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/parse.h>

enum ct_transport {
	CT_TRANSPORT_ROCE = 1,
	CT_TRANSPORT_TCP = 2,
};

struct ct_flow_key {
	struct ct_addr src;
	struct ct_addr dst;
	uint32_t id; /* RoCE: destination QPN; TCP: sport << 16 | dport */
	uint8_t transport;
	uint8_t zero[3]; /* always 0, so keys compare and hash as bytes */
};

_Static_assert(sizeof(struct ct_flow_key) == 40, "flow key is 40 bytes");

/*
 * log2 message-size histogram, 64 B ... 4 GiB: bucket 0 holds messages under
 * 128 B, bucket i (1..25) holds [2^(i+6), 2^(i+7)), bucket 26 holds >= 4 GiB.
 */
#define CT_HIST_BUCKETS 27
#define CT_OP_SLOTS	6 /* opcodes counted in the hot lines */
#define CT_OP_EXTRA	2 /* further distinct opcodes, counted in the cold part */

/* flow state bits (ct_flow.state) */
#define CT_FS_REQ_IN_MSG  0x01 /* a multi-packet request message is being assembled */
#define CT_FS_RESP_IN_MSG 0x02 /* a READ response is being assembled */
#define CT_FS_REQ_PSN_OK  0x04 /* req_next_psn holds an expectation */
#define CT_FS_RESP_PSN_OK 0x08 /* resp_next_psn holds an expectation */
#define CT_FS_REPLAY	  0x10 /* inside a go-back-N replay */
#define CT_FS_TCP_SEQ_OK  0x20
#define CT_FS_MSG_SEND	  0x40 /* the request message in progress is a SEND, else a WRITE */
#define CT_FS_IN_BURST	  0x80 /* a burst is open (cold.burst_*) */
/* TCP: a FIN or RST seen, the connection closed this way (RoCE's REQ_IN_MSG bit) */
#define CT_FS_TCP_CLOSED CT_FS_REQ_IN_MSG

/* ct_flow.seen bits: set once, for pairing and reporting */
#define CT_SEEN_REQ_PSN	  0x01 /* cold.req_first_psn is valid */
#define CT_SEEN_RESP_PSN  0x02 /* cold.resp_first_psn is valid */
#define CT_SEEN_DSCP_MIX  0x04 /* more than one DSCP value seen */
#define CT_SEEN_READ_PEER 0x08 /* cold.read_peer_qpn is valid */
/* the high nibble: bit 4 + c set once a packet of ECN codepoint c (0..3) was seen */
#define CT_SEEN_ECN_SHIFT 4

struct ct_flow_cold {
	/*
	 * Line 2: what a message's end and a burst's start or end touch, so
	 * that they cost one line beside the histogram's bucket.
	 */
	uint64_t messages;	       /* completed verbs messages carried by this flow */
	uint64_t message_bytes;	       /* their payload bytes */
	uint64_t burst_start_ts;       /* the open burst: when it started ... */
	uint64_t burst_start_bytes;    /* ... and ct_flow.bytes then */
	uint64_t retransmits;	       /* request packets (TCP: segments) with already-seen PSNs */
	uint32_t burst_start_messages; /* low 32 bits of messages when the open burst started */
	uint32_t burst_start_packets;  /* and of packets */
	uint32_t partial_messages;     /* messages seen without their start or end */
	uint32_t psn_gaps;	       /* times the request PSN jumped ahead */
	uint16_t pmtu;		       /* largest FIRST/MIDDLE payload seen: the path MTU */
	uint8_t replay_len;	       /* packets in the current replay episode, saturating */
	uint8_t burst_loss;  /* retransmissions, PSN gaps and NAKs in the open burst, saturating */
	uint16_t naks_rnr;   /* RNR NAK, saturating */
	uint16_t naks_other; /* NAK: invalid request, access or operation error, saturating */
	/* 64-bit counters */
	uint64_t first_ts;
	uint64_t msg_hist[CT_HIST_BUCKETS];
	uint64_t ecn_ce;	       /* packets marked CE (a conditional, cold write) */
	uint64_t cnp;		       /* CNPs travelling on this flow */
	uint64_t read_bytes_requested; /* sum of READ RETH lengths */
	/* 32-bit counters and PSNs */
	uint32_t op_extra_count[CT_OP_EXTRA]; /* saturating */
	uint32_t op_other;		      /* packets of opcodes beyond all slots, saturating */
	uint32_t psn_missing;		      /* PSNs skipped by those jumps */
	uint32_t duplicates;		      /* replay episodes of a single packet */
	uint32_t go_back_n;		      /* replay episodes of more than one packet */
	uint32_t naks_seq;		      /* NAK: PSN sequence error */
	uint32_t read_requests;
	uint32_t reads_matched; /* READ responses whose total equals the request */
	union {
		uint32_t read_len_mismatch; /* READ responses that differ from the request */
		/* TCP: segments that filled that hole, reordered before the capture point */
		uint32_t tcp_reordered;
	};
	uint32_t req_first_psn;	 /* for pairing: first request PSN ... */
	uint32_t resp_first_psn; /* ... and first response/ACK PSN */
	uint32_t resp_msg_first_psn;
	uint32_t read_peer_qpn; /* with CT_SEEN_READ_PEER: QPN of the flow whose READ we answered */
	/* 16 and 8 bits */
	uint16_t op_count_hi[CT_OP_SLOTS]; /* carries of the 32-bit hot counters (48-bit totals) */
	uint8_t op_extra_id[CT_OP_EXTRA];
	uint16_t size_inferred; /* messages sized by their payloads (RETH cut), saturating */
};

struct ct_flow {
	/* cache line 0: identity and volume */
	struct ct_flow_key key;
	uint64_t last_ts;
	uint64_t packets;
	uint64_t bytes; /* wire bytes: 14 + 4 per VLAN tag + IP length */
	/* cache line 1: per-packet protocol state */
	uint64_t req_msg_bytes; /* payload of the request message in progress (TCP: message) */
	union {
		uint32_t req_msg_len; /* RETH length of the WRITE in progress, 0 if unknown */
		/*
		 * TCP: the start of the hole the last new segment opened, up
		 * to req_next_psn; equal to it when that segment was in order.
		 */
		uint32_t tcp_hole_start;
	};
	uint32_t req_next_psn; /* TCP: next expected sequence number */
	union {
		struct {
			uint32_t resp_next_psn;
			uint32_t resp_msg_bytes; /* READ response in progress */
		};
		uint64_t tcp_last_data_ts; /* TCP: time of the last segment with payload */
	};
	uint32_t gap_ewma; /* smoothed gap between packets inside a burst, ns (saturating) */
	uint32_t op_count[CT_OP_SLOTS];
	uint8_t op_id[CT_OP_SLOTS];
	uint8_t op_used;     /* slots in use */
	uint8_t state;	     /* CT_FS_* */
	uint8_t seen;	     /* CT_SEEN_* */
	uint8_t dscp;	     /* last DSCP seen */
	uint8_t pcp;	     /* last 802.1Q PCP seen, 0xff when untagged */
	uint8_t burst_marks; /* CE-marked packets and CNPs in the open burst, saturating */
	/* cold: touched on message completion and anomalies */
	struct ct_flow_cold cold;
};

/* The ECN codepoints seen, as a set: bit c for codepoint c. */
static inline uint8_t ct_flow_ecn_seen(const struct ct_flow *f)
{
	return (uint8_t)(f->seen >> CT_SEEN_ECN_SHIFT);
}

/* A loss signal or a mark of the open burst (its counts saturate at 255). */
static inline void ct_flow_burst_count(uint8_t *count)
{
	if (*count != UINT8_MAX)
		(*count)++;
}

_Static_assert(offsetof(struct ct_flow, req_msg_bytes) == 64, "line 1 starts at 64");
_Static_assert(offsetof(struct ct_flow, cold) == 128, "per-packet state fits in 128 B");
_Static_assert(sizeof(struct ct_flow) <= 512, "a flow is at most 512 B");
_Static_assert(offsetof(struct ct_flow, cold.first_ts) == 192,
	       "a message's end and a burst's edges touch line 2 only (and a histogram bucket)");

static inline unsigned ct_hist_bucket(uint64_t size)
{
	if (size < 128)
		return 0;
	unsigned b = 63 - (unsigned)__builtin_clzll(size) - 6; /* 128..255 -> 1 */
	return b < CT_HIST_BUCKETS ? b : CT_HIST_BUCKETS - 1;
}

/* Lower bound in bytes of histogram bucket b (bucket 0 is labelled 64). */
static inline uint64_t ct_hist_bucket_floor(unsigned b)
{
	return (uint64_t)1 << (b + 6);
}

/* Visit each opcode seen on the flow with its packet count (hot slots, then cold). */
void ct_flow_foreach_opcode(const struct ct_flow *f,
			    void (*fn)(uint8_t opcode, uint64_t count, void *ctx), void *ctx);

static inline uint64_t ct_flow_ecn_ce(const struct ct_flow *f)
{
	return f->cold.ecn_ce;
}

#endif
