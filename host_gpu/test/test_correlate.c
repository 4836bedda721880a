// SPDX-License-Identifier: MIT
/*
 * Correlation on a synthesized job: `commtap synth` renders the job's capture
 * and truth; this harness writes, for every rank on host 0, the plugin ring
 * (communicators per parallel group, operations with kernel-channel children
 * at the predicted schedule's times) and the CUPTI ring (compute kernels) the
 * job would have produced, plus the RDMA QP map the host would report. The
 * library must label every flow host 0 sends with its true class, find the
 * iterations, and fill the predicted-versus-observed table.
 *
 *   test_correlate COMMTAP PROFILE
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "commtap/gpu_names.h"
#include "gpu_corr.h"

#define ITERS 4

static const char *commtap_exe, *profile_path;
static char dir[64];
static const char *transport = "roce";
static struct ct_profile prof;
static struct ct_prediction pred;
static json_object *truth;
static uint64_t iter_start[ITERS];
static struct ct_addr local;

static int32_t pid_of(unsigned rank)
{
	return 200000 + (int32_t)rank;
}

/* The communicator a rank uses for a class, Megatron rank order. */
static uint64_t comm_hash(unsigned r, int cls)
{
	unsigned t = prof.t, d = prof.d, stage = r / (t * d), dp = (r / t) % d, tp = r % t;
	uint64_t group;

	switch (cls) {
	case CT_CLASS_TP:
		group = stage * d + dp; /* members differ in tp */
		break;
	case CT_CLASS_DP:
		group = stage * t + tp;
		break;
	default: /* PP, EmbTableSyn, EP: the ranks of one (dp, tp) across stages */
		group = dp * t + tp;
		break;
	}
	/* The class is in the top byte so the test knows the truth. */
	return ((uint64_t)(cls + 1) << 24) + group;
}

static int comm_size(int cls)
{
	switch (cls) {
	case CT_CLASS_TP:
		return (int)prof.t;
	case CT_CLASS_DP:
		return (int)prof.d;
	case CT_CLASS_PP:
		return (int)prof.p;
	case CT_CLASS_EMB:
		return 2;
	default:
		return (int)prof.ep;
	}
}

/* Hosts the members of rank r's communicator of class cls span. */
static int comm_nodes(unsigned r, int cls)
{
	bool host[64] = {0};
	int n = 0;

	for (unsigned q = 0; q < prof.gpus; q++) {
		bool member = comm_hash(q, cls) == comm_hash(r, cls);

		if (cls == CT_CLASS_EMB) {
			unsigned stage = q / (prof.t * prof.d);

			member = member && (stage == 0 || stage == prof.p - 1);
		}
		if (member && prof.rank_host[q] < 64 && !host[prof.rank_host[q]]) {
			host[prof.rank_host[q]] = true;
			n++;
		}
	}
	return n;
}

static void push(struct ct_gpu_ring *ring, struct ct_gpu_rec *r)
{
	assert_true(ct_gpu_ring_push(ring, r));
}

