// SPDX-License-Identifier: MIT
/*
 * The probe's programs on this kernel: the verifier accepts them, and
 * frames run through them with BPF_PROG_TEST_RUN land in the flow map, the
 * totals and the ring as the engine would count them. Needs root and BTF
 * (exit 77 otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <commtap/roce_opcode.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../ebpf/probe_abi.h"
#include "empty.skel.h"
#include "frames.h"
#include "probe.h"
#include "probe.skel.h"

struct ctp_totals_value {
	uint64_t t[CTP_T_COUNT];
	uint64_t sample_ctr;
};

static struct ctp_probe *load(void)
{
	struct ctp_probe *s = ctp_probe__open();

	assert_non_null(s);
	ct_probe_fill_opcodes(s->rodata->ctp_opcode_info);
	bpf_map__set_max_entries(s->maps.ctp_flows, 1024);
	bpf_map__set_max_entries(s->maps.ctp_events, 1 << 16);
	assert_int_equal(ctp_probe__load(s), 0);
	return s;
}

static int run(int prog_fd, const void *frame, size_t len, struct __sk_buff *skb)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = (uint32_t)len,
		    .repeat = 1);

	if (skb) {
		opts.ctx_in = skb;
		opts.ctx_size_in = sizeof(*skb);
	}
	assert_int_equal(bpf_prog_test_run_opts(prog_fd, &opts), 0);
	return (int)opts.retval;
}

static uint64_t total(struct ctp_probe *s, int which)
{
	int ncpu = libbpf_num_possible_cpus();
	static struct ctp_totals_value v[512];
	uint32_t zero = 0;
	uint64_t sum = 0;

	assert_true(ncpu > 0 && ncpu <= 512);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.ctp_totals), &zero, v), 0);
	for (int i = 0; i < ncpu; i++)
		sum += v[i].t[which];
	return sum;
}

/* The IPv4 flow map's key of the frames' flow 198.18.0.1 -> 198.18.0.2. */
static void flow_key4(struct ctp_flow_key4 *k, uint32_t id, uint8_t transport)
{
	static const uint8_t src[4] = {198, 18, 0, 1}, dst[4] = {198, 18, 0, 2};

	memset(k, 0, sizeof(*k));
	memcpy(k->src, src, 4);
	memcpy(k->dst, dst, 4);
	k->id = id;
	k->transport = transport;
}

static void roce_key(struct ctp_flow_key4 *k, uint32_t qpn)
{
	flow_key4(k, qpn, CTP_TRANSPORT_ROCE);
}

/* The same flow as the engine keys it, as ring records carry it: ::ffff:198.18.0.x. */
static void engine_key(struct ctp_flow_key *k, uint32_t id, uint8_t transport)
{
	memset(k, 0, sizeof(*k));
	k->src[10] = k->src[11] = k->dst[10] = k->dst[11] = 0xff;
	k->src[12] = k->dst[12] = 198;
	k->src[13] = k->dst[13] = 18;
	k->src[15] = 1;
	k->dst[15] = 2;
	k->id = id;
	k->transport = transport;
}

/*
 * Message records only: a burst record also comes when the machine is slow
 * enough that the gap between two test runs exceeds the burst gap.
 */
struct records {
	uint64_t message_bytes, n;
	struct ctp_flow_key key; /* the last message record's */
};

static int count_record(void *ctx, void *data, size_t size)
{
	const struct ctp_record *r = data;
	struct records *got = ctx;

	if (r->type != CTP_REC_MESSAGE)
		return 0;
	got->message_bytes += r->bytes;
	got->n++;
	got->key = r->key;
	return 0;
}

static void test_verifier_accepts(void **state)
{
	struct ctp_probe *s = load();
	struct ctp_empty *e = ctp_empty__open_and_load();

	assert_non_null(e);
	assert_true(bpf_program__fd(s->progs.ct_xdp) >= 0);
	assert_true(bpf_program__fd(s->progs.ct_tc_egress) >= 0);
	ctp_empty__destroy(e);
	ctp_probe__destroy(s);
}

/* A 4 KiB WRITE in four packets: one flow, one message of the RETH length. */
static void test_xdp_write_message(void **state)
{
	static const uint8_t ops[4] = {CT_OP_WRITE_FIRST, CT_OP_WRITE_MIDDLE, CT_OP_WRITE_MIDDLE,
				       CT_OP_WRITE_LAST};
	struct ctp_probe *s = load();
	uint8_t frame[2048];
	struct ctp_flow_key4 key;
	struct ctp_flow_key want;
	struct ctp_flow f;
	struct ring_buffer *rb;
	struct records got = {0};
	uint64_t wire = 0;

	for (int i = 0; i < 4; i++) {
		size_t len =
			ct_frame_roce(frame, sizeof(frame), ops[i], 0x1234, 100 + i, 1024, 4096);

		assert_true(len > 0);
		wire += len; /* no padding: the frame is its IP length plus 14 */
		assert_int_equal(run(bpf_program__fd(s->progs.ct_xdp), frame, len, NULL), 2);
	}
	roce_key(&key, 0x1234);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.ctp_flows), &key, &f), 0);
	assert_int_equal(f.packets, 4);
	assert_int_equal(f.bytes, wire);
	assert_int_equal(f.messages, 1);
	assert_int_equal(f.message_bytes, 4096);
	assert_int_equal(f.psn_gaps, 0);
	assert_int_equal(f.pmtu, 1024);
	assert_int_equal(total(s, CTP_T_PACKETS), 4);
	assert_int_equal(total(s, CTP_T_ROCE_BYTES), wire);
	assert_int_equal(total(s, CTP_T_MESSAGES), 1);
	rb = ring_buffer__new(bpf_map__fd(s->maps.ctp_events), count_record, &got, NULL);
	assert_non_null(rb);
	ring_buffer__consume(rb);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.message_bytes, 4096);
	/* the record names the flow by the engine's key */
	engine_key(&want, 0x1234, CTP_TRANSPORT_ROCE);
	assert_memory_equal(&got.key, &want, sizeof(want));
	ring_buffer__free(rb);
	ctp_probe__destroy(s);
}

