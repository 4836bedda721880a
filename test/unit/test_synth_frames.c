// SPDX-License-Identifier: MIT
/*
 * synth's frame writer (profiles/synth.c), frame by frame: a bundled
 * profile rendered for one iteration with two VLAN tags, noise (storage
 * TCP, ECN marks with CNPs, a retransmission) and a PFC storm, and every
 * frame checked against the rules synth writes by (the comments in
 * profiles/synth.c), each worked out here:
 *
 *   Ethernet  02:00:00:00:HH:HH both ways (locally administered, the NIC's
 *             index), an S-tag 0x88a8 TCI 3 << 13 | 100 = 0x6064 outside a
 *             C-tag 0x8100 TCI 0x6065, then IPv4; PFC: 01:80:c2:00:00:01,
 *             0x8808, opcode 0x0101, untagged, 60 bytes
 *   IPv4      0x45, DSCP 26 (48 for a CNP), DF, TTL 64, total length the
 *             frame less 14 + 8 (a frame under 60 bytes is padded on the
 *             wire, so only frames above 60 are held to it)
 *   RoCE      UDP to 4791, length the IP's less 20; the BTH's opcode one of
 *             WRITE First/Middle/Last-Imm/Only/Only-Imm, ACK, CNP; P_Key
 *             0xffff; AckReq exactly on a message's end (Last-Imm, Only,
 *             Only-Imm); RETH's R_Key 0x1000 + the connection and ImmDt the
 *             connection, so a message's ImmDt (Last-Imm, Only-Imm) is its
 *             first packet's R_Key - 0x1000 on the same destination QP;
 *             AETH syndrome 0x1f (ACK) or 0x60 (NAK, PSN sequence error)
 *   TCP       data offset 5 words
 *
 *   test_synth_frames PROFILE.json
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "profile.h"
#include "synth.h"

static const char *profile_path;

#define MAX_QPS 4096

struct seen {
	unsigned long frames, pfc, tcp, by_opcode[256], reth_imm;
	/* per destination QP: the connection its last RETH named (R_Key - 0x1000) */
	uint32_t qp[MAX_QPS], conn[MAX_QPS];
	unsigned n_qps;
};

static uint32_t *conn_of(struct seen *s, uint32_t qp)
{
	for (unsigned i = 0; i < s->n_qps; i++)
		if (s->qp[i] == qp)
			return &s->conn[i];
	return NULL;
}

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static void check_roce(struct seen *s, const uint8_t *ip, const uint8_t *udp, uint32_t cap)
{
	const uint8_t *bth = udp + 8;
	uint8_t op = bth[0];
	int ends = op == 0x09 || op == 0x0a || op == 0x0b;

	assert_int_equal(get16(udp + 2), 4791);
	assert_int_equal(get16(udp + 4), get16(ip + 2) - 20);
	assert_true(op == 0x06 || op == 0x07 || op == 0x09 || op == 0x0a || op == 0x0b ||
		    op == 0x11 || op == 0x81);
	assert_int_equal(ip[1] >> 2, op == 0x81 ? 48 : 26);
	assert_int_equal(get16(bth + 2), 0xffff);
	if (op != 0x11 && op != 0x81)
		assert_int_equal(bth[8] >> 7, ends);
	if ((op == 0x06 || op == 0x0a || op == 0x0b) && cap >= 22 + 20 + 8 + 12 + 16) {
		uint32_t rkey = get32(bth + 12 + 8), qp = get32(bth + 4) & 0xffffff, *c;

		assert_true(rkey >= 0x1000);
		c = conn_of(s, qp);
		if (!c) {
			assert_true(s->n_qps < MAX_QPS);
			s->qp[s->n_qps] = qp;
			c = &s->conn[s->n_qps++];
		}
		*c = rkey - 0x1000;
	}
	/* a message's immediate data names the connection its first packet's RETH did */
	if ((op == 0x09 || op == 0x0b) && cap >= 22 + 20 + 8 + 12 + 20) {
		const uint8_t *imm = bth + 12 + (op == 0x0b ? 16 : 0);
		uint32_t *c = conn_of(s, get32(bth + 4) & 0xffffff);

		assert_non_null(c);
		assert_int_equal(get32(imm), *c);
		s->reth_imm++;
	}
	if (op == 0x11)
		assert_true(bth[12] == 0x1f || bth[12] == 0x60);
	s->by_opcode[op]++;
}

static int check_frame(void *ctx, uint64_t ts_ns, const uint8_t *f, uint32_t cap_len,
		       uint32_t wire_len)
{
	static const uint8_t pfc_dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
	struct seen *s = ctx;
	const uint8_t *ip = f + 22;

	(void)ts_ns;
	s->frames++;
	assert_true(cap_len >= 60 && cap_len <= wire_len);
	if (!memcmp(f, pfc_dst, 6)) {
		assert_int_equal(get16(f + 12), 0x8808);
		assert_int_equal(get16(f + 14), 0x0101);
		assert_int_equal(wire_len, 60);
		s->pfc++;
		return 0;
	}
	assert_int_equal(f[0], 0x02);
	assert_int_equal(f[6], 0x02);
	assert_int_equal(f[1] | f[2] | f[3] | f[7] | f[8] | f[9], 0);
	assert_int_equal(get16(f + 12), 0x88a8);
	assert_int_equal(get16(f + 14), 0x6064);
	assert_int_equal(get16(f + 16), 0x8100);
	assert_int_equal(get16(f + 18), 0x6065);
	assert_int_equal(get16(f + 20), 0x0800);
	assert_int_equal(ip[0], 0x45);
	assert_int_equal(get16(ip + 6), 0x4000);
	assert_int_equal(ip[8], 64);
	if (wire_len > 60)
		assert_int_equal(get16(ip + 2), wire_len - 22);
	if (ip[9] == 6) {
		assert_int_equal(ip[20 + 12], 5 << 4);
		s->tcp++;
		return 0;
	}
	assert_int_equal(ip[9], 17);
	check_roce(s, ip, ip + 20, cap_len);
	return 0;
}

static void test_frames(void **state)
{
	struct ct_profile p;
	struct ct_prediction pred;
	struct ct_synth_config cfg;
	static struct seen s;
	char err[512];

	(void)state;
	assert_int_equal(ct_profile_load(profile_path, &p, err, sizeof(err)), 0);
	assert_int_equal(ct_predict(&p, &pred), 0);
	ct_synth_config_default(&cfg);
	cfg.iterations = 1;
	cfg.size_scale = 1e-3;
	cfg.vlan_tags = 2;
	cfg.noise = 1;
	cfg.inject.pfc_priority = 3;
	cfg.inject.pfc_per_s = 1000;
	assert_int_equal(ct_synth_run(&p, &pred, &cfg, check_frame, &s, NULL), 0);
	/* every kind of frame the rules name was written and checked */
	assert_true(s.frames > 1000);
	assert_true(s.pfc > 0);
	assert_true(s.tcp > 0);
	assert_true(s.by_opcode[0x0b] + s.by_opcode[0x06] > 0);
	assert_true(s.by_opcode[0x11] > 0);
	assert_true(s.by_opcode[0x81] > 0);
	assert_true(s.reth_imm > 0);
	ct_prediction_free(&pred);
	ct_profile_free(&p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_synth_frames PROFILE.json\n");
		return 2;
	}
	profile_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
