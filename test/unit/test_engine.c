// SPDX-License-Identifier: MIT
/*
 * The engine around message assembly: per-reason malformed counters, PFC
 * and PAUSE counters, the RDMA CM log, flows that leave the table before
 * the end of input, and the feed's shortcut for plain IPv4 RoCE frames
 * against the layered parse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/dataplane.h>
#include <commtap/roce_opcode.h>

#include "engine_harness.h"
#include "engine_internal.h"
#include "frame_builder.h"
#include "rc_pair.h"
#include "roce_frame.h"

/* ---- counters ---- */

static void test_malformed_counters(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct harness *h = harness_new(1000000);
	struct roce_frame good = rc_a_to_b(RC(CT_OP_SEND_ONLY), 1, 100);
	struct roce_frame reserved = rc_a_to_b(RC(0x15), 2, 100);
	struct frame_builder fb;
	size_t len;

	(void)state;
	len = roce_frame_build(frame, sizeof(frame), &good);
	harness_feed_frame(h, frame, len, len);
	harness_feed_frame(h, frame, 50, len); /* cut inside the BTH, after the QPN: counted */
	harness_feed_frame(h, frame, 10, len); /* cut inside Ethernet */
	harness_feed_frame(h, frame, 60, len); /* header-truncated but whole headers */
	frame[14 + 20 + 4] = 0x7f;	       /* UDP length beyond the IP payload */
	harness_feed_frame(h, frame, len, len);
	len = roce_frame_build(frame, sizeof(frame), &reserved);
	harness_feed_frame(h, frame, len, len);
	len = roce_frame_build(frame, sizeof(frame), &good);
	frame[14 + 20 + 2] = 0; /* UDP to port 53, not RoCE */
	frame[14 + 20 + 3] = 53;
	harness_feed_frame(h, frame, len, len);
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, 0x0806); /* ARP */
	fb_fill(&fb, 0, 46);
	harness_feed_frame(h, frame, 60, 60);
	harness_finish(h);

	const struct ct_engine_counters *c = &h->counters;

	assert_int_equal(c->packets, 8);
	assert_int_equal(c->malformed, 3);
	assert_int_equal(c->malformed_by_reason[CT_MAL_ETH_TRUNCATED], 1);
	assert_int_equal(c->malformed_by_reason[CT_MAL_UDP_BAD_LENGTH], 1);
	assert_int_equal(c->malformed_by_reason[CT_MAL_BTH_BAD_OPCODE], 1);
	uint64_t sum = 0;

	for (int r = 0; r < CT_MAL_COUNT; r++)
		sum += c->malformed_by_reason[r];
	assert_int_equal(sum, 3);
	assert_int_equal(c->truncated, 3);
	assert_int_equal(c->roce_packets, 3);
	assert_int_equal(c->roce_bytes, 3 * ROCE_LEN(100));
	assert_int_equal(c->roce_cut[CT_CUT_AFTER_QPN], 1);
	assert_int_equal(c->other_ip, 1);
	assert_int_equal(c->other_l2, 1);
	/* the header-truncated copies counted at their full size, on their flow */
	assert_int_equal(rc_request_flow(h)->bytes, 3 * ROCE_LEN(100));
	assert_int_equal(rc_request_flow(h)->packets, 3);
	/* the 60-byte copy repeats PSN 1; the one without a PSN is not taken for a replay */
	assert_int_equal(rc_request_flow(h)->cold.messages, 1);
	assert_int_equal(rc_request_flow(h)->cold.retransmits, 1);
	harness_free(h);
}

/*
 * IPv6 copies cut at 64 bytes keep 2 bytes of their BTH: not their QPN. Two
 * QPs' packets between one pair of hosts go on the pair's flow, named by the
 * reason, at their full wire length; a whole copy still goes on its QP flow.
 */
