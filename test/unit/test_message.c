// SPDX-License-Identifier: MIT
/*
 * Message assembly and PSN tracking (RoCE), message inference and
 * retransmissions (TCP), driven through ct_engine_feed with frames from the
 * builder along one RC connection (rc_pair.h); flows are read back after
 * ct_engine_finish.
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

static uint64_t hist_total(const struct ct_flow *f)
{
	uint64_t n = 0;

	for (int b = 0; b < CT_HIST_BUCKETS; b++)
		n += f->cold.msg_hist[b];
	return n;
}

/* ---- the histogram ---- */

static void test_hist_bucket(void **state)
{
	(void)state;
	assert_int_equal(ct_hist_bucket(0), 0);
	assert_int_equal(ct_hist_bucket(8), 0);
	assert_int_equal(ct_hist_bucket(127), 0);
	assert_int_equal(ct_hist_bucket(128), 1);
	assert_int_equal(ct_hist_bucket(255), 1);
	assert_int_equal(ct_hist_bucket(256), 2);
	assert_int_equal(ct_hist_bucket(2548), 5);
	assert_int_equal(ct_hist_bucket(4096), 6);
	assert_int_equal(ct_hist_bucket(25u << 20), 18); /* a DDP bucket: 16..32 MiB */
	assert_int_equal(ct_hist_bucket((1ull << 32) - 1), 25);
	assert_int_equal(ct_hist_bucket(1ull << 32), 26);
	assert_int_equal(ct_hist_bucket(UINT64_MAX), CT_HIST_BUCKETS - 1);
	assert_int_equal(ct_hist_bucket_floor(5), 2048);
}

/* ---- SEND ---- */

static void test_send_first_middle_last(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_req(h, RC(CT_OP_SEND_FIRST), 100, 1024);
	rc_req(h, RC(CT_OP_SEND_MIDDLE), 101, 1024);
	rc_req(h, RC(CT_OP_SEND_LAST), 102, 500);
	harness_finish(h);
	assert_int_equal(h->n_flows, 1);
	f = rc_request_flow(h);
	assert_int_equal(f->packets, 3);
	assert_int_equal(f->bytes, ROCE_LEN(1024) * 2 + ROCE_LEN(500));
	assert_int_equal(f->cold.messages, 1);
	assert_int_equal(f->cold.message_bytes, 2548);
	assert_int_equal(f->cold.msg_hist[ct_hist_bucket(2548)], 1);
	assert_int_equal(hist_total(f), 1);
	assert_int_equal(f->cold.partial_messages, 0);
	assert_int_equal(f->cold.psn_gaps, 0);
	assert_int_equal(f->cold.retransmits, 0);
	assert_int_equal(f->cold.pmtu, 1024);
	assert_int_equal(f->cold.req_first_psn, 100);
	assert_true(f->seen & CT_SEEN_REQ_PSN);
	harness_free(h);
}

static void test_send_variants(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_req(h, RC(CT_OP_SEND_ONLY), 0, 64);	    /* 64 */
	rc_req(h, RC(CT_OP_SEND_ONLY_IMM), 1, 200); /* 200 */
	rc_req(h, RC(CT_OP_SEND_FIRST), 2, 1024);   /* 1024 + 100 */
	rc_req(h, RC(CT_OP_SEND_LAST_IMM), 3, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY_INV), 4, 4096); /* 4096 */
	rc_req(h, RC(CT_OP_SEND_FIRST), 5, 1024);    /* 1024 + 1024 + 1 */
	rc_req(h, RC(CT_OP_SEND_MIDDLE), 6, 1024);
	rc_req(h, RC(CT_OP_SEND_LAST_INV), 7, 1);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.messages, 5);
	assert_int_equal(f->cold.message_bytes, 64 + 200 + 1124 + 4096 + 2049);
	assert_int_equal(f->cold.msg_hist[0], 1); /* 64 */
	assert_int_equal(f->cold.msg_hist[1], 1); /* 200 */
	assert_int_equal(f->cold.msg_hist[4], 1); /* 1124 */
	assert_int_equal(f->cold.msg_hist[5], 1); /* 2049 */
	assert_int_equal(f->cold.msg_hist[6], 1); /* 4096 */
	assert_int_equal(hist_total(f), 5);
	assert_int_equal(f->cold.partial_messages, 0);
	assert_int_equal(f->cold.psn_gaps, 0);
	harness_free(h);
}

/* ---- WRITE ---- */