/* Burst records: their loss signals and marks, summed by when they ended. */
struct burst_counts {
	uint64_t split; /* records ending before it count in [0], after in [1] */
	unsigned loss[2], marks[2], n[2];
};

static int count_burst(void *ctx, void *data, size_t size)
{
	const struct ctp_record *r = data;
	struct burst_counts *b = ctx;
	int after;

	if (size < sizeof(*r) || r->type != CTP_REC_BURST)
		return 0;
	after = r->end >= b->split;
	b->loss[after] += r->loss;
	b->marks[after] += r->marks;
	b->n[after]++;
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void send_roce(struct ctp_probe *s, uint8_t opcode, uint32_t psn, int ce)
{
	uint8_t frame[512];
	size_t len = ct_frame_roce(frame, sizeof(frame), opcode, 0x4321, psn, 64, 0);

	assert_true(len > 0);
	if (ce)
		frame[15] |= 3; /* IPv4 TOS: ECN CE */
	assert_int_equal(run(bpf_program__fd(s->progs.ct_xdp), frame, len, NULL), 2);
}

/*
 * Each burst record carries the loss signals and marks of its own time, as
 * the engine's bursts do: a PSN gap and a replayed PSN in the first burst,
 * a CE mark and a CNP in the second, nothing in the third. (A loaded machine
 * may split a burst between two test runs: the records are summed by the
 * idle gap they ended before.)
 */
static void test_burst_records_carry_loss_and_marks(void **state)
{
	struct ctp_probe *s = load();
	struct burst_counts got = {0};
	struct ring_buffer *rb;
	uint64_t second;

	(void)state;
	send_roce(s, CT_OP_SEND_ONLY, 1, 0);
	send_roce(s, CT_OP_SEND_ONLY, 3, 0); /* PSN 2 missing: a gap */
	send_roce(s, CT_OP_SEND_ONLY, 2, 0); /* behind: a replay */
	usleep(20000);			     /* an idle gap: a new burst */
	second = monotonic_ns();
	send_roce(s, CT_OP_SEND_ONLY, 4, 1); /* CE-marked */
	send_roce(s, CT_OPCODE_CNP, 0, 0);
	usleep(20000);
	send_roce(s, CT_OP_SEND_ONLY, 5, 0); /* ends the second burst */
	got.split = second;
	rb = ring_buffer__new(bpf_map__fd(s->maps.ctp_events), count_burst, &got, NULL);
	assert_non_null(rb);
	ring_buffer__consume(rb);
	assert_true(got.n[0] >= 1 && got.n[1] >= 1);
	assert_int_equal(got.loss[0], 2);
	assert_int_equal(got.marks[0], 0);
	assert_int_equal(got.loss[1], 0);
	assert_int_equal(got.marks[1], 2);
	ring_buffer__free(rb);
	ctp_probe__destroy(s);
}

/* A jumbo frame through the multi-buffer (xdp.frags) program: counted whole. */
static void test_xdp_jumbo_frags(void **state)
{
	struct ctp_probe *s = load();
	static uint8_t frame[9100];
	size_t len = ct_frame_roce(frame, sizeof(frame), CT_OP_SEND_ONLY, 7, 1, 8900, 0);
	struct ctp_flow_key4 key;
	struct ctp_flow f;

	assert_true(len > 8192);
	assert_int_equal(run(bpf_program__fd(s->progs.ct_xdp), frame, len, NULL), 2);
	roce_key(&key, 7);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.ctp_flows), &key, &f), 0);
	assert_int_equal(f.bytes, len);
	assert_int_equal(f.messages, 1);
	assert_int_equal(f.message_bytes, 8900);
	ctp_probe__destroy(s);
}

