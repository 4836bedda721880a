// SPDX-License-Identifier: MIT
/*
 * The packet parser against frames built byte by byte: every RoCE opcode,
 * tags, IPv4/IPv6 variants, mirror encapsulation, TCP, MAC control frames,
 * and truncation at every byte. Each frame is parsed from a heap copy of
 * exactly the captured length, so a sanitizer build catches any over-read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/parse.h>
#include <commtap/roce_opcode.h>

#include "frame_builder.h"
#include "roce_frame.h"

#define ETH_LEN	 14
#define VLAN_LEN 4
#define IPV4_LEN 20
#define IPV6_LEN 40
#define UDP_LEN	 8
#define BTH_LEN	 12
#define ICRC_LEN 4

static const uint8_t ip_a[4] = {10, 0, 0, 1};
static const uint8_t ip_b[4] = {10, 0, 0, 2};
static const uint8_t ip_mirror_src[4] = {192, 168, 50, 1};
static const uint8_t ip_collector[4] = {192, 168, 50, 2};

/* Parse the first cap bytes of frame from a heap copy of exactly cap bytes. */
static enum ct_pkt_kind parse_exact(const uint8_t *frame, size_t cap, size_t orig,
				    struct ct_pkt *pkt)
{
	uint8_t *copy = malloc(cap ? cap : 1);
	enum ct_pkt_kind kind;

	assert_non_null(copy);
	memcpy(copy, frame, cap);
	if (!cap) {
		free(copy);
		copy = NULL;
	}
	memset(pkt, 0xa5, sizeof(*pkt)); /* nothing may be left from before */
	kind = ct_parse(copy, (uint32_t)cap, (uint32_t)orig, pkt);
	assert_int_equal(kind, pkt->kind);
	/* payload points into the copy (NULL for a copy cut in its headers): compare offsets */
	if (kind == CT_PKT_ROCE && copy && pkt->roce.payload)
		pkt->roce.payload = frame + (pkt->roce.payload - copy);
	free(copy);
	return kind;
}

static void assert_addr_v4(const struct ct_addr *a, const uint8_t v4[4])
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	assert_true(ct_addr_is_v4(a));
	assert_memory_equal(a->b, mapped, 12);
	assert_memory_equal(a->b + 12, v4, 4);
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static struct roce_frame write_first(void)
{
	return (struct roce_frame){
		.src4 = {10, 0, 0, 1},
		.dst4 = {10, 0, 0, 2},
		.opcode = CT_TR_RC | CT_OP_WRITE_FIRST,
		.dqpn = 0x00abcd,
		.psn = 0x123456,
		.va = 0x00007f0012345000ull,
		.rkey = 0x00c0ffee,
		.dma_len = 65536,
		.payload_len = 256,
	};
}

/* ---- the opcode table ---- */

static unsigned ext_bytes(uint16_t ext)
{
	static const struct {
		uint16_t bit;
		unsigned len;
	} sizes[] = {
		{CT_EXT_DETH, 8}, {CT_EXT_XRCETH, 4},	    {CT_EXT_RETH, 16},
		{CT_EXT_AETH, 4}, {CT_EXT_ATOMICACKETH, 8}, {CT_EXT_IMMDT, 4},
		{CT_EXT_IETH, 4}, {CT_EXT_ATOMICETH, 28},   {CT_EXT_CNP, 16},
	};
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (ext & sizes[i].bit)
			n += sizes[i].len;
	return n;
}

static void test_opcode_table_matches_ibta(void **state)
{
	unsigned valid = 0;

	(void)state;
	for (unsigned op = 0; op < 256; op++) {
		const struct ct_opcode_info *info = &ct_opcode_table[op];

		if (!info->valid)
			continue;
		valid++;
		assert_int_equal(info->ext_len, ext_bytes(info->ext));
	}
	/* RC 23, UC 12, UD 2, CNP 1, XRC 23; RD is treated as reserved */
	assert_int_equal(valid, 61);
	assert_int_equal(ct_opcode_table[0x06].ext_len, 16); /* RC WRITE FIRST: RETH */
	assert_int_equal(ct_opcode_table[0x0b].ext_len, 20); /* RC WRITE ONLY IMM: RETH ImmDt */
	assert_int_equal(ct_opcode_table[0x0e].ext_len, 0);  /* RC READ RESP MIDDLE */
	assert_int_equal(ct_opcode_table[0x12].ext_len, 12); /* RC ATOMIC ACK: AETH AtomicAck */
	assert_int_equal(ct_opcode_table[0x13].ext_len, 28); /* RC CMP SWAP: AtomicETH */
	assert_int_equal(ct_opcode_table[0x65].ext_len, 12); /* UD SEND ONLY IMM: DETH ImmDt */
	assert_int_equal(ct_opcode_table[0xa6].ext_len, 20); /* XRC WRITE FIRST: XRCETH RETH */
	assert_int_equal(ct_opcode_table[0xad].ext_len, 4);  /* XRC READ RESP FIRST: AETH */
	assert_int_equal(ct_opcode_table[0x81].ext_len, 16); /* CNP */
	assert_int_equal(ct_opcode_table[0x11].response, 1); /* ACK travels back */
	assert_int_equal(ct_opcode_table[0x0c].response, 0); /* READ request travels forward */
	assert_false(ct_opcode_table[0x40].valid);	     /* RD SEND FIRST */
	assert_false(ct_opcode_table[0x15].valid);	     /* reserved in RC */
	assert_false(ct_opcode_table[0x2c].valid);	     /* UC has no READ */
}

static void test_opcode_names(void **state)
{
	(void)state;
	assert_string_equal(ct_opcode_name(0x06), "RC_WRITE_FIRST");
	assert_string_equal(ct_opcode_name(0x64), "UD_SEND_ONLY");
	assert_string_equal(ct_opcode_name(0x81), "CNP");
	assert_string_equal(ct_opcode_name(0xac), "XRC_READ_REQUEST");
	assert_string_equal(ct_opcode_name(0x2a), "UC_WRITE_ONLY");
	assert_null(ct_opcode_name(0x15));
	assert_null(ct_opcode_name(0x40));
	assert_null(ct_opcode_name(0xff));
	/* every valid opcode has its own name */
	for (unsigned a = 0; a < 256; a++) {
		if (!ct_opcode_table[a].valid)
			continue;
		assert_non_null(ct_opcode_name((uint8_t)a));
		for (unsigned b = a + 1; b < 256; b++)
			if (ct_opcode_table[b].valid)
				assert_string_not_equal(ct_opcode_name((uint8_t)a),
							ct_opcode_name((uint8_t)b));
	}
}

static void test_malformed_names(void **state)
{
	(void)state;
	for (int a = 0; a < CT_MAL_COUNT; a++) {
		assert_non_null(ct_malformed_name((enum ct_malformed)a));
		assert_true(strlen(ct_malformed_name((enum ct_malformed)a)) > 0);
		for (int b = a + 1; b < CT_MAL_COUNT; b++)
			assert_string_not_equal(ct_malformed_name((enum ct_malformed)a),
						ct_malformed_name((enum ct_malformed)b));
	}
	assert_string_equal(ct_malformed_name(CT_MAL_IPV4_TRUNCATED), "ipv4_truncated");
	assert_string_equal(ct_malformed_name(CT_MAL_BTH_TRUNCATED), "bth_truncated");
	assert_string_equal(ct_malformed_name(CT_MAL_COUNT), "unknown");
}

/* ---- every opcode ---- */

