// SPDX-License-Identifier: MIT
/*
 * The QP join on stock NCCL (no QP network events): the real plugin, driven
 * as NCCL drives it, writes three communicators of one process (A, then B,
 * then C after A has gone); QP table snapshots as `commtap-rdma-qp` writes
 * them show the QPs each communicator created while it connected (C's reuse
 * A's local QP number); a capture built with the project's RoCE frame
 * builder carries their remote QPNs. The labels must name each flow's
 * communicator, its name and rank, the collectives it carried, and the
 * window of its QP mapping, and must go by the QP, not by time: A's second
 * QP carries packets while only B has operations running.
 * argv[1]: the plugin's path.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pcap/pcap.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpu_corr.h"
#include "nccl_driver.h"
#include "roce_frame.h"

static const char *plugin_path;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pause_ms(int ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};

	nanosleep(&ts, NULL);
}

/* A communicator's collectives; [t0, t1] around each, for the packets. */
struct window {
	uint64_t t0, t1;
};

static void run_colls(struct drv_comm *c, uint64_t seq0, int n, struct window *w)
{
	struct drv_coll op = {.func = "AllReduce",
			      .datatype = "ncclFloat32",
			      .algo = "Ring",
			      .proto = "Simple",
			      .count = 1 << 18,
			      .root = -1,
			      .n_channels = 2,
			      .n_steps = 4,
			      .chunk = 131072,
			      .peer = 1,
			      .qpn_base = 0x700};

	for (int i = 0; i < n; i++) {
		op.seq = seq0 + (uint64_t)i;
		w[i].t0 = now_ns();
		drv_collective(c, &op);
		w[i].t1 = now_ns();
		pause_ms(3); /* 3 ms between collectives: more than the join's slack */
	}
}

struct pkt {
	uint64_t ts;
	uint32_t dqpn;
};

