// SPDX-License-Identifier: MIT
/*
 * commtap-gpu: the agent's GPU correlation, runnable by hand.
 *
 *   commtap-gpu dump RING                 print a ring's records, one a line
 *   commtap-gpu check EVENTS CUPTI_RING [NCCL_RING]   the GPU check (docs/gpu.md)
 *   commtap-gpu correlate --rings DIR --pcap FILE --local ADDR
 *               [--profile FILE] [--qp-map live|none|QP-TABLE] [--pid PID]
 *               [--labels OUT] [--report OUT] [--nic-gbps G]
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <commtap/params.h>

#include "commtap/gpu_names.h"
#include "gpu_corr.h"
#ifdef COMMTAP_HAVE_MNL
#include "rdma_qp.h"
#endif

static int dump(const char *path)
{
	struct ct_gpu_ring ring;
	struct ct_gpu_rec r;
	int err = ct_gpu_ring_open(&ring, path);

	if (err) {
		fprintf(stderr, "commtap-gpu: %s: %s\n", path, strerror(-err));
		return 1;
	}
	printf("# pid %d comm %s source %u lanes %u x %u dropped %llu lost %llu\n", ring.hdr->pid,
	       ring.hdr->comm, ring.hdr->source, ring.hdr->lanes, ring.hdr->lane_slots,
	       (unsigned long long)ct_gpu_ring_dropped(&ring),
	       (unsigned long long)ct_gpu_ring_errors(&ring));
	while (ct_gpu_ring_pop(&ring, &r) == 1) {
		printf("type %u comm 0x%llx rank %d id %llu parent %llu start %llu stop %llu",
		       r.type, (unsigned long long)r.comm_hash, r.rank, (unsigned long long)r.id,
		       (unsigned long long)r.parent_id, (unsigned long long)r.t_start,
		       (unsigned long long)r.t_stop);
		switch (r.type) {
		case CT_GPU_REC_COMM:
			printf(" name %s nranks %d nnodes %d", r.comm.name, r.comm.n_ranks,
			       r.comm.n_nodes);
			break;
		case CT_GPU_REC_COLL:
		case CT_GPU_REC_P2P:
		case CT_GPU_REC_COLL_API:
		case CT_GPU_REC_P2P_API:
			printf(" func %s count %llu type %s algo %s proto %s bytes %llu",
			       ct_gpu_func_name(r.op.func), (unsigned long long)r.op.count,
			       ct_gpu_dtype_name(r.op.datatype), ct_gpu_algo_name(r.op.algo),
			       ct_gpu_proto_name(r.op.proto), (unsigned long long)r.op.bytes);
			break;
		case CT_GPU_REC_KERNEL_CH:
			printf(" channel %u gpu %llu..%llu", r.kch.channel,
			       (unsigned long long)r.kch.gpu_start,
			       (unsigned long long)r.kch.gpu_stop);
			break;
		case CT_GPU_REC_CUPTI_KERNEL:
			printf(" kernel %s class %s", r.cupti.name,
			       r.cupti.kclass == CT_KCLASS_NCCL ? "nccl" : "compute");
			break;
		default:
			break;
		}
		putchar('\n');
	}
	ct_gpu_ring_close(&ring);
	return 0;
}

#ifdef COMMTAP_HAVE_MNL
static void add_live_qp(void *arg, const struct ct_rdma_qp *qp)
{
	if (qp->has_pid && qp->has_rqpn)
		gc_job_add_qp(arg, (int32_t)qp->pid, qp->lqpn, qp->rqpn);
}
#endif

/* The GPU check: CUDA-event times from gpu-check against the CUPTI ring's
 * kernel times (GEMM kernels; for the all-reduce, the GPU activity that is
 * not a GEMM: a one-rank communicator reduces by a copy or a small kernel),
 * and the plugin's API and kernel-launch events per collective. */