static struct roce_frame opcode_frame(uint8_t op, uint32_t data_len)
{
	return (struct roce_frame){
		.src4 = {10, 1, 2, 3},
		.dst4 = {10, 4, 5, 6},
		.sport = (uint16_t)(0xc000 | op),
		.opcode = op,
		.pad = op & 3,
		.se = op & 1,
		.ackreq = (op >> 1) & 1,
		.dqpn = 0x100000u | op,
		.psn = (op * 0x010101u) & 0xffffff,
		.va = 0x1122334455667700ull | op,
		.rkey = 0xdead0000u | op,
		.dma_len = 0x10000u + op,
		.syndrome = (uint8_t)(0x1f ^ (op & 0x0f)),
		.msn = 0xabc000u | op,
		.imm = 0xcafe0000u | op,
		.qkey = 0x80010000u,
		.sqpn = 0x0a0000u | op,
		.srqn = 0x000777u,
		.payload_len = data_len,
	};
}

static void test_every_valid_opcode(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	unsigned checked = 0;

	(void)state;
	for (unsigned code = 0; code < 256; code++) {
		const struct ct_opcode_info *info = &ct_opcode_table[code];
		const uint8_t op = (uint8_t)code;
		const uint32_t data_len = 100 + code;
		struct roce_frame rf = opcode_frame(op, data_len);
		struct ct_pkt pkt;
		size_t len;
		uint16_t udp_len;

		if (!info->valid)
			continue;
		len = roce_frame_build(frame, sizeof(frame), &rf);
		udp_len = rd16(frame + ETH_LEN + IPV4_LEN + 4);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.malformed, CT_MAL_NONE);
		assert_int_equal(pkt.roce.opcode, op);
		assert_int_equal(pkt.roce.dqpn, rf.dqpn);
		assert_int_equal(pkt.roce.psn, rf.psn);
		assert_int_equal(pkt.roce.pad, rf.pad);
		assert_int_equal(pkt.roce.se, rf.se);
		assert_int_equal(pkt.roce.ackreq, rf.ackreq);
		assert_int_equal(pkt.roce.pkey, 0xffff);
		assert_int_equal(pkt.roce.ext, info->ext);
		assert_int_equal(pkt.udp_sport, rf.sport);
		assert_int_equal(pkt.ip_proto, 17);
		assert_int_equal(pkt.wire_len, len);
		assert_addr_v4(&pkt.src, rf.src4);
		assert_addr_v4(&pkt.dst, rf.dst4);
		if (info->ext & CT_EXT_RETH) {
			assert_int_equal(pkt.roce.reth_va, rf.va);
			assert_int_equal(pkt.roce.reth_rkey, rf.rkey);
			assert_int_equal(pkt.roce.reth_len, rf.dma_len);
		} else {
			assert_int_equal(pkt.roce.reth_len, 0);
		}
		if (info->ext & CT_EXT_ATOMICETH) {
			assert_int_equal(pkt.roce.reth_va, rf.va);
			assert_int_equal(pkt.roce.reth_rkey, rf.rkey);
		}
		if (info->ext & CT_EXT_AETH) {
			assert_int_equal(pkt.roce.aeth_syndrome, rf.syndrome);
			assert_int_equal(pkt.roce.aeth_msn, rf.msn);
		}
		if (info->ext & CT_EXT_DETH)
			assert_int_equal(pkt.roce.deth_sqpn, rf.sqpn);
		if (info->ext & (CT_EXT_IMMDT | CT_EXT_IETH))
			assert_int_equal(pkt.roce.imm, rf.imm);
		assert_int_equal(pkt.roce.payload_len,
				 udp_len - UDP_LEN - BTH_LEN - info->ext_len - rf.pad - ICRC_LEN);
		assert_int_equal(pkt.roce.payload_len, data_len);
		assert_int_equal(pkt.roce.payload_cap, data_len);
		assert_ptr_equal(pkt.roce.payload,
				 frame + ETH_LEN + IPV4_LEN + UDP_LEN + BTH_LEN + info->ext_len);
		checked++;
	}
	assert_int_equal(checked, 61);
}

static void test_reserved_opcodes(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	unsigned checked = 0;

	(void)state;
	for (unsigned code = 0; code < 256; code++) {
		struct roce_frame rf = opcode_frame((uint8_t)code, 64);
		struct ct_pkt pkt;
		size_t len;

		if (ct_opcode_table[code].valid)
			continue;
		len = roce_frame_build(frame, sizeof(frame), &rf);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
		assert_int_equal(pkt.malformed, CT_MAL_BTH_BAD_OPCODE);
		checked++;
	}
	assert_int_equal(checked, 256 - 61);
}

static void test_bth_transport_version(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len = roce_frame_build(frame, sizeof(frame), &rf);
	size_t bth = roce_frame_bth_offset(&rf);

	(void)state;
	frame[bth + 1] |= 0x01; /* TVer 1 */
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_BTH_BAD_OPCODE);
}

static void test_cnp(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = {
		.src4 = {10, 0, 0, 2},
		.dst4 = {10, 0, 0, 1},
		.opcode = CT_OPCODE_CNP,
		.dqpn = 0x000011,
		.dscp = 48,
	};
	struct ct_pkt pkt;
	size_t len = roce_frame_build(frame, sizeof(frame), &rf);

	(void)state;
	assert_int_equal(len, ETH_LEN + IPV4_LEN + UDP_LEN + BTH_LEN + 16 + ICRC_LEN);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.roce.opcode, 0x81);
	assert_int_equal(pkt.roce.ext, CT_EXT_CNP);
	assert_int_equal(pkt.roce.dqpn, 0x11);
	assert_int_equal(pkt.roce.payload_len, 0);
	assert_int_equal(pkt.dscp, 48);
}

/* ---- lengths ---- */

static void test_udp_length_beyond_ip_payload(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len = roce_frame_build(frame, sizeof(frame), &rf);
	size_t udp = ETH_LEN + IPV4_LEN;
	uint16_t udp_len = rd16(frame + udp + 4);

	(void)state;
	frame[udp + 4] = (uint8_t)((udp_len + 1) >> 8);
	frame[udp + 5] = (uint8_t)(udp_len + 1);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_UDP_BAD_LENGTH);
	/* shorter than its own header */
	frame[udp + 4] = 0;
	frame[udp + 5] = 7;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_UDP_BAD_LENGTH);
}

static void test_udp_length_too_short_for_roce_headers(void **state)
{
	uint8_t frame[128];
	struct frame_builder fb;
	const struct fb_ipv4 ip = {.src = {10, 0, 0, 1}, .dst = {10, 0, 0, 2}, .proto = 17};
	const struct fb_bth bth = {.opcode = CT_TR_RC | CT_OP_WRITE_FIRST, .dqpn = 5};
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_IPV4);
	fb_ipv4(&fb, &ip);
	fb_udp(&fb, 1000, CT_ROCE_UDP_PORT);
	fb_bth(&fb, &bth);
	fb_fill(&fb, 0, 16); /* a RETH, but no ICRC: 4 bytes short */
	len = fb_finish(&fb);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_ROCE_BAD_LENGTH);
}

static void test_other_udp_port(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len = roce_frame_build(frame, sizeof(frame), &rf);

	(void)state;
	frame[ETH_LEN + IPV4_LEN + 2] = 0x00; /* destination port 53 */
	frame[ETH_LEN + IPV4_LEN + 3] = 53;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_OTHER_IP);
	assert_int_equal(pkt.ip_proto, 17);
	assert_int_equal(pkt.wire_len, len);
}