/* One rank's plugin and CUPTI rings for the whole capture. */
static void write_rank_rings(unsigned r)
{
	struct ct_gpu_ring ring, cupti;
	char path[512];
	bool has[CT_CLASS_COUNT] = {0};
	uint64_t next_id = 1;

	ct_gpu_ring_path(path, sizeof(path), dir, "nccl", pid_of(r));
	assert_int_equal(ct_gpu_ring_create(&ring, path, 1 << 16, 1, CT_GPU_SRC_HARNESS), 0);
	ring.hdr->pid = pid_of(r);
	ct_gpu_ring_path(path, sizeof(path), dir, "cupti", pid_of(r));
	assert_int_equal(ct_gpu_ring_create(&cupti, path, 1 << 14, 1, CT_GPU_SRC_HARNESS), 0);
	cupti.hdr->pid = pid_of(r);

	for (size_t i = 0; i < pred.n_xfers; i++) {
		const struct ct_transfer *x = &pred.xfers[i];

		if ((x->src_rank == r || x->dst_rank == r) && x->cls < CT_CLASS_COUNT)
			has[x->cls] = true;
	}
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		struct ct_gpu_rec rec = {.type = CT_GPU_REC_COMM};

		if (!has[c])
			continue;
		rec.comm_hash = comm_hash(r, c);
		rec.rank = (int)r;
		rec.t_start = rec.t_stop = iter_start[0] - 1000000;
		snprintf(rec.comm.name, sizeof(rec.comm.name), "%s-%u",
			 ct_class_name((enum ct_class)c), r);
		rec.comm.n_ranks = comm_size(c);
		rec.comm.n_nodes = comm_nodes(r, c);
		rec.comm.version = 5;
		push(&ring, &rec);
	}
	for (unsigned it = 0; it < ITERS; it++) {
		uint64_t base = iter_start[it];
		/* Compute kernels: the predicted T_comp from the iteration start. */
		uint64_t comp = (uint64_t)(pred.t_comp * 1e9), per = comp / 50;

		for (unsigned k = 0; k < 50; k++) {
			struct ct_gpu_rec rec = {.type = CT_GPU_REC_CUPTI_KERNEL, .rank = -1};

			rec.t_start = base + k * per;
			rec.t_stop = rec.t_start + per;
			rec.cupti.kclass = CT_KCLASS_COMPUTE;
			strcpy(rec.cupti.name, "sm90_xmma_gemm_bf16");
			push(&cupti, &rec);
		}
		/* One operation per (class, start) the rank takes part in. */
		for (size_t i = 0; i < pred.n_xfers; i++) {
			const struct ct_transfer *x = &pred.xfers[i];
			struct ct_gpu_rec op = {0}, ch = {.type = CT_GPU_REC_KERNEL_CH};
			uint64_t a, b;
			bool dup = false;

			if ((x->src_rank != r && x->dst_rank != r) || x->cls >= CT_CLASS_COUNT)
				continue;
			for (size_t k = 0; k < i && !dup; k++)
				dup = pred.xfers[k].cls == x->cls &&
				      pred.xfers[k].start == x->start &&
				      (pred.xfers[k].src_rank == r || pred.xfers[k].dst_rank == r);
			if (dup)
				continue;
			a = base + (uint64_t)(x->start * 1e9);
			b = a + (uint64_t)(x->duration * 1e9);
			for (size_t k = i + 1; k < pred.n_xfers; k++) {
				const struct ct_transfer *y = &pred.xfers[k];

				if (y->cls == x->cls && y->start == x->start &&
				    (y->src_rank == r || y->dst_rank == r) &&
				    a + (uint64_t)(y->duration * 1e9) > b)
					b = a + (uint64_t)(y->duration * 1e9);
			}
			op.comm_hash = comm_hash(r, x->cls);
			op.rank = (int)r;
			op.id = next_id++;
			op.t_start = a - 5000;
			op.t_stop = a - 1000;
			if (x->cls == CT_CLASS_PP || x->cls == CT_CLASS_EP) {
				op.type = CT_GPU_REC_P2P;
				op.op.func = x->src_rank == r ? CT_FUNC_SEND : CT_FUNC_RECV;
				op.op.bytes = x->bytes;
				op.op.peer = (int)(x->src_rank == r ? x->dst_rank : x->src_rank);
			} else {
				op.type = CT_GPU_REC_COLL;
				op.op.func = CT_FUNC_ALL_REDUCE;
				op.op.bytes =
					(uint64_t)ct_rank_traffic(&pred, r, x->cls)->msg_bytes;
				op.op.peer = -1;
			}
			push(&ring, &op);
			ch.comm_hash = op.comm_hash;
			ch.rank = (int)r;
			ch.id = next_id++;
			ch.parent_id = op.id;
			ch.t_start = a;
			ch.t_stop = b;
			push(&ring, &ch);
		}
	}
	ct_gpu_ring_close(&ring);
	ct_gpu_ring_close(&cupti);
}

static int setup(void **state)
{
	char cmd[2048], err[256], path[512];
	json_object *starts;

	strcpy(dir, "/tmp/commtap-corr-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "'%s' synth '%s' -o '%s/job.pcap' --iterations %d --scale 0.01 --snaplen 64 "
		 "--transport %s >/dev/null",
		 commtap_exe, profile_path, dir, ITERS, transport);
	if (system(cmd)) {
		fprintf(stderr, "failed: %s\n", cmd);
		return -1;
	}
	if (ct_profile_load(profile_path, &prof, err, sizeof(err)) || ct_predict(&prof, &pred)) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/job.truth.json", dir);
	truth = json_object_from_file(path);
	if (!truth || !json_object_object_get_ex(truth, "iteration_starts_ns", &starts))
		return -1;
	for (int i = 0; i < ITERS; i++)
		iter_start[i] = json_object_get_uint64(json_object_array_get_idx(starts, i));
	return 0;
}