struct check_event {
	int kind; /* 0 gemm, 1 allreduce */
	double ns;
	uint64_t t0, t1;
	double ring_ns; /* GPU activity inside [t0, t1] from the ring */
};

static int check(const char *events, const char *cupti_ring, const char *nccl_ring)
{
	static struct check_event ev[4096];
	double ev_sum[2] = {0}, ring_sum[2] = {0}, err_pct;
	unsigned long ev_n[2] = {0}, api = 0, launch = 0, colls = 0;
	unsigned long long t0, t1;
	struct ct_gpu_ring ring;
	struct ct_gpu_rec r;
	size_t n = 0;
	char what[32];
	double ms;
	FILE *f = fopen(events, "r");
	int rc = 0, err;

	if (!f) {
		fprintf(stderr, "commtap-gpu: %s: %s\n", events, strerror(errno));
		return 1;
	}
	while (n < 4096 && fscanf(f, "%31s %lf %llu %llu", what, &ms, &t0, &t1) == 4) {
		int k = !strcmp(what, "gemm") ? 0 : !strcmp(what, "allreduce") ? 1 : -1;

		if (k >= 0 && t1 > t0)
			ev[n++] = (struct check_event){k, ms * 1e6, t0, t1, 0};
	}
	fclose(f);
	if (!n) {
		fprintf(stderr, "commtap-gpu: %s: no \"gemm|allreduce MS T0 T1\" lines\n", events);
		return 1;
	}
	err = ct_gpu_ring_open(&ring, cupti_ring);
	if (err) {
		fprintf(stderr, "commtap-gpu: %s: %s\n", cupti_ring, strerror(-err));
		return 1;
	}
	/* Kernels and device-to-device copies inside an event's window count
	 * towards it (a GEMM may be several kernels; a one-rank all-reduce is a
	 * copy or a small kernel). */
	while (ct_gpu_ring_pop(&ring, &r) == 1) {
		if (r.type != CT_GPU_REC_CUPTI_KERNEL &&
		    !(r.type == CT_GPU_REC_CUPTI_MEMCPY && r.cupti.copy_kind == 8 /* DTOD */))
			continue;
		for (size_t i = 0; i < n; i++)
			if (r.t_start >= ev[i].t0 && r.t_stop <= ev[i].t1)
				ev[i].ring_ns += (double)(r.t_stop - r.t_start);
	}
	ct_gpu_ring_close(&ring);
	for (size_t i = 0; i < n; i++) {
		ev_sum[ev[i].kind] += ev[i].ns;
		ring_sum[ev[i].kind] += ev[i].ring_ns;
		ev_n[ev[i].kind]++;
	}
	for (int k = 0; k < 2; k++) {
		if (!ev_n[k])
			continue;
		err_pct = ev_sum[k] > 0 ? (ring_sum[k] - ev_sum[k]) / ev_sum[k] * 100 : 100;
		printf("%s: CUDA events %.1f us, CUPTI ring %.1f us (mean of %lu), error %.2f%%\n",
		       k ? "allreduce" : "gemm", ev_sum[k] / ev_n[k] / 1e3,
		       ring_sum[k] / ev_n[k] / 1e3, ev_n[k], err_pct);
		if (err_pct > 5 || err_pct < -5)
			rc = 1;
	}
	if (nccl_ring) {
		err = ct_gpu_ring_open(&ring, nccl_ring);
		if (err) {
			fprintf(stderr, "commtap-gpu: %s: %s\n", nccl_ring, strerror(-err));
			return 1;
		}
		while (ct_gpu_ring_pop(&ring, &r) == 1) {
			api += r.type == CT_GPU_REC_COLL_API;
			launch += r.type == CT_GPU_REC_KERNEL_LAUNCH;
			colls += r.type == CT_GPU_REC_COLL;
		}
		ct_gpu_ring_close(&ring);
		printf("plugin: %lu collective API events, %lu kernel launches, %lu collectives "
		       "for %lu timed all-reduces (+2 warm-up)\n",
		       api, launch, colls, ev_n[1]);
		if (api < ev_n[1] || launch < ev_n[1] || colls < ev_n[1])
			rc = 1;
	}
	printf("%s\n", rc ? "GPU check FAILED" : "GPU check passed (within 5%)");
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: commtap-gpu dump RING\n"
			"       commtap-gpu check EVENTS CUPTI_RING [NCCL_RING]\n"
			"       commtap-gpu correlate --rings DIR --pcap FILE --local ADDR "
			"[--profile FILE] [--qp-map live|none|QP-TABLE] [--pid PID] [--labels OUT] "
			"[--report OUT] [--nic-gbps G]\n");
	return 2;
}