static void test_write_messages(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_req_reth(h, RC(CT_OP_WRITE_FIRST), 10, 1024, 3000);
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 11, 1024);
	rc_req(h, RC(CT_OP_WRITE_LAST), 12, 952);
	/* a MIDDLE lost: the size is still the RETH length */
	rc_req_reth(h, RC(CT_OP_WRITE_FIRST), 13, 1024, 3072);
	rc_req(h, RC(CT_OP_WRITE_LAST), 15, 1024);
	rc_req_reth(h, RC(CT_OP_WRITE_ONLY), 16, 512, 512);
	rc_req_reth(h, RC(CT_OP_WRITE_ONLY_IMM), 17, 100, 100);
	rc_req_reth(h, RC(CT_OP_WRITE_FIRST), 18, 1024, 2000);
	rc_req(h, RC(CT_OP_WRITE_LAST_IMM), 19, 976);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.messages, 5);
	assert_int_equal(f->cold.message_bytes, 3000 + 3072 + 512 + 100 + 2000);
	assert_int_equal(f->cold.msg_hist[5], 2); /* 3000, 3072 */
	assert_int_equal(f->cold.msg_hist[4], 1); /* 2000 */
	assert_int_equal(f->cold.msg_hist[3], 1); /* 512 */
	assert_int_equal(f->cold.msg_hist[0], 1); /* 100 */
	assert_int_equal(f->cold.psn_gaps, 1);
	assert_int_equal(f->cold.psn_missing, 1);
	assert_int_equal(f->cold.partial_messages, 0);
	assert_int_equal(f->cold.pmtu, 1024);
	harness_free(h);
}

/* A request A -> B cut to a SPAN session's 64 bytes: its RETH (if any) is gone. */
static void rc_req_cut64(struct harness *h, uint8_t opcode, uint32_t psn, uint32_t payload,
			 uint32_t dma_len)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame r = rc_a_to_b(opcode, psn, payload);
	size_t len;

	r.dma_len = dma_len;
	len = roce_frame_build(frame, sizeof(frame), &r);
	harness_feed_frame(h, frame, 64, len);
}

/*
 * The same WRITEs as whole frames and as 64-byte copies: the copies count the
 * same packets, bytes, messages and sizes; the multi-packet WRITEs, whose
 * RETH was cut, are sized by their payloads and said to be inferred. A WRITE
 * ONLY is sized by its payload either way.
 */
static void test_write_messages_from_64_byte_copies(void **state)
{
	struct harness *whole = harness_new(1000000), *cut = harness_new(1000000);
	const struct ct_flow *w, *c;

	(void)state;
	rc_req_reth(whole, RC(CT_OP_WRITE_FIRST), 10, 1024, 3000);
	rc_req(whole, RC(CT_OP_WRITE_MIDDLE), 11, 1024);
	rc_req(whole, RC(CT_OP_WRITE_LAST), 12, 952);
	rc_req_reth(whole, RC(CT_OP_WRITE_ONLY_IMM), 13, 100, 100);
	rc_req_reth(whole, RC(CT_OP_WRITE_FIRST), 14, 1024, 2000);
	rc_req(whole, RC(CT_OP_WRITE_LAST_IMM), 15, 976);
	harness_finish(whole);
	rc_req_cut64(cut, RC(CT_OP_WRITE_FIRST), 10, 1024, 3000);
	rc_req_cut64(cut, RC(CT_OP_WRITE_MIDDLE), 11, 1024, 0);
	rc_req_cut64(cut, RC(CT_OP_WRITE_LAST), 12, 952, 0);
	rc_req_cut64(cut, RC(CT_OP_WRITE_ONLY_IMM), 13, 100, 100);
	rc_req_cut64(cut, RC(CT_OP_WRITE_FIRST), 14, 1024, 2000);
	rc_req_cut64(cut, RC(CT_OP_WRITE_LAST_IMM), 15, 976, 0);
	harness_finish(cut);

	w = rc_request_flow(whole);
	c = rc_request_flow(cut);
	assert_int_equal(c->packets, 6);
	assert_int_equal(c->bytes, w->bytes);
	assert_int_equal(c->cold.messages, 3);
	assert_int_equal(c->cold.message_bytes, 3000 + 100 + 2000);
	assert_memory_equal(c->cold.msg_hist, w->cold.msg_hist, sizeof(w->cold.msg_hist));
	assert_int_equal(c->cold.pmtu, 1024);
	assert_int_equal(c->cold.psn_gaps, 0);
	assert_int_equal(c->cold.partial_messages, 0);
	assert_int_equal(c->cold.size_inferred, 2);
	assert_int_equal(cut->counters.messages_size_inferred, 2);
	/* the two FIRSTs and the ONLY_IMM lost their RETH; LAST_IMM's ImmDt ends at byte 58 */
	assert_int_equal(cut->counters.roce_cut[CT_CUT_ROCE_EXT], 3);
	assert_int_equal(cut->counters.malformed, 0);
	assert_int_equal(w->cold.size_inferred, 0);
	assert_int_equal(whole->counters.messages_size_inferred, 0);
	harness_free(whole);
	harness_free(cut);
}

/*
 * Without the RETH, a WRITE that lost a packet is sized by what was seen:
 * smaller than the RETH would have said, and counted as inferred.
 */
