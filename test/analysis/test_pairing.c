// SPDX-License-Identifier: MIT
/*
 * Pairing the two directions of a connection (analysis/pairing.c) on
 * hand-made flow sets: TCP by the swapped 5-tuple, RoCE by RDMA CM, by a
 * READ's responder QP, and by PSN ranges; the strongest evidence first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow_builder.h"

#define A "198.18.0.1"
#define B "198.18.0.2"
#define C "198.18.0.3"

/* Sorted, then paired, as a report does; the set's indices are looked up afterwards. */
static void pair(struct ct_flow_set *set, const struct ct_cm_event *cm, unsigned n_cm)
{
	ct_flow_set_sort(set);
	ct_flow_set_pair(set, cm, n_cm);
}

static void assert_paired(const struct ct_flow_set *set, const struct ct_flow_key *a,
			  const struct ct_flow_key *b, enum ct_pair_evidence why)
{
	size_t i = set_index(set, a), j = set_index(set, b);

	assert_int_equal(set->flows[i].reverse, (int64_t)j);
	assert_int_equal(set->flows[j].reverse, (int64_t)i);
	assert_int_equal(set->flows[i].reverse_evidence, why);
	assert_int_equal(set->flows[j].reverse_evidence, why);
}

static void assert_unpaired(const struct ct_flow_set *set, const struct ct_flow_key *a)
{
	size_t i = set_index(set, a);

	assert_int_equal(set->flows[i].reverse, -1);
	assert_int_equal(set->flows[i].reverse_evidence, CT_PAIR_NONE);
}

/* A RoCE flow that sent requests with PSNs req_lo..req_hi. */
static struct ct_flow_summary requester(const struct ct_flow_key *k, uint32_t req_lo,
					uint32_t req_hi)
{
	struct ct_flow_summary s = summary_of(k, 1 << 20, T0, T0 + 10 * MS);

	s.seen |= CT_SEEN_REQ_PSN;
	s.req_first_psn = req_lo;
	s.req_last_psn = req_hi;
	return s;
}

/* A RoCE flow that carried ACKs (or READ responses) for PSNs lo..hi, from first_ns to last_ns. */
static struct ct_flow_summary responder(const struct ct_flow_key *k, uint32_t lo, uint32_t hi,
					uint64_t first_ns, uint64_t last_ns)
{
	struct ct_flow_summary s = summary_of(k, 64 * 100, first_ns, last_ns);

	s.seen |= CT_SEEN_RESP_PSN;
	s.resp_first_psn = lo;
	s.resp_last_psn = hi;
	return s;
}

/*
 * A:40000 -> B:5201 and B:5201 -> A:40000 are one connection; A:40001 ->
 * B:5201 is another whose way back was not captured, and B:40000 -> A:5201
 * has the ports of the first the wrong way round: both stay alone.
 */
static void test_tcp_swapped_tuple(void **state)
{
	struct ct_flow_key fwd = tcp_key(A, B, 40000, 5201), back = tcp_key(B, A, 5201, 40000);
	struct ct_flow_key other = tcp_key(A, B, 40001, 5201), crossed = tcp_key(B, A, 40000, 5201);
	const struct ct_flow_key *keys[] = {&fwd, &other, &crossed, &back};
	struct ct_flow_set set;

	(void)state;
	ct_flow_set_init(&set);
	for (int i = 0; i < 4; i++) {
		struct ct_flow_summary s = summary_of(keys[i], 1000, T0, T0 + MS);

		set_add(&set, &s);
	}
	pair(&set, NULL, 0);
	assert_paired(&set, &fwd, &back, CT_PAIR_TCP);
	assert_unpaired(&set, &other);
	assert_unpaired(&set, &crossed);
	assert_string_equal(ct_pair_evidence_name(CT_PAIR_TCP), "tcp");
	ct_flow_set_free(&set);
}

/*
 * A -> B on QP 0x11 sent requests PSN 100..199; B -> A on QP 0x22 acked
 * 150..199, while A -> B was on: they are one connection. B -> A on QP 0x33
 * acked 5000..5100 (another connection's PSNs) and stays alone.
 */