static void test_copies_cut_before_the_qpn_on_the_address_pair(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct harness *h = harness_new(1000000);
	struct roce_frame rf = rc_a_to_b(RC(CT_OP_WRITE_MIDDLE), 7, 1024);
	const struct ct_flow *pair = NULL, *qp = NULL;
	size_t len;

	(void)state;
	rf.ipv6 = 1;
	rf.src6[15] = 1;
	rf.dst6[15] = 2;
	len = roce_frame_build(frame, sizeof(frame), &rf);
	harness_feed_frame(h, frame, 64, len);
	rf.dqpn = 0x33;
	harness_feed_frame(h, frame, 64, roce_frame_build(frame, sizeof(frame), &rf));
	harness_feed_frame(h, frame, len, len);
	harness_finish(h);

	assert_int_equal(h->n_flows, 2);
	for (unsigned i = 0; i < h->n_flows; i++) {
		if (h->flows[i].key.id == CT_QPN_CUT(CT_MAL_BTH_TRUNCATED))
			pair = &h->flows[i];
		else if (h->flows[i].key.id == 0x33)
			qp = &h->flows[i];
	}
	assert_non_null(pair);
	assert_non_null(qp);
	assert_int_equal(pair->key.transport, CT_TRANSPORT_ROCE);
	assert_memory_equal(pair->key.src.b, rf.src6, 16);
	assert_memory_equal(pair->key.dst.b, rf.dst6, 16);
	assert_int_equal(pair->packets, 2);
	assert_int_equal(pair->bytes, 2 * len);
	assert_int_equal(pair->op_used, 0); /* no opcode was captured whole enough to count */
	assert_int_equal(pair->cold.messages, 0);
	assert_int_equal(qp->packets, 1);
	assert_int_equal(h->counters.roce_cut[CT_CUT_BEFORE_QPN], 2);
	assert_int_equal(h->counters.roce_packets, 3);
	assert_int_equal(h->counters.roce_bytes, 3 * len);
	assert_int_equal(h->counters.malformed, 0);
	harness_free(h);
}

static void test_pfc_counters(void **state)
{
	static const uint16_t q1[8] = {0xffff, 7, 0, 0, 0, 0, 0, 9};
	static const uint16_t q2[8] = {0, 0, 0, 100, 0, 0, 0, 0};
	uint8_t frame[128];
	struct frame_builder fb;
	struct harness *h = harness_new(1000000);
	const struct ct_pfc_counters *p;
	size_t len;

	(void)state;
	/* priorities 0 (XOFF) and 3 (XON); 1 and 7 carry quanta but are not enabled */
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_MACCTRL);
	fb_pfc(&fb, 0x09, q1);
	len = fb_finish(&fb);
	harness_feed_frame(h, frame, len, len);
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_MACCTRL);
	fb_pfc(&fb, 0x08, q2);
	len = fb_finish(&fb);
	harness_feed_frame(h, frame, len, len);
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_MACCTRL);
	fb_pause(&fb, 500);
	len = fb_finish(&fb);
	harness_feed_frame(h, frame, len, len);
	harness_finish(h);
	p = &h->counters.pfc;
	assert_int_equal(p->pfc_frames, 2);
	assert_int_equal(p->pause_frames, 1);
	assert_int_equal(p->pause_quanta, 500);
	assert_int_equal(p->frames[0], 1);
	assert_int_equal(p->frames[3], 2);
	assert_int_equal(p->frames[1], 0);
	assert_int_equal(p->frames[7], 0);
	assert_int_equal(p->quanta[0], 0xffff);
	assert_int_equal(p->quanta[3], 100);
	assert_int_equal(p->quanta[1], 0);
	assert_int_equal(p->quanta[7], 0);
	assert_int_equal(p->xoff[0], 1);
	assert_int_equal(p->xoff[3], 1);
	assert_int_equal(p->xoff[1], 0);
	assert_int_equal(h->n_flows, 0);
	assert_int_equal(h->counters.malformed, 0);
	harness_free(h);
}

/* ---- RDMA CM on QP1 ---- */

#define MAD_LEN 256

/* A CM MAD: 24-byte MAD header (class at byte 1, attribute at 16), then CM data. */
static void cm_mad(uint8_t mad[MAD_LEN], uint8_t mgmt_class, uint16_t attr)
{
	memset(mad, 0, MAD_LEN);
	mad[0] = 1; /* base version */
	mad[1] = mgmt_class;
	mad[2] = 2;    /* class version */
	mad[3] = 3;    /* method: Send */
	mad[8] = 0x12; /* transaction id */
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A UD SEND ONLY to QP1 carrying mad; cap_payload bytes of the MAD captured. */
static void feed_mad(struct harness *h, int from_a, const uint8_t *mad, uint32_t cap_payload)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame r = from_a ? rc_a_to_b(CT_TR_UD | CT_OP_SEND_ONLY, 1, MAD_LEN)
				     : rc_b_to_a(CT_TR_UD | CT_OP_SEND_ONLY, 1, MAD_LEN);
	const size_t mad_off = 14 + 20 + 8 + 12 + 8; /* after BTH and DETH */
	size_t len;

	r.dqpn = 1;
	r.qkey = 0x80010000u;
	r.sqpn = 1;
	r.payload = mad;
	len = roce_frame_build(frame, sizeof(frame), &r);
	assert_memory_equal(frame + mad_off, mad, MAD_LEN);
	harness_feed_frame(h, frame, mad_off + cap_payload < len ? mad_off + cap_payload : len,
			   len);
}