static void test_inferred_write_size_misses_a_lost_packet(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_req_cut64(h, RC(CT_OP_WRITE_FIRST), 20, 1024, 3072);
	rc_req_cut64(h, RC(CT_OP_WRITE_LAST), 22, 1024, 0);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.messages, 1);
	assert_int_equal(f->cold.message_bytes, 2048);
	assert_int_equal(f->cold.size_inferred, 1);
	assert_int_equal(f->cold.psn_gaps, 1);
	harness_free(h);
}

/* A READ request whose RETH was cut: its response is neither matched nor a mismatch. */
static void test_read_request_without_its_reth(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *rq, *rs;

	(void)state;
	rc_req_cut64(h, RC(CT_OP_READ_REQUEST), 600, 0, 2048);
	rc_resp(h, RC(CT_OP_READ_RESP_FIRST), 600, 1024, 0x00);
	rc_resp(h, RC(CT_OP_READ_RESP_LAST), 601, 1024, 0x00);
	harness_finish(h);
	rq = rc_request_flow(h);
	rs = rc_response_flow(h);
	assert_int_equal(rq->cold.read_requests, 1);
	assert_int_equal(rq->cold.read_bytes_requested, 0);
	assert_int_equal(rs->cold.messages, 1);
	assert_int_equal(rs->cold.message_bytes, 2048);
	assert_int_equal(rs->cold.reads_matched, 0);
	assert_int_equal(rs->cold.read_len_mismatch, 0);
	assert_true(rs->seen & CT_SEEN_READ_PEER); /* the pairing evidence stays */
	assert_int_equal(rs->cold.read_peer_qpn, RC_QP_B);
	harness_free(h);
}

/* ---- READ ---- */

static void test_read_matched_to_responses(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *rq, *rs;

	(void)state;
	rc_req_reth(h, RC(CT_OP_READ_REQUEST), 500, 0, 2500);
	rc_resp(h, RC(CT_OP_READ_RESP_FIRST), 500, 1024, 0x00);
	rc_resp(h, RC(CT_OP_READ_RESP_MIDDLE), 501, 1024, 0);
	rc_resp(h, RC(CT_OP_READ_RESP_LAST), 502, 452, 0x00);
	rc_req_reth(h, RC(CT_OP_READ_REQUEST), 503, 0, 100);
	rc_resp(h, RC(CT_OP_READ_RESP_ONLY), 503, 100, 0x00);
	/* the responder returns fewer bytes than asked for */
	rc_req_reth(h, RC(CT_OP_READ_REQUEST), 504, 0, 4096);
	rc_resp(h, RC(CT_OP_READ_RESP_ONLY), 504, 200, 0x00);
	/* the 4096-byte READ used PSNs 504..507: no gap after it */
	rc_req(h, RC(CT_OP_SEND_ONLY), 508, 10);
	rc_req(h, RC(CT_OP_SEND_ONLY), 509, 10);
	harness_finish(h);
	assert_int_equal(h->n_flows, 2);

	rq = rc_request_flow(h);
	assert_int_equal(rq->cold.read_requests, 3);
	assert_int_equal(rq->cold.read_bytes_requested, 2500 + 100 + 4096);
	assert_int_equal(rq->cold.messages, 2); /* the two SENDs */
	assert_int_equal(rq->cold.reads_matched, 0);
	assert_int_equal(rq->cold.psn_gaps, 0);
	assert_false(rq->seen & CT_SEEN_READ_PEER);

	rs = rc_response_flow(h);
	assert_int_equal(rs->packets, 5);
	assert_int_equal(rs->cold.messages, 3);
	assert_int_equal(rs->cold.message_bytes, 2500 + 100 + 200);
	assert_int_equal(rs->cold.msg_hist[5], 1);
	assert_int_equal(rs->cold.msg_hist[0], 1);
	assert_int_equal(rs->cold.msg_hist[1], 1);
	assert_int_equal(rs->cold.reads_matched, 2);
	assert_int_equal(rs->cold.read_len_mismatch, 1);
	assert_true(rs->seen & CT_SEEN_READ_PEER);
	assert_int_equal(rs->cold.read_peer_qpn, RC_QP_B);
	assert_true(rs->seen & CT_SEEN_RESP_PSN);
	assert_int_equal(rs->cold.resp_first_psn, 500);
	assert_int_equal(rs->cold.read_requests, 0);
	assert_int_equal(rs->cold.psn_gaps, 0);
	assert_int_equal(rs->cold.retransmits, 0);
	assert_int_equal(rs->cold.partial_messages, 0);
	assert_int_equal(h->counters.read_overwrites, 0);
	harness_free(h);
}

