// SPDX-License-Identifier: MIT
/*
 * commtap agent --iface IF ...: attach the host probe, and every interval
 * read its maps and ring into the analysis `commtap analyze` runs and write
 * a cumulative commtap.report/v1 report. SIGINT/SIGTERM: a final report,
 * then detach (or, with --persist, leave the probe counting for the next
 * agent).
 */
#include "agent_cmd.h"
#include "collect.h"
#include "gpu_link.h"
#include "metrics_publish.h"
#include "probe.h"

#include <commtap/analysis.h>
#include <commtap/exit_status.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_IFACES 8

struct agent_opts {
	const char *ifaces[MAX_IFACES];
	unsigned n_ifaces;
	const char *report_dir;
	const char *profile_path;
	const char *labels_path;
	double interval_s;
	double duration_s; /* 0: until a signal */
	uint64_t window_ns;
	double min_period_s;
	double nic_gbps;
	int persist;
	const char *listen;  /* serve /metrics here */
	const char *gpu_dir; /* the GPU rings (NCCL plugin, CUPTI) */
	struct ct_probe_config probe;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: commtap agent --iface IF [--iface IF2 ...] [options]\n"
		"  Attach the host probe (XDP ingress, TC egress) and report the flows it sees.\n"
		"  --iface IF         an interface to watch (up to %d)\n"
		"  --interval S       write a cumulative report every S seconds (default 10)\n"
		"  --report-dir DIR   where reports go (default .): commtap-report-NNNNNN.json,\n"
		"                     and commtap-report-final.json on SIGINT/SIGTERM\n"
		"  --persist          leave the probe attached and its maps pinned on exit: the\n"
		"                     next agent continues the counters\n"
		"  --profile FILE     classify flows by this job profile\n"
		"  --labels FILE      classify flows by agent labels (commtap.labels/v1)\n"
		"  --flows N          flow-table entries per interface, IPv4 flows (default "
		"262144)\n"
		"  --flows6 N         flow-table entries per interface, IPv6 flows (default\n"
		"                     --flows / 8, at least 64)\n"
		"  --ring-kib K       ring buffer size per interface, KiB, a power of 2 (default "
		"4096)\n"
		"  --burst-gap MS     shortest idle gap that ends a burst, ms (default 0.1)\n"
		"  --tcp-gap MS       idle gap that ends a TCP message, ms (default 1)\n"
		"  --sample N         flows see one packet in N (default 1: all; totals see all)\n"
		"  --transports LIST  roce,tcp (default both)\n"
		"  --skb-mode         attach XDP in generic (skb) mode\n"
		"  --window S         span of bursts the periodicity uses (default 10 intervals)\n"
		"  --min-period S     shortest iteration claimed (default 10 burst gaps)\n"
		"  --nic-gbps G       receivers' NIC rate for the cc section (default 100)\n"
		"  --duration S       stop by itself after S seconds (as on SIGTERM)\n"
		"  --listen ADDR:PORT serve Prometheus /metrics from each report (ADDR alone:\n"
		"                     port 9464; :PORT: 127.0.0.1)\n"
		"  --gpu DIR          where the NCCL profiler plugin and the CUPTI library write\n"
		"                     their rings (default $COMMTAP_GPU_RING_DIR, else /dev/shm);\n"
		"                     when rings are there, the final report joins them (\"gpu\")\n"
		"                     and commtap-labels.json is written beside it\n"
		"Needs CAP_BPF and CAP_NET_ADMIN (root) and a kernel with BTF.\n",
		MAX_IFACES);
}

static int number(const char *flag, const char *text, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !(v >= min && v <= max)) {
		fprintf(stderr, "commtap agent: %s: '%s' is not a number in [%g, %g]\n", flag, text,
			min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_transports(const char *text, uint32_t *out)
{
	char buf[64], *save = NULL;

	*out = 0;
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "roce"))
			*out |= CTP_EN_ROCE;
		else if (!strcmp(t, "tcp"))
			*out |= CTP_EN_TCP;
		else {
			fprintf(stderr, "commtap agent: --transports: '%s' is not roce or tcp\n",
				t);
			return -EINVAL;
		}
	}
	return *out ? 0 : -EINVAL;
}

