// SPDX-License-Identifier: MIT
/*
 * The engine around message assembly: per-reason malformed counters, PFC
 * and PAUSE counters, the RDMA CM log, and flows that leave the table
 * before the end of input.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_counters),
		cmocka_unit_test(test_copies_cut_before_the_qpn_on_the_address_pair),
		cmocka_unit_test(test_pfc_counters),
		cmocka_unit_test(test_cm_req_rep_logged),
		cmocka_unit_test(test_cm_req_truncated),
		cmocka_unit_test(test_idle_evicted_flow_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
