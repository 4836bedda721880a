// SPDX-License-Identifier: MIT
/*
 * commtap analyze CAPTURE: run a capture file through the engine and write
 * the report. Where a packet goes: ct_capture_next -> ct_engine_feed; flows
 * leaving the engine -> ct_flow_set_add; at the end: sort, pair, write.
 */
#include "capture.h"
#include "commands.h"

#include "metrics_publish.h"

#include <commtap/analysis.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#define DRAIN_EVERY 1024 /* packets between drains of the eviction ring */

struct analyze_opts {
	const char *capture;
	const char *json_path;
	const char *lines_path;
	int table;
	size_t memory_budget;
	uint64_t idle_timeout_ns;
	uint64_t tcp_msg_gap_ns;
	uint64_t burst_gap_ns;
	double nic_gbps;
	double min_period_s;  /* shortest iteration claimed */
	uint64_t interval_ns; /* 0: one report at the end */
	uint64_t window_ns;   /* periodicity over the bursts of this last span */
	const char *report_dir;
	const char *labels_path;
	const char *profile_path;
	const char *listen; /* serve /metrics here */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: commtap analyze [options] CAPTURE\n"
		"  Analyze a pcap or pcapng capture (Ethernet) and print its flows.\n"
		"  --json FILE        write the commtap.report/v1 JSON report ('-' for stdout)\n"
		"  --lines FILE       write one line per flow ('-' for stdout)\n"
		"  --table            print the readable table even with --json/--lines\n"
		"  --memory MIB       flow-table memory budget in MiB (default %u)\n"
		"  --idle-timeout S   evict flows idle S seconds (default %llu; 0 never)\n"
		"  --tcp-gap MS       idle gap that ends a TCP message, ms (default %g)\n"
		"  --burst-gap MS     shortest idle gap that ends a burst, ms (default %g)\n"
		"  --nic-gbps G       receivers' NIC rate for the cc section (default 100)\n"
		"  --min-period S     shortest iteration claimed (default 10 burst gaps)\n"
		"  --interval S       also write a report every S seconds of capture time into\n"
		"                     --report-dir (cumulative flows, periodicity over --window)\n"
		"  --window S         span of bursts the interval reports' periodicity uses\n"
		"                     (default 10 intervals)\n"
		"  --report-dir DIR   where interval reports go (commtap-report-NNNNNN.json)\n"
		"  --profile FILE     classify flows by this job profile's hosts and traffic\n"
		"  --labels FILE      classify flows by agent labels (commtap.labels/v1 JSON)\n"
		"  --listen ADDR:PORT serve Prometheus /metrics from each report (ADDR alone:\n"
		"                     port 9464; :PORT: 127.0.0.1); after the capture, the\n"
		"                     final report is served until SIGINT/SIGTERM\n"
		"exit status: 0 ok, 1 error (nothing written), 2 capture broke off (report of what"
		" was read written)\n",
		CT_DEFAULT_MEMORY_BUDGET >> 20,
		(unsigned long long)(CT_DEFAULT_IDLE_TIMEOUT_NS / 1000000000ull),
		(double)CT_DEFAULT_TCP_MSG_GAP_NS / 1e6, (double)CT_DEFAULT_BURST_GAP_NS / 1e6);
}