/* A mirror that keeps only the headers: sizes still come from the L3 lengths. */
static void test_header_truncated_copy(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	const struct roce_frame rf = {
		.src4 = {10, 0, 0, 1},
		.dst4 = {10, 0, 0, 2},
		.opcode = CT_TR_RC | CT_OP_WRITE_MIDDLE,
		.dqpn = 0x42,
		.psn = 77,
		.payload_len = 4000,
	};
	struct ct_pkt pkt;
	size_t len = roce_frame_build(frame, sizeof(frame), &rf);

	(void)state;
	assert_int_equal(len, ETH_LEN + IPV4_LEN + UDP_LEN + BTH_LEN + 4000 + ICRC_LEN);
	assert_int_equal(parse_exact(frame, 60, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.wire_len, len);
	assert_int_equal(pkt.roce.payload_len, 4000);
	assert_int_equal(pkt.roce.payload_cap, 60 - (ETH_LEN + IPV4_LEN + UDP_LEN + BTH_LEN));
	assert_int_equal(pkt.roce.psn, 77);
	assert_int_equal(pkt.roce.dqpn, 0x42);
}

/* ---- VLAN tags ---- */

static void test_vlan_tags(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	static const struct roce_vlan_tag tags[4] = {
		{CT_ETHERTYPE_QINQ_OLD, 1, 11},
		{CT_ETHERTYPE_QINQ, 2, 22},
		{CT_ETHERTYPE_VLAN, 6, 333},
		{CT_ETHERTYPE_VLAN, 3, 4094},
	};

	(void)state;
	for (unsigned n = 0; n <= 4; n++) {
		struct roce_frame rf = write_first();
		struct ct_pkt pkt;
		size_t len;
		uint16_t ip_total;

		rf.n_vlan = n;
		/* the innermost tag is always tags[3] */
		for (unsigned i = 0; i < n; i++)
			rf.vlan[i] = tags[4 - n + i];
		len = roce_frame_build(frame, sizeof(frame), &rf);
		ip_total = rd16(frame + ETH_LEN + VLAN_LEN * n + 2);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.vlan_count, n);
		assert_int_equal(pkt.wire_len, ETH_LEN + VLAN_LEN * n + ip_total);
		assert_int_equal(pkt.wire_len, len);
		assert_int_equal(pkt.roce.reth_len, rf.dma_len);
		if (n) {
			assert_int_equal(pkt.pcp, 3);
			assert_int_equal(pkt.vlan_id, 4094);
		} else {
			assert_int_equal(pkt.pcp, 0xff);
			assert_int_equal(pkt.vlan_id, 0);
		}
	}
}

static void test_single_vlan_pcp(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	rf.n_vlan = 1;
	rf.vlan[0] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 5, 100};
	len = roce_frame_build(frame, sizeof(frame), &rf);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.pcp, 5);
	assert_int_equal(pkt.vlan_id, 100);
	assert_int_equal(pkt.vlan_count, 1);
	assert_int_equal(pkt.wire_len, len);
}

static void test_vlan_too_deep(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	rf.n_vlan = 5;
	for (unsigned i = 0; i < 5; i++)
		rf.vlan[i] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, (uint8_t)i, (uint16_t)i};
	len = roce_frame_build(frame, sizeof(frame), &rf);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_VLAN_TOO_DEEP);
}

/* ---- IPv4 ---- */

static void test_ipv4_options(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];

	(void)state;
	for (uint8_t opt = 4; opt <= 40; opt += 12) {
		struct roce_frame rf = write_first();
		struct ct_pkt pkt;
		size_t len;

		rf.ipv4_options_len = opt;
		len = roce_frame_build(frame, sizeof(frame), &rf);
		assert_int_equal(frame[ETH_LEN] & 0x0f, (IPV4_LEN + opt) / 4);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.wire_len, len);
		assert_int_equal(pkt.roce.dqpn, rf.dqpn);
		assert_int_equal(pkt.roce.reth_len, rf.dma_len);
		assert_int_equal(pkt.roce.payload_len, rf.payload_len);
		assert_addr_v4(&pkt.src, rf.src4);
		assert_addr_v4(&pkt.dst, rf.dst4);
		/* options cut off by the capture */
		assert_int_equal(parse_exact(frame, ETH_LEN + IPV4_LEN + opt - 1, len, &pkt),
				 CT_PKT_MALFORMED);
		assert_int_equal(pkt.malformed, CT_MAL_IPV4_TRUNCATED);
	}
}

static void test_ipv4_bad_headers(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len = roce_frame_build(frame, sizeof(frame), &rf);
	uint8_t *ip = frame + ETH_LEN;

	(void)state;
	ip[0] = 0x55; /* version 5 */
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_IPV4_BAD_HEADER);
	ip[0] = 0x44; /* IHL 16 bytes */
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_IPV4_BAD_HEADER);
	ip[0] = 0x45;
	ip[2] = 0;
	ip[3] = 19; /* total length shorter than the header */
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_IPV4_BAD_LENGTH);
}

static void test_ipv4_fragments(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len = roce_frame_build(frame, sizeof(frame), &rf);
	uint8_t *ip = frame + ETH_LEN;

	(void)state;
	/* the first fragment (MF, offset 0) carries the headers */
	ip[6] = 0x20;
	ip[7] = 0x00;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
	/* a later fragment has no UDP header: its bytes are not a BTH */
	ip[6] = 0x00;
	ip[7] = 185;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_OTHER_IP);
	assert_int_equal(pkt.ip_proto, 17);
	assert_int_equal(pkt.ip_version, 4);
	assert_int_equal(pkt.wire_len, len);
	assert_addr_v4(&pkt.src, rf.src4);
}

static void test_ecn_dscp(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];

	(void)state;
	for (uint8_t ecn = 0; ecn < 4; ecn++) {
		struct roce_frame rf = write_first();
		struct ct_pkt pkt;
		size_t len;

		rf.dscp = (uint8_t)(26 + ecn * 5);
		rf.ecn = ecn;
		len = roce_frame_build(frame, sizeof(frame), &rf);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.dscp, 26 + ecn * 5);
		assert_int_equal(pkt.ecn, ecn);
		assert_int_equal(pkt.ip_version, 4);

		rf.ipv6 = 1;
		len = roce_frame_build(frame, sizeof(frame), &rf);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.dscp, 26 + ecn * 5);
		assert_int_equal(pkt.ecn, ecn);
		assert_int_equal(pkt.ip_version, 6);
	}
}

/* ---- IPv6 ---- */

static const uint8_t v6_src[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0,    0,
				   0,	 0,    0,    0,	   0, 0, 0x0a, 0x01};
static const uint8_t v6_dst[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0,    1,
				   0,	 0,    0,    0,	   0, 0, 0x0b, 0x02};

/* Ethernet, IPv6 with the given extension headers, and a RoCE SEND ONLY. */
static size_t ipv6_roce_frame(uint8_t *buf, size_t size, const struct fb_ipv6_ext *ext,
			      unsigned n_ext, const struct roce_frame *rf)
{
	struct frame_builder fb;
	struct fb_ipv6 ip = {.proto = 17, .dscp = 26, .ecn = 2, .flow_label = 0xbeef5};

	memcpy(ip.src, v6_src, 16);
	memcpy(ip.dst, v6_dst, 16);
	ip.n_ext = n_ext;
	memcpy(ip.ext, ext, n_ext * sizeof(*ext));
	fb_init(&fb, buf, size);
	fb_eth(&fb, CT_ETHERTYPE_IPV6);
	fb_ipv6(&fb, &ip);
	roce_frame_udp_on(&fb, rf);
	return fb_finish(&fb);
}