static int teardown(void **state)
{
	const char *keep = getenv("COMMTAP_CORR_KEEP");
	char cmd[1400];

	/* The trace test (test/trace) draws this job's report and gpu section. */
	if (keep) {
		snprintf(cmd, sizeof(cmd),
			 "cp '%s/report.json' '%s/%s-report.json' && "
			 "cp '%s/gpu-report.json' '%s/%s-gpu.json'",
			 dir, keep, transport, dir, keep, transport);
		if (system(cmd))
			return -1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return -1;
	json_object_put(truth);
	ct_prediction_free(&pred);
	ct_profile_free(&prof);
	return 0;
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "";
}

static int64_t jint(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : -1;
}

static void test_synth_job(void **state)
{
	json_object *flows, *labels, *lf;
	struct gc_job job;
	struct gc_flows fl;
	struct gc_iter it[16];
	char err[256], path[512];
	size_t n_local = 0, right = 0, n_it;
	bool local_set = false;
	FILE *out;

	assert_true(json_object_object_get_ex(truth, "flows", &flows));
	/* Host 0's address: the source of a flow its ranks send. */
	for (size_t i = 0; i < json_object_array_length(flows) && !local_set; i++) {
		json_object *f = json_object_array_get_idx(flows, i);
		int64_t sr = jint(f, "src_rank");

		if (!strcmp(jstr(f, "direction"), "data") && sr >= 0 && prof.rank_host[sr] == 0)
			local_set = !ct_addr_parse(jstr(f, "src"), &local);
	}
	assert_true(local_set);

	for (unsigned r = 0; r < prof.gpus; r++)
		if (prof.rank_host[r] == 0)
			write_rank_rings(r);

	gc_job_init(&job);
	assert_true(gc_job_read_dir(&job, dir) > 0);
	/* What host 0 reports: each local QP's remote QPN, or each socket's ports, and process. */
	for (size_t i = 0; i < json_object_array_length(flows); i++) {
		json_object *f = json_object_array_get_idx(flows, i);
		struct ct_addr src;
		int64_t rank = !strcmp(jstr(f, "direction"), "data") ? jint(f, "src_rank")
								     : jint(f, "dst_rank");

		if (strcmp(jstr(f, "transport"), transport) ||
		    ct_addr_parse(jstr(f, "src"), &src) || memcmp(&src, &local, sizeof(src)) ||
		    rank < 0)
			continue;
		/* RoCE: the QP map (netlink); TCP: the local end of the socket
		 * (/proc), whose port is the source port of what host 0 sends. */
		if (!strcmp(transport, "tcp"))
			assert_int_equal(gc_job_add_socket(&job, pid_of((unsigned)rank),
							   (uint16_t)jint(f, "sport"),
							   (uint16_t)jint(f, "dport")),
					 0);
		else
			assert_int_equal(gc_job_add_qp(&job, pid_of((unsigned)rank), 0,
						       (uint32_t)jint(f, "qpn")),
					 0);
		n_local++;
	}
	assert_true(n_local > 0);
	gc_job_finish(&job);
	assert_int_equal(job.dropped, 0);
	gc_classify(&job, &prof, &pred);

	/* Every communicator gets the class the harness built it for. */
	for (size_t i = 0; i < job.n_comms; i++) {
		int want = (int)((job.comms[i].hash >> 24) - 1);

		if (job.comms[i].cls != want)
			fprintf(stderr, "comm %s: %s (%s), want %s\n", job.comms[i].name,
				ct_class_name(job.comms[i].cls), job.comms[i].why,
				ct_class_name(want));
		assert_int_equal(job.comms[i].cls, want);
	}

	snprintf(path, sizeof(path), "%s/job.pcap", dir);
	assert_int_equal(gc_flows_read_pcap(&fl, path, &local, err, sizeof(err)), 0);
	assert_int_equal(gc_join(&job, &fl, 1000000), n_local);
	/* Cross-host operations got their bursts: every PP send of host 0's
	 * stage-1 ranks to stage 2 carries wire bytes. */
	{
		unsigned long pp_send = 0, pp_send_joined = 0;
		uint64_t joined = 0, flows_bytes = 0;

		for (size_t i = 0; i < job.n_ops; i++) {
			const struct gc_op *o = &job.ops[i];
			const struct gc_comm *c = &job.comms[o->comm];
			unsigned rank = (unsigned)(c->pid - pid_of(0));

			joined += o->wire_bytes;
			if (c->cls != CT_CLASS_PP || o->func != CT_FUNC_SEND || o->peer < 0 ||
			    prof.rank_host[o->peer] == prof.rank_host[rank])
				continue;
			pp_send++;
			pp_send_joined += o->wire_bytes > 0;
		}
		for (size_t i = 0; i < fl.n; i++)
			flows_bytes += fl.v[i].bytes;
		assert_true(pp_send > 0);
		assert_int_equal(pp_send_joined, pp_send);
		assert_true(joined > flows_bytes / 2);
	}

	/* Labels: written, then compared with the truth flow by flow. */
	snprintf(path, sizeof(path), "%s/labels.json", dir);
	out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(gc_write_labels(&job, &fl, out), 0);
	fclose(out);
	labels = json_object_from_file(path);
	assert_non_null(labels);
	assert_string_equal(jstr(labels, "schema"), "commtap.labels/v1");
	assert_true(json_object_object_get_ex(labels, "flows", &lf));
	assert_int_equal(json_object_array_length(lf), n_local);
	for (size_t i = 0; i < json_object_array_length(lf); i++) {
		json_object *l = json_object_array_get_idx(lf, i);

		for (size_t k = 0; k < json_object_array_length(flows); k++) {
			json_object *f = json_object_array_get_idx(flows, k);

			if (jint(f, "qpn") == jint(l, "qpn") &&
			    jint(f, "sport") == jint(l, "sport") &&
			    jint(f, "dport") == jint(l, "dport") &&
			    !strcmp(jstr(f, "transport"), jstr(l, "transport")) &&
			    !strcmp(jstr(f, "src"), jstr(l, "src")) &&
			    !strcmp(jstr(f, "dst"), jstr(l, "dst"))) {
				right += !strcmp(jstr(f, "class"), jstr(l, "class"));
				if (strcmp(jstr(f, "class"), jstr(l, "class")))
					fprintf(stderr,
						"flow qpn %lld %s ranks %lld->%lld: truth %s, "
						"label %s\n",
						(long long)jint(f, "qpn"), jstr(f, "direction"),
						(long long)jint(f, "src_rank"),
						(long long)jint(f, "dst_rank"), jstr(f, "class"),
						jstr(l, "class"));
				break;
			}
		}
	}
	assert_int_equal(right, n_local);
	json_object_put(labels);

	/* commtap analyze takes them. */
	{
		char cmd[2048];

		snprintf(cmd, sizeof(cmd),
			 "'%s' analyze --labels '%s/labels.json' --json '%s/report.json' "
			 "'%s/job.pcap' >/dev/null",
			 commtap_exe, dir, dir, dir);
		assert_int_equal(system(cmd), 0);
	}

	/* Rank 0's iterations: one per rendered iteration, T_comp as predicted. */
	if (getenv("COMMTAP_SHOW_OPS"))
		for (size_t i = 0; i < job.n_ops; i++)
			if (job.ops[i].pid == pid_of(0))
				fprintf(stderr, "op %s %.6f +%.6f\n",
					ct_class_name(job.comms[job.ops[i].comm].cls),
					(job.ops[i].t_start - iter_start[0]) / 1e9,
					(job.ops[i].t_end - job.ops[i].t_start) / 1e9);
	n_it = gc_iterations(&job, pid_of(0), it, 16);
	assert_int_equal(n_it, ITERS);
	for (size_t i = 0; i < n_it; i++) {
		assert_true(it[i].t_comp > 0.99 * pred.t_comp && it[i].t_comp < 1.01 * pred.t_comp);
		assert_true(it[i].t_comm_all > 0);
		assert_true(it[i].bubble >= -1e-9);
		assert_true(it[i].r_comm >= 0 && it[i].r_comm <= 1);
	}
	snprintf(path, sizeof(path), "%s/gpu-report.json", dir);
	out = fopen(path, "w");
	assert_non_null(out);
	assert_int_equal(gc_write_report(&job, &fl, pid_of(0), &pred, prof.hw.nic_gbps, out), 0);
	fclose(out);
	{
		json_object *rep = json_object_from_file(path), *rows, *row0;

		assert_non_null(rep);
		assert_true(json_object_object_get_ex(rep, "predicted_vs_observed", &rows));
		assert_true(json_object_array_length(rows) >= 4);
		row0 = json_object_array_get_idx(rows, 1); /* T_comp */
		assert_string_equal(jstr(row0, "quantity"), "T_comp");
		/* The rings follow the predicted schedule, so the classes whose
		 * transfers do not overlap each other come back as predicted. */
		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			json_object *r = json_object_array_get_idx(rows, i), *e;
			const char *q = jstr(r, "quantity");

			if (strcmp(q, "T_iter") && strcmp(q, "T_comp") && strcmp(q, "T_TP") &&
			    strcmp(q, "T_DP") && strcmp(q, "T_EmbTableSyn"))
				continue;
			assert_true(json_object_object_get_ex(r, "error_pct", &e));
			assert_true(fabs(json_object_get_double(e)) < 5);
		}
		if (getenv("COMMTAP_SHOW_REPORT"))
			printf("%s\n",
			       json_object_to_json_string_ext(rep, JSON_C_TO_STRING_PRETTY));
		json_object_put(rep);
	}
	gc_flows_free(&fl);
	gc_job_free(&job);
}