/* Parse a non-negative decimal number; -EINVAL names the flag on failure. */
static int parse_number(const char *flag, const char *text, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || v < 0 || v > max || v != v) {
		fprintf(stderr, "commtap analyze: %s: '%s' is not a number in [0, %g]\n", flag,
			text, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct analyze_opts *o)
{
	static const struct option longopts[] = {
		{"json", required_argument, NULL, 'j'},
		{"lines", required_argument, NULL, 'l'},
		{"table", no_argument, NULL, 't'},
		{"memory", required_argument, NULL, 'm'},
		{"idle-timeout", required_argument, NULL, 'i'},
		{"tcp-gap", required_argument, NULL, 'g'},
		{"burst-gap", required_argument, NULL, 'b'},
		{"nic-gbps", required_argument, NULL, 'n'},
		{"interval", required_argument, NULL, 'I'},
		{"min-period", required_argument, NULL, 'P'},
		{"window", required_argument, NULL, 'W'},
		{"report-dir", required_argument, NULL, 'D'},
		{"profile", required_argument, NULL, 'p'},
		{"labels", required_argument, NULL, 'L'},
		{"listen", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double v;
	int c;

	o->memory_budget = CT_DEFAULT_MEMORY_BUDGET;
	o->idle_timeout_ns = CT_DEFAULT_IDLE_TIMEOUT_NS;
	o->tcp_msg_gap_ns = CT_DEFAULT_TCP_MSG_GAP_NS;
	o->burst_gap_ns = CT_DEFAULT_BURST_GAP_NS;
	o->nic_gbps = 100;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json_path = optarg;
			break;
		case 'l':
			o->lines_path = optarg;
			break;
		case 't':
			o->table = 1;
			break;
		case 'm':
			if (parse_number("--memory", optarg, 1 << 20, &v))
				return -EINVAL;
			o->memory_budget = (size_t)(v * (1 << 20));
			break;
		case 'i':
			if (parse_number("--idle-timeout", optarg, 1e9, &v))
				return -EINVAL;
			o->idle_timeout_ns = (uint64_t)(v * 1e9);
			break;
		case 'g':
			if (parse_number("--tcp-gap", optarg, 1e9, &v))
				return -EINVAL;
			o->tcp_msg_gap_ns = (uint64_t)(v * 1e6);
			break;
		case 'b':
			if (parse_number("--burst-gap", optarg, 1e9, &v))
				return -EINVAL;
			o->burst_gap_ns = (uint64_t)(v * 1e6);
			if (!o->burst_gap_ns)
				o->burst_gap_ns = 1;
			break;
		case 'n':
			if (parse_number("--nic-gbps", optarg, 1e6, &v))
				return -EINVAL;
			o->nic_gbps = v;
			break;
		case 'I':
			if (parse_number("--interval", optarg, 1e6, &v) || v <= 0) {
				if (v <= 0)
					fprintf(stderr, "commtap analyze: --interval must be above 0\n");
				return -EINVAL;
			}
			o->interval_ns = (uint64_t)(v * 1e9);
			break;
		case 'P':
			if (parse_number("--min-period", optarg, 1e6, &v))
				return -EINVAL;
			o->min_period_s = v;
			break;
		case 'W':
			if (parse_number("--window", optarg, 1e6, &v))
				return -EINVAL;
			o->window_ns = (uint64_t)(v * 1e9);
			break;
		case 'D':
			o->report_dir = optarg;
			break;
		case 'p':
			o->profile_path = optarg;
			break;
		case 'L':
			o->labels_path = optarg;
			break;
		case 'M':
			o->listen = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(CT_EXIT_OK);
		default:
			fprintf(stderr, "commtap analyze: unknown or incomplete option '%s' (try --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "commtap analyze: %s (try --help)\n",
			optind == argc ? "missing CAPTURE file" : "more than one CAPTURE file given");
		return -EINVAL;
	}
	o->capture = argv[optind];
	if (!o->json_path && !o->lines_path)
		o->table = 1;
	if (!!o->interval_ns != !!o->report_dir) {
		fprintf(stderr, "commtap analyze: --interval and --report-dir go together\n");
		return -EINVAL;
	}
	if (o->report_dir && access(o->report_dir, W_OK)) {
		fprintf(stderr, "commtap analyze: --report-dir %s: %s\n", o->report_dir,
			strerror(errno));
		return -EINVAL;
	}
	if (o->interval_ns && !o->window_ns)
		o->window_ns = 10 * o->interval_ns;
	if (!o->min_period_s)
		o->min_period_s = 10 * (double)o->burst_gap_ns / 1e9;
	return 0;
}

struct collected {
	struct ct_flow_set flows;
	struct ct_burst_log bursts;
	int out_of_memory;
};

static void collect_burst(const struct ct_flow_burst *burst, void *ctx)
{
	struct collected *c = ctx;

	if (ct_burst_log_add(&c->bursts, burst) && !c->out_of_memory++)
		fprintf(stderr, "commtap analyze: out of memory: bursts are missing from the report\n");
}

static void drain(struct ct_engine *engine, struct collected *c);

static void collect(const struct ct_flow *flow, void *ctx)
{
	struct collected *c = ctx;

	if (ct_flow_set_add(&c->flows, flow))
		fprintf(stderr, "commtap analyze: out of memory: a flow is missing from the report\n");
}

static void drain(struct ct_engine *engine, struct collected *c)
{
	ct_engine_drain_evicted(engine, collect, c);
	ct_engine_drain_bursts(engine, collect_burst, c);
}

/* Open a report destination; "-" is stdout. */
static FILE *open_output(const char *path)
{
	FILE *f;

	if (!strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "commtap analyze: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

static int close_output(FILE *f, const char *path)
{
	int err = ferror(f) ? -EIO : 0;

	if (f == stdout)
		err = fflush(f) ? -errno : err;
	else if (fclose(f))
		err = -errno;
	if (err)
		fprintf(stderr, "commtap analyze: writing %s failed: %s\n", path, strerror(-err));
	return err;
}

static int write_reports(const struct analyze_opts *o, const struct ct_report *r)
{
	int err = 0;
	FILE *f;

	if (o->json_path) {
		f = open_output(o->json_path);
		if (!f)
			return -EIO;
		ct_report_write_json(r, f);
		err |= close_output(f, o->json_path);
	}
	if (o->lines_path) {
		f = open_output(o->lines_path);
		if (!f)
			return -EIO;
		ct_report_write_lines(r, f);
		err |= close_output(f, o->lines_path);
	}
	if (o->table) {
		ct_report_write_table(r, stdout);
		fflush(stdout);
	}
	return err ? -EIO : 0;
}

struct interval_ctx {
	struct ct_flow_set *set;
	int err;
};

static void add_live(struct ct_flow *flow, void *ctx)
{
	struct interval_ctx *ic = ctx;

	if (!ic->err)
		ic->err = ct_flow_set_add(ic->set, flow);
}

/*
 * A report while the input goes on: every flow so far (those already out of
 * the engine and those still in it, left untouched), periodicity over the
 * bursts that ended in the last window. Written whole, then renamed.
 */
static int write_interval_report(const struct analyze_opts *o, const struct ct_knowledge *k,
				 struct ct_engine *engine, struct collected *got, uint64_t now,
				 unsigned seq, struct ct_metrics_server *metrics)
{
	struct ct_analysis an = {0};
	struct ct_report r = {0};
	struct ct_flow_set set;
	struct ct_burst_log window = {0};
	struct interval_ctx ic = {&set, 0};
	const struct ct_cm_event *cm;
	char path[4096];
	unsigned n_cm;
	int err = 0;

	drain(engine, got);
	ct_flow_set_init(&set);
	for (size_t i = 0; i < got->flows.count && !ic.err; i++)
		ic.err = ct_flow_set_add_summary(&set, &got->flows.flows[i]);
	if (!ic.err)
		ct_engine_foreach_flow(engine, add_live, &ic);
	for (size_t i = 0; i < got->bursts.n && !err; i++)
		if (got->bursts.b[i].end + o->window_ns >= now)
			err = ct_burst_log_add(&window, &got->bursts.b[i]);
	err = err ?: ic.err;
	if (!err) {
		ct_engine_get_counters(engine, &r.counters);
		n_cm = ct_engine_cm_events(engine, &cm);
		r.flows = set;
		err = ct_analysis_run("commtap analyze", k, &r, cm, n_cm, &window, o->min_period_s,
				      &an);
		set = r.flows;
	}
	if (!err) {
		r.source = o->capture;
		r.source_kind = "pcap";
		r.clock = "capture timestamps (the capturing host's CLOCK_REALTIME)";
		r.nic_gbps = o->nic_gbps;
		r.error = "interval report: the capture goes on";
		if (metrics && ct_metrics_publish_report(metrics, &r, NULL))
			fprintf(stderr,
				"commtap analyze: interval report %u: /metrics not updated\n", seq);
		snprintf(path, sizeof(path), "%s/commtap-report-%06u.json", o->report_dir, seq);
		err = ct_report_write_json_file(&r, path);
		if (err)
			fprintf(stderr, "commtap analyze: cannot write %s: %s\n", path,
				strerror(-err));
	} else {
		fprintf(stderr, "commtap analyze: interval report %u: %s\n", seq, strerror(-err));
	}
	ct_analysis_free(&an);
	ct_burst_log_free(&window);
	ct_flow_set_free(&set);
	return err;
}

/* The final report on /metrics, served until a signal asks to stop. */
static void serve_final(struct ct_metrics_server *metrics, const struct ct_report *r)
{
	const struct timespec tick = {0, 100 * 1000 * 1000};

	if (ct_metrics_publish_report(metrics, r, NULL)) {
		fprintf(stderr, "commtap analyze: the final report could not be published\n");
		return;
	}
	while (!interrupted)
		nanosleep(&tick, NULL);
}

int cmd_analyze(int argc, char **argv)
{
	struct ct_engine_config cfg = {0};
	struct analyze_opts o = {0};
	struct ct_report report = {0};
	struct collected got = {0};
	struct ct_analysis an = {0};
	struct ct_knowledge know = {0};
	struct ct_capture *cap = NULL;
	struct ct_engine *engine = NULL;
	struct ct_metrics_server *metrics = NULL;
	const struct ct_cm_event *cm;
	struct ct_packet pkt;
	char err[768];
	int rc, status = CT_EXIT_ERROR;
	unsigned n_cm, seq = 0;
	uint64_t next_report = 0;

	if (parse_args(argc, argv, &o))
		return CT_EXIT_ERROR;
	if (ct_knowledge_load("commtap analyze", o.labels_path, o.profile_path, &know))
		goto cleanup;
	rc = ct_capture_open(o.capture, &cap, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap analyze: %s\n", err);
		goto cleanup;
	}
	cfg.memory_budget = o.memory_budget;
	cfg.idle_timeout_ns = o.idle_timeout_ns;
	cfg.tcp_msg_gap_ns = o.tcp_msg_gap_ns;
	cfg.burst_gap_ns = o.burst_gap_ns;
	rc = ct_engine_create(&cfg, &engine);
	if (rc == -EINVAL) {
		fprintf(stderr,
			"commtap analyze: --memory: %zu bytes is too small for the flow table (it needs "
			"room for at least %d flows of %zu bytes)\n",
			o.memory_budget, CT_FLOW_TABLE_MIN, ct_flow_table_bytes_per_flow());
		goto cleanup;
	} else if (rc) {
		fprintf(stderr, "commtap analyze: cannot create the engine with %zu bytes: %s\n",
			o.memory_budget, strerror(-rc));
		goto cleanup;
	}
	if (o.listen) {
		rc = ct_metrics_server_start(o.listen, &metrics, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "commtap analyze: --listen %s\n", err);
			goto cleanup;
		}
		fprintf(stderr, "commtap analyze: serving /metrics on port %u\n",
			ct_metrics_server_port(metrics));
	}
	ct_flow_set_init(&got.flows);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	while (!interrupted && (rc = ct_capture_next(cap, &pkt)) == 1) {
		ct_engine_feed(engine, &pkt, 1);
		if (ct_capture_packets_read(cap) % DRAIN_EVERY == 0)
			drain(engine, &got);
		if (o.interval_ns && pkt.ts_ns >= next_report) {
			if (next_report)
				write_interval_report(&o, &know, engine, &got, pkt.ts_ns, seq++,
						      metrics);
			next_report = (next_report ? next_report : pkt.ts_ns) + o.interval_ns;
		}
	}
	if (rc < 0)
		report.error = ct_capture_error(cap);
	else if (interrupted)
		report.error = "interrupted before the end of the capture";
	if (report.error)
		fprintf(stderr, "commtap analyze: %s; the report covers the %llu packets read\n",
			report.error, ct_capture_packets_read(cap));

	ct_engine_finish(engine, collect, &got);
	drain(engine, &got);
	ct_engine_get_counters(engine, &report.counters);
	n_cm = ct_engine_cm_events(engine, &cm);
	report.flows = got.flows;
	ct_analysis_run("commtap analyze", &know, &report, cm, n_cm, &got.bursts, o.min_period_s,
			&an);
	report.nic_gbps = o.nic_gbps;
	report.source = o.capture;
	report.source_kind = "pcap";
	report.clock = "capture timestamps (the capturing host's CLOCK_REALTIME)";

	if (write_reports(&o, &report))
		status = CT_EXIT_ERROR;
	else
		status = report.error ? CT_EXIT_INCOMPLETE : CT_EXIT_OK;
	if (metrics)
		serve_final(metrics, &report);
cleanup:
	ct_metrics_server_stop(metrics);
	ct_analysis_free(&an);
	ct_knowledge_free(&know);
	ct_burst_log_free(&got.bursts);
	ct_flow_set_free(&report.flows);
	ct_engine_destroy(engine);
	ct_capture_close(cap);
	return status;
}
