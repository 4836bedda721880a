// SPDX-License-Identifier: MIT
/*
 * The RoCEv2 frame builder (dataplane/frame_build.c, what synth, bench, the
 * probe's tests and the unit tests write their frames with) against frames
 * worked out by hand from the headers' definitions (IEEE 802.1Q, RFC 791,
 * RFC 8200, RFC 768, IBTA vol. 1 9.2-9.3 and annex A17). The byte arrays
 * below are the expected headers; each comment says where a value comes
 * from.
 *
 *   test_frame_build            the unit tests
 *   test_frame_build --pcap F   write the same frames (payload and ICRC as
 *                               zeros) to the pcap F, for frame_build_tshark.py
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/frame_build.h>

/* the worked frames are laid out header by header */
/* clang-format off */
/*
 * 1. RC RDMA WRITE Only with Immediate (opcode 0x0b: RETH then ImmDt), one
 * 802.1Q tag, IPv4 198.18.0.1 -> 198.18.0.2, 1024 payload bytes.
 * BTH 12 + RETH 16 + ImmDt 4 = 32 bytes of RoCE headers;
 * UDP length 8 + 32 + 1024 + ICRC 4 = 1068 = 0x042c;
 * IP total length 20 + 1068 = 1088 = 0x0440;
 * the frame 14 + 4 + 1088 = 1106 bytes, its headers 14 + 4 + 20 + 8 + 32 = 78.
 */
static const struct ct_roce_frame write_imm = {
	.ip = {
		.dst_mac = {0x02, 0, 0, 0, 0, 0x02},
		.src_mac = {0x02, 0, 0, 0, 0, 0x01},
		.n_vlan = 1,
		.vlan = {{.tpid = 0x8100, .pcp = 3, .vid = 100}},
		.src = {198, 18, 0, 1},
		.dst = {198, 18, 0, 2},
		.tos = 26 << 2 | 2, /* DSCP 26, ECT(0) */
	},
	.sport = 49153,
	.bth = {
		.opcode = 0x0b,
		.se = 1,
		.ackreq = 1,
		.dqpn = 0x000123,
		.psn = 0x000456,
		.va = 0x00007f0000001000ull,
		.rkey = 0x1234,
		.dma_len = 8192,
		.imm = 0xdeadbeef,
	},
	.payload = 1024,
};
static const uint8_t write_imm_bytes[78] = {
	0x02, 0, 0, 0, 0, 0x02,	      /* destination MAC */
	0x02, 0, 0, 0, 0, 0x01,	      /* source MAC */
	0x81, 0x00,		      /* TPID 802.1Q */
	0x60, 0x64,		      /* TCI: PCP 3 << 13 | VID 100 = 0x6064 */
	0x08, 0x00,		      /* IPv4 */
	0x45, 0x6a,		      /* version 4, 5 words; TOS 26 << 2 | 2 = 0x6a */
	0x04, 0x40,		      /* total length 1088 */
	0x00, 0x00, 0x40, 0x00,	      /* ID 0, DF */
	0x40, 0x11, 0x00, 0x00,	      /* TTL 64, UDP, checksum left 0 */
	198, 18, 0, 1, 198, 18, 0, 2, /* addresses */
	0xc0, 0x01, 0x12, 0xb7,	      /* ports 49153 -> 4791 */
	0x04, 0x2c, 0x00, 0x00,	      /* UDP length 1068, no checksum */
	0x0b,			      /* BTH: opcode */
	0x80,			      /* SE, no MigReq, pad 0, TVer 0 */
	0xff, 0xff,		      /* the default P_Key */
	0x00, 0x00, 0x01, 0x23,	      /* reserved, destination QP 0x000123 */
	0x80, 0x00, 0x04, 0x56,	      /* AckReq, reserved, PSN 0x000456 */
	0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00, /* RETH: VA */
	0x00, 0x00, 0x12, 0x34,			      /* R_Key */
	0x00, 0x00, 0x20, 0x00,			      /* DMA length 8192 */
	0xde, 0xad, 0xbe, 0xef,			      /* ImmDt */
};

/*
 * 2. RC Acknowledge (0x11: AETH) over IPv6 2001:2::1 -> 2001:2::2, no tag,
 * no payload. BTH 12 + AETH 4 = 16; UDP length 8 + 16 + 4 = 28 = 0x1c, the
 * IPv6 payload length the same; the frame 14 + 40 + 28 = 82 bytes, headers 78.
 */