static void test_ipv6_extension_headers(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	static const struct fb_ipv6_ext ext[4] = {
		{.type = FB_IPV6_HOP_BY_HOP, .len8 = 0},     /* 8 bytes */
		{.type = FB_IPV6_ROUTING, .len8 = 2},	     /* 24 bytes */
		{.type = FB_IPV6_FRAGMENT, .more_frags = 1}, /* 8 bytes, first fragment */
		{.type = FB_IPV6_DEST_OPTS, .len8 = 1},	     /* 16 bytes */
	};
	const struct roce_frame rf = {
		.opcode = CT_TR_RC | CT_OP_SEND_ONLY_IMM,
		.dqpn = 0x3456,
		.psn = 9,
		.imm = 0x11223344,
		.payload_len = 1000,
	};
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	for (unsigned n = 0; n <= 4; n++) {
		unsigned ext_bytes_total = 0;

		for (unsigned i = 0; i < n; i++)
			ext_bytes_total +=
				ext[i].type == FB_IPV6_FRAGMENT ? 8 : 8 + 8 * ext[i].len8;
		len = ipv6_roce_frame(frame, sizeof(frame), ext, n, &rf);
		assert_int_equal(len, ETH_LEN + IPV6_LEN + ext_bytes_total + UDP_LEN + BTH_LEN + 4 +
					      1000 + ICRC_LEN);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.ip_version, 6);
		assert_memory_equal(pkt.src.b, v6_src, 16);
		assert_memory_equal(pkt.dst.b, v6_dst, 16);
		assert_false(ct_addr_is_v4(&pkt.src));
		assert_int_equal(pkt.dscp, 26);
		assert_int_equal(pkt.ecn, 2);
		assert_int_equal(pkt.ip_proto, 17);
		assert_int_equal(pkt.wire_len, len);
		assert_int_equal(pkt.roce.opcode, rf.opcode);
		assert_int_equal(pkt.roce.dqpn, 0x3456);
		assert_int_equal(pkt.roce.imm, 0x11223344);
		assert_int_equal(pkt.roce.payload_len, 1000);
	}
}

static void test_ipv6_later_fragment(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	const struct fb_ipv6_ext ext[1] = {
		{.type = FB_IPV6_FRAGMENT, .frag_off = 100, .more_frags = 1},
	};
	const struct roce_frame rf = {.opcode = CT_TR_RC | CT_OP_SEND_ONLY, .payload_len = 64};
	struct ct_pkt pkt;
	size_t len = ipv6_roce_frame(frame, sizeof(frame), ext, 1, &rf);

	(void)state;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_OTHER_IP);
	assert_int_equal(pkt.ip_proto, 17);
	assert_int_equal(pkt.wire_len, len);
}

static void test_ipv6_too_many_extension_headers(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct fb_ipv6_ext ext[FB_MAX_IPV6_EXT];
	const struct roce_frame rf = {.opcode = CT_TR_RC | CT_OP_SEND_ONLY, .payload_len = 64};
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	for (unsigned i = 0; i < FB_MAX_IPV6_EXT; i++)
		ext[i] = (struct fb_ipv6_ext){.type = FB_IPV6_DEST_OPTS};
	/* CT_MAX_IPV6_EXT headers are fine */
	len = ipv6_roce_frame(frame, sizeof(frame), ext, CT_MAX_IPV6_EXT, &rf);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
	/* one more is not: build 8 and point the last one at another header */
	assert_int_equal(CT_MAX_IPV6_EXT, FB_MAX_IPV6_EXT);
	frame[len - (UDP_LEN + BTH_LEN + 64 + ICRC_LEN) - 8] = FB_IPV6_DEST_OPTS;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_IPV6_EXT_TOO_MANY);
}

/* ---- TCP ---- */

static size_t tcp_frame(uint8_t *buf, size_t size, int ipv6, uint8_t options_len, uint32_t payload)
{
	struct frame_builder fb;
	const struct fb_tcp tcp = {
		.sport = 43210,
		.dport = 29500,
		.seq = 0xfffffff0u,
		.ack = 0x01020304u,
		.flags = 0x18,
		.options_len = options_len,
	};

	fb_init(&fb, buf, size);
	if (ipv6) {
		struct fb_ipv6 ip = {.proto = 6, .dscp = 10};

		memcpy(ip.src, v6_src, 16);
		memcpy(ip.dst, v6_dst, 16);
		fb_eth(&fb, CT_ETHERTYPE_IPV6);
		fb_ipv6(&fb, &ip);
	} else {
		const struct fb_ipv4 ip = {
			.src = {10, 0, 0, 1}, .dst = {10, 0, 0, 2}, .proto = 6, .dscp = 10};

		fb_eth(&fb, CT_ETHERTYPE_IPV4);
		fb_ipv4(&fb, &ip);
	}
	fb_tcp(&fb, &tcp);
	fb_payload(&fb, payload);
	return fb_finish(&fb);
}

static void test_tcp_with_options(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];

	(void)state;
	for (uint8_t opt = 0; opt <= 40; opt += 4) {
		struct ct_pkt pkt;
		size_t len = tcp_frame(frame, sizeof(frame), 0, opt, 1448);

		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_TCP);
		assert_int_equal(pkt.tcp.sport, 43210);
		assert_int_equal(pkt.tcp.dport, 29500);
		assert_int_equal(pkt.tcp.seq, 0xfffffff0u);
		assert_int_equal(pkt.tcp.ack, 0x01020304u);
		assert_int_equal(pkt.tcp.flags, 0x18);
		assert_int_equal(pkt.tcp.payload_len, 1448);
		assert_int_equal(pkt.ip_proto, 6);
		assert_int_equal(pkt.dscp, 10);
		assert_int_equal(pkt.wire_len, len);
		assert_addr_v4(&pkt.src, ip_a);
		assert_addr_v4(&pkt.dst, ip_b);
		/* header-truncated: only the fixed header captured, options not */
		assert_int_equal(parse_exact(frame, ETH_LEN + IPV4_LEN + 20, len, &pkt),
				 CT_PKT_TCP);
		assert_int_equal(pkt.tcp.payload_len, 1448);
		assert_int_equal(pkt.wire_len, len);
	}
}

/* A pure ACK padded to the 60-byte minimum: the padding is not part of the packet. */
static void test_ethernet_padding_not_counted(void **state)
{
	uint8_t frame[64];
	struct ct_pkt pkt;
	size_t len = tcp_frame(frame, sizeof(frame), 0, 0, 0);

	(void)state;
	assert_int_equal(len, 54);
	memset(frame + len, 0, 6);
	assert_int_equal(parse_exact(frame, 60, 60, &pkt), CT_PKT_TCP);
	assert_int_equal(pkt.wire_len, 54);
	assert_int_equal(pkt.tcp.payload_len, 0);
}

static void test_tcp_over_ipv6(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct ct_pkt pkt;
	size_t len = tcp_frame(frame, sizeof(frame), 1, 12, 8000);

	(void)state;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_TCP);
	assert_int_equal(pkt.tcp.payload_len, 8000);
	assert_int_equal(pkt.wire_len, len);
	assert_memory_equal(pkt.src.b, v6_src, 16);
}

static void test_tcp_bad_data_offset(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct ct_pkt pkt;
	size_t len = tcp_frame(frame, sizeof(frame), 0, 0, 0);
	uint8_t *tcp = frame + ETH_LEN + IPV4_LEN;

	(void)state;
	tcp[12] = 4 << 4; /* 16-byte header */
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_TCP_BAD_HEADER);
	tcp[12] = 6 << 4; /* 24 bytes, beyond the 20-byte IP payload */
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_TCP_BAD_HEADER);
}

/* ---- PFC and PAUSE ---- */