static void test_read_response_gap_and_replay(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *rs;

	(void)state;
	rc_req_reth(h, RC(CT_OP_READ_REQUEST), 10, 0, 4096);
	rc_resp(h, RC(CT_OP_READ_RESP_FIRST), 10, 1024, 0);
	rc_resp(h, RC(CT_OP_READ_RESP_MIDDLE), 11, 1024, 0);
	rc_resp(h, RC(CT_OP_READ_RESP_MIDDLE), 11, 1024, 0); /* repeated */
	rc_resp(h, RC(CT_OP_READ_RESP_LAST), 13, 1024, 0);   /* 12 missing */
	harness_finish(h);
	rs = rc_response_flow(h);
	assert_int_equal(rs->cold.retransmits, 1);
	assert_int_equal(rs->cold.psn_gaps, 1);
	assert_int_equal(rs->cold.psn_missing, 1);
	assert_int_equal(rs->cold.messages, 1);
	assert_int_equal(rs->cold.message_bytes, 3072);
	assert_int_equal(rs->cold.read_len_mismatch, 1);
	harness_free(h);
}

/* ---- ATOMIC ---- */

static void test_atomics(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *rq, *rs;

	(void)state;
	rc_req(h, RC(CT_OP_CMP_SWAP), 1, 0);
	rc_req(h, RC(CT_OP_FETCH_ADD), 2, 0);
	rc_resp(h, RC(CT_OP_ATOMIC_ACK), 1, 0, 0x00);
	rc_resp(h, RC(CT_OP_ATOMIC_ACK), 2, 0, 0x00);
	harness_finish(h);
	rq = rc_request_flow(h);
	assert_int_equal(rq->cold.messages, 2);
	assert_int_equal(rq->cold.message_bytes, 16);
	assert_int_equal(rq->cold.msg_hist[0], 2);
	assert_int_equal(rq->bytes, 2 * ROCE_LEN(28));
	rs = rc_response_flow(h);
	assert_int_equal(rs->packets, 2);
	assert_int_equal(rs->bytes, 2 * ROCE_LEN(12));
	assert_int_equal(rs->cold.messages, 0);
	assert_int_equal(rs->cold.naks_seq + rs->cold.naks_rnr + rs->cold.naks_other, 0);
	assert_int_equal(rs->op_used, 1);
	assert_int_equal(rs->op_id[0], RC(CT_OP_ATOMIC_ACK));
	assert_int_equal(rs->op_count[0], 2);
	harness_free(h);
}

/* ---- PSN anomalies ---- */

static void test_psn_gap(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_req(h, RC(CT_OP_SEND_ONLY), 10, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 11, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 15, 100); /* 12, 13, 14 lost */
	rc_req(h, RC(CT_OP_SEND_ONLY), 16, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 18, 100); /* 17 lost */
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.psn_gaps, 2);
	assert_int_equal(f->cold.psn_missing, 4);
	assert_int_equal(f->cold.messages, 5);
	assert_int_equal(f->cold.retransmits, 0);
	assert_int_equal(f->cold.duplicates, 0);
	harness_free(h);
}

static void test_single_duplicate(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f, *g;

	(void)state;
	rc_req(h, RC(CT_OP_SEND_ONLY), 10, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 11, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 12, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 12, 100); /* the same packet again */
	rc_req(h, RC(CT_OP_SEND_ONLY), 13, 100);
	/* on another QP, the capture ends on the duplicate */
	rc_req_to(h, 0x99, RC(CT_OP_SEND_ONLY), 20, 100);
	rc_req_to(h, 0x99, RC(CT_OP_SEND_ONLY), 21, 100);
	rc_req_to(h, 0x99, RC(CT_OP_SEND_ONLY), 21, 100);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->packets, 5);
	assert_int_equal(f->cold.retransmits, 1);
	assert_int_equal(f->cold.duplicates, 1);
	assert_int_equal(f->cold.go_back_n, 0);
	assert_int_equal(f->cold.messages, 4);
	assert_int_equal(f->cold.message_bytes, 400);
	assert_int_equal(f->cold.psn_gaps, 0);
	g = harness_roce_flow(h, rc_host_a, rc_host_b, 0x99);
	assert_non_null(g);
	assert_int_equal(g->cold.retransmits, 1);
	assert_int_equal(g->cold.duplicates, 1);
	assert_int_equal(g->cold.messages, 2);
	harness_free(h);
}

static void test_go_back_n(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	for (uint32_t psn = 0; psn <= 5; psn++)
		rc_req(h, RC(CT_OP_SEND_ONLY), psn, 100);
	for (uint32_t psn = 2; psn <= 5; psn++) /* replayed after a NAK */
		rc_req(h, RC(CT_OP_SEND_ONLY), psn, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 6, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 7, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 7, 100); /* then a single duplicate */
	rc_req(h, RC(CT_OP_SEND_ONLY), 8, 100);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->packets, 14);
	assert_int_equal(f->cold.go_back_n, 1);
	assert_int_equal(f->cold.duplicates, 1);
	assert_int_equal(f->cold.retransmits, 5);
	assert_int_equal(f->cold.messages, 9);
	assert_int_equal(f->cold.psn_gaps, 0);
	harness_free(h);
}