/* TC egress: TCP segments, and a GSO super-packet counted by its segments. */
static void test_tc_tcp_gso(void **state)
{
	struct ctp_probe *s = load();
	uint8_t frame[4096];
	struct __sk_buff skb = {0};
	struct ctp_flow_key4 key;
	struct ctp_flow f;
	size_t len = ct_frame_tcp(frame, sizeof(frame), 40000, 5201, 1000, 1000);
	int fd = bpf_program__fd(s->progs.ct_tc_egress);

	assert_int_equal(run(fd, frame, len, &skb), -1); /* TC_ACT_UNSPEC: on to the next */
	len = ct_frame_tcp(frame, sizeof(frame), 40000, 5201, 2000, 3000);
	skb.gso_segs = 3;
	skb.gso_size = 1000;
	run(fd, frame, len, &skb);

	flow_key4(&key, 40000u << 16 | 5201, CTP_TRANSPORT_TCP);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.ctp_flows), &key, &f), 0);
	assert_int_equal(f.packets, 1 + 3);
	assert_int_equal(f.bytes, (54 + 1000) + 3 * 54 + 3000);
	assert_int_equal(f.msg_bytes, 4000); /* one TCP message in progress */
	assert_int_equal(total(s, CTP_T_GSO_PACKETS), 1);
	assert_int_equal(total(s, CTP_T_TCP_PACKETS), 4);
	ctp_probe__destroy(s);
}

/* Malformed and non-IP frames reach the totals, never the flow map. */
static void test_malformed(void **state)
{
	struct ctp_probe *s = load();
	uint8_t frame[256];
	size_t len = ct_frame_roce(frame, sizeof(frame), CT_OP_SEND_ONLY, 9, 1, 16, 0);
	struct ctp_flow_key next;

	frame[14 + 20 + 8] = 0x18; /* a reserved opcode */
	run(bpf_program__fd(s->progs.ct_xdp), frame, len, NULL);
	run(bpf_program__fd(s->progs.ct_xdp), frame, 14 + 10, NULL); /* IPv4 cut short */
	frame[12] = 0x88, frame[13] = 0xcc;			     /* LLDP */
	run(bpf_program__fd(s->progs.ct_xdp), frame, len, NULL);
	assert_int_equal(total(s, CTP_T_MALFORMED), 2);
	assert_int_equal(total(s, CTP_T_OTHER_L2), 1);
	assert_int_equal(total(s, CTP_T_PACKETS), 3);
	assert_int_not_equal(bpf_map_get_next_key(bpf_map__fd(s->maps.ctp_flows), NULL, &next), 0);
	assert_int_not_equal(bpf_map_get_next_key(bpf_map__fd(s->maps.ctp_flows6), NULL, &next), 0);
	ctp_probe__destroy(s);
}

/* IPv6 flows: the 40-byte-key map, counted as IPv4 ones; records carry the same key. */
static void test_ipv6_flow(void **state)
{
	static const uint8_t ops[3] = {CT_OP_WRITE_FIRST, CT_OP_WRITE_MIDDLE, CT_OP_WRITE_LAST};
	struct ctp_probe *s = load();
	uint8_t v4[2048], frame[2100];
	struct ctp_flow_key key, next;
	struct ctp_flow f;
	struct ring_buffer *rb;
	struct records got = {0};
	uint64_t wire = 0;

	for (int i = 0; i < 3; i++) {
		size_t len = ct_frame_ipv6(
			frame, sizeof(frame), v4,
			ct_frame_roce(v4, sizeof(v4), ops[i], 0x77, 10 + i, 512, 1536));

		assert_true(len > 0);
		wire += len;
		assert_int_equal(run(bpf_program__fd(s->progs.ct_xdp), frame, len, NULL), 2);
	}
	memcpy(&key, frame + 14 + 8, 32); /* source and destination address */
	key.id = 0x77;
	key.transport = CTP_TRANSPORT_ROCE;
	memset(key.zero, 0, sizeof(key.zero));
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.ctp_flows6), &key, &f), 0);
	assert_int_equal(f.packets, 3);
	assert_int_equal(f.bytes, wire);
	assert_int_equal(f.messages, 1);
	assert_int_equal(f.message_bytes, 1536);
	assert_int_equal(total(s, CTP_T_ROCE_BYTES), wire);
	assert_int_equal(total(s, CTP_T_FLOWS_INSERTED), 1);
	/* nothing in the IPv4 map */
	assert_int_not_equal(bpf_map_get_next_key(bpf_map__fd(s->maps.ctp_flows), NULL, &next), 0);
	rb = ring_buffer__new(bpf_map__fd(s->maps.ctp_events), count_record, &got, NULL);
	assert_non_null(rb);
	ring_buffer__consume(rb);
	assert_int_equal(got.n, 1);
	assert_int_equal(got.message_bytes, 1536);
	assert_memory_equal(&got.key, &key, sizeof(key));
	ring_buffer__free(rb);
	ctp_probe__destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verifier_accepts), cmocka_unit_test(test_xdp_write_message),
		cmocka_unit_test(test_burst_records_carry_loss_and_marks),
		cmocka_unit_test(test_xdp_jumbo_frags),	 cmocka_unit_test(test_tc_tcp_gso),
		cmocka_unit_test(test_malformed),	 cmocka_unit_test(test_ipv6_flow),
	};

	if (geteuid()) {
		printf("SKIP: loading BPF programs needs root\n");
		return 77;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		printf("SKIP: the kernel has no BTF\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
