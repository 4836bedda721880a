/* SPDX-License-Identifier: MIT */
/*
 * commtap dataplane engine: the embeddable API.
 *
 * An engine is created once from a memory budget and settings, then fed
 * bursts of packets. The feed path does no allocation, takes no locks and
 * makes no system calls: all state is preallocated. One engine per core;
 * engines share nothing, and their flows are merged at report time.
 *
 * Flows leave the engine's table when they go idle or when the table is full;
 * each evicted flow is copied into a preallocated ring that the slow path
 * drains (ct_engine_drain_evicted). If the ring is full, the flow's counters
 * still reach the engine totals and the loss is counted (evicted_unreported).
 */
#ifndef COMMTAP_DATAPLANE_H
#define COMMTAP_DATAPLANE_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/flow.h>
#include <commtap/flow_table.h>
#include <commtap/parse.h>

struct ct_packet {
	const uint8_t *data;
	uint32_t cap_len;  /* bytes present at data */
	uint32_t wire_len; /* frame length on the wire as the capture reports it */
	uint64_t ts_ns;	   /* nanoseconds; the clock is the caller's (see docs) */
};

struct ct_engine_config {
	size_t memory_budget;		  /* bytes for the flow table */
	uint64_t idle_timeout_ns;	  /* evict flows idle this long; 0 never */
	uint64_t tcp_msg_gap_ns;	  /* an idle gap this long ends a TCP message */
	uint32_t evict_ring_slots;	  /* evicted flows held for the slow path; 0: 4096 */
	uint64_t burst_gap_ns;		  /* the shortest idle gap that ends a burst; 0: default */
	uint32_t burst_ring_slots;	  /* finished bursts held for the slow path; 0: 65536 */
	const struct ct_allocator *alloc; /* NULL: aligned_alloc */
};

#define CT_DEFAULT_MEMORY_BUDGET   (64u << 20)
#define CT_DEFAULT_IDLE_TIMEOUT_NS (60ull * 1000000000ull)
#define CT_DEFAULT_TCP_MSG_GAP_NS  (1000000ull) /* 1 ms */
#define CT_DEFAULT_BURST_GAP_NS	   (100000ull)	/* 100 us */
#define CT_BURST_GAP_FACTOR	   8 /* a gap this many times the flow's usual one ends a burst */

struct ct_pfc_counters {
	uint64_t pause_frames; /* 802.3x PAUSE (all priorities) */
	uint64_t pause_quanta;
	uint64_t pfc_frames; /* 802.1Qbb PFC */
	uint64_t frames[8];  /* PFC frames with the priority enabled */
	uint64_t quanta[8];  /* sum of pause quanta per priority */
	uint64_t xoff[8];    /* frames that paused the priority (quanta > 0) */
};

struct ct_engine_counters {
	uint64_t packets;
	uint64_t bytes; /* sum of wire lengths */
	uint64_t roce_packets, roce_bytes;
	uint64_t tcp_packets, tcp_bytes;
	uint64_t other_l2;
	uint64_t other_ip;
	uint64_t encapsulated; /* GRE/ERSPAN mirror copies unwrapped */
	uint64_t truncated;    /* frames captured shorter than their wire length */
	/* RoCE packets counted though the copy cut their headers, by enum ct_hdr_cut */
	uint64_t roce_cut[CT_CUT_COUNT];
	uint64_t messages_size_inferred; /* WRITEs sized by their payloads: the RETH was cut */
	uint64_t malformed;
	uint64_t malformed_by_reason[CT_MAL_COUNT];
	uint64_t evicted_unreported; /* evicted flows the ring had no room for */
	uint64_t cm_messages;	     /* RDMA CM REQ/REP seen (for pairing) */
	uint64_t cm_dropped;	     /* CM messages the CM log had no room for */
	uint64_t read_overwrites;    /* outstanding READs forgotten before answered */
	uint64_t bursts;	     /* bursts finished */
	uint64_t bursts_dropped;     /* finished bursts the burst ring had no room for */
	uint64_t first_ts, last_ts;
	struct ct_pfc_counters pfc;
	struct ct_flow_table_stats table;
};

/* An RDMA connection-manager message seen on QP1 (REQ or REP). */
enum ct_cm_type { CT_CM_REQ = 1, CT_CM_REP = 2 };

struct ct_cm_event {
	struct ct_addr src, dst;
	uint32_t local_comm_id;
	uint32_t remote_comm_id; /* REP only */
	uint32_t local_qpn;
	uint8_t type;
	uint64_t ts;
};

/*
 * An on period of one flow: it ends when the flow stays idle longer than
 * max(burst_gap_ns, CT_BURST_GAP_FACTOR x its usual gap between packets).
 */
struct ct_flow_burst {
	struct ct_flow_key key;
	uint64_t start, end; /* first and last packet */
	uint64_t bytes;	     /* wire bytes */
	uint32_t messages;   /* messages completed during it */
	uint32_t packets;
	/*
	 * Loss signals (retransmitted packets, PSN gaps, NAKs) and marks (CE
	 * packets, CNPs) during it, each saturating at 255: the per-iteration
	 * onsets of loss and congestion (the eBPF probe's records carry the
	 * same counts).
	 */
	uint8_t loss, marks;
};

struct ct_engine;

int ct_engine_create(const struct ct_engine_config *cfg, struct ct_engine **out);
void ct_engine_destroy(struct ct_engine *e);

/* The fast path: parse, account, assemble messages. */
void ct_engine_feed(struct ct_engine *e, const struct ct_packet *pkts, unsigned n);

/* Slow path. */
void ct_engine_get_counters(const struct ct_engine *e, struct ct_engine_counters *c);
unsigned ct_engine_drain_evicted(struct ct_engine *e,
				 void (*fn)(const struct ct_flow *flow, void *ctx), void *ctx);
void ct_engine_foreach_flow(struct ct_engine *e, void (*fn)(struct ct_flow *flow, void *ctx),
			    void *ctx);
/*
 * End the open bursts of flows quiet for longer than their gap limit at
 * now (capture time): the bursts a gap would end at the flow's next
 * packet, queued now, so that a report taken while the input goes on holds
 * a silent flow's last burst (a hung job's flows may send nothing more
 * before their eviction). Their next packet starts a new burst. Returns how
 * many ended.
 */
unsigned ct_engine_end_quiet_bursts(struct ct_engine *e, uint64_t now);
/* Hand finished bursts to fn, oldest first; returns how many. */
unsigned ct_engine_drain_bursts(struct ct_engine *e,
				void (*fn)(const struct ct_flow_burst *burst, void *ctx),
				void *ctx);
/* CM messages logged so far (up to the log's size). */
unsigned ct_engine_cm_events(const struct ct_engine *e, const struct ct_cm_event **events);

/*
 * End of input: close messages still open (a TCP message in progress is
 * complete; a RoCE message without its last packet is partial; open bursts
 * end) and hand all flows to fn, emptying the table. Evicted flows still in
 * the ring go first. Drain the bursts after it.
 */
void ct_engine_finish(struct ct_engine *e, void (*fn)(const struct ct_flow *flow, void *ctx),
		      void *ctx);

#endif