static void test_pfc(void **state)
{
	uint8_t frame[128];
	static const uint16_t quanta[8] = {0xffff, 0, 0x1234, 0xabcd, 1, 2, 3, 0x8000};
	struct frame_builder fb;
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_MACCTRL);
	fb_pfc(&fb, 0x89, quanta);
	len = fb_finish(&fb);
	assert_int_equal(len, 60);
	assert_int_equal(parse_exact(frame, len, 64, &pkt), CT_PKT_PFC);
	assert_int_equal(pkt.pfc.opcode, 0x0101);
	assert_int_equal(pkt.pfc.class_enable, 0x89);
	for (int i = 0; i < 8; i++)
		assert_int_equal(pkt.pfc.quanta[i], quanta[i]);
	assert_int_equal(pkt.wire_len, 64); /* not IP: the frame length as captured */
	assert_int_equal(pkt.ip_version, 0);
	/* cut inside the quanta */
	assert_int_equal(parse_exact(frame, ETH_LEN + 19, 64, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_MACCTRL_TRUNCATED);
	/* and behind a VLAN tag */
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_VLAN);
	fb_vlan(&fb, 3, 10, CT_ETHERTYPE_MACCTRL);
	fb_pfc(&fb, 0x08, quanta);
	len = fb_finish(&fb);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_PFC);
	assert_int_equal(pkt.pfc.class_enable, 0x08);
	assert_int_equal(pkt.pfc.quanta[3], 0xabcd);
	assert_int_equal(pkt.pcp, 3);
}

static void test_pause(void **state)
{
	uint8_t frame[128];
	struct frame_builder fb;
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_MACCTRL);
	fb_pause(&fb, 0x2710);
	len = fb_finish(&fb);
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_PFC);
	assert_int_equal(pkt.pfc.opcode, 0x0001);
	assert_int_equal(pkt.pfc.class_enable, 0xff);
	assert_int_equal(pkt.pfc.quanta[0], 0x2710);
	for (int i = 1; i < 8; i++)
		assert_int_equal(pkt.pfc.quanta[i], 0);
	/* another MAC control opcode (GATE, 0x0002) is some other L2 frame */
	frame[ETH_LEN + 1] = 0x02;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_OTHER_L2);
}

static void test_other_l2(void **state)
{
	uint8_t frame[64] = {0};
	struct frame_builder fb;
	struct ct_pkt pkt;

	(void)state;
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, 0x0806); /* ARP */
	fb_fill(&fb, 0, 46);
	assert_int_equal(parse_exact(frame, 60, 60, &pkt), CT_PKT_OTHER_L2);
	assert_int_equal(pkt.wire_len, 60);
}

/* ---- GRE / ERSPAN mirror copies ---- */

enum mirror_kind {
	MIRROR_ERSPAN_I,
	MIRROR_ERSPAN_II,
	MIRROR_ERSPAN_III,
	MIRROR_ERSPAN_III_PLATFORM,
	MIRROR_TEB,
};

/* Outer Ethernet (+ a tag) / IPv4 / GRE / mirror header, then a tagged RoCE frame. */
static size_t mirror_frame(uint8_t *buf, size_t size, enum mirror_kind kind,
			   const struct roce_frame *inner, size_t *inner_off)
{
	struct frame_builder fb;
	struct fb_ipv4 outer = {.proto = 47, .dscp = 0, .ecn = 0};
	struct fb_gre gre = {.seq = 0x01020304, .key = 0xfeedf00d};
	size_t inner_len;

	memcpy(outer.src, ip_mirror_src, 4);
	memcpy(outer.dst, ip_collector, 4);
	switch (kind) {
	case MIRROR_ERSPAN_I:
		gre.proto = CT_GRE_ERSPAN_II; /* type I: same protocol, no S bit, no header */
		break;
	case MIRROR_ERSPAN_II:
		gre.proto = CT_GRE_ERSPAN_II;
		gre.has_seq = 1;
		break;
	case MIRROR_ERSPAN_III:
	case MIRROR_ERSPAN_III_PLATFORM:
		gre.proto = CT_GRE_ERSPAN_III;
		gre.has_seq = 1;
		break;
	case MIRROR_TEB:
		gre.proto = CT_ETHERTYPE_TEB;
		gre.has_key = 1;
		gre.has_csum = 1;
		break;
	}
	fb_init(&fb, buf, size);
	fb_eth(&fb, CT_ETHERTYPE_VLAN);
	fb_vlan(&fb, 7, 999, CT_ETHERTYPE_IPV4);
	fb_ipv4(&fb, &outer);
	fb_gre(&fb, &gre);
	if (kind == MIRROR_ERSPAN_II)
		fb_erspan2(&fb, 17, 100);
	else if (kind == MIRROR_ERSPAN_III)
		fb_erspan3(&fb, 17, 0x11111111, 0);
	else if (kind == MIRROR_ERSPAN_III_PLATFORM)
		fb_erspan3(&fb, 17, 0x11111111, 1);
	*inner_off = fb.len;
	inner_len = roce_frame_build(buf + fb.len, size - fb.len, inner);
	fb.len += inner_len;
	return fb_finish(&fb);
}

static void test_mirror_encapsulations(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	static const size_t mirror_hdr[] = {
		[MIRROR_ERSPAN_I] = 4,
		[MIRROR_ERSPAN_II] = 8 + 8,
		[MIRROR_ERSPAN_III] = 8 + 12,
		[MIRROR_ERSPAN_III_PLATFORM] = 8 + 12 + 8,
		[MIRROR_TEB] = 12,
	};
	struct roce_frame inner = write_first();

	(void)state;
	inner.n_vlan = 1;
	inner.vlan[0] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 4, 42};
	inner.dscp = 26;
	inner.ecn = 3;
	for (int kind = MIRROR_ERSPAN_I; kind <= MIRROR_TEB; kind++) {
		struct ct_pkt pkt;
		size_t inner_off;
		size_t len = mirror_frame(frame, sizeof(frame), (enum mirror_kind)kind, &inner,
					  &inner_off);
		const size_t inner_len = len - inner_off;

		assert_int_equal(inner_off, ETH_LEN + VLAN_LEN + IPV4_LEN + mirror_hdr[kind]);
		assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.encap, 1);
		assert_addr_v4(&pkt.src, inner.src4);
		assert_addr_v4(&pkt.dst, inner.dst4);
		assert_int_equal(pkt.wire_len, inner_len);
		assert_int_equal(pkt.vlan_count, 1);
		assert_int_equal(pkt.pcp, 4);
		assert_int_equal(pkt.vlan_id, 42);
		assert_int_equal(pkt.dscp, 26);
		assert_int_equal(pkt.ecn, 3);
		assert_int_equal(pkt.roce.opcode, inner.opcode);
		assert_int_equal(pkt.roce.dqpn, inner.dqpn);
		assert_int_equal(pkt.roce.psn, inner.psn);
		assert_int_equal(pkt.roce.reth_len, inner.dma_len);
		assert_int_equal(pkt.roce.payload_len, inner.payload_len);
		/* mirror header cut off */
		assert_int_equal(parse_exact(frame, inner_off - 1, len, &pkt), CT_PKT_MALFORMED);
		assert_true(pkt.malformed == CT_MAL_GRE_TRUNCATED ||
			    pkt.malformed == CT_MAL_ERSPAN_TRUNCATED);
		/* the inner frame's Ethernet header cut off */
		assert_int_equal(parse_exact(frame, inner_off + 13, len, &pkt), CT_PKT_MALFORMED);
		assert_int_equal(pkt.malformed, CT_MAL_ETH_TRUNCATED);
	}
}

static void test_mirror_header_truncated_copy(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame inner = write_first();
	struct ct_pkt pkt;
	size_t inner_off;
	size_t len;

	(void)state;
	inner.payload_len = 4096;
	len = mirror_frame(frame, sizeof(frame), MIRROR_ERSPAN_III, &inner, &inner_off);
	/* the mirror kept the headers up to the end of the RETH */
	assert_int_equal(parse_exact(frame, inner_off + 14 + 20 + 8 + 12 + 16, 128, &pkt),
			 CT_PKT_ROCE);
	assert_int_equal(pkt.wire_len, len - inner_off);
	assert_int_equal(pkt.roce.payload_len, 4096);
	assert_int_equal(pkt.roce.payload_cap, 0);
}