static void test_cm_req_rep_logged(void **state)
{
	struct harness *h = harness_new(1000000);
	uint8_t mad[MAD_LEN];
	const struct ct_cm_event *ev;
	uint8_t *cm = mad + 24;
	uint64_t t0;

	(void)state;
	/* REQ from A: local comm id, and A's QPN at CM data offset 32 */
	cm_mad(mad, 0x07, 0x0010);
	put32(cm, 0x11223344);
	put32(cm + 32, 0x00abcd00u | 0x7f); /* QPN 0x00abcd, then responder resources */
	t0 = h->now;
	feed_mad(h, 1, mad, MAD_LEN);
	/* REP from B: its comm id, the REQ's, and B's QPN at offset 12 */
	cm_mad(mad, 0x07, 0x0013);
	put32(cm, 0x55667788);
	put32(cm + 4, 0x11223344);
	put32(cm + 12, 0x00beef00u | 0x11);
	feed_mad(h, 0, mad, MAD_LEN);
	/* not CM: a subnet management MAD, and a CM RTU */
	cm_mad(mad, 0x01, 0x0010);
	feed_mad(h, 1, mad, MAD_LEN);
	cm_mad(mad, 0x07, 0x0014);
	feed_mad(h, 1, mad, MAD_LEN);
	harness_finish(h);

	assert_int_equal(ct_engine_cm_events(h->engine, &ev), 2);
	assert_int_equal(h->counters.cm_messages, 2);
	assert_int_equal(h->counters.cm_dropped, 0);
	assert_int_equal(ev[0].type, CT_CM_REQ);
	assert_int_equal(ev[0].local_comm_id, 0x11223344);
	assert_int_equal(ev[0].remote_comm_id, 0);
	assert_int_equal(ev[0].local_qpn, 0x00abcd);
	assert_int_equal(ev[0].ts, t0);
	assert_memory_equal(ev[0].src.b + 12, rc_host_a, 4);
	assert_memory_equal(ev[0].dst.b + 12, rc_host_b, 4);
	assert_int_equal(ev[1].type, CT_CM_REP);
	assert_int_equal(ev[1].local_comm_id, 0x55667788);
	assert_int_equal(ev[1].remote_comm_id, 0x11223344);
	assert_int_equal(ev[1].local_qpn, 0x00beef);
	assert_memory_equal(ev[1].src.b + 12, rc_host_b, 4);
	/* the MADs are ordinary UD traffic on QP1's flows too */
	assert_non_null(harness_roce_flow(h, rc_host_a, rc_host_b, 1));
	assert_non_null(harness_roce_flow(h, rc_host_b, rc_host_a, 1));
	harness_free(h);
}

/* A truncated copy holds the REQ's QPN only if its three bytes were captured. */
static void test_cm_req_truncated(void **state)
{
	struct harness *h = harness_new(1000000);
	uint8_t mad[MAD_LEN];
	const struct ct_cm_event *ev;

	(void)state;
	cm_mad(mad, 0x07, 0x0010);
	put32(mad + 24, 0x01020304);
	put32(mad + 24 + 32, 0x00abcd00u);
	feed_mad(h, 1, mad, 24 + 32 + 2); /* QPN cut */
	feed_mad(h, 1, mad, 24 + 32 + 3); /* QPN whole, nothing after it */
	harness_finish(h);
	assert_int_equal(ct_engine_cm_events(h->engine, &ev), 1);
	assert_int_equal(ev[0].local_qpn, 0x00abcd);
	assert_int_equal(ev[0].local_comm_id, 0x01020304);
	harness_free(h);
}

/* ---- flows leaving the table before the end ---- */