static int parse_args(int argc, char **argv, struct agent_opts *o)
{
	static const struct option longopts[] = {
		{"iface", required_argument, NULL, 'i'},
		{"interval", required_argument, NULL, 'I'},
		{"report-dir", required_argument, NULL, 'D'},
		{"persist", no_argument, NULL, 'P'},
		{"profile", required_argument, NULL, 'p'},
		{"labels", required_argument, NULL, 'L'},
		{"flows", required_argument, NULL, 'f'},
		{"flows6", required_argument, NULL, '6'},
		{"ring-kib", required_argument, NULL, 'r'},
		{"burst-gap", required_argument, NULL, 'b'},
		{"tcp-gap", required_argument, NULL, 'g'},
		{"sample", required_argument, NULL, 's'},
		{"transports", required_argument, NULL, 't'},
		{"skb-mode", no_argument, NULL, 'S'},
		{"window", required_argument, NULL, 'W'},
		{"min-period", required_argument, NULL, 'm'},
		{"nic-gbps", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 'd'},
		{"listen", required_argument, NULL, 'M'},
		{"gpu", required_argument, NULL, 'G'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double v;
	int c;

	o->interval_s = 10;
	o->report_dir = ".";
	o->nic_gbps = 100;
	o->probe.flow_entries = 262144;
	o->probe.ring_bytes = 4u << 20;
	o->probe.burst_gap_ns = CT_DEFAULT_BURST_GAP_NS;
	o->probe.tcp_msg_gap_ns = CT_DEFAULT_TCP_MSG_GAP_NS;
	o->probe.sample_every = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (o->n_ifaces == MAX_IFACES) {
				fprintf(stderr, "commtap agent: at most %d --iface\n", MAX_IFACES);
				return -EINVAL;
			}
			o->ifaces[o->n_ifaces++] = optarg;
			break;
		case 'I':
			if (number("--interval", optarg, 0.01, 1e6, &o->interval_s))
				return -EINVAL;
			break;
		case 'D':
			o->report_dir = optarg;
			break;
		case 'P':
			o->persist = 1;
			break;
		case 'p':
			o->profile_path = optarg;
			break;
		case 'L':
			o->labels_path = optarg;
			break;
		case 'f':
			if (number("--flows", optarg, 1, 1 << 28, &v))
				return -EINVAL;
			o->probe.flow_entries = (uint32_t)v;
			break;
		case '6':
			if (number("--flows6", optarg, 1, 1 << 28, &v))
				return -EINVAL;
			o->probe.flow_entries6 = (uint32_t)v;
			break;
		case 'r':
			if (number("--ring-kib", optarg, 4, 1 << 20, &v))
				return -EINVAL;
			o->probe.ring_bytes = (uint32_t)v * 1024;
			if (o->probe.ring_bytes & (o->probe.ring_bytes - 1)) {
				fprintf(stderr,
					"commtap agent: --ring-kib: %s is not a power of 2\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			if (number("--burst-gap", optarg, 0.001, 1e9, &v))
				return -EINVAL;
			o->probe.burst_gap_ns = (uint64_t)(v * 1e6);
			break;
		case 'g':
			if (number("--tcp-gap", optarg, 0, 1e9, &v))
				return -EINVAL;
			o->probe.tcp_msg_gap_ns = (uint64_t)(v * 1e6);
			break;
		case 's':
			if (number("--sample", optarg, 1, 1 << 30, &v))
				return -EINVAL;
			o->probe.sample_every = (uint32_t)v;
			break;
		case 't':
			if (parse_transports(optarg, &o->probe.transports))
				return -EINVAL;
			break;
		case 'S':
			o->probe.skb_mode = 1;
			break;
		case 'W':
			if (number("--window", optarg, 0, 1e6, &v))
				return -EINVAL;
			o->window_ns = (uint64_t)(v * 1e9);
			break;
		case 'm':
			if (number("--min-period", optarg, 0, 1e6, &o->min_period_s))
				return -EINVAL;
			break;
		case 'n':
			if (number("--nic-gbps", optarg, 0, 1e6, &o->nic_gbps))
				return -EINVAL;
			break;
		case 'd':
			if (number("--duration", optarg, 0, 1e9, &o->duration_s))
				return -EINVAL;
			break;
		case 'M':
			o->listen = optarg;
			break;
		case 'G':
			o->gpu_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(CT_EXIT_OK);
		default:
			fprintf(stderr,
				"commtap agent: unknown or incomplete option '%s' (try --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "commtap agent: unexpected argument '%s' (try --help)\n",
			argv[optind]);
		return -EINVAL;
	}
	if (!o->n_ifaces) {
		fprintf(stderr, "commtap agent: missing --iface (try --help)\n");
		return -EINVAL;
	}
	if (access(o->report_dir, W_OK)) {
		fprintf(stderr, "commtap agent: --report-dir %s: %s\n", o->report_dir,
			strerror(errno));
		return -EINVAL;
	}
	if (!o->window_ns)
		o->window_ns = (uint64_t)(10 * o->interval_s * 1e9);
	if (!o->min_period_s)
		o->min_period_s = 10 * (double)o->probe.burst_gap_ns / 1e9;
	return 0;
}

/* Interval reports go on from the highest number already in the directory. */
static unsigned first_seq(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned seq = 0, n;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "commtap-report-%6u.json", &n) == 1 && n + 1 > seq)
			seq = n + 1;
	closedir(d);
	return seq;
}

/*
 * The GPU side, into the final report: the rings of the job's processes on
 * this host (read once: reading consumes them), and the agent labels beside
 * the report.
 */
static void gpu_join(const struct agent_opts *o, const struct ct_knowledge *k,
		     struct ct_collect *col, const struct ct_report *r, char **gpu)
{
	const char *env = getenv("COMMTAP_GPU_RING_DIR");
	const char *dir = o->gpu_dir ? o->gpu_dir : env && *env ? env : "/dev/shm";
	char labels[4200], err[512] = "";
	int rc;

	snprintf(labels, sizeof(labels), "%s/commtap-labels.json", o->report_dir);
	rc = ct_gpu_link(dir, k, r, &col->bursts, o->nic_gbps, labels, gpu, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "commtap agent: the GPU side is not in the report: %s\n", err);
	else if (rc > 0)
		fprintf(stderr, "commtap agent: GPU rings in %s joined; labels in %s\n", dir,
			labels);
	else if (o->gpu_dir)
		fprintf(stderr, "commtap agent: --gpu %s: no rings there\n", dir);
}

static int write_report(const struct agent_opts *o, const struct ct_knowledge *k,
			struct ct_collect *col, const char *source, int final, unsigned seq,
			struct ct_metrics_server *metrics)
{
	struct ct_report r = {0};
	struct ct_analysis an = {0};
	char path[4096], *host = NULL, *gpu = NULL;
	int rc;

	rc = ct_collect_read(col, final);
	if (rc) {
		fprintf(stderr, "commtap agent: reading the probe's maps failed: %s\n",
			strerror(-rc));
		return rc;
	}
	rc = ct_collect_report(col, &r, &host);
	if (!rc) {
		ct_analysis_run("commtap agent", k, &r, NULL, 0, &col->bursts, o->min_period_s,
				&an);
		r.source = source;
		r.source_kind = "ebpf";
		r.clock =
			"the probe's CLOCK_MONOTONIC moved to CLOCK_REALTIME at the agent's start";
		r.nic_gbps = o->nic_gbps;
		r.error = final ? NULL : "interval report: the agent goes on";
		r.host_json = host;
		if (final)
			gpu_join(o, k, col, &r, &gpu);
		r.gpu_json = gpu;
		if (metrics && ct_metrics_publish_report(metrics, &r, NULL))
			fprintf(stderr, "commtap agent: report %u: /metrics not updated\n", seq);
		if (final)
			snprintf(path, sizeof(path), "%s/commtap-report-final.json", o->report_dir);
		else
			snprintf(path, sizeof(path), "%s/commtap-report-%06u.json", o->report_dir,
				 seq);
		rc = ct_report_write_json_file(&r, path);
		if (rc)
			fprintf(stderr, "commtap agent: cannot write %s: %s\n", path,
				strerror(-rc));
	} else {
		fprintf(stderr, "commtap agent: out of memory building the report\n");
	}
	if (col->oom)
		fprintf(stderr, "commtap agent: out of memory: %llu records are missing\n",
			(unsigned long long)col->oom);
	ct_analysis_free(&an);
	ct_flow_set_free(&r.flows);
	free(host);
	free(gpu);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_opts o = {0};
	struct ct_knowledge know = {0};
	struct ct_probe *probes[MAX_IFACES] = {0};
	struct ct_collect col = {0};
	struct ct_metrics_server *metrics = NULL;
	struct sigaction sa = {0};
	char err[768], source[256] = "";
	unsigned n = 0, seq;
	int status = CT_EXIT_ERROR, rc, started = 0;
	double start, next;

	if (parse_args(argc, argv, &o))
		return CT_EXIT_ERROR;
	if (ct_knowledge_load("commtap agent", o.labels_path, o.profile_path, &know))
		goto out;
	if (o.listen) {
		if (ct_metrics_server_start(o.listen, &metrics, err, sizeof(err))) {
			fprintf(stderr, "commtap agent: --listen %s\n", err);
			goto out;
		}
		fprintf(stderr, "commtap agent: serving /metrics on port %u\n",
			ct_metrics_server_port(metrics));
	}
	for (; n < o.n_ifaces; n++) {
		rc = ct_probe_open(o.ifaces[n], &o.probe, &probes[n], err, sizeof(err));
		if (rc) {
			fprintf(stderr, "commtap agent: %s\n", err);
			goto out;
		}
		if (ct_probe_resumed(probes[n]))
			fprintf(stderr,
				"commtap agent: %s: continuing the pinned probe's counters\n",
				o.ifaces[n]);
		snprintf(source + strlen(source), sizeof(source) - strlen(source), "%s%s",
			 n ? "," : "", o.ifaces[n]);
	}
	if (ct_collect_init(&col, probes, n, o.window_ns, err, sizeof(err))) {
		fprintf(stderr, "commtap agent: %s\n", err);
		goto out;
	}
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	seq = first_seq(o.report_dir);
	fprintf(stderr, "commtap agent: watching %s (XDP %s), reports every %g s in %s\n", source,
		ct_probe_xdp_mode(probes[0]), o.interval_s, o.report_dir);
	start = now_s();
	next = start + o.interval_s;
	status = CT_EXIT_OK;
	started = 1;
	while (!stop) {
		double t = now_s();
		int wait_ms = (int)((next - t) * 1000);

		if (o.duration_s && t - start >= o.duration_s)
			break;
		if (wait_ms > 100)
			wait_ms = 100;
		rc = ct_collect_poll(&col, wait_ms > 0 ? wait_ms : 0);
		if (rc < 0) {
			fprintf(stderr, "commtap agent: reading the ring buffer failed: %s\n",
				strerror(-rc));
			status = CT_EXIT_ERROR;
			break;
		}
		if (now_s() >= next) {
			write_report(&o, &know, &col, source, 0, seq++, metrics);
			next += o.interval_s;
		}
	}
	if (write_report(&o, &know, &col, source, 1, seq, metrics))
		status = CT_EXIT_ERROR;
out:
	ct_collect_free(&col);
	/* an agent that never started leaves nothing behind but what it took over */
	for (unsigned i = 0; i < n; i++)
		ct_probe_close(probes[i], o.persist && (started || ct_probe_resumed(probes[i])));
	ct_metrics_server_stop(metrics);
	ct_knowledge_free(&know);
	return status;
}