/* The mirror port's own tag is not the inner frame's: an untagged inner frame has none. */
static void test_mirror_untagged_inner_frame(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame inner = write_first();
	struct ct_pkt pkt;
	size_t inner_off;
	size_t len = mirror_frame(frame, sizeof(frame), MIRROR_ERSPAN_II, &inner, &inner_off);

	(void)state;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.encap, 1);
	assert_int_equal(pkt.vlan_count, 0);
	assert_int_equal(pkt.pcp, 0xff);
	assert_int_equal(pkt.vlan_id, 0);
	assert_int_equal(pkt.wire_len, len - inner_off);
}

static void test_gre_unsupported(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame inner = write_first();
	struct ct_pkt pkt;
	size_t inner_off;
	size_t len = mirror_frame(frame, sizeof(frame), MIRROR_ERSPAN_II, &inner, &inner_off);
	const size_t gre = ETH_LEN + VLAN_LEN + IPV4_LEN;

	(void)state;
	frame[gre + 2] = 0x08; /* GRE carrying plain IPv4 */
	frame[gre + 3] = 0x00;
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_GRE_UNSUPPORTED);
	frame[gre + 2] = 0x88;
	frame[gre + 3] = 0xbe;
	frame[gre + 1] |= 1; /* GRE version 1 (PPTP) */
	assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_GRE_UNSUPPORTED);
}

/* A mirror copy of a mirror copy of a mirror copy goes no further. */
static void test_encap_too_deep(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct frame_builder fb;
	struct fb_ipv4 outer = {.proto = 47};
	const struct fb_gre teb = {.proto = CT_ETHERTYPE_TEB};
	struct roce_frame inner = write_first();
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	memcpy(outer.src, ip_mirror_src, 4);
	memcpy(outer.dst, ip_collector, 4);
	for (int depth = 1; depth <= 3; depth++) {
		fb_init(&fb, frame, sizeof(frame));
		for (int i = 0; i < depth; i++) {
			fb_eth(&fb, CT_ETHERTYPE_IPV4);
			fb_ipv4(&fb, &outer);
			fb_gre(&fb, &teb);
		}
		fb.len += roce_frame_build(frame + fb.len, sizeof(frame) - fb.len, &inner);
		len = fb_finish(&fb);
		if (depth <= 2) {
			assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_ROCE);
			assert_int_equal(pkt.roce.dqpn, inner.dqpn);
		} else {
			assert_int_equal(parse_exact(frame, len, len, &pkt), CT_PKT_MALFORMED);
			assert_int_equal(pkt.malformed, CT_MAL_ENCAP_TOO_DEEP);
		}
	}
}

/* ---- truncation ---- */

/* What a RoCE WRITE FIRST with one tag cut after cap bytes parses as. */
struct cut_result {
	enum ct_malformed malformed; /* CT_MAL_NONE: a RoCE packet */
	enum ct_hdr_cut cut;
	uint32_t dqpn_reason; /* CT_CUT_BEFORE_QPN: the reason in the flow id */
};

static struct cut_result expected_cut(size_t cap)
{
	const size_t eth = ETH_LEN, vlan = eth + VLAN_LEN, ip = vlan + IPV4_LEN, udp = ip + UDP_LEN,
		     bth = udp + BTH_LEN, reth = bth + 16;

	if (cap < eth)
		return (struct cut_result){CT_MAL_ETH_TRUNCATED};
	if (cap < vlan)
		return (struct cut_result){CT_MAL_VLAN_TRUNCATED};
	if (cap < ip)
		return (struct cut_result){CT_MAL_IPV4_TRUNCATED};
	if (cap < ip + 4) /* the destination port is not there: not known as RoCE */
		return (struct cut_result){CT_MAL_UDP_TRUNCATED};
	if (cap < udp)
		return (struct cut_result){CT_MAL_NONE, CT_CUT_BEFORE_QPN, CT_MAL_UDP_TRUNCATED};
	if (cap < udp + 8) /* the QPN ends at the BTH's eighth byte */
		return (struct cut_result){CT_MAL_NONE, CT_CUT_BEFORE_QPN, CT_MAL_BTH_TRUNCATED};
	if (cap < bth)
		return (struct cut_result){CT_MAL_NONE, CT_CUT_AFTER_QPN};
	if (cap < reth)
		return (struct cut_result){CT_MAL_NONE, CT_CUT_ROCE_EXT};
	return (struct cut_result){CT_MAL_NONE, CT_CUT_NONE};
}

/*
 * A WRITE FIRST cut at every length: malformed only before the UDP
 * destination port; then a RoCE packet at its full wire length whose
 * fields are those the copy kept.
 */
static void test_truncation_at_every_byte(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	const size_t headers = ETH_LEN + VLAN_LEN + IPV4_LEN + UDP_LEN + BTH_LEN + 16;
	unsigned seen_mal[CT_MAL_COUNT] = {0}, seen_cut[CT_CUT_COUNT] = {0};
	size_t len;

	(void)state;
	rf.n_vlan = 1;
	rf.vlan[0] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 3, 7};
	len = roce_frame_build(frame, sizeof(frame), &rf);
	assert_int_equal(len, headers + 256 + ICRC_LEN);
	for (size_t cap = 0; cap <= len; cap++) {
		const struct cut_result want = expected_cut(cap);
		struct ct_pkt pkt;
		enum ct_pkt_kind kind = parse_exact(frame, cap, len, &pkt);

		seen_mal[want.malformed]++;
		assert_int_equal(pkt.malformed, want.malformed);
		if (want.malformed != CT_MAL_NONE) {
			assert_int_equal(kind, CT_PKT_MALFORMED);
			continue;
		}
		seen_cut[want.cut]++;
		assert_int_equal(kind, CT_PKT_ROCE);
		assert_int_equal(pkt.hdr_cut, want.cut);
		assert_int_equal(pkt.wire_len, len);
		assert_int_equal(pkt.pcp, 3);
		assert_addr_v4(&pkt.src, rf.src4);
		assert_addr_v4(&pkt.dst, rf.dst4);
		if (want.cut == CT_CUT_BEFORE_QPN) {
			assert_int_equal(pkt.roce.dqpn, CT_QPN_CUT(want.dqpn_reason));
			assert_true(CT_QPN_IS_CUT(pkt.roce.dqpn));
			assert_int_equal(CT_QPN_CUT_REASON(pkt.roce.dqpn), want.dqpn_reason);
			continue;
		}
		assert_false(CT_QPN_IS_CUT(pkt.roce.dqpn));
		assert_int_equal(pkt.roce.opcode, rf.opcode);
		assert_int_equal(pkt.roce.dqpn, rf.dqpn);
		if (want.cut == CT_CUT_AFTER_QPN)
			continue;
		assert_int_equal(pkt.roce.psn, rf.psn);
		assert_int_equal(pkt.roce.payload_len, 256);
		if (want.cut == CT_CUT_ROCE_EXT) {
			/* the RETH is gone: its bit leaves ext, its length reads 0 */
			assert_int_equal(pkt.roce.ext, 0);
			assert_int_equal(pkt.roce.reth_len, 0);
			assert_int_equal(pkt.roce.payload_cap, 0);
			continue;
		}
		assert_int_equal(pkt.roce.ext, CT_EXT_RETH);
		assert_int_equal(pkt.roce.reth_len, rf.dma_len);
		assert_int_equal(pkt.roce.reth_va, rf.va);
		assert_int_equal(pkt.roce.payload_cap, cap - headers < 256 ? cap - headers : 256);
	}
	/* every layer was cut at least once, for as many bytes as it has */
	assert_int_equal(seen_mal[CT_MAL_ETH_TRUNCATED], ETH_LEN);
	assert_int_equal(seen_mal[CT_MAL_VLAN_TRUNCATED], VLAN_LEN);
	assert_int_equal(seen_mal[CT_MAL_IPV4_TRUNCATED], IPV4_LEN);
	assert_int_equal(seen_mal[CT_MAL_UDP_TRUNCATED], 4);
	assert_int_equal(seen_cut[CT_CUT_BEFORE_QPN], 4 + 8);
	assert_int_equal(seen_cut[CT_CUT_AFTER_QPN], 4);
	assert_int_equal(seen_cut[CT_CUT_ROCE_EXT], 16);
	assert_int_equal(seen_cut[CT_CUT_NONE], 256 + ICRC_LEN + 1);
}