static void test_go_back_n_inside_a_message(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_req_reth(h, RC(CT_OP_WRITE_FIRST), 100, 1024, 4096);
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 101, 1024);
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 102, 1024);
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 101, 1024); /* replay from 101 */
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 102, 1024);
	rc_req(h, RC(CT_OP_WRITE_LAST), 103, 1024);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.go_back_n, 1);
	assert_int_equal(f->cold.retransmits, 2);
	assert_int_equal(f->cold.messages, 1);
	assert_int_equal(f->cold.message_bytes, 4096);
	assert_int_equal(f->cold.partial_messages, 0);
	harness_free(h);
}

static void test_psn_wraps_without_gap(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f, *g;

	(void)state;
	rc_req(h, RC(CT_OP_SEND_ONLY), 0xfffffb, 100);
	rc_req(h, RC(CT_OP_SEND_ONLY), 0xfffffc, 100);
	rc_req_reth(h, RC(CT_OP_WRITE_FIRST), 0xfffffd, 1024, 4000);
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 0xfffffe, 1024);
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 0xffffff, 1024);
	rc_req(h, RC(CT_OP_WRITE_LAST), 0x000000, 928);
	rc_req(h, RC(CT_OP_SEND_ONLY), 0x000001, 100);
	/* a real gap across the wrap, on another QP */
	rc_req_to(h, 0x77, RC(CT_OP_SEND_ONLY), 0xfffffe, 100);
	rc_req_to(h, 0x77, RC(CT_OP_SEND_ONLY), 0x000001, 100);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.psn_gaps, 0);
	assert_int_equal(f->cold.psn_missing, 0);
	assert_int_equal(f->cold.retransmits, 0);
	assert_int_equal(f->cold.messages, 4);
	assert_int_equal(f->cold.message_bytes, 100 + 100 + 4000 + 100);
	g = harness_roce_flow(h, rc_host_a, rc_host_b, 0x77);
	assert_non_null(g);
	assert_int_equal(g->cold.psn_gaps, 1);
	assert_int_equal(g->cold.psn_missing, 2);
	assert_int_equal(g->cold.retransmits, 0);
	harness_free(h);
}

/* ---- ACK / NAK ---- */

static void test_nak_syndromes(void **state)
{
	static const uint8_t syndromes[] = {
		0x1f, /* ACK, credit count 31 */
		0x00, /* ACK */
		0x60, /* NAK: PSN sequence error */
		0x20, /* RNR NAK, timer 0 */
		0x2e, /* RNR NAK, timer 14 */
		0x61, /* NAK: invalid request */
		0x62, /* NAK: remote access error */
		0x63, /* NAK: remote operational error */
	};
	struct harness *h = harness_new(1000000);
	const struct ct_flow *rq, *rs;

	(void)state;
	for (uint32_t i = 0; i < 8; i++)
		rc_req(h, RC(CT_OP_SEND_ONLY), i, 64);
	for (uint32_t i = 0; i < sizeof(syndromes); i++)
		rc_resp(h, RC(CT_OP_ACK), i, 0, syndromes[i]);
	harness_finish(h);
	rs = rc_response_flow(h);
	assert_int_equal(rs->packets, 8);
	assert_int_equal(rs->bytes, 8 * ROCE_LEN(4));
	assert_int_equal(rs->cold.naks_seq, 1);
	assert_int_equal(rs->cold.naks_rnr, 2);
	assert_int_equal(rs->cold.naks_other, 3);
	assert_int_equal(rs->cold.messages, 0);
	assert_int_equal(rs->cold.resp_first_psn, 0);
	rq = rc_request_flow(h);
	assert_int_equal(rq->cold.naks_seq + rq->cold.naks_rnr + rq->cold.naks_other, 0);
	assert_int_equal(rq->cold.messages, 8);
	harness_free(h);
}

/* ACKs, READ responses and CNPs travel B -> A: they belong to B -> A's flow. */
static void test_responses_on_their_own_flow(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *rq, *rs;
	struct roce_frame cnp = rc_b_to_a(CT_OPCODE_CNP, 0, 0);

	(void)state;
	rc_req_reth(h, RC(CT_OP_WRITE_ONLY), 7, 4000, 4000);
	rc_resp(h, RC(CT_OP_ACK), 7, 0, 0);
	harness_feed_roce(h, &cnp);
	harness_feed_roce(h, &cnp);
	rc_req_reth(h, RC(CT_OP_READ_REQUEST), 8, 0, 64);
	rc_resp(h, RC(CT_OP_READ_RESP_ONLY), 8, 64, 0);
	harness_finish(h);
	assert_int_equal(h->n_flows, 2);
	assert_null(harness_roce_flow(h, rc_host_a, rc_host_b, RC_QP_A));
	assert_null(harness_roce_flow(h, rc_host_b, rc_host_a, RC_QP_B));
	rq = rc_request_flow(h);
	rs = rc_response_flow(h);
	assert_int_equal(rq->packets, 2);
	assert_int_equal(rq->cold.cnp, 0);
	assert_int_equal(rq->cold.messages, 1);
	assert_int_equal(rq->cold.message_bytes, 4000);
	assert_int_equal(rs->packets, 4);
	assert_int_equal(rs->cold.cnp, 2);
	assert_int_equal(rs->cold.messages, 1); /* the READ response */
	assert_int_equal(rs->cold.message_bytes, 64);
	assert_int_equal(rs->cold.reads_matched, 1);
	assert_int_equal(rs->cold.psn_gaps + rs->cold.retransmits, 0);
	/* a CNP is not part of any PSN space */
	assert_int_equal(rq->cold.psn_gaps + rq->cold.retransmits, 0);
	harness_free(h);
}