static void test_idle_evicted_flow_reported(void **state)
{
	const struct ct_engine_config cfg = {
		.memory_budget = 64u << 10, /* about a hundred flows: the clock hand wraps */
		.idle_timeout_ns = 1000000, /* 1 ms */
		.tcp_msg_gap_ns = 1000000,
		.evict_ring_slots = 8,
		.burst_ring_slots = 8,
	};
	struct harness *h = harness_new_config(&cfg);
	const struct ct_flow *f;

	(void)state;
	rc_req(h, RC(CT_OP_SEND_ONLY), 1, 100);
	rc_req(h, RC(CT_OP_SEND_FIRST), 2, 1024); /* never finished */
	h->now += 10000000;			  /* 10 ms later, another flow is busy */
	for (uint32_t i = 0; i < 500; i++)
		rc_req_to(h, 0x55, RC(CT_OP_SEND_ONLY), i, 8);
	harness_finish(h);
	assert_int_equal(h->counters.table.evicted_idle, 1);
	assert_int_equal(h->counters.evicted_unreported, 0);
	assert_int_equal(h->n_flows, 2);
	f = rc_request_flow(h);
	assert_int_equal(f->packets, 2);
	assert_int_equal(f->cold.messages, 1);
	assert_int_equal(f->cold.partial_messages, 1);
	f = harness_roce_flow(h, rc_host_a, rc_host_b, 0x55);
	assert_non_null(f);
	assert_int_equal(f->packets, 500);
	assert_int_equal(f->cold.messages, 500);
	harness_free(h);
}

/* ---- the shortcut for plain IPv4 RoCE frames ---- */

#define MIX_FRAMES 30000
#define MIX_BUF	   (MIX_FRAMES * 320)

struct engine_output {
	struct ct_flow *flows;
	unsigned n_flows;
	struct ct_flow_burst *bursts;
	unsigned n_bursts;
	struct ct_engine_counters counters;
};

static void keep_flow(const struct ct_flow *f, void *ctx)
{
	struct engine_output *o = ctx;

	assert_true(o->n_flows < MIX_FRAMES);
	o->flows[o->n_flows++] = *f;
}

static void keep_burst(const struct ct_flow_burst *b, void *ctx)
{
	struct engine_output *o = ctx;

	assert_true(o->n_bursts < MIX_FRAMES);
	o->bursts[o->n_bursts++] = *b;
}

static uint64_t mix_next(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return *r;
}

/* One engine fed the stream in the given bursts, by the shortcut or the layered parse. */
static void run_mix(const struct ct_packet *pkts, unsigned n, const uint8_t *bursts, int layered,
		    struct engine_output *o)
{
	const struct ct_engine_config cfg = {
		.memory_budget = 256u << 10, /* a few hundred flows: some are evicted */
		.idle_timeout_ns = 2000000,
		.tcp_msg_gap_ns = 1000000,
		.burst_ring_slots = MIX_FRAMES,
	};
	struct ct_engine *e;

	assert_int_equal(ct_engine_create(&cfg, &e), 0);
	for (unsigned i = 0, b = 0; i < n; b++) {
		unsigned m = bursts[b] < n - i ? bursts[b] : n - i;

		if (layered)
			ct_engine_feed_layered(e, &pkts[i], m);
		else
			ct_engine_feed(e, &pkts[i], m);
		i += m;
	}
	ct_engine_get_counters(e, &o->counters);
	ct_engine_finish(e, keep_flow, o);
	ct_engine_drain_bursts(e, keep_burst, o);
	ct_engine_destroy(e);
}

/*
 * Every valid opcode on a few hundred QPs, PSNs mostly in order with gaps
 * and replays, DSCP/ECN changes, some frames VLAN-tagged, sent to QP1,
 * cut inside their headers, or with a bad opcode or length: the engine fed
 * through its shortcut and through the layered parse ends with the same
 * counters, the same flow records byte for byte and the same bursts.
 */
struct burst_list {
	unsigned n[2]; /* [0]: A -> B (requests), [1]: B -> A (ACK, NAK, CNP) */
	struct ct_flow_burst b[2][8];
};

static void keep_burst_by_way(const struct ct_flow_burst *b, void *ctx)
{
	struct burst_list *l = ctx;
	int way = b->key.id == RC_QP_A;

	assert_true(l->n[way] < 8);
	l->b[way][l->n[way]++] = *b;
}

/*
 * Each burst carries the loss signals and marks of its own time, on the
 * flow that carried them: a PSN gap and a replayed PSN (A -> B) and a NAK
 * (B -> A) in the first burst, a CE mark (A -> B) and a CNP (B -> A) in the
 * second, nothing in the third.
 */
