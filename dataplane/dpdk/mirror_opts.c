// SPDX-License-Identifier: MIT
/* commtap-mirror's own options (after the EAL's and "--"). */
#include "mirror.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: commtap-mirror [EAL options] -- [options]\n"
		"  Analyze the traffic of a DPDK port (a switch's mirror session).\n"
		"  --port N           port id (default 0)\n"
		"  --interval S       write a cumulative report every S seconds into --report-dir\n"
		"  --report-dir DIR   interval reports and the final one "
		"(commtap-report-final.json)\n"
		"  --json FILE        also write the final report here\n"
		"  --profile FILE     classify flows by this job profile\n"
		"  --labels FILE      classify flows by agent labels\n"
		"  --listen ADDR:PORT serve Prometheus /metrics from each report (ADDR alone:\n"
		"                     port 9464; :PORT: 127.0.0.1)\n"
		"  --memory MIB       flow-table budget per engine (default 64)\n"
		"  --idle-timeout S   evict flows idle S seconds (default 60; 0 never)\n"
		"  --tcp-gap MS       idle gap that ends a TCP message (default 1)\n"
		"  --burst-gap MS     shortest idle gap that ends a burst (default 0.1)\n"
		"  --min-period S     shortest iteration claimed (default 10 burst gaps)\n"
		"  --nic-gbps G       receivers' NIC rate for the cc section (default 100)\n"
		"  --dedup US         drop a packet seen again within US microseconds\n"
		"                     (a session mirroring both ends of a link)\n"
		"  --exit-on-idle S   stop after S seconds without a packet (end of a replay)\n"
		"  --duration S       stop after S seconds\n"
		"  --no-rss           one RX core hashing flows to worker rings even with RSS\n"
		"  --no-hw-timestamp  TSC at arrival even where the NIC timestamps RX\n"
		"  --wait-on-full     that core waits for room in a full ring instead of dropping\n"
		"                     (replays, where nothing is lost upstream)\n"
		"  --bare             receive and free without the engine (benchmark baseline)\n"
		"  --bench            print Mpps per core and the engine's ns/packet at the end\n");
}

static int number(const char *flag, const char *text, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || v < 0 || v > max || v != v) {
		fprintf(stderr, "commtap-mirror: %s: '%s' is not a number in [0, %g]\n", flag, text,
			max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int mirror_parse_opts(int argc, char **argv, struct mirror_opts *o)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"interval", required_argument, NULL, 'I'},
		{"report-dir", required_argument, NULL, 'D'},
		{"json", required_argument, NULL, 'j'},
		{"profile", required_argument, NULL, 'P'},
		{"labels", required_argument, NULL, 'L'},
		{"listen", required_argument, NULL, 'N'},
		{"memory", required_argument, NULL, 'm'},
		{"idle-timeout", required_argument, NULL, 'i'},
		{"tcp-gap", required_argument, NULL, 'g'},
		{"burst-gap", required_argument, NULL, 'b'},
		{"min-period", required_argument, NULL, 'M'},
		{"nic-gbps", required_argument, NULL, 'n'},
		{"dedup", required_argument, NULL, 'd'},
		{"exit-on-idle", required_argument, NULL, 'e'},
		{"duration", required_argument, NULL, 't'},
		{"no-rss", no_argument, NULL, 'R'},
		{"no-hw-timestamp", no_argument, NULL, 'H'},
		{"wait-on-full", no_argument, NULL, 'W'},
		{"bare", no_argument, NULL, 'B'},
		{"bench", no_argument, NULL, 'X'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double v;
	int c;

	memset(o, 0, sizeof(*o));
	o->memory_budget = CT_DEFAULT_MEMORY_BUDGET;
	o->idle_timeout_ns = CT_DEFAULT_IDLE_TIMEOUT_NS;
	o->tcp_msg_gap_ns = CT_DEFAULT_TCP_MSG_GAP_NS;
	o->burst_gap_ns = CT_DEFAULT_BURST_GAP_NS;
	o->nic_gbps = 100;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c != 'h' && c != 'R' && c != 'B' && c != 'X' && c != 'W' && !optarg)
			c = '?';
		switch (c) {
		case 'p':
			if (number("--port", optarg, 65535, &v))
				return -EINVAL;
			o->port = (uint16_t)v;
			break;
		case 'I':
			if (number("--interval", optarg, 1e6, &v))
				return -EINVAL;
			o->interval_s = v;
			break;
		case 'D':
			o->report_dir = optarg;
			break;
		case 'j':
			o->json_path = optarg;
			break;
		case 'P':
			o->profile_path = optarg;
			break;
		case 'L':
			o->labels_path = optarg;
			break;
		case 'N':
			o->listen = optarg;
			break;
		case 'm':
			if (number("--memory", optarg, 1 << 20, &v))
				return -EINVAL;
			o->memory_budget = (size_t)(v * (1 << 20));
			break;
		case 'i':
			if (number("--idle-timeout", optarg, 1e9, &v))
				return -EINVAL;
			o->idle_timeout_ns = (uint64_t)(v * 1e9);
			break;
		case 'g':
			if (number("--tcp-gap", optarg, 1e9, &v))
				return -EINVAL;
			o->tcp_msg_gap_ns = (uint64_t)(v * 1e6);
			break;
		case 'b':
			if (number("--burst-gap", optarg, 1e9, &v))
				return -EINVAL;
			o->burst_gap_ns = v ? (uint64_t)(v * 1e6) : 1;
			break;
		case 'M':
			if (number("--min-period", optarg, 1e6, &v))
				return -EINVAL;
			o->min_period_s = v;
			break;
		case 'n':
			if (number("--nic-gbps", optarg, 1e6, &v))
				return -EINVAL;
			o->nic_gbps = v;
			break;
		case 'd':
			if (number("--dedup", optarg, 1e6, &v))
				return -EINVAL;
			o->dedup_window_ns = (uint64_t)(v * 1e3);
			break;
		case 'e':
			if (number("--exit-on-idle", optarg, 1e6, &v))
				return -EINVAL;
			o->exit_on_idle_s = v;
			break;
		case 't':
			if (number("--duration", optarg, 1e6, &v))
				return -EINVAL;
			o->duration_s = v;
			break;
		case 'R':
			o->no_rss = 1;
			break;
		case 'H':
			o->no_hw_timestamp = 1;
			break;
		case 'W':
			o->wait_on_full = 1;
			break;
		case 'B':
			o->bare = 1;
			break;
		case 'X':
			o->bench = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr,
				"commtap-mirror: unknown or incomplete option '%s' (try --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "commtap-mirror: unexpected argument '%s' (try --help)\n",
			argv[optind]);
		return -EINVAL;
	}
	if (o->interval_s && !o->report_dir) {
		fprintf(stderr, "commtap-mirror: --interval needs --report-dir\n");
		return -EINVAL;
	}
	if (o->report_dir) {
		struct stat st;

		if (stat(o->report_dir, &st) || access(o->report_dir, W_OK)) {
			fprintf(stderr, "commtap-mirror: --report-dir %s: %s\n", o->report_dir,
				strerror(errno));
			return -EINVAL;
		}
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "commtap-mirror: --report-dir %s: not a directory\n",
				o->report_dir);
			return -EINVAL;
		}
	}
	if (!o->min_period_s)
		o->min_period_s = 10 * (double)o->burst_gap_ns / 1e9;
	return 0;
}