/* /proc/net/tcp lines as the kernel prints them (ports in hex). */
static void test_proc_tcp_line(void **state)
{
	uint16_t lp, rp;
	unsigned long ino;

	assert_int_equal(gc_proc_tcp_line("   3: 0100A8C0:A148 0200A8C0:DE76 01 00000000:00000000 "
					  "00:00000000 00000000  1000        0 4711 1 "
					  "0000000000000000 20 4 30 10 -1",
					  &lp, &rp, &ino),
			 0);
	assert_int_equal(lp, 0xa148);
	assert_int_equal(rp, 0xde76);
	assert_int_equal(ino, 4711);
	assert_int_equal(gc_proc_tcp_line("  sl  local_address rem_address   st", &lp, &rp, &ino),
			 -EINVAL);
	assert_int_equal(gc_proc_tcp_line("   0: 0100007F:FFFFF 00000000:0000 0A x y z 0 0 1", &lp,
					  &rp, &ino),
			 -EINVAL);
}

/*
 * Without a QP map or sockets (a host without RDMA resource tracking): the
 * flows are linked by time alone, to the cross-node communicator whose
 * operations hold most of their packets. Most of host 0's bytes must be
 * linked, and nearly all of those to a communicator of their true class.
 */
static void test_synth_job_by_time(void **state)
{
	json_object *flows;
	struct gc_job job;
	struct gc_flows fl;
	char err[256], path[512];
	uint64_t total = 0, linked = 0, right = 0;

	(void)state;
	for (unsigned r = 0; r < prof.gpus; r++)
		if (prof.rank_host[r] == 0)
			write_rank_rings(r);
	gc_job_init(&job);
	assert_true(gc_job_read_dir(&job, dir) > 0);
	gc_job_finish(&job);
	gc_classify(&job, &prof, &pred);
	snprintf(path, sizeof(path), "%s/job.pcap", dir);
	assert_int_equal(gc_flows_read_pcap(&fl, path, &local, err, sizeof(err)), 0);
	gc_join(&job, &fl, 1000000);
	assert_true(json_object_object_get_ex(truth, "flows", &flows));
	for (size_t i = 0; i < fl.n; i++) {
		const struct gc_flow *g = &fl.v[i];
		const char *cls = NULL;

		for (size_t k = 0; k < json_object_array_length(flows) && !cls; k++) {
			json_object *f = json_object_array_get_idx(flows, k);
			struct ct_addr src, dst;

			if (ct_addr_parse(jstr(f, "src"), &src) || ct_addr_parse(jstr(f, "dst"), &dst) ||
			    memcmp(&src, &g->src, sizeof(src)) || memcmp(&dst, &g->dst, sizeof(dst)))
				continue;
			if (g->tcp ? jint(f, "sport") == g->sport && jint(f, "dport") == g->dport
				   : jint(f, "qpn") == (int64_t)g->qpn)
				cls = jstr(f, "class");
		}
		if (!cls || !strcmp(cls, "Other"))
			continue;
		total += g->bytes;
		if (g->comm < 0)
			continue;
		linked += g->bytes;
		right += !strcmp(cls, ct_class_name(g->cls)) ? g->bytes : 0;
	}
	printf("by time: %.0f%% of host 0's bytes linked, %.0f%% of those to their class\n",
	       100.0 * (double)linked / (double)(total ? total : 1),
	       100.0 * (double)right / (double)(linked ? linked : 1));
	assert_true(total > 0);
	assert_true(2 * linked >= total);
	assert_true(10 * right >= 9 * linked);
	gc_flows_free(&fl);
	gc_job_free(&job);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_synth_job),
					   cmocka_unit_test(test_synth_job_by_time),
					   cmocka_unit_test(test_proc_tcp_line)};
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: %s COMMTAP PROFILE\n", argv[0]);
		return 2;
	}
	commtap_exe = argv[1];
	profile_path = argv[2];
	/* NCCL over RoCE (QP map), then over its socket transport (TCP). */
	rc = cmocka_run_group_tests(tests, setup, teardown);
	transport = "tcp";
	return rc | cmocka_run_group_tests(tests, setup, teardown);
}