static void test_roce_psn_ranges(void **state)
{
	struct ct_flow_key req = roce_key(A, B, 0x11), ack = roce_key(B, A, 0x22);
	struct ct_flow_key stray = roce_key(B, A, 0x33);
	struct ct_flow_summary s[3] = {
		requester(&req, 100, 199),
		responder(&ack, 150, 199, T0 + MS, T0 + 11 * MS),
		responder(&stray, 5000, 5100, T0 + MS, T0 + 11 * MS),
	};
	struct ct_flow_set set;

	(void)state;
	ct_flow_set_init(&set);
	for (int i = 0; i < 3; i++)
		set_add(&set, &s[i]);
	pair(&set, NULL, 0);
	assert_paired(&set, &req, &ack, CT_PAIR_PSN);
	assert_unpaired(&set, &stray);
	ct_flow_set_free(&set);
}

/*
 * PSNs are 24 bits and wrap: requests 0xfffff0..0x00000f hold the ACKs
 * 0xfffffa..0x000005. ACKs 0x000010..0x000020, just past the same range
 * (32 PSNs from its start, which holds 32), answer none of it: alone.
 */
static void test_roce_psn_wrap(void **state)
{
	struct ct_flow_key req = roce_key(A, B, 0x11), ack = roce_key(B, A, 0x22);
	struct ct_flow_key req2 = roce_key(A, C, 0x44), late = roce_key(C, A, 0x55);
	struct ct_flow_summary s[4] = {
		requester(&req, 0xfffff0, 0x00000f),
		responder(&ack, 0xfffffa, 0x000005, T0, T0 + 10 * MS),
		requester(&req2, 0xfffff0, 0x00000f),
		responder(&late, 0x000010, 0x000020, T0, T0 + 10 * MS),
	};
	struct ct_flow_set set;

	(void)state;
	ct_flow_set_init(&set);
	for (int i = 0; i < 4; i++)
		set_add(&set, &s[i]);
	pair(&set, NULL, 0);
	assert_paired(&set, &req, &ack, CT_PAIR_PSN);
	assert_unpaired(&set, &req2);
	assert_unpaired(&set, &late);
	ct_flow_set_free(&set);
}

/*
 * Two ACK flows B -> A both fall in A -> B's requests equally well: the
 * PSNs cannot tell which is the way back, so none is paired. And ACKs whose
 * PSNs fit but that ended before the requests began belong to another
 * connection.
 */
static void test_roce_psn_tie_and_time(void **state)
{
	struct ct_flow_key req = roce_key(A, B, 0x11), ack1 = roce_key(B, A, 0x22);
	struct ct_flow_key ack2 = roce_key(B, A, 0x23);
	struct ct_flow_key req_c = roce_key(A, C, 0x31), old = roce_key(C, A, 0x32);
	struct ct_flow_summary s[5] = {
		requester(&req, 100, 199),
		responder(&ack1, 120, 180, T0, T0 + 10 * MS),
		responder(&ack2, 120, 180, T0, T0 + 10 * MS),
		requester(&req_c, 100, 199), /* T0 .. T0 + 10 ms */
		responder(&old, 120, 180, T0 - 50 * MS, T0 - 40 * MS),
	};
	struct ct_flow_set set;

	(void)state;
	ct_flow_set_init(&set);
	for (int i = 0; i < 5; i++)
		set_add(&set, &s[i]);
	pair(&set, NULL, 0);
	assert_unpaired(&set, &req);
	assert_unpaired(&set, &ack1);
	assert_unpaired(&set, &ack2);
	assert_unpaired(&set, &req_c);
	assert_unpaired(&set, &old);
	ct_flow_set_free(&set);
}

/*
 * RDMA CM: A's REQ (communication ID 7) carries A's QPN 0x100, B's REP
 * answering it (remote ID 7) carries B's QPN 0x200. A -> B goes to QP
 * 0x200, B -> A to QP 0x100: paired by CM, although B -> A/0x300's ACKs
 * fit A -> B/0x200's PSNs better than B -> A/0x100's do (none): the CM's
 * word is stronger, and 0x300 stays alone.
 */
