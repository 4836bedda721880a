// SPDX-License-Identifier: MIT
/*
 * commtap-bench-bpf: the probe's cost per packet, measured by the kernel
 * with BPF_PROG_TEST_RUN and a repeat count, on representative frames:
 * RoCE WRITE middle, WRITE first (with RETH), ACK, CNP and TCP data,
 * through the XDP and TC programs, beside baselines in the same run: an
 * empty XDP program (the test-run harness's own cost, what the goal is
 * measured against), an empty TC program, and programs that only read the
 * monotonic clock once (ct_clock_*: on a VM the clock read is virtualised
 * and costs more than the probe's own work). --compare OBJ runs a second
 * build of the probe (e.g. the main tree's ebpf/probe.bpf.o) interleaved
 * with this one, for before/after figures from one run. Then each probe
 * as a ratio to the empty program of its hook (XDP to the empty XDP
 * program, TC to the empty TC program) from the same runs, with the load
 * average at the start (the ratios are what compares across days on a
 * shared machine), and the map memory for a flow table of --flows
 * entries. Needs root.
 *
 * A repeat runs the same frame: after the first, its PSN (TCP: sequence)
 * repeats, so WRITE and TCP take the retransmission branch (parse, lookup,
 * volume, burst tracking and the PSN check, no message assembly); ACK and
 * CNP take their whole path. RoCE frames carry 1 KiB of payload: the probe
 * reads headers only, and a TC test run takes at most a page of data.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <commtap/roce_opcode.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_args.h"
#include "baseline.skel.h"
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

/*
 * What the clock baselines read: the clocksource behind bpf_ktime_get_ns
 * (a virtualised one costs more per read), and the coarse clock's tick,
 * which decides whether bpf_ktime_get_coarse_ns could time burst gaps.
 */
static void print_clocks(void)
{
	char src[64] = "unknown";
	struct timespec res = {0};
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

	if (f) {
		if (fgets(src, sizeof(src), f))
			src[strcspn(src, "\n")] = 0;
		fclose(f);
	}
	clock_getres(CLOCK_MONOTONIC_COARSE, &res);
	printf("clocksource %s; coarse clock tick %.3f ms\n", src,
	       (res.tv_sec * 1e9 + res.tv_nsec) / 1e6);
}

struct bench_bpf_opts {
	uint32_t repeat, runs, flows;
	const char *compare;
	int use_min;
};

static const struct ct_param bench_bpf_params[] = {
	{.name = "repeat",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct bench_bpf_opts, repeat),
	 .min = 1,
	 .max = 1e9,
	 .show_default = 1,
	 .help = "test-run repeats per measurement"},
	{.name = "runs",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct bench_bpf_opts, runs),
	 .min = 1,
	 .max = MAX_RUNS,
	 .show_default = 1,
	 .help = "measurements per frame and program, median reported"},
	{.name = "flows",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct bench_bpf_opts, flows),
	 .min = 1,
	 .max = 1e9,
	 .show_default = 1,
	 .help = "flow-table entries for the memory figure"},
	{.name = "compare",
	 .type = CT_PARAM_STRING,
	 .arg = "OBJ",
	 .offset = offsetof(struct bench_bpf_opts, compare),
	 .help = "also run the probe built as OBJ (a probe.bpf.o), interleaved"},
	{.name = "min",
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct bench_bpf_opts, use_min),
	 .help = "report the fastest run instead of the median (less sensitive to\n"
		 "other load; for comparing variants, not for the record)"},
	CT_PARAM_TABLE_END,
};

static const struct ct_app_args bench_bpf_args = {
	.prog = "commtap-bench-bpf",
	.usage = "usage: commtap-bench-bpf [--repeat N] [--runs N] [--flows N] [--compare OBJ]\n"
		 "  The probe's cost per frame, run by BPF_PROG_TEST_RUN on representative "
		 "frames.\n",
};

/* Set a const volatile array of the object's .rodata before load. */
static int set_rodata(struct bpf_object *obj, const char *var, const void *val, size_t len)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map;
	const struct btf_type *sec;
	const struct btf_var_secinfo *vs;
	size_t size;
	uint8_t *data;
	int id;

	bpf_object__for_each_map(map, obj) if (strstr(bpf_map__name(map), ".rodata")) break;
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (!map || id < 0 || !(data = (uint8_t *)bpf_map__initial_value(map, &size)))
		return -ENOENT;
	sec = btf__type_by_id(btf, (uint32_t)id);
	vs = btf_var_secinfos(sec);
	for (unsigned i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, v->name_off), var))
			continue;
		if (vs->size != len || vs->offset + len > size)
			return -EINVAL;
		memcpy(data + vs->offset, val, len);
		return 0;
	}
	return -ENOENT;
}