static void test_bursts_carry_their_loss_and_marks(void **state)
{
	struct harness *h = harness_new(1000000);
	struct roce_frame ce = rc_a_to_b(RC(CT_OP_SEND_ONLY), 6, 100);
	struct roce_frame cnp = rc_b_to_a(CT_OPCODE_CNP, 0, 0);
	struct burst_list l = {0};

	(void)state;
	h->step_ns = 1000;
	rc_req(h, RC(CT_OP_SEND_ONLY), 1, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 3, 100); /* PSN 2 missing: a gap */
	rc_req(h, RC(CT_OP_SEND_ONLY), 2, 100); /* behind: a replay */
	rc_resp(h, RC(CT_OP_ACK), 1, 0, 0x60);	/* NAK: PSN sequence error */
	h->now += 1000000000ull;		/* a second idle: a new burst */
	rc_req(h, RC(CT_OP_SEND_ONLY), 4, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 5, 100);
	ce.ecn = 3;
	harness_feed_roce(h, &ce);
	harness_feed_roce(h, &cnp);
	h->now += 1000000000ull;
	rc_req(h, RC(CT_OP_SEND_ONLY), 7, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 8, 100);
	harness_finish(h);
	ct_engine_drain_bursts(h->engine, keep_burst_by_way, &l);

	assert_int_equal(l.n[0], 3);
	assert_int_equal(l.b[0][0].packets, 3);
	assert_int_equal(l.b[0][0].loss, 2); /* the gap and the replay */
	assert_int_equal(l.b[0][0].marks, 0);
	assert_int_equal(l.b[0][1].loss, 0);
	assert_int_equal(l.b[0][1].marks, 1); /* the CE mark */
	assert_int_equal(l.b[0][2].loss + l.b[0][2].marks, 0);
	assert_int_equal(l.n[1], 2);
	assert_int_equal(l.b[1][0].loss, 1); /* the NAK */
	assert_int_equal(l.b[1][0].marks, 0);
	assert_int_equal(l.b[1][1].loss, 0);
	assert_int_equal(l.b[1][1].marks, 1); /* the CNP */
	assert_int_equal(rc_request_flow(h)->cold.retransmits, 1);
	assert_int_equal(rc_request_flow(h)->cold.psn_gaps, 1);
	assert_int_equal(rc_request_flow(h)->cold.ecn_ce, 1);
	harness_free(h);
}

/*
 * A report taken while the input goes on holds a quiet flow's last burst:
 * ct_engine_end_quiet_bursts ends an open burst once its flow has been
 * quiet past the gap limit (not before), the flow's next packet starts a
 * new one, and the bursts handed out are the ones a gap would have ended,
 * none twice.
 */
static void test_quiet_bursts_end_by_time(void **state)
{
	struct harness *h = harness_new(1000000);
	struct burst_list l = {0};
	uint64_t last;

	(void)state;
	h->step_ns = 1000;
	rc_req(h, RC(CT_OP_SEND_ONLY), 1, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 2, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 3, 100);
	last = h->now - h->step_ns;
	/* 50 us after its last packet: inside the 100 us floor, still open */
	assert_int_equal(ct_engine_end_quiet_bursts(h->engine, last + 50000), 0);
	assert_int_equal(ct_engine_drain_bursts(h->engine, keep_burst_by_way, &l), 0);
	/* a millisecond after: over */
	assert_int_equal(ct_engine_end_quiet_bursts(h->engine, last + 1000000), 1);
	assert_int_equal(ct_engine_drain_bursts(h->engine, keep_burst_by_way, &l), 1);
	assert_int_equal(l.b[0][0].packets, 3);
	assert_int_equal(l.b[0][0].end, last);
	/* ended once: asking again ends nothing */
	assert_int_equal(ct_engine_end_quiet_bursts(h->engine, last + 2000000), 0);
	h->now += 1000000000ull; /* the flow sends again: a new burst */
	rc_req(h, RC(CT_OP_SEND_ONLY), 4, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 5, 100);
	harness_finish(h);
	ct_engine_drain_bursts(h->engine, keep_burst_by_way, &l);
	assert_int_equal(l.n[0], 2);
	assert_int_equal(l.b[0][1].packets, 2);
	assert_true(l.b[0][1].start > last + 1000000);
	assert_int_equal(rc_request_flow(h)->packets, 5);
	harness_free(h);
}