struct correlate_opts {
	const char *rings, *pcap, *local, *profile, *qpmap, *labels, *report;
	uint32_t pid;
	double nic;
};

#define CORR(field) offsetof(struct correlate_opts, field)

static const struct ct_param correlate_params[] = {
	{.name = "rings",
	 .type = CT_PARAM_STRING,
	 .arg = "DIR",
	 .offset = CORR(rings),
	 .help = "the job's GPU rings (required)"},
	{.name = "pcap",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = CORR(pcap),
	 .help = "the host's capture (required)"},
	{.name = "local",
	 .type = CT_PARAM_STRING,
	 .arg = "ADDR",
	 .offset = CORR(local),
	 .help = "this host's address (required)"},
	{.name = "profile",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = CORR(profile),
	 .help = "the job's profile: its prediction joins the report"},
	{.name = "qp-map",
	 .type = CT_PARAM_STRING,
	 .arg = "live|none|QP-TABLE",
	 .offset = CORR(qpmap),
	 .help = "where the QP numbers come from (default live)"},
	{.name = "pid",
	 .type = CT_PARAM_U32,
	 .arg = "PID",
	 .offset = CORR(pid),
	 .min = 0,
	 .max = INT32_MAX,
	 .help = "the process whose GPU section is reported (default: the\n"
		 "first communicator's)"},
	{.name = "labels",
	 .type = CT_PARAM_STRING,
	 .arg = "OUT",
	 .offset = CORR(labels),
	 .help = "write the flows' labels here"},
	{.name = "report",
	 .type = CT_PARAM_STRING,
	 .arg = "OUT",
	 .offset = CORR(report),
	 .help = "the GPU section ('-' for stdout, the default)"},
	{.name = "nic-gbps",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "G",
	 .offset = CORR(nic),
	 .min = 0,
	 .above_min = 1,
	 .max = 1e5,
	 .show_default = 1,
	 .help = "the NIC's rate (a profile's hardware.nic_gbps wins)"},
	CT_PARAM_TABLE_END,
};