static int cmp_pkt(const void *a, const void *b)
{
	const struct pkt *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void write_pcap(const char *path, struct pkt *p, size_t n)
{
	pcap_t *pc =
		pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d = pcap_dump_open(pc, path);
	uint8_t buf[ROCE_FRAME_MAX];

	assert_non_null(d);
	qsort(p, n, sizeof(*p), cmp_pkt);
	for (size_t i = 0; i < n; i++) {
		struct roce_frame r = {.src4 = {198, 18, 0, 1},
				       .dst4 = {198, 18, 0, 2},
				       .opcode = 0x0a, /* RC RDMA WRITE ONLY */
				       .dqpn = p[i].dqpn,
				       .psn = (uint32_t)i,
				       .dma_len = 1024,
				       .payload_len = 1024};
		struct pcap_pkthdr h = {0};
		size_t len = roce_frame_build(buf, sizeof(buf), &r);

		h.ts.tv_sec = (time_t)(p[i].ts / 1000000000ull);
		h.ts.tv_usec = (suseconds_t)(p[i].ts % 1000000000ull); /* ns: nano precision */
		h.caplen = h.len = (bpf_u_int32)len;
		pcap_dump((u_char *)d, &h, buf);
	}
	pcap_dump_close(d);
	pcap_close(pc);
}

static json_object *label_of(json_object *flows, uint32_t qpn)
{
	for (size_t i = 0; i < json_object_array_length(flows); i++) {
		json_object *f = json_object_array_get_idx(flows, i), *v;

		if (json_object_object_get_ex(f, "qpn", &v) &&
		    (uint32_t)json_object_get_int64(v) == qpn)
			return f;
	}
	return NULL;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static int64_t jint(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : -1;
}

static void test_stock_nccl_join(void **state)
{
	char dir[] = "/tmp/commtap-qp-join.XXXXXX", ring[512], pcap[600], table[600], labels[600];
	struct window wa[5], wb[5], wc[5];
	struct pkt pk[64];
	size_t n_pk = 0;
	uint64_t s0, s1, s2, s3, s4;
	struct drv_lib lib;
	struct drv_comm a, b, c;
	struct gc_job job;
	struct gc_flows flows;
	struct ct_addr local;
	char err[256], mask[32];
	int pid = getpid();
	FILE *f;
	json_object *root, *fl, *l;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("COMMTAP_GPU_RING_DIR", dir, 1);
	/* read after the job, as `commtap-gpu correlate` does */
	setenv("COMMTAP_GPU_RING_KEEP", "1", 1);
	/* Stock NCCL: no network plugin events. */
	snprintf(mask, sizeof(mask), "%d",
		 NP_GROUP_API | NP_COLL_API | NP_KERNEL_LAUNCH | NP_COLL | NP_PROXY_OP |
			 NP_PROXY_STEP | NP_KERNEL_CH);
	setenv("COMMTAP_NCCL_MASK", mask, 1);
	assert_int_equal(drv_open(&lib, plugin_path), 0);

	/* The timeline: QP snapshots between the communicators' connections. */
	s0 = now_ns();
	pause_ms(2);
	assert_int_equal(drv_init(&a, &lib, 5, 0xa11ce, "dp-a", 2, 16, 3), 0);
	pause_ms(2);
	run_colls(&a, 10, 5, wa);
	s1 = now_ns(); /* A connected: 0x101, 0x102 */
	pause_ms(2);
	assert_int_equal(drv_init(&b, &lib, 5, 0xb0b, "pp-b", 2, 2, 1), 0);
	pause_ms(2);
	s2 = now_ns(); /* B connected: 0x103 */
	pause_ms(2);
	run_colls(&b, 0, 5, wb);
	assert_int_equal(drv_finalize(&a), 0);
	pause_ms(2);
	s3 = now_ns(); /* A's QPs destroyed */
	pause_ms(2);
	assert_int_equal(drv_init(&c, &lib, 5, 0xc0c0, "ep-c", 2, 8, 5), 0);
	pause_ms(2);
	s4 = now_ns(); /* C connected: 0x101 again, to another remote QP */
	pause_ms(2);
	run_colls(&c, 100, 5, wc);
	assert_int_equal(drv_finalize(&b), 0);
	assert_int_equal(drv_finalize(&c), 0);

	snprintf(table, sizeof(table), "%s/qp-table.txt", dir);
	f = fopen(table, "w");
	assert_non_null(f);
	fprintf(f, "# at %llu\n", (unsigned long long)s0);
	fprintf(f, "# at %llu\n", (unsigned long long)s1);
	fprintf(f, "link mlx5_0/1 lqpn 257 rqpn 2305 type RC state RTS pid %d comm python\n", pid);
	fprintf(f, "link mlx5_0/1 lqpn 258 rqpn 2306 type RC state RTS pid %d comm python\n", pid);
	fprintf(f, "link mlx5_0/1 lqpn 1 type GSI state RTS comm [ib_core]\n");
	fprintf(f, "# at %llu\n", (unsigned long long)s2);
	fprintf(f, "link mlx5_0/1 lqpn 257 rqpn 2305 type RC state RTS pid %d comm python\n", pid);
	fprintf(f, "link mlx5_0/1 lqpn 258 rqpn 2306 type RC state RTS pid %d comm python\n", pid);
	fprintf(f, "link mlx5_0/1 lqpn 259 rqpn 2307 type RC state RTS pid %d comm python\n", pid);
	fprintf(f, "# at %llu\n", (unsigned long long)s3);
	fprintf(f, "link mlx5_0/1 lqpn 259 rqpn 2307 type RC state RTS pid %d comm python\n", pid);
	fprintf(f, "# at %llu\n", (unsigned long long)s4);
	fprintf(f, "link mlx5_0/1 lqpn 259 rqpn 2307 type RC state RTS pid %d comm python\n", pid);
	fprintf(f, "link mlx5_0/1 lqpn 257 rqpn 2308 type RC state RTS pid %d comm python\n", pid);
	fclose(f);

	/* Packets in the middle of each collective: A's first QP during A's,
	 * A's second QP during B's (the QP decides, not the time), B's and
	 * C's during their own. */
	for (int i = 0; i < 5; i++) {
		pk[n_pk++] = (struct pkt){(wa[i].t0 + wa[i].t1) / 2, 2305};
		pk[n_pk++] = (struct pkt){(wb[i].t0 + wb[i].t1) / 2, 2306};
		pk[n_pk++] = (struct pkt){(wb[i].t0 + wb[i].t1) / 2 + 1, 2307};
		pk[n_pk++] = (struct pkt){(wc[i].t0 + wc[i].t1) / 2, 2308};
	}
	snprintf(pcap, sizeof(pcap), "%s/capture.pcap", dir);
	write_pcap(pcap, pk, n_pk);

	gc_job_init(&job);
	drv_ring_path(ring, sizeof(ring));
	assert_int_equal(gc_job_read_ring(&job, ring), 0);
	gc_job_finish(&job);
	gc_classify(&job, NULL, NULL);
	f = fopen(table, "r");
	assert_non_null(f);
	assert_int_equal(gc_job_read_qp_table(&job, f, table, err, sizeof(err)), 4);
	fclose(f);
	assert_int_equal(gc_assign_qps(&job), 4);
	assert_int_equal(ct_addr_parse("198.18.0.1", &local), 0);
	assert_int_equal(gc_flows_read_pcap(&flows, pcap, &local, err, sizeof(err)), 0);
	assert_int_equal(gc_join(&job, &flows, 1000000), 4);
	snprintf(labels, sizeof(labels), "%s/labels.json", dir);
	f = fopen(labels, "w");
	assert_non_null(f);
	assert_int_equal(gc_write_labels(&job, &flows, f), 0);
	fclose(f);

	root = json_object_from_file(labels);
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "flows", &fl));
	assert_int_equal(json_object_array_length(fl), 4);

	l = label_of(fl, 2305);
	assert_non_null(l);
	assert_string_equal(jstr(l, "comm"), "0xa11ce");
	assert_string_equal(jstr(l, "comm_name"), "dp-a");
	assert_int_equal(jint(l, "rank"), 3);
	assert_int_equal(jint(l, "nranks"), 16);
	assert_int_equal(jint(l, "lqpn"), 257);
	assert_string_equal(jstr(l, "qp_from"), "connect");
	assert_int_equal(jint(l, "seq_first"), 10);
	assert_int_equal(jint(l, "seq_last"), 14);
	assert_int_equal(jint(l, "valid_from_ns"), (int64_t)s0);
	assert_int_equal(jint(l, "valid_to_ns"), (int64_t)s3);

	l = label_of(fl, 2306); /* A's QP, its packets in B's time */
	assert_non_null(l);
	assert_string_equal(jstr(l, "comm"), "0xa11ce");
	assert_false(json_object_object_get_ex(l, "seq_first", NULL));

	l = label_of(fl, 2307);
	assert_non_null(l);
	assert_string_equal(jstr(l, "comm_name"), "pp-b");
	assert_int_equal(jint(l, "rank"), 1);
	assert_int_equal(jint(l, "seq_first"), 0);
	assert_int_equal(jint(l, "seq_last"), 4);
	assert_int_equal(jint(l, "valid_from_ns"), (int64_t)s1);
	assert_false(json_object_object_get_ex(l, "valid_to_ns", NULL));

	l = label_of(fl, 2308); /* local QP 257 reused by C */
	assert_non_null(l);
	assert_string_equal(jstr(l, "comm_name"), "ep-c");
	assert_int_equal(jint(l, "lqpn"), 257);
	assert_int_equal(jint(l, "seq_first"), 100);
	assert_int_equal(jint(l, "seq_last"), 104);
	assert_int_equal(jint(l, "valid_from_ns"), (int64_t)s3);

	json_object_put(root);
	gc_flows_free(&flows);
	gc_job_free(&job);
	drv_close(&lib);
	unlink(labels);
	unlink(pcap);
	unlink(table);
	unlink(ring);
	rmdir(dir);
}

/* Malformed tables are refused with the line named. */
static void test_table_errors(void **state)
{
	static const char *const bad[] = {
		"link mlx5_0/1 lqpn 5 rqpn 6 type RC state RTS pid 1 comm x\n",
		"# at 100\n# at 50\n",
		"# at 100\nlqpn 5\n",
	};
	struct gc_job job;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");

		gc_job_init(&job);
		err[0] = 0;
		assert_int_equal(gc_job_read_qp_table(&job, f, "t.txt", err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "t.txt:"));
		fclose(f);
		gc_job_free(&job);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_errors),
		cmocka_unit_test(test_stock_nccl_join),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	plugin_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