/*
 * Where each extension header ends, against what a cut copy keeps: a header
 * captured whole is read and keeps its bit; a header cut, and every one
 * after it, reads as zero and loses its bit. UD SEND ONLY with immediate
 * (DETH, then ImmDt) and RC ATOMIC ACK (AETH, then AtomicAckETH).
 */
static void test_extension_headers_cut_one_by_one(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	const size_t bth_end = ETH_LEN + IPV4_LEN + UDP_LEN + BTH_LEN;
	struct roce_frame rf = opcode_frame(CT_TR_UD | CT_OP_SEND_ONLY_IMM, 100);
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	rf.sqpn = 0x123456;
	rf.imm = 0xcafef00d;
	len = roce_frame_build(frame, sizeof(frame), &rf);
	for (size_t cap = bth_end; cap < bth_end + 12; cap++) {
		assert_int_equal(parse_exact(frame, cap, len, &pkt), CT_PKT_ROCE);
		assert_int_equal(pkt.hdr_cut, CT_CUT_ROCE_EXT);
		assert_int_equal(pkt.roce.payload_len, 100);
		if (cap < bth_end + 8) {
			assert_int_equal(pkt.roce.ext, 0);
			assert_int_equal(pkt.roce.deth_sqpn, 0);
		} else {
			assert_int_equal(pkt.roce.ext, CT_EXT_DETH);
			assert_int_equal(pkt.roce.deth_sqpn, 0x123456);
		}
		assert_int_equal(pkt.roce.imm, 0);
	}
	assert_int_equal(parse_exact(frame, bth_end + 12, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.hdr_cut, CT_CUT_NONE);
	assert_int_equal(pkt.roce.imm, 0xcafef00d);

	rf = opcode_frame(CT_TR_RC | CT_OP_ATOMIC_ACK, 0);
	rf.syndrome = 0x1f;
	rf.msn = 0x654321;
	len = roce_frame_build(frame, sizeof(frame), &rf);
	assert_int_equal(parse_exact(frame, bth_end + 4, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.hdr_cut, CT_CUT_ROCE_EXT);
	assert_int_equal(pkt.roce.ext, CT_EXT_AETH);
	assert_int_equal(pkt.roce.aeth_msn, 0x654321);
	assert_int_equal(pkt.roce.aeth_syndrome, 0x1f);
}

/*
 * IPv6 at 64 bytes keeps 2 bytes of the BTH; with a VLAN tag, 6 bytes of the
 * UDP header: both count on the address pair's flow, named by the reason.
 * With two tags only the source port is left: not known as RoCE.
 */
static void test_ipv6_copies_cut_before_the_qpn(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame rf = write_first();
	struct ct_pkt pkt;
	size_t len;

	(void)state;
	rf.ipv6 = 1;
	len = roce_frame_build(frame, sizeof(frame), &rf);
	assert_int_equal(parse_exact(frame, 64, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.hdr_cut, CT_CUT_BEFORE_QPN);
	assert_int_equal(pkt.roce.dqpn, CT_QPN_CUT(CT_MAL_BTH_TRUNCATED));
	assert_int_equal(pkt.wire_len, len);
	assert_int_equal(pkt.ip_version, 6);

	rf.n_vlan = 1;
	rf.vlan[0] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 3, 7};
	len = roce_frame_build(frame, sizeof(frame), &rf);
	assert_int_equal(parse_exact(frame, 64, len, &pkt), CT_PKT_ROCE);
	assert_int_equal(pkt.hdr_cut, CT_CUT_BEFORE_QPN);
	assert_int_equal(pkt.roce.dqpn, CT_QPN_CUT(CT_MAL_UDP_TRUNCATED));
	assert_int_equal(pkt.wire_len, len);

	rf.n_vlan = 2;
	rf.vlan[1] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 3, 8};
	rf.vlan[0].tpid = CT_ETHERTYPE_QINQ;
	len = roce_frame_build(frame, sizeof(frame), &rf);
	assert_int_equal(parse_exact(frame, 64, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_UDP_TRUNCATED);

	/* a port other than 4791 cut the same way stays malformed */
	rf.n_vlan = 1;
	len = roce_frame_build(frame, sizeof(frame), &rf);
	frame[ETH_LEN + VLAN_LEN + 40 + 3] ^= 1;
	assert_int_equal(parse_exact(frame, 64, len, &pkt), CT_PKT_MALFORMED);
	assert_int_equal(pkt.malformed, CT_MAL_UDP_TRUNCATED);
}

static int is_truncation(enum ct_malformed m)
{
	switch (m) {
	case CT_MAL_ETH_TRUNCATED:
	case CT_MAL_VLAN_TRUNCATED:
	case CT_MAL_GRE_TRUNCATED:
	case CT_MAL_ERSPAN_TRUNCATED:
	case CT_MAL_IPV4_TRUNCATED:
	case CT_MAL_IPV6_TRUNCATED:
	case CT_MAL_IPV6_EXT_TRUNCATED:
	case CT_MAL_UDP_TRUNCATED:
	case CT_MAL_BTH_TRUNCATED:
	case CT_MAL_TCP_TRUNCATED:
	case CT_MAL_MACCTRL_TRUNCATED:
		return 1;
	default:
		return 0;
	}
}

/* Any cut of any frame: a truncation reason, or the same result as the whole frame. */
static void check_all_cuts(const uint8_t *frame, size_t len)
{
	struct ct_pkt whole, pkt;
	enum ct_pkt_kind kind = parse_exact(frame, len, len, &whole);

	assert_int_not_equal(kind, CT_PKT_MALFORMED);
	for (size_t cap = 0; cap < len; cap++) {
		enum ct_pkt_kind k = parse_exact(frame, cap, len, &pkt);

		if (k == CT_PKT_MALFORMED) {
			assert_true(is_truncation(pkt.malformed));
			continue;
		}
		assert_int_equal(k, kind);
		assert_int_equal(pkt.wire_len, whole.wire_len);
		assert_memory_equal(&pkt.src, &whole.src, sizeof(pkt.src));
	}
}

/*
 * ct_parse_ip: the parse ct_parse gives, and the offset of the IP header it
 * analysed: the inner one of every mirror encapsulation, the plain frame's
 * after its tags, none for a frame without IP.
 */
static void test_ip_offset_of_the_analysed_frame(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	struct roce_frame inner = write_first();
	struct ct_pkt a, b;
	uint32_t off;
	size_t len;

	(void)state;
	inner.n_vlan = 1;
	inner.vlan[0] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 4, 42};
	for (int kind = MIRROR_ERSPAN_I; kind <= MIRROR_TEB; kind++) {
		size_t inner_off;

		len = mirror_frame(frame, sizeof(frame), (enum mirror_kind)kind, &inner,
				   &inner_off);
		memset(&a, 0xa5, sizeof(a));
		memset(&b, 0xa5, sizeof(b));
		assert_int_equal(ct_parse_ip(frame, (uint32_t)len, (uint32_t)len, &a, &off),
				 CT_PKT_ROCE);
		assert_int_equal(off, inner_off + ETH_LEN + VLAN_LEN);
		ct_parse(frame, (uint32_t)len, (uint32_t)len, &b);
		assert_memory_equal(&a, &b, sizeof(a));
		/* the inner frame cut before its IP header: the outer one is the last read */
		ct_parse_ip(frame, (uint32_t)(inner_off + ETH_LEN), (uint32_t)len, &a, &off);
		assert_int_equal(off, ETH_LEN + VLAN_LEN);
	}
	inner.n_vlan = 0;
	len = roce_frame_build(frame, sizeof(frame), &inner);
	assert_int_equal(ct_parse_ip(frame, (uint32_t)len, (uint32_t)len, &a, &off), CT_PKT_ROCE);
	assert_int_equal(off, ETH_LEN);
	inner.n_vlan = 2;
	inner.vlan[1] = (struct roce_vlan_tag){CT_ETHERTYPE_VLAN, 4, 43};
	len = roce_frame_build(frame, sizeof(frame), &inner);
	ct_parse_ip(frame, (uint32_t)len, (uint32_t)len, &a, &off);
	assert_int_equal(off, ETH_LEN + 2 * VLAN_LEN);
	ct_parse_ip(frame, ETH_LEN, (uint32_t)len, &a, &off);
	assert_int_equal(off, 0);
}

static void test_truncation_of_other_frames(void **state)
{
	static uint8_t frame[ROCE_FRAME_MAX];
	static const struct fb_ipv6_ext ext[4] = {
		{.type = FB_IPV6_HOP_BY_HOP},
		{.type = FB_IPV6_ROUTING, .len8 = 1},
		{.type = FB_IPV6_FRAGMENT},
		{.type = FB_IPV6_DEST_OPTS},
	};
	static const uint16_t quanta[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	struct roce_frame rf = opcode_frame(CT_TR_UD | CT_OP_SEND_ONLY_IMM, 40);
	struct frame_builder fb;
	size_t inner_off;

	(void)state;
	for (int kind = MIRROR_ERSPAN_I; kind <= MIRROR_TEB; kind++)
		check_all_cuts(frame, mirror_frame(frame, sizeof(frame), (enum mirror_kind)kind,
						   &rf, &inner_off));
	check_all_cuts(frame, ipv6_roce_frame(frame, sizeof(frame), ext, 4, &rf));
	check_all_cuts(frame, tcp_frame(frame, sizeof(frame), 0, 40, 10));
	check_all_cuts(frame, tcp_frame(frame, sizeof(frame), 1, 12, 10));
	fb_init(&fb, frame, sizeof(frame));
	fb_eth(&fb, CT_ETHERTYPE_MACCTRL);
	fb_pfc(&fb, 0xff, quanta);
	check_all_cuts(frame, fb_finish(&fb));
	for (unsigned op = 0; op < 256; op++) {
		if (!ct_opcode_table[op].valid)
			continue;
		rf = opcode_frame((uint8_t)op, 8);
		check_all_cuts(frame, roce_frame_build(frame, sizeof(frame), &rf));
	}
}

/* ct_parse and the layered parser on one copy of the first cap bytes: every byte must agree. */
static void assert_same_as_layered(const uint8_t *frame, size_t cap, size_t orig)
{
	uint8_t *copy = malloc(cap ? cap : 1);
	struct ct_pkt fast, layered;
	enum ct_pkt_kind k1, k2;

	assert_non_null(copy);
	memcpy(copy, frame, cap);
	memset(&fast, 0xa5, sizeof(fast));
	memset(&layered, 0xa5, sizeof(layered));
	k1 = ct_parse(copy, (uint32_t)cap, (uint32_t)orig, &fast);
	k2 = ct_parse_layered(copy, (uint32_t)cap, (uint32_t)orig, &layered);
	assert_int_equal(k1, k2);
	assert_memory_equal(&fast, &layered, sizeof(fast));
	free(copy);
}

/*
 * ct_parse's shortcut for plain IPv4 RoCEv2 frames against the layered
 * parser: every valid and reserved opcode, then each header byte the
 * shortcut tests (and those beside them) set to values that keep or break
 * the frame's shape, at every captured length.
 */
static void test_shortcut_matches_layered_parser(void **state)
{
	static const uint8_t values[] = {0x00, 0x01, 0x05, 0x06, 0x08, 0x11, 0x12, 0x14, 0x1c,
					 0x20, 0x3f, 0x40, 0x45, 0x46, 0x80, 0xb7, 0xff};
	static uint8_t frame[ROCE_FRAME_MAX];
	unsigned checked = 0;

	(void)state;
	for (unsigned code = 0; code < 256; code++) {
		struct roce_frame rf = opcode_frame((uint8_t)code, 64 + code % 7);
		size_t len, hdr;

		rf.dscp = (uint8_t)(code & 0x3f);
		rf.ecn = (uint8_t)(code & 3);
		len = roce_frame_build(frame, sizeof(frame), &rf);
		for (size_t cap = 0; cap <= len; cap++, checked++)
			assert_same_as_layered(frame, cap, len + (code & 1) * 4);
		if (code % 16)
			continue;
		/* the headers up to the end of the BTH, a byte at a time */
		hdr = ETH_LEN + IPV4_LEN + UDP_LEN + BTH_LEN;
		for (size_t at = 0; at < hdr; at++) {
			uint8_t keep = frame[at];

			for (size_t v = 0; v < sizeof(values); v++, checked++) {
				frame[at] = values[v];
				assert_same_as_layered(frame, len, len);
				assert_same_as_layered(frame, 64, len);
			}
			frame[at] = keep;
		}
	}
	assert_true(checked > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_table_matches_ibta),
		cmocka_unit_test(test_opcode_names),
		cmocka_unit_test(test_malformed_names),
		cmocka_unit_test(test_every_valid_opcode),
		cmocka_unit_test(test_reserved_opcodes),
		cmocka_unit_test(test_bth_transport_version),
		cmocka_unit_test(test_cnp),
		cmocka_unit_test(test_udp_length_beyond_ip_payload),
		cmocka_unit_test(test_udp_length_too_short_for_roce_headers),
		cmocka_unit_test(test_other_udp_port),
		cmocka_unit_test(test_header_truncated_copy),
		cmocka_unit_test(test_vlan_tags),
		cmocka_unit_test(test_single_vlan_pcp),
		cmocka_unit_test(test_vlan_too_deep),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_ipv4_bad_headers),
		cmocka_unit_test(test_ipv4_fragments),
		cmocka_unit_test(test_ecn_dscp),
		cmocka_unit_test(test_ipv6_extension_headers),
		cmocka_unit_test(test_ipv6_later_fragment),
		cmocka_unit_test(test_ipv6_too_many_extension_headers),
		cmocka_unit_test(test_tcp_with_options),
		cmocka_unit_test(test_ethernet_padding_not_counted),
		cmocka_unit_test(test_tcp_over_ipv6),
		cmocka_unit_test(test_tcp_bad_data_offset),
		cmocka_unit_test(test_pfc),
		cmocka_unit_test(test_pause),
		cmocka_unit_test(test_other_l2),
		cmocka_unit_test(test_mirror_encapsulations),
		cmocka_unit_test(test_mirror_header_truncated_copy),
		cmocka_unit_test(test_mirror_untagged_inner_frame),
		cmocka_unit_test(test_gre_unsupported),
		cmocka_unit_test(test_encap_too_deep),
		cmocka_unit_test(test_truncation_at_every_byte),
		cmocka_unit_test(test_extension_headers_cut_one_by_one),
		cmocka_unit_test(test_ipv6_copies_cut_before_the_qpn),
		cmocka_unit_test(test_truncation_of_other_frames),
		cmocka_unit_test(test_ip_offset_of_the_analysed_frame),
		cmocka_unit_test(test_shortcut_matches_layered_parser),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
