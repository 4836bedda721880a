// SPDX-License-Identifier: MIT
/*
 * commtap-bench-bpf: the probe's cost per packet, measured by the kernel
 * with BPF_PROG_TEST_RUN and a repeat count, on representative frames:
 * RoCE WRITE middle, WRITE first (with RETH), ACK, CNP and TCP data,
 * through the XDP and TC programs, beside an empty XDP program in the same
 * run (the test-run harness's own cost). Then the map memory for a flow
 * table of --flows entries. Needs root.
 *
 * A repeat runs the same frame: after the first, its PSN (TCP: sequence)
 * repeats, so WRITE and TCP take the retransmission branch (parse, lookup,
 * volume, burst tracking and the PSN check, no message assembly); ACK and
 * CNP take their whole path. RoCE frames carry 1 KiB of payload: the probe
 * reads headers only, and a TC test run takes at most a page of data.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <commtap/roce_opcode.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "empty.skel.h"
#include "frames.h"
#include "probe.h"
#include "probe.skel.h"

#define MAX_RUNS 64

struct frame {
	const char *name;
	uint8_t data[9200];
	size_t len;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nanoseconds per run of prog on frame, as the kernel measured it. */
static double ns_per_run(int prog_fd, const struct frame *f, unsigned repeat, int skb)
{
	struct __sk_buff ctx = {0};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = (uint32_t)f->len,
		    .repeat = repeat);

	if (skb) {
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
	}
	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		fprintf(stderr, "commtap-bench-bpf: test run of %s failed: %s\n", f->name,
			strerror(errno));
		exit(1);
	}
	return opts.duration; /* the kernel's average per repeat, ns */
}

/* The kernel's charge for a map, from /proc/self/fdinfo (memlock). */
static unsigned long long map_memlock(int fd)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: commtap-bench-bpf [--repeat N] [--runs N] [--flows N]\n"
		"  --repeat N  test-run repeats per measurement (default 2000000)\n"
		"  --runs N    measurements per frame and program, median reported (default 5)\n"
		"  --flows N   flow-table entries for the memory figure (default 1000000)\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"repeat", required_argument, NULL, 'r'},
		{"runs", required_argument, NULL, 'n'},
		{"flows", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct frame frames[5];
	unsigned repeat = 2000000, runs = 5, flows = 1000000;
	struct ctp_probe *probe;
	struct ctp_empty *empty;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			repeat = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			runs = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'f':
			flows = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!repeat || !runs || runs > MAX_RUNS || !flows) {
		fprintf(stderr, "commtap-bench-bpf: --repeat, --flows above 0, --runs 1..%d\n",
			MAX_RUNS);
		return 1;
	}
	if (geteuid()) {
		fprintf(stderr,
			"commtap-bench-bpf: needs root (CAP_BPF) to load and run programs\n");
		return 1;
	}
	frames[0].name = "RoCE WRITE middle (1 KiB)";
	frames[0].len = ct_frame_roce(frames[0].data, sizeof(frames[0].data), CT_OP_WRITE_MIDDLE,
				      0x1234, 5, 1024, 0);
	frames[1].name = "RoCE WRITE first + RETH";
	frames[1].len = ct_frame_roce(frames[1].data, sizeof(frames[1].data), CT_OP_WRITE_FIRST,
				      0x1235, 5, 1024, 1 << 20);
	frames[2].name = "RoCE ACK";
	frames[2].len =
		ct_frame_roce(frames[2].data, sizeof(frames[2].data), CT_OP_ACK, 0x1236, 5, 0, 0);
	frames[3].name = "RoCE CNP";
	frames[3].len = ct_frame_roce(frames[3].data, sizeof(frames[3].data), CT_OPCODE_CNP, 0x1237,
				      0, 0, 0);
	frames[4].name = "TCP data (1448 B)";
	frames[4].len = ct_frame_tcp(frames[4].data, sizeof(frames[4].data), 40000, 5201, 1, 1448);

	probe = ctp_probe__open();
	if (!probe) {
		fprintf(stderr, "commtap-bench-bpf: cannot open the probe: %s\n", strerror(errno));
		return 1;
	}
	ct_probe_fill_opcodes(probe->rodata->ctp_opcode_info);
	bpf_map__set_max_entries(probe->maps.ctp_flows, flows);
	if (ctp_probe__load(probe) || !(empty = ctp_empty__open_and_load())) {
		fprintf(stderr, "commtap-bench-bpf: loading the programs failed: %s\n",
			strerror(errno));
		return 1;
	}

	printf("BPF_PROG_TEST_RUN, %u repeats, median of %u runs, ns per packet\n", repeat, runs);
	printf("%-28s %8s %8s %8s %10s %10s\n", "frame", "empty", "xdp", "tc", "xdp-empty",
	       "tc-empty");
	for (unsigned i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		double e[MAX_RUNS], x[MAX_RUNS], t[MAX_RUNS];

		for (unsigned r = 0; r < runs; r++) { /* side by side, interleaved */
			e[r] = ns_per_run(bpf_program__fd(empty->progs.ct_empty_frags), &frames[i],
					  repeat, 0);
			x[r] = ns_per_run(bpf_program__fd(probe->progs.ct_xdp), &frames[i], repeat,
					  0);
			t[r] = ns_per_run(bpf_program__fd(probe->progs.ct_tc_egress), &frames[i],
					  repeat, 1);
		}
		qsort(e, runs, sizeof(double), cmp_double);
		qsort(x, runs, sizeof(double), cmp_double);
		qsort(t, runs, sizeof(double), cmp_double);
		printf("%-28s %8.1f %8.1f %8.1f %10.1f %10.1f\n", frames[i].name, e[runs / 2],
		       x[runs / 2], t[runs / 2], x[runs / 2] - e[runs / 2],
		       t[runs / 2] - e[runs / 2]);
	}
	printf("\nmap memory (kernel memlock): flows %u entries: %.1f MiB (%.0f B/flow), ring %.1f "
	       "MiB, totals %.1f KiB\n",
	       flows, map_memlock(bpf_map__fd(probe->maps.ctp_flows)) / 1048576.0,
	       (double)map_memlock(bpf_map__fd(probe->maps.ctp_flows)) / flows,
	       map_memlock(bpf_map__fd(probe->maps.ctp_events)) / 1048576.0,
	       map_memlock(bpf_map__fd(probe->maps.ctp_totals)) / 1024.0);
	ctp_empty__destroy(empty);
	ctp_probe__destroy(probe);
	return 0;
}