static void test_roce_cm_before_psn(void **state)
{
	struct ct_flow_key fwd = roce_key(A, B, 0x200), back = roce_key(B, A, 0x100);
	struct ct_flow_key decoy = roce_key(B, A, 0x300);
	struct ct_flow_summary s[3] = {
		requester(&fwd, 1000, 2000),
		summary_of(&back, 6400, T0, T0 + 10 * MS),
		responder(&decoy, 1000, 2000, T0, T0 + 10 * MS),
	};
	struct ct_cm_event cm[2] = {
		{.src = addr_of(A),
		 .dst = addr_of(B),
		 .local_comm_id = 7,
		 .local_qpn = 0x100,
		 .type = CT_CM_REQ},
		{.src = addr_of(B),
		 .dst = addr_of(A),
		 .local_comm_id = 9,
		 .remote_comm_id = 7,
		 .local_qpn = 0x200,
		 .type = CT_CM_REP},
	};
	struct ct_flow_set set;

	(void)state;
	ct_flow_set_init(&set);
	for (int i = 0; i < 3; i++)
		set_add(&set, &s[i]);
	pair(&set, cm, 2);
	assert_paired(&set, &fwd, &back, CT_PAIR_CM);
	assert_unpaired(&set, &decoy);
	ct_flow_set_free(&set);
}

/*
 * A REP that answers another REQ (remote ID 8, not 7) names no pair: with
 * no PSNs either, both flows stay alone.
 */
static void test_roce_cm_other_request(void **state)
{
	struct ct_flow_key fwd = roce_key(A, B, 0x200), back = roce_key(B, A, 0x100);
	struct ct_flow_summary s[2] = {
		summary_of(&fwd, 1 << 20, T0, T0 + 10 * MS),
		summary_of(&back, 6400, T0, T0 + 10 * MS),
	};
	struct ct_cm_event cm[2] = {
		{.src = addr_of(A),
		 .dst = addr_of(B),
		 .local_comm_id = 7,
		 .local_qpn = 0x100,
		 .type = CT_CM_REQ},
		{.src = addr_of(B),
		 .dst = addr_of(A),
		 .local_comm_id = 9,
		 .remote_comm_id = 8,
		 .local_qpn = 0x200,
		 .type = CT_CM_REP},
	};
	struct ct_flow_set set;

	(void)state;
	ct_flow_set_init(&set);
	for (int i = 0; i < 2; i++)
		set_add(&set, &s[i]);
	pair(&set, cm, 2);
	assert_unpaired(&set, &fwd);
	assert_unpaired(&set, &back);
	ct_flow_set_free(&set);
}

/*
 * READ: A -> B/0x10 carried a READ request that was answered on B -> A/0x20
 * (the engine noted 0x20 as the request's peer QP): they pair by READ.
 */
static void test_roce_read_peer(void **state)
{
	struct ct_flow_key req = roce_key(A, B, 0x10), resp = roce_key(B, A, 0x20);
	struct ct_flow_key other = roce_key(B, A, 0x21);
	struct ct_flow_summary s[3] = {
		summary_of(&req, 4096, T0, T0 + MS),
		summary_of(&resp, 1 << 20, T0, T0 + MS),
		summary_of(&other, 1 << 20, T0, T0 + MS),
	};
	struct ct_flow_set set;

	(void)state;
	s[0].seen |= CT_SEEN_READ_PEER;
	s[0].read_peer_qpn = 0x20;
	ct_flow_set_init(&set);
	for (int i = 0; i < 3; i++)
		set_add(&set, &s[i]);
	pair(&set, NULL, 0);
	assert_paired(&set, &req, &resp, CT_PAIR_READ);
	assert_unpaired(&set, &other);
	assert_string_equal(ct_pair_evidence_name(CT_PAIR_READ), "read");
	ct_flow_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_swapped_tuple),
		cmocka_unit_test(test_roce_psn_ranges),
		cmocka_unit_test(test_roce_psn_wrap),
		cmocka_unit_test(test_roce_psn_tie_and_time),
		cmocka_unit_test(test_roce_cm_before_psn),
		cmocka_unit_test(test_roce_cm_other_request),
		cmocka_unit_test(test_roce_read_peer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
