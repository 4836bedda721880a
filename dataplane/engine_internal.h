/* SPDX-License-Identifier: MIT */
/* The engine's private state, shared by engine.c, message.c and cm.c. */
#ifndef COMMTAP_ENGINE_INTERNAL_H
#define COMMTAP_ENGINE_INTERNAL_H

#include <commtap/dataplane.h>

#define CT_READ_TABLE_SLOTS 1024 /* outstanding READ requests remembered */
#define CT_FEED_STAGE	    32	 /* frames parsed and prefetched together */
/*
 * Distances of ct_engine_feed's prefetches, in frames of a stage: a frame's
 * parse and key hash take ~10 ns, a line from the last-level cache ~40-100.
 */
#define CT_FEED_FRAME_AHEAD 4  /* frame headers fetched this far ahead of the parse */
#define CT_FEED_FLOW_AHEAD  12 /* flows fetched once their index line has had this many */
#define CT_CM_LOG_SLOTS	    1024

/* An outstanding READ request, found again by its responses. */
struct ct_read_entry {
	struct ct_addr requester, responder;
	uint32_t psn;
	uint32_t len;
	uint32_t responder_qpn; /* destination QPN of the request flow */
	uint32_t used;
};

struct ct_engine {
	struct ct_flow_table *table;
	struct ct_engine_counters c;
	uint64_t tcp_msg_gap_ns;
	/* ring of evicted flows: written by the fast path, drained by the slow path */
	struct ct_flow *evict_ring;
	uint32_t evict_slots;
	uint32_t evict_head, evict_tail; /* head: next write; tail: next read */
	/* ring of finished bursts, likewise */
	struct ct_flow_burst *burst_ring;
	uint32_t burst_slots;
	uint32_t burst_head, burst_tail;
	uint64_t burst_gap_ns;
	struct ct_read_entry *reads;
	struct ct_cm_event *cm_log;
	uint32_t cm_count;
	struct ct_allocator alloc;
};

/*
 * ct_engine_feed without its shortcuts: every frame through ct_parse, every
 * RoCE packet through ct_msg_roce (not message_inline.h). The same results;
 * tests compare the two.
 */
void ct_engine_feed_layered(struct ct_engine *e, const struct ct_packet *pkts, unsigned n);

/*
 * message.c. Of the packet, ct_msg_roce reads only roce.opcode, dqpn, psn,
 * ext, payload_len and the extension headers' fields (the engine's shortcut
 * fills no more); the addresses come from the flow's key.
 */
void ct_msg_roce(struct ct_engine *e, struct ct_flow *f, const struct ct_pkt *p);
void ct_msg_tcp(struct ct_engine *e, struct ct_flow *f, const struct ct_pkt *p, uint64_t now);
/* Close what is open at the end of input. */
void ct_msg_finish(struct ct_flow *f);

/* cm.c: log RDMA CM REQ/REP carried by a UD SEND to QP1 */
void ct_cm_inspect(struct ct_engine *e, const struct ct_pkt *p, uint64_t now);

#endif