static const struct ct_roce_frame ack6 = {
	.ip = {
		.dst_mac = {0x02, 0, 0, 0, 0, 0x01},
		.src_mac = {0x02, 0, 0, 0, 0, 0x02},
		.ipv6 = 1,
		.src = {0x20, 0x01, 0, 0x02, [15] = 1},
		.dst = {0x20, 0x01, 0, 0x02, [15] = 2},
		.tos = 0x02, /* ECT(0) */
	},
	.sport = 49152,
	.bth = {.opcode = 0x11, .dqpn = 0x000321, .psn = 0x000456, .syndrome = 0x1f, .msn = 0xabc},
};
static const uint8_t ack6_bytes[78] = {
	0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, /* MACs */
	0x86, 0xdd,					/* IPv6 */
	0x60, 0x20, 0x00, 0x00, /* version 6, traffic class 0x02 (bits 20..27), flow label 0 */
	0x00, 0x1c,		/* payload length 28 */
	0x11, 0x40,		/* next header UDP, hop limit 64 */
	0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, /* source */
	0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, /* destination */
	0xc0, 0x00, 0x12, 0xb7, /* ports 49152 -> 4791 */
	0x00, 0x1c, 0x00, 0x00, /* UDP length 28 */
	0x11, 0x00, 0xff, 0xff, /* BTH: ACK, no flags, the default P_Key */
	0x00, 0x00, 0x03, 0x21, /* destination QP 0x000321 */
	0x00, 0x00, 0x04, 0x56, /* PSN 0x000456 */
	0x1f, 0x00, 0x0a, 0xbc, /* AETH: syndrome 0x1f (ACK, no credit limit), MSN 0xabc */
};

/*
 * 3. A CNP (0x81: 16 reserved bytes) under an S-tag (0x88a8, VID 10) and a
 * C-tag (PCP 6, VID 20), IPv4 with DSCP 48. BTH 12 + 16 = 28; UDP length
 * 8 + 28 + 4 = 40 = 0x28; IP 20 + 40 = 60 = 0x3c; the frame 14 + 8 + 60 = 82.
 */
static const struct ct_roce_frame cnp = {
	.ip = {
		.dst_mac = {0x02, 0, 0, 0, 0, 0x01},
		.src_mac = {0x02, 0, 0, 0, 0, 0x02},
		.n_vlan = 2,
		.vlan = {{.tpid = 0x88a8, .vid = 10}, {.tpid = 0x8100, .pcp = 6, .vid = 20}},
		.src = {198, 18, 0, 2},
		.dst = {198, 18, 0, 1},
		.tos = 48 << 2,
	},
	.sport = 49152,
	.bth = {.opcode = 0x81, .dqpn = 0x000777},
};
static const uint8_t cnp_bytes[78] = {
	0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, /* MACs */
	0x88, 0xa8, 0x00, 0x0a,				/* S-tag: PCP 0, VID 10 */
	0x81, 0x00, 0xc0, 0x14,				/* C-tag: 6 << 13 | 20 = 0xc014 */
	0x08, 0x00,					/* IPv4 */
	0x45, 0xc0, 0x00, 0x3c, /* TOS 48 << 2 = 0xc0, total length 60 */
	0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 198, 18, 0, 2, 198, 18, 0, 1,
	0xc0, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, /* UDP length 40 */
	0x81, 0x00, 0xff, 0xff, 0x00, 0x00, 0x07, 0x77, 0x00, 0x00, 0x00, 0x00, /* BTH */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* reserved */
};

/*
 * 4. UD SEND Only with Immediate (0x65: DETH then ImmDt), IPv4, no tag, 16
 * payload bytes. BTH 12 + DETH 8 + ImmDt 4 = 24; UDP 8 + 24 + 16 + 4 = 52 =
 * 0x34; IP 72 = 0x48; frame 86; headers 14 + 20 + 8 + 24 = 66.
 */
static const struct ct_roce_frame ud_send = {
	.ip = {.src = {198, 18, 0, 3}, .dst = {198, 18, 0, 4}},
	.sport = 0xc0de,
	.bth = {.opcode = 0x65, .dqpn = 0x000001, .psn = 0xffffff, .qkey = 0x80010000,
		.sqpn = 0x000055, .imm = 7},
	.payload = 16,
};
static const uint8_t ud_send_bytes[66] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00, /* zero MACs, IPv4 */
	0x45, 0x00, 0x00, 0x48, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	198, 18, 0, 3, 198, 18, 0, 4,
	0xc0, 0xde, 0x12, 0xb7, 0x00, 0x34, 0x00, 0x00, /* UDP length 52 */
	0x65, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0xff, 0xff, 0xff, /* BTH, QP1 */
	0x80, 0x01, 0x00, 0x00, /* DETH: Q_Key */
	0x00, 0x00, 0x00, 0x55, /* reserved, source QP 0x55 */
	0x00, 0x00, 0x00, 0x07, /* ImmDt */
};

/* clang-format on */

struct worked {
	const struct ct_roce_frame *f;
	const uint8_t *bytes;
	size_t hdr, len;
};