static void test_shortcut_same_as_layered_parse(void **state)
{
	uint8_t *buf = malloc(MIX_BUF), ops[256];
	struct ct_packet *pkts = calloc(MIX_FRAMES, sizeof(*pkts));
	uint8_t *bursts = malloc(MIX_FRAMES);
	uint32_t psn[512] = {0};
	struct engine_output out[2];
	unsigned n_ops = 0, shortcut_shape = 0;
	uint64_t r = 0x2545f4914f6cdd1dull, now = 1000000;
	size_t used = 0;

	(void)state;
	for (unsigned op = 0; op < 256; op++)
		if (ct_opcode_table[op].valid)
			ops[n_ops++] = (uint8_t)op;
	for (unsigned i = 0; i < MIX_FRAMES; i++) {
		uint64_t x = mix_next(&r);
		unsigned qp = (unsigned)(x % 300), kind = (unsigned)(x >> 20) % 100;
		struct roce_frame f = rc_a_to_b(ops[(x >> 8) % n_ops], psn[qp], (x >> 32) % 200);
		size_t len;

		f.src4[3] = (uint8_t)(qp % 5);
		f.dqpn = 0x100 + qp * 0x10001;
		f.dscp = (x >> 40) % 50 ? 26 : 46;
		f.ecn = (x >> 44) & 3;
		f.syndrome = (x >> 46) % 8 ? 0 : (uint8_t)(x >> 48);
		f.dma_len = (x >> 50) % 4 ? 4096 : 0;
		f.pad = (x >> 52) % 8 ? 0 : (x >> 54) & 3;
		psn[qp] = (psn[qp] + ((x >> 56) % 20  ? 1
				      : (x >> 58) % 2 ? 3
						      : 0x1000000 - 2)) &
			  0xffffff;
		if (kind < 5) {
			f.n_vlan = 1;
			f.vlan[0] = (struct roce_vlan_tag){0x8100, 3, 100};
		} else if (kind < 7) {
			f.dqpn = 1;
		}
		len = roce_frame_build(buf + used, MIX_BUF - used, &f);
		assert_true(len > 0);
		if (kind >= 7 && kind < 9 && len > 60)
			buf[used + 14 + 20 + 8] = 0x1f; /* a reserved opcode: malformed */
		else if (kind >= 9 && kind < 11)
			buf[used + 14 + 20 + 5] = 9; /* UDP length too short */
		pkts[i].data = buf + used;
		pkts[i].wire_len = (uint32_t)len;
		pkts[i].cap_len = kind >= 11 && kind < 20 ? (uint32_t)(30 + (x >> 24) % (len - 29))
							  : (uint32_t)len;
		if (kind >= 20)
			shortcut_shape++;
		now += (x >> 60) == 0 ? 5000000 : (x >> 60) < 3 ? 200000 : 100;
		pkts[i].ts_ns = now;
		bursts[i] = (uint8_t)(1 + (x >> 36) % 64);
		used += len;
	}
	assert_true(shortcut_shape > MIX_FRAMES / 2);
	for (int l = 0; l < 2; l++) {
		memset(&out[l], 0, sizeof(out[l]));
		out[l].flows = calloc(MIX_FRAMES, sizeof(struct ct_flow));
		out[l].bursts = calloc(MIX_FRAMES, sizeof(struct ct_flow_burst));
		run_mix(pkts, MIX_FRAMES, bursts, l, &out[l]);
	}
	/* the stream exercised what it should */
	assert_true(out[0].counters.malformed > 100);
	assert_true(out[0].counters.roce_cut[CT_CUT_ROCE_EXT] > 10);
	assert_true(out[0].counters.table.evicted_idle + out[0].counters.table.evicted_full > 10);
	assert_true(out[0].n_flows > 300 && out[0].n_bursts > 1000);

	assert_memory_equal(&out[0].counters, &out[1].counters, sizeof(out[0].counters));
	assert_int_equal(out[0].n_flows, out[1].n_flows);
	assert_memory_equal(out[0].flows, out[1].flows, out[0].n_flows * sizeof(struct ct_flow));
	assert_int_equal(out[0].n_bursts, out[1].n_bursts);
	assert_memory_equal(out[0].bursts, out[1].bursts,
			    out[0].n_bursts * sizeof(struct ct_flow_burst));
	for (int l = 0; l < 2; l++) {
		free(out[l].flows);
		free(out[l].bursts);
	}
	free(buf);
	free(pkts);
	free(bursts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_counters),
		cmocka_unit_test(test_copies_cut_before_the_qpn_on_the_address_pair),
		cmocka_unit_test(test_pfc_counters),
		cmocka_unit_test(test_cm_req_rep_logged),
		cmocka_unit_test(test_cm_req_truncated),
		cmocka_unit_test(test_idle_evicted_flow_reported),
		cmocka_unit_test(test_shortcut_same_as_layered_parse),
		cmocka_unit_test(test_bursts_carry_their_loss_and_marks),
		cmocka_unit_test(test_quiet_bursts_end_by_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