/* ---- ECN, DSCP, PCP ---- */

static void test_ecn_and_dscp(void **state)
{
	static const uint8_t ecn[] = {2, 3, 3, 0, 2};
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f, *g;

	(void)state;
	for (uint32_t i = 0; i < sizeof(ecn); i++) {
		struct roce_frame r = rc_a_to_b(RC(CT_OP_SEND_ONLY), i, 64);

		r.ecn = ecn[i];
		r.dscp = 26;
		r.n_vlan = 1;
		r.vlan[0] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 3, 100};
		harness_feed_roce(h, &r);
	}
	for (uint32_t i = 0; i < 3; i++) {
		struct roce_frame r = rc_b_to_a(RC(CT_OP_ACK), i, 0);

		r.dscp = (uint8_t)(i ? 48 : 26);
		harness_feed_roce(h, &r);
	}
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(ct_flow_ecn_ce(f), 2);
	assert_int_equal(ct_flow_ecn_seen(f), 1u << 0 | 1u << 2 | 1u << 3);
	assert_int_equal(f->dscp, 26);
	assert_int_equal(f->pcp, 3);
	assert_false(f->seen & CT_SEEN_DSCP_MIX);
	assert_int_equal(f->bytes, 5 * (ROCE_LEN(64) + 4));
	g = rc_response_flow(h);
	assert_int_equal(ct_flow_ecn_ce(g), 0);
	assert_true(g->seen & CT_SEEN_DSCP_MIX);
	assert_int_equal(g->dscp, 48);
	assert_int_equal(g->pcp, 0xff);
	harness_free(h);
}

/* ---- opcode counts ---- */

struct opcode_visit {
	unsigned n;
	uint8_t opcode[16];
	uint64_t count[16];
};

static void visit_opcode(uint8_t opcode, uint64_t count, void *ctx)
{
	struct opcode_visit *v = ctx;

	assert_true(v->n < 16);
	v->opcode[v->n] = opcode;
	v->count[v->n++] = count;
}

static void test_opcode_counts(void **state)
{
	static const uint8_t ops[] = {
		RC(CT_OP_SEND_ONLY),	  RC(CT_OP_SEND_ONLY_IMM), RC(CT_OP_WRITE_ONLY),
		RC(CT_OP_WRITE_ONLY_IMM), RC(CT_OP_CMP_SWAP),	   RC(CT_OP_FETCH_ADD),
		RC(CT_OP_SEND_ONLY_INV),  RC(CT_OP_READ_REQUEST),  RC(CT_OP_SEND_FIRST),
		RC(CT_OP_SEND_LAST),
	};
	const unsigned n_ops = sizeof(ops);
	struct harness *h = harness_new(1000000);
	struct opcode_visit v = {0};
	const struct ct_flow *f;
	uint32_t psn = 0;
	uint64_t counted = 0;

	(void)state;
	assert_true(n_ops > CT_OP_SLOTS + CT_OP_EXTRA);
	/* opcode i is seen i + 1 times */
	for (unsigned i = 0; i < n_ops; i++)
		for (unsigned k = 0; k <= i; k++)
			rc_req(h, ops[i], psn++, 8);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->packets, n_ops * (n_ops + 1) / 2);
	ct_flow_foreach_opcode(f, visit_opcode, &v);
	assert_int_equal(v.n, CT_OP_SLOTS + CT_OP_EXTRA);
	for (unsigned i = 0; i < v.n; i++) {
		assert_int_equal(v.opcode[i], ops[i]);
		assert_int_equal(v.count[i], i + 1);
		counted += v.count[i];
	}
	/* the rest are counted together */
	assert_int_equal(f->cold.op_other, f->packets - counted);
	harness_free(h);
}

/* ---- partial messages ---- */