static const struct worked worked[] = {
	{&write_imm, write_imm_bytes, sizeof(write_imm_bytes), 1106},
	{&ack6, ack6_bytes, sizeof(ack6_bytes), 82},
	{&cnp, cnp_bytes, sizeof(cnp_bytes), 82},
	{&ud_send, ud_send_bytes, sizeof(ud_send_bytes), 86},
};

#define N_WORKED (sizeof(worked) / sizeof(worked[0]))

static void test_worked_frames(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_WORKED; i++) {
		uint8_t buf[256];
		size_t hdr = 0, len;

		memset(buf, 0xa5, sizeof(buf)); /* nothing past the headers is written */
		len = ct_roce_frame_write(buf, sizeof(buf), worked[i].f, &hdr);
		assert_int_equal(len, worked[i].len);
		assert_int_equal(hdr, worked[i].hdr);
		assert_memory_equal(buf, worked[i].bytes, worked[i].hdr);
		assert_int_equal(buf[hdr], 0xa5);
	}
}

/* RoCE headers' lengths: 12 of BTH plus the opcode's extension headers. */
static void test_header_lengths(void **state)
{
	(void)state;
	assert_int_equal(ct_roce_hdr_len(0x0b), 12 + 16 + 4); /* RETH, ImmDt */
	assert_int_equal(ct_roce_hdr_len(0x11), 12 + 4);      /* AETH */
	assert_int_equal(ct_roce_hdr_len(0x81), 12 + 16);     /* CNP */
	assert_int_equal(ct_roce_hdr_len(0x14), 12 + 28);     /* FETCH_ADD: AtomicETH */
	assert_int_equal(ct_roce_hdr_len(0x12), 12 + 4 + 8);  /* ATOMIC ACK: AETH, AtomicAckETH */
	assert_int_equal(ct_roce_hdr_len(0x07), 12);	      /* WRITE Middle */
	/* RC opcode 0x1f is reserved: a bare BTH, a frame the parser must refuse */
	assert_int_equal(ct_roce_hdr_len(0x1f), 12);
	assert_int_equal(ct_frame_ip_len(&write_imm.ip), 14 + 4 + 20);
	assert_int_equal(ct_frame_ip_len(&ack6.ip), 14 + 40);
}

/* The headers must fit: one byte short of them writes nothing. */
static void test_cap(void **state)
{
	uint8_t buf[78];

	(void)state;
	assert_int_equal(ct_roce_frame_write(buf, 77, &write_imm, NULL), 0);
	assert_int_equal(ct_roce_frame_write(buf, 78, &write_imm, NULL), 1106);
	assert_memory_equal(buf, write_imm_bytes, 78);
}

/* FETCH_ADD's AtomicETH: VA, R_Key, swap/add, compare; worked by hand. */
static void test_atomic_eth(void **state)
{
	const struct ct_roce_hdr h = {
		.opcode = 0x14,
		.dqpn = 2,
		.psn = 3,
		.va = 0x0102030405060708ull,
		.rkey = 0x0a0b0c0d,
		.swap_add = 0x1111111122222222ull,
		.compare = 0x3333333344444444ull,
	};
	/* clang-format off */
	static const uint8_t want[40] = {
		0x14, 0, 0xff, 0xff, 0, 0, 0, 2, 0, 0, 0, 3,	  /* BTH */
		1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d, /* VA, R_Key */
		0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22, /* swap/add */
		0x33, 0x33, 0x33, 0x33, 0x44, 0x44, 0x44, 0x44, /* compare */
	};
	/* clang-format on */
	uint8_t buf[40];

	(void)state;
	assert_int_equal(ct_roce_hdr_write(buf, &h), 40);
	assert_memory_equal(buf, want, 40);
}

static void put32le(FILE *f, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	fwrite(b, 1, 4, f);
}

/* The worked frames, whole (payload and ICRC zeros), as a classic pcap. */
static int write_pcap(const char *path)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return 1;
	put32le(f, 0xa1b2c3d4); /* microsecond pcap */
	put32le(f, 2 | 4u << 16);
	put32le(f, 0);
	put32le(f, 0);
	put32le(f, 65535);
	put32le(f, 1); /* Ethernet */
	for (size_t i = 0; i < N_WORKED; i++) {
		static uint8_t buf[2048];
		size_t len;

		memset(buf, 0, sizeof(buf));
		len = ct_roce_frame_write(buf, sizeof(buf), worked[i].f, NULL);
		put32le(f, (uint32_t)i);
		put32le(f, 0);
		put32le(f, (uint32_t)len);
		put32le(f, (uint32_t)len);
		fwrite(buf, 1, len, f);
	}
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_frames),
		cmocka_unit_test(test_header_lengths),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_atomic_eth),
	};

	if (argc == 3 && !strcmp(argv[1], "--pcap"))
		return write_pcap(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