/* A probe built elsewhere (same program and map names), loaded like ours. */
static struct bpf_object *load_other(const char *path, unsigned flows)
{
	uint32_t opcodes[256];
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_map *map;
	int rc;

	if (!obj) {
		fprintf(stderr, "commtap-bench-bpf: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	ct_probe_fill_opcodes(opcodes);
	rc = set_rodata(obj, "ctp_opcode_info", opcodes, sizeof(opcodes));
	map = bpf_object__find_map_by_name(obj, "ctp_flows");
	if (rc || !map || bpf_map__set_max_entries(map, flows) || bpf_object__load(obj)) {
		fprintf(stderr, "commtap-bench-bpf: %s: not a probe this bench can load (%s)\n",
			path, rc ? strerror(-rc) : strerror(errno));
		exit(1);
	}
	return obj;
}

static int prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	if (!p || bpf_program__fd(p) < 0) {
		fprintf(stderr, "commtap-bench-bpf: the object has no program %s\n", name);
		exit(1);
	}
	return bpf_program__fd(p);
}

/* The programs measured per frame, in the order they run. */
enum col {
	C_EMPTY,    /* empty xdp.frags: the goal's baseline */
	C_CLOCK,    /* xdp.frags reading the clock once */
	C_XDP,	    /* the probe, XDP */
	C_EMPTY_TC, /* empty TC */
	C_CLOCK_TC, /* TC reading the clock once */
	C_TC,	    /* the probe, TC egress */
	C_XDP_CMP,  /* --compare's probe */
	C_TC_CMP,
	C_N
};

static void flow_memory(const char *label, int fd, unsigned flows)
{
	unsigned long long m = map_memlock(fd);

	printf("%s flows %u entries: %.1f MiB (%.0f B/flow)\n", label, flows, m / 1048576.0,
	       (double)m / flows);
}

int main(int argc, char **argv)
{
	static struct frame frames[6];
	static uint8_t v4[9200];
	static double ns[C_N][MAX_RUNS];
	struct bench_bpf_opts o = {.repeat = 2000000, .runs = 5, .flows = 1000000};
	const struct ct_param_set set = {bench_bpf_params, &o};
	unsigned repeat, runs, flows;
	const char *compare;
	struct bpf_object *other = NULL;
	struct ctp_probe *probe;
	struct ctp_empty *empty;
	struct ctp_baseline *base;
	static double med[sizeof(frames) / sizeof(frames[0])][C_N];
	int fd[C_N], ncols, first, rc, use_min;
	double load[3] = {0};

	rc = ct_app_parse(&bench_bpf_args, &set, 1, argc, argv, &first);
	if (rc)
		return rc == 1 ? 0 : 1;
	repeat = o.repeat;
	runs = o.runs;
	flows = o.flows;
	compare = o.compare;
	use_min = o.use_min;
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
	/* an IPv6 flow: the 40-byte-key map */
	frames[5].name = "RoCE WRITE middle, IPv6";
	frames[5].len = ct_frame_ipv6(
		frames[5].data, sizeof(frames[5].data), v4,
		ct_frame_roce(v4, sizeof(v4), CT_OP_WRITE_MIDDLE, 0x1238, 5, 1024, 0));

	probe = ctp_probe__open();
	if (!probe) {
		fprintf(stderr, "commtap-bench-bpf: cannot open the probe: %s\n", strerror(errno));
		return 1;
	}
	ct_probe_fill_opcodes(probe->rodata->ctp_opcode_info);
	bpf_map__set_max_entries(probe->maps.ctp_flows, flows);
	/* IPv6 flows: the agent's default size for this many IPv4 flows */
	bpf_map__set_max_entries(probe->maps.ctp_flows6, flows / 8 > 64 ? flows / 8 : 64);
	if (ctp_probe__load(probe) || !(empty = ctp_empty__open_and_load()) ||
	    !(base = ctp_baseline__open_and_load())) {
		fprintf(stderr, "commtap-bench-bpf: loading the programs failed: %s\n",
			strerror(errno));
		return 1;
	}
	if (compare)
		other = load_other(compare, flows);
	fd[C_EMPTY] = bpf_program__fd(empty->progs.ct_empty_frags);
	fd[C_CLOCK] = bpf_program__fd(base->progs.ct_clock_frags);
	fd[C_XDP] = bpf_program__fd(probe->progs.ct_xdp);
	fd[C_EMPTY_TC] = bpf_program__fd(base->progs.ct_empty_tc);
	fd[C_CLOCK_TC] = bpf_program__fd(base->progs.ct_clock_tc);
	fd[C_TC] = bpf_program__fd(probe->progs.ct_tc_egress);
	ncols = C_XDP_CMP;
	if (other) {
		fd[C_XDP_CMP] = prog_fd(other, "ct_xdp");
		fd[C_TC_CMP] = prog_fd(other, "ct_tc_egress");
		ncols = C_N;
	}

	printf("BPF_PROG_TEST_RUN, %u repeats, %s of %u runs, ns per packet\n", repeat,
	       use_min ? "fastest" : "median", runs);
	printf("empty: empty xdp.frags program (the goal's baseline); clock: reads the clock "
	       "once\n");
	print_clocks();
	if (getloadavg(load, 3) == 3)
		printf("load average %.2f %.2f %.2f\n", load[0], load[1], load[2]);
	if (other)
		printf("cmp: %s\n", compare);
	printf("\n%-28s %6s %6s %6s %6s %6s %6s %6s %8s %8s %8s %8s", "frame", "empty", "clock",
	       "xdp", "tc-emp", "tc-clk", "tc", "", "xdp-emp", "xdp-clk", "tc-emp", "tc-clk");
	if (other)
		printf(" | %6s %6s %8s %8s %8s %8s", "cmp-x", "cmp-t", "xdp-emp", "xdp-clk",
		       "tc-emp", "tc-clk");
	printf("\n");
	for (unsigned i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		double m[C_N];

		for (unsigned r = 0; r < runs; r++) /* side by side, interleaved */
			for (int k = 0; k < ncols; k++)
				ns[k][r] = ns_per_run(fd[k], &frames[i], repeat,
						      k >= C_EMPTY_TC && k != C_XDP_CMP);
		for (int k = 0; k < ncols; k++) {
			qsort(ns[k], runs, sizeof(double), cmp_double);
			m[k] = ns[k][use_min ? 0 : runs / 2];
			med[i][k] = m[k];
		}
		/*
		 * Above empty: against the empty XDP program, as the goal is
		 * stated. Above clock: the probe's own work, each hook against
		 * its own clock-only program.
		 */
		printf("%-28s %6.0f %6.0f %6.0f %6.0f %6.0f %6.0f %6s %8.0f %8.0f %8.0f %8.0f",
		       frames[i].name, m[C_EMPTY], m[C_CLOCK], m[C_XDP], m[C_EMPTY_TC],
		       m[C_CLOCK_TC], m[C_TC], "", m[C_XDP] - m[C_EMPTY], m[C_XDP] - m[C_CLOCK],
		       m[C_TC] - m[C_EMPTY], m[C_TC] - m[C_CLOCK_TC]);
		if (other)
			printf(" | %6.0f %6.0f %8.0f %8.0f %8.0f %8.0f", m[C_XDP_CMP], m[C_TC_CMP],
			       m[C_XDP_CMP] - m[C_EMPTY], m[C_XDP_CMP] - m[C_CLOCK],
			       m[C_TC_CMP] - m[C_EMPTY], m[C_TC_CMP] - m[C_CLOCK_TC]);
		printf("\n");
	}
	printf("\nratio to the empty program of the same hook (xdp / empty, tc / tc-emp)\n");
	printf("%-28s %7s %7s %7s", "frame", "clock", "xdp", "tc");
	if (other)
		printf(" | %7s %7s", "cmp-x", "cmp-t");
	printf("\n");
	for (unsigned i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		const double *m = med[i];

		printf("%-28s %6.1fx %6.1fx %6.1fx", frames[i].name, m[C_CLOCK] / m[C_EMPTY],
		       m[C_XDP] / m[C_EMPTY], m[C_TC] / m[C_EMPTY_TC]);
		if (other)
			printf(" | %6.1fx %6.1fx", m[C_XDP_CMP] / m[C_EMPTY],
			       m[C_TC_CMP] / m[C_EMPTY_TC]);
		printf("\n");
	}
	printf("\nmap memory (kernel memlock):\n");
	flow_memory("  probe, IPv4", bpf_map__fd(probe->maps.ctp_flows), flows);
	flow_memory("  probe, IPv6", bpf_map__fd(probe->maps.ctp_flows6),
		    bpf_map__max_entries(probe->maps.ctp_flows6));
	if (other)
		flow_memory("  cmp,   all ",
			    bpf_map__fd(bpf_object__find_map_by_name(other, "ctp_flows")), flows);
	printf("  ring %.1f MiB, totals %.1f KiB\n",
	       map_memlock(bpf_map__fd(probe->maps.ctp_events)) / 1048576.0,
	       map_memlock(bpf_map__fd(probe->maps.ctp_totals)) / 1024.0);
	bpf_object__close(other);
	ctp_baseline__destroy(base);
	ctp_empty__destroy(empty);
	ctp_probe__destroy(probe);
	return 0;
}
