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

static void roce_key(struct ctp_flow_key *k, uint32_t qpn)
{
	memset(k, 0, sizeof(*k));
	k->src[10] = k->src[11] = k->dst[10] = k->dst[11] = 0xff;
	k->src[12] = k->dst[12] = 198;
	k->src[13] = k->dst[13] = 18;
	k->src[15] = 1;
	k->dst[15] = 2;
	k->id = qpn;
	k->transport = CTP_TRANSPORT_ROCE;
}

static int count_record(void *ctx, void *data, size_t size)
{
	const struct ctp_record *r = data;

	if (r->type == CTP_REC_MESSAGE)
		((uint64_t *)ctx)[0] += r->bytes;
	((uint64_t *)ctx)[1]++;
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
	struct ctp_flow_key key;
	struct ctp_flow f;
	struct ring_buffer *rb;
	uint64_t wire = 0, got[2] = {0, 0};

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
	rb = ring_buffer__new(bpf_map__fd(s->maps.ctp_events), count_record, got, NULL);
	assert_non_null(rb);
	ring_buffer__consume(rb);
	assert_int_equal(got[1], 1);
	assert_int_equal(got[0], 4096);
	ring_buffer__free(rb);
	ctp_probe__destroy(s);
}

/* A jumbo frame through the multi-buffer (xdp.frags) program: counted whole. */
static void test_xdp_jumbo_frags(void **state)
{
	struct ctp_probe *s = load();
	static uint8_t frame[9100];
	size_t len = ct_frame_roce(frame, sizeof(frame), CT_OP_SEND_ONLY, 7, 1, 8900, 0);
	struct ctp_flow_key key;
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
	struct ctp_flow_key key = {0};
	struct ctp_flow f;
	size_t len = ct_frame_tcp(frame, sizeof(frame), 40000, 5201, 1000, 1000);
	int fd = bpf_program__fd(s->progs.ct_tc_egress);

	assert_int_equal(run(fd, frame, len, &skb), -1); /* TC_ACT_UNSPEC: on to the next */
	len = ct_frame_tcp(frame, sizeof(frame), 40000, 5201, 2000, 3000);
	skb.gso_segs = 3;
	skb.gso_size = 1000;
	run(fd, frame, len, &skb);

	memcpy(&key,
	       &(struct ctp_flow_key){.id = 40000u << 16 | 5201, .transport = CTP_TRANSPORT_TCP},
	       sizeof(key));
	key.src[10] = key.src[11] = key.dst[10] = key.dst[11] = 0xff;
	key.src[12] = key.dst[12] = 198;
	key.src[13] = key.dst[13] = 18;
	key.src[15] = 1;
	key.dst[15] = 2;
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
	ctp_probe__destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verifier_accepts), cmocka_unit_test(test_xdp_write_message),
		cmocka_unit_test(test_xdp_jumbo_frags),	 cmocka_unit_test(test_tc_tcp_gso),
		cmocka_unit_test(test_malformed),
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