static int correlate(int argc, char **argv)
{
	struct correlate_opts o = {.qpmap = "live", .report = "-", .nic = 100};
	const struct ct_param_set set = {correlate_params, &o};
	const char *rings, *pcap, *local_s, *profile, *qpmap, *labels, *report;
	struct ct_profile prof;
	struct ct_prediction pred;
	bool have_prof = false;
	struct ct_addr local;
	struct gc_job job;
	struct gc_flows fl;
	double nic;
	int32_t pid;
	char err[512];
	int c, first, rc = 1;
	FILE *out;

	rc = ct_params_parse(&set, 1, argc, argv, &first, err, sizeof(err));
	if (rc == 1) {
		printf("usage: commtap-gpu correlate --rings DIR --pcap FILE --local ADDR "
		       "[options]\n");
		ct_params_help(stdout, &set, 1);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "commtap-gpu correlate: %s\n", err);
		return 2;
	}
	if (!o.rings || !o.pcap || !o.local || first != argc)
		return usage();
	rings = o.rings;
	pcap = o.pcap;
	local_s = o.local;
	profile = o.profile;
	qpmap = o.qpmap;
	labels = o.labels;
	report = o.report;
	pid = (int32_t)o.pid;
	nic = o.nic;
	rc = 1;
	if (ct_addr_parse(local_s, &local)) {
		fprintf(stderr, "commtap-gpu: --local %s: not an IPv4 or IPv6 address\n", local_s);
		return 2;
	}
	if (profile) {
		if (ct_profile_load(profile, &prof, err, sizeof(err))) {
			fprintf(stderr, "commtap-gpu: %s\n", err);
			return 1;
		}
		rc = ct_predict(&prof, &pred);
		if (rc) {
			fprintf(stderr, "commtap-gpu: %s: cannot predict this profile: %s\n", profile,
				ct_predict_strerror(&pred, rc));
			ct_profile_free(&prof);
			return 1;
		}
		have_prof = true;
		nic = prof.hw.nic_gbps;
	}
	gc_job_init(&job);
	c = gc_job_read_dir(&job, rings);
	if (c < 0) {
		fprintf(stderr, "commtap-gpu: %s: %s\n", rings, strerror(-c));
		goto out;
	}
	if (!strcmp(qpmap, "live")) {
#ifdef COMMTAP_HAVE_MNL
		c = ct_rdma_qp_dump(add_live_qp, &job);
		if (c < 0)
			fprintf(stderr, "commtap-gpu: RDMA QP map: %s (flows stay unlinked)\n",
				strerror(-c));
#else
		fprintf(stderr, "commtap-gpu: built without libmnl: no RDMA QP map\n");
#endif
		/* NCCL's socket transport: TCP sockets of the local processes. */
		c = gc_job_add_proc_sockets(&job);
		if (c < 0)
			fprintf(stderr, "commtap-gpu: /proc sockets: %s\n", strerror(-c));
	} else if (strcmp(qpmap, "none")) {
		/* A QP table: snapshots of commtap-rdma-qp taken over the job. */
		FILE *t = fopen(qpmap, "r");

		if (!t) {
			fprintf(stderr, "commtap-gpu: --qp-map %s: %s\n", qpmap, strerror(errno));
			goto out;
		}
		c = gc_job_read_qp_table(&job, t, qpmap, err, sizeof(err));
		fclose(t);
		if (c < 0) {
			fprintf(stderr, "commtap-gpu: %s\n", err);
			goto out;
		}
	}
	gc_job_finish(&job);
	gc_assign_qps(&job);
	gc_classify(&job, have_prof ? &prof : NULL, have_prof ? &pred : NULL);
	if (gc_flows_read_pcap(&fl, pcap, &local, err, sizeof(err))) {
		fprintf(stderr, "commtap-gpu: %s\n", err);
		goto out;
	}
	gc_join(&job, &fl, 1000000);
	if (!pid && job.n_comms)
		pid = job.comms[0].pid;
	if (labels) {
		out = fopen(labels, "w");
		if (!out || gc_write_labels(&job, &fl, out)) {
			fprintf(stderr, "commtap-gpu: %s: cannot write\n", labels);
			if (out)
				fclose(out);
			gc_flows_free(&fl);
			goto out;
		}
		fclose(out);
	}
	out = strcmp(report, "-") ? fopen(report, "w") : stdout;
	if (!out || gc_write_report(&job, &fl, pid, have_prof ? &pred : NULL, nic, out)) {
		fprintf(stderr, "commtap-gpu: %s: cannot write\n", report);
	} else {
		rc = 0;
	}
	if (out && out != stdout)
		fclose(out);
	gc_flows_free(&fl);
out:
	gc_job_free(&job);
	if (have_prof) {
		ct_prediction_free(&pred);
		ct_profile_free(&prof);
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "dump") && argc == 3)
		return dump(argv[2]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "check"))
		return check(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (argc >= 2 && !strcmp(argv[1], "correlate"))
		return correlate(argc - 1, argv + 1);
	return usage();
}