static void test_partial_messages(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	/* a LAST whose FIRST came before the capture, then a FIRST the capture cuts */
	rc_req(h, RC(CT_OP_WRITE_LAST), 5, 1024);
	rc_req(h, RC(CT_OP_SEND_FIRST), 6, 1024);
	rc_req(h, RC(CT_OP_SEND_MIDDLE), 7, 1024);
	/* a FIRST whose message never ends, then an ONLY breaking into one */
	rc_req_to(h, 0x33, RC(CT_OP_SEND_FIRST), 1, 1024);
	rc_req_to(h, 0x33, RC(CT_OP_SEND_FIRST), 2, 1024);
	rc_req_to(h, 0x33, RC(CT_OP_SEND_LAST), 3, 10);
	rc_req_to(h, 0x33, RC(CT_OP_SEND_FIRST), 4, 1024);
	rc_req_to(h, 0x33, RC(CT_OP_SEND_ONLY), 5, 10);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.partial_messages, 2);
	assert_int_equal(f->cold.messages, 0);
	f = harness_roce_flow(h, rc_host_a, rc_host_b, 0x33);
	assert_non_null(f);
	assert_int_equal(f->cold.partial_messages, 2);
	assert_int_equal(f->cold.messages, 2);
	assert_int_equal(f->cold.message_bytes, 1034 + 10);
	harness_free(h);
}

/* A SEND cut off by a WRITE is one partial message, the headless WRITE another. */
static void test_partial_messages_of_different_kinds(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_req(h, RC(CT_OP_SEND_FIRST), 1, 1024);
	rc_req(h, RC(CT_OP_WRITE_MIDDLE), 2, 1024);
	rc_req(h, RC(CT_OP_WRITE_LAST), 3, 1024);
	rc_req(h, RC(CT_OP_SEND_ONLY), 4, 64);
	harness_finish(h);
	f = rc_request_flow(h);
	assert_int_equal(f->cold.partial_messages, 2);
	assert_int_equal(f->cold.messages, 1);
	assert_int_equal(f->cold.message_bytes, 64);
	harness_free(h);
}

static void test_partial_read_responses(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	rc_resp(h, RC(CT_OP_READ_RESP_MIDDLE), 5, 1024, 0);
	rc_resp(h, RC(CT_OP_READ_RESP_LAST), 6, 100, 0);
	rc_resp(h, RC(CT_OP_READ_RESP_FIRST), 7, 1024, 0);
	harness_finish(h);
	f = rc_response_flow(h);
	assert_int_equal(f->cold.partial_messages, 2);
	assert_int_equal(f->cold.messages, 0);
	harness_free(h);
}

/* ---- TCP ---- */

static const uint8_t tcp_hdr_bytes = 14 + 20 + 20;

static void tcp_segment(struct harness *h, uint16_t sport, uint32_t seq, uint8_t flags,
			uint32_t payload)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct frame_builder fb;
	const struct fb_ipv4 ip = {.src = {10, 0, 0, 1}, .dst = {10, 0, 0, 2}, .proto = 6};
	const struct fb_tcp tcp = {
		.sport = sport, .dport = 5201, .seq = seq, .ack = 1, .flags = flags};
	size_t len;

	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_IPV4);
	fb_ipv4(&fb, &ip);
	fb_tcp(&fb, &tcp);
	fb_payload(&fb, payload);
	len = fb_finish(&fb);
	harness_feed_frame(h, frame, len, len);
}

static void test_tcp_messages_split_by_idle_gaps(void **state)
{
	const uint64_t us = 1000;
	struct harness *h = harness_new(1000 * us);
	const struct ct_flow *f;

	(void)state;
	h->step_ns = 10 * us;
	tcp_segment(h, 40000, 999, 0x02, 0); /* SYN */
	tcp_segment(h, 40000, 1000, 0x10, 1000);
	tcp_segment(h, 40000, 2000, 0x10, 1000);
	tcp_segment(h, 40000, 3000, 0x18, 1000);
	tcp_segment(h, 40000, 2000, 0x10, 1000); /* retransmitted */
	h->now += 5000 * us;			 /* idle longer than the gap */
	tcp_segment(h, 40000, 4000, 0x10, 1000);
	tcp_segment(h, 40000, 5000, 0x18, 1000);
	h->now += 1500 * us;
	tcp_segment(h, 40000, 6000, 0x18, 500);
	harness_finish(h);
	f = harness_tcp_flow(h, rc_host_a, rc_host_b, 40000, 5201);
	assert_non_null(f);
	assert_int_equal(f->key.transport, CT_TRANSPORT_TCP);
	assert_false(f->state & CT_FS_TCP_CLOSED); /* no FIN, no RST */
	assert_int_equal(f->packets, 8);
	assert_int_equal(f->bytes, 8 * tcp_hdr_bytes + 6500);
	assert_int_equal(f->cold.retransmits, 1);
	assert_int_equal(f->cold.messages, 3);
	assert_int_equal(f->cold.message_bytes, 3000 + 2000 + 500);
	assert_int_equal(f->cold.msg_hist[ct_hist_bucket(3000)], 1);
	assert_int_equal(f->cold.msg_hist[ct_hist_bucket(2000)], 1);
	assert_int_equal(f->cold.msg_hist[ct_hist_bucket(500)], 1);
	assert_int_equal(h->counters.tcp_packets, 8);
	assert_int_equal(h->counters.tcp_bytes, 8 * tcp_hdr_bytes + 6500);
	assert_int_equal(h->counters.roce_packets, 0);
	harness_free(h);
}

static void test_tcp_one_message_when_gaps_are_short(void **state)
{
	const uint64_t us = 1000;
	struct harness *h = harness_new(1000 * us);
	const struct ct_flow *f;

	(void)state;
	h->step_ns = 999 * us;
	/* no SYN: the first segment sets the expectation */
	for (uint32_t i = 0; i < 6; i++)
		tcp_segment(h, 40001, 0xfffff000u + 1448 * i, 0x10, 1448); /* wraps at 2^32 */
	tcp_segment(h, 40001, 0xfffff000u + 1448 * 4, 0x10, 1448);	   /* old data again */
	harness_finish(h);
	f = harness_tcp_flow(h, rc_host_a, rc_host_b, 40001, 5201);
	assert_non_null(f);
	assert_int_equal(f->cold.messages, 1);
	assert_int_equal(f->cold.message_bytes, 6 * 1448);
	assert_int_equal(f->cold.retransmits, 1);
	harness_free(h);
}

/*
 * A mirror that swaps neighbours: 3000 seen before 2000, then 2000 again
 * (the sender answering the receiver's report of the same reordering),
 * then 4000. The swapped segment filled the hole 3000 opened and its
 * repeat ends where the hole now starts: reordered, not lost. Then
 * 6000 jumps over 5000, 7000 follows (new data: the hole is no longer the
 * last segment's), and 5000 comes: resent after a loss before the capture
 * point. 3000 again is old data seen twice: resent.
 */
static void test_tcp_swapped_neighbours_are_not_retransmissions(void **state)
{
	struct harness *h = harness_new(1000000);
	const struct ct_flow *f;

	(void)state;
	h->step_ns = 2000;
	tcp_segment(h, 40002, 999, 0x02, 0); /* SYN */
	tcp_segment(h, 40002, 1000, 0x10, 1000);
	tcp_segment(h, 40002, 3000, 0x10, 1000);
	tcp_segment(h, 40002, 2000, 0x10, 1000); /* swapped with 3000 */
	tcp_segment(h, 40002, 2000, 0x10, 1000); /* and resent at once */
	tcp_segment(h, 40002, 4000, 0x10, 1000);
	tcp_segment(h, 40002, 6000, 0x10, 1000);
	tcp_segment(h, 40002, 7000, 0x10, 1000);
	tcp_segment(h, 40002, 5000, 0x10, 1000); /* after new data: resent */
	tcp_segment(h, 40002, 3000, 0x10, 1000); /* seen before: resent */
	tcp_segment(h, 40002, 8000, 0x11, 0); /* FIN */
	harness_finish(h);
	f = harness_tcp_flow(h, rc_host_a, rc_host_b, 40002, 5201);
	assert_non_null(f);
	assert_true(f->state & CT_FS_TCP_CLOSED);
	assert_int_equal(f->cold.tcp_reordered, 2);
	assert_int_equal(f->cold.retransmits, 2);
	assert_int_equal(f->cold.messages, 1);
	assert_int_equal(f->cold.message_bytes, 6000); /* 5000 never seen first-hand */
	harness_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_bucket),
		cmocka_unit_test(test_send_first_middle_last),
		cmocka_unit_test(test_send_variants),
		cmocka_unit_test(test_write_messages),
		cmocka_unit_test(test_write_messages_from_64_byte_copies),
		cmocka_unit_test(test_inferred_write_size_misses_a_lost_packet),
		cmocka_unit_test(test_read_request_without_its_reth),
		cmocka_unit_test(test_read_matched_to_responses),
		cmocka_unit_test(test_read_response_gap_and_replay),
		cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_psn_gap),
		cmocka_unit_test(test_single_duplicate),
		cmocka_unit_test(test_go_back_n),
		cmocka_unit_test(test_go_back_n_inside_a_message),
		cmocka_unit_test(test_psn_wraps_without_gap),
		cmocka_unit_test(test_nak_syndromes),
		cmocka_unit_test(test_responses_on_their_own_flow),
		cmocka_unit_test(test_ecn_and_dscp),
		cmocka_unit_test(test_opcode_counts),
		cmocka_unit_test(test_partial_messages),
		cmocka_unit_test(test_partial_messages_of_different_kinds),
		cmocka_unit_test(test_partial_read_responses),
		cmocka_unit_test(test_tcp_messages_split_by_idle_gaps),
		cmocka_unit_test(test_tcp_one_message_when_gaps_are_short),
		cmocka_unit_test(test_tcp_swapped_neighbours_are_not_retransmissions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
