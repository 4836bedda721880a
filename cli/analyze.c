// SPDX-License-Identifier: MIT
/*
 * commtap analyze CAPTURE: run a capture file through the engine and hand
 * its reports to the sink. Where a packet goes: ct_capture_next ->
 * ct_engine_feed; flows leaving the engine -> ct_flow_set_add; at the end
 * (and every --interval of capture time): ct_analysis_run ->
 * ct_report_sink_put. With --live the packets come from interfaces instead
 * (live.c).
 */
#include "analyze.h"
#include "capture.h"
#include "commands.h"
#include "hang_watch.h"
#include "progress.h"

#include "app_args.h"
#include "producer_options.h"
#include "report_sink.h"

#include <commtap/analysis.h>
#include <commtap/grow.h>
#include <commtap/log.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRAIN_EVERY 1024 /* packets between drains of the eviction ring */
/*
 * Flows kept in detail by default: about 1.5 KiB each through the slow
 * path (summary, periodicity, class), so some 400 MiB at the limit; the
 * rest are summed (docs/security.md).
 */
#define REPORT_FLOWS_DEFAULT 262144

/*
 * --live: each socket's ring. 64 MiB holds some 0.5 s of a 1 Gb/s link's
 * full-size frames, or 5 ms of 100 Gb/s, while a worker is busy with a
 * snapshot; --ring-mib sizes it for the link.
 */
#define LIVE_RING_MIB_DEFAULT 64
/* tcpdump's default: whole frames (a GRO'd TCP frame reaches 64 KiB) */
#define LIVE_SNAPLEN_DEFAULT 262144
/* one engine and one socket per interface each; commtap-mirror's limit too */
#define LIVE_WORKERS_MAX 64

static const struct ct_param analyze_params[] = {
	{.name = "json",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct analyze_opts, json_path),
	 .help = "write the commtap.report/v1 JSON report ('-' for stdout)"},
	{.name = "lines",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct analyze_opts, lines_path),
	 .help = "write one line per flow ('-' for stdout)"},
	{.name = "table",
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct analyze_opts, table),
	 .help = "print the readable summary even with --json/--lines"},
	{.name = "flows",
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct analyze_opts, flows),
	 .help = "the readable table lists every flow, its class and\n"
		 "periodicity and every receiver (after the capture's line)\n"
		 "instead of the summary (job, findings, receivers, heaviest flows)"},
	{.name = "pace",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "F",
	 .offset = offsetof(struct analyze_opts, pace),
	 .help = "replay at F times the capture's speed, sleeping until each\n"
		 "packet's time (1: real time; default: as fast as it reads)",
	 .min = 0,
	 .max = 1e6,
	 .above_min = 1},
	{.name = "report-flows",
	 .type = CT_PARAM_SIZE,
	 .arg = "N",
	 .offset = offsetof(struct analyze_opts, report_flows),
	 .help = "flows kept in detail; past N the lightest are summed\n"
		 "into the report's flows_summed (0: no limit)",
	 .min = 0,
	 .max = 1e9,
	 .show_default = 1},
	{.name = "live",
	 .type = CT_PARAM_STRING,
	 .arg = "IFACES",
	 .offset = offsetof(struct analyze_opts, live),
	 .help = "read these interfaces (comma separated, up to 8; AF_PACKET\n"
		 "rings) instead of a capture file, until SIGINT/SIGTERM or\n"
		 "--duration (needs CAP_NET_RAW)"},
	{.name = "workers",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct analyze_opts, workers),
	 .help = "--live: threads, each with its own engine (--memory each);\n"
		 "the kernel hashes the flows over them (PACKET_FANOUT)",
	 .min = 1,
	 .max = LIVE_WORKERS_MAX,
	 .show_default = 1},
	{.name = "filter",
	 .type = CT_PARAM_STRING,
	 .arg = "EXPR",
	 .offset = offsetof(struct analyze_opts, filter),
	 .help = "--live: capture filter in tcpdump's syntax (default: RoCEv2,\n"
		 "TCP, GRE/ERSPAN copies, pause frames, tagged frames)"},
	{.name = "duration",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "S",
	 .offset = offsetof(struct analyze_opts, duration_s),
	 .help = "--live: stop after S seconds and write the final report\n"
		 "(0: at SIGINT/SIGTERM)",
	 .min = 0,
	 .max = 1e9},
	{.name = "user",
	 .type = CT_PARAM_STRING,
	 .arg = "NAME",
	 .offset = offsetof(struct analyze_opts, user),
	 .help = "--live: once the sockets are open, read and report as NAME\n"
		 "with no capability left (default: the owner of --report-dir\n"
		 "when started as root and root does not own it)"},
	{.name = "ring-mib",
	 .type = CT_PARAM_SIZE,
	 .arg = "MIB",
	 .offset = offsetof(struct analyze_opts, ring_bytes),
	 .help = "--live: each socket's kernel ring, MiB",
	 .min = 2,
	 .max = 1 << 16,
	 .scale = 1 << 20,
	 .show_default = 1},
	{.name = "snaplen",
	 .type = CT_PARAM_U32,
	 .arg = "BYTES",
	 .offset = offsetof(struct analyze_opts, snaplen),
	 .help = "--live: bytes of each frame captured (sizes still come\n"
		 "from the IP headers)",
	 .min = 64,
	 .max = LIVE_SNAPLEN_DEFAULT,
	 .show_default = 1},
	CT_PARAM_TABLE_END,
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

const struct ct_app_args analyze_app_args = {
	.prog = "commtap analyze",
	.usage = "usage: commtap analyze [options] CAPTURE\n"
		 "       commtap analyze [options] --live IFACE[,IFACE...]\n"
		 "  Analyze a pcap or pcapng capture (Ethernet) and print its flows;\n"
		 "  CAPTURE - reads it from standard input (tcpdump -w - | commtap analyze -);\n"
		 "  --live reads interfaces until SIGINT/SIGTERM or --duration.\n",
	.notes = "  With --listen, the final report is served after the capture until\n"
		 "  SIGINT/SIGTERM.\n"
		 "exit status: 0 ok, 1 error (nothing written, or a file that could not be: "
		 "the messages say which were), 2 capture broke off (report of what was read "
		 "written); --live: 0 when stopped by a signal or --duration\n",
	.min_pos = 0,
	.max_pos = 1,
	.pos_meaning = "CAPTURE file (- for standard input)",
};

const struct ct_param *const analyze_options[] = {analyze_params, ct_table_params, ct_gap_params,
						  ct_report_params, NULL};

static int parse_args(int argc, char **argv, struct analyze_opts *o)
{
	const struct ct_param_set sets[] = {
		{analyze_params, o},
		{ct_table_params, &o->common},
		{ct_gap_params, &o->common},
		{ct_report_params, &o->common},
	};
	char err[512];
	int first, rc;

	ct_producer_options_init(&o->common);
	o->report_flows = REPORT_FLOWS_DEFAULT;
	o->workers = 1;
	o->ring_bytes = (size_t)LIVE_RING_MIB_DEFAULT << 20;
	o->snaplen = LIVE_SNAPLEN_DEFAULT;
	rc = ct_app_parse(&analyze_app_args, sets, sizeof(sets) / sizeof(sets[0]), argc, argv,
			  &first);
	if (rc == 1)
		exit(CT_EXIT_OK);
	if (rc)
		return rc;
	rc = ct_producer_options_finish(&o->common, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap analyze: %s\n", err);
		return rc;
	}
	if (o->live && first < argc) {
		fprintf(stderr,
			"commtap analyze: --live reads interfaces: no CAPTURE with it (got "
			"'%s') (try --help)\n",
			argv[first]);
		return -EINVAL;
	}
	if (!o->live && first == argc) {
		fprintf(stderr, "commtap analyze: missing CAPTURE file (- for standard input) or "
				"--live IFACE (try --help)\n");
		return -EINVAL;
	}
	if (!o->live && (o->workers != 1 || o->filter || o->duration_s || o->user)) {
		fprintf(stderr, "commtap analyze: --workers, --filter, --duration and --user go "
				"with --live (try --help)\n");
		return -EINVAL;
	}
	if (o->live && o->pace) {
		fprintf(stderr, "commtap analyze: --pace is for capture files, not --live\n");
		return -EINVAL;
	}
	o->capture = o->live ? o->live : argv[first];
	if ((!o->json_path && !o->lines_path) || o->flows)
		o->table = 1;
	return 0;
}

struct collected {
	struct ct_flow_set flows;
	struct ct_burst_log bursts;
	struct ct_flow_key *summed; /* flows summed since the last drain: their bursts go */
	size_t n_summed, cap_summed;
	int out_of_memory;
};

static void on_summed(const struct ct_flow_summary *f, void *ctx)
{
	struct collected *c = ctx;

	if (c->n_summed == c->cap_summed) {
		struct ct_flow_key *k = ct_grow(c->summed, &c->cap_summed, sizeof(*k), 4096);

		if (!k)
			return; /* its bursts stay, and the analysis skips them */
		c->summed = k;
	}
	c->summed[c->n_summed++] = f->key;
}

static void collect_burst(const struct ct_flow_burst *burst, void *ctx)
{
	struct collected *c = ctx;

	if (ct_burst_log_add(&c->bursts, burst) && !c->out_of_memory++)
		ct_log(CT_LOG_WARN, "out of memory: bursts are missing from the report");
}

static void drain(struct ct_engine *engine, struct collected *c);

static void collect(const struct ct_flow *flow, void *ctx)
{
	struct collected *c = ctx;

	if (ct_flow_set_add(&c->flows, flow))
		ct_log(CT_LOG_WARN, "out of memory: a flow is missing from the report");
}

static void drain(struct ct_engine *engine, struct collected *c)
{
	size_t n = 0;

	ct_engine_drain_evicted(engine, collect, c);
	ct_engine_drain_bursts(engine, collect_burst, c);
	/*
	 * After the bursts: an evicted flow's last burst comes out with it. A
	 * key summed and then seen again is a flow in detail: its bursts stay.
	 */
	for (size_t i = 0; i < c->n_summed; i++)
		if (ct_flow_set_find(&c->flows, &c->summed[i]) < 0)
			c->summed[n++] = c->summed[i];
	c->flows.rest.bursts += ct_burst_log_drop(&c->bursts, c->summed, n);
	c->n_summed = 0;
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

/* What the report says of its source, the same for every report of a run. */
static void describe_source(struct ct_report *r, const struct analyze_opts *o)
{
	r->source = o->capture;
	r->source_kind = "pcap";
	r->clock = "capture timestamps (the capturing host's CLOCK_REALTIME)";
	ct_producer_options_nic(&o->common, r);
	r->table_flows = o->flows;
}

/*
 * A report while the input goes on, at input time now: every flow so far
 * (those already out of the engine and those still in it, left untouched),
 * periodicity over the bursts that ended in the last window. Its analysis
 * sets the hang watch.
 */
static int put_interval_report(const struct analyze_opts *o, struct ct_knowledge *k,
			       struct ct_engine *engine, struct collected *got, uint64_t now,
			       struct ct_report_sink *sink, struct hang_watch *watch)
{
	struct ct_report r = {0};
	struct ct_flow_set set;
	struct interval_ctx ic = {&set, 0};
	struct ct_report_input in = {.know = k,
				     .bursts = &got->bursts,
				     .min_period_s = o->common.min_period_s,
				     .analysed = hang_watch_keep,
				     .ctx = watch};
	size_t keep = 0;
	int err = 0;

	ct_engine_end_quiet_bursts(engine, now); /* a silent flow's last burst is over */
	drain(engine, got);
	ct_flow_set_init(&set);
	ct_flow_set_limit(&set, got->flows.limit);
	set.rest = got->flows.rest;
	for (size_t i = 0; i < got->flows.count && !ic.err; i++)
		ic.err = ct_flow_set_add_summary(&set, &got->flows.flows[i]);
	if (!ic.err)
		ct_engine_foreach_flow(engine, add_live, &ic);
	/* the bursts older than the window are dropped: no later report looks
	 * at them (memory stays flat however long the input runs) */
	for (size_t i = 0; i < got->bursts.n; i++)
		if (got->bursts.b[i].end + o->common.window_ns >= now)
			got->bursts.b[keep++] = got->bursts.b[i];
	got->bursts.n = keep;
	err = ic.err;
	if (!err) {
		ct_engine_get_counters(engine, &r.counters);
		in.n_cm = ct_engine_cm_events(engine, &in.cm);
		r.flows = set;
		describe_source(&r, o);
		err = ct_report_sink_analyse(sink, &in, &r, 0, 0);
		set = r.flows;
	} else {
		ct_log(CT_LOG_WARN, "an interval report is missing: %s", strerror(-err));
	}
	ct_flow_set_free(&set);
	return err;
}

static void show_progress(struct progress *p, struct ct_engine *engine, struct ct_capture *cap)
{
	struct ct_engine_counters c;
	uint64_t done = 0, total = 0;

	if (!p->tty)
		return;
	ct_engine_get_counters(engine, &c);
	if (ct_capture_progress(cap, &done, &total))
		done = total = 0;
	progress_update(p, c.packets, c.bytes, done, total);
}

/*
 * --pace: sleep until the packet's time, the capture's clock started at the
 * first packet and run F times faster than the wall clock. A signal ends
 * the sleep early (the loop then stops).
 */
static void pace_until(double pace, uint64_t first_ts, uint64_t ts, const struct timespec *start)
{
	double due = (double)(ts > first_ts ? ts - first_ts : 0) / pace;
	uint64_t ns = (uint64_t)start->tv_nsec + (uint64_t)due;
	struct timespec at = {start->tv_sec + (time_t)(ns / 1000000000ull),
			      (long)(ns % 1000000000ull)};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
}

/*
 * The end of the interval that time t falls in, intervals counted from
 * origin: a gap in the capture gives one report (covering it), not one per
 * empty interval. UINT64_MAX when it would pass the clock's end.
 */
static uint64_t interval_end(uint64_t origin, uint64_t interval, uint64_t t)
{
	uint64_t k = (t - origin) / interval + 1;

	if (k > (UINT64_MAX - origin) / interval)
		return UINT64_MAX;
	return origin + k * interval;
}

int cmd_analyze(int argc, char **argv)
{
	struct ct_engine_config cfg = {0};
	struct analyze_opts o = {0};
	struct ct_report report = {0};
	struct collected got = {0};
	struct ct_knowledge know = {0};
	struct ct_report_input in = {.know = &know};
	struct ct_capture *cap = NULL;
	struct ct_engine *engine = NULL;
	struct ct_report_sink *sink = NULL;
	struct ct_report_sink_config sink_cfg = {0};
	struct sigaction sa = {0};
	struct progress progress;
	const struct timespec tick = {0, 100 * 1000 * 1000};
	struct ct_packet pkt;
	char err[768];
	int rc, status = CT_EXIT_ERROR;
	uint64_t interval_ns, origin = 0, next_report = 0, backwards = 0, first_ts = 0;
	struct timespec started = {0};
	struct hang_watch watch = {0};

	if (parse_args(argc, argv, &o))
		return CT_EXIT_ERROR;
	if (o.live)
		return analyze_live(&o);
	interval_ns = (uint64_t)(o.common.interval_s * 1e9);
	if (ct_knowledge_load(o.common.labels_path, o.common.profile_path, &know, err,
			      sizeof(err))) {
		fprintf(stderr, "commtap analyze: %s\n", err);
		goto cleanup;
	}
	sink_cfg = (struct ct_report_sink_config){
		.json_path = o.json_path,
		.lines_path = o.lines_path,
		.table = o.table,
		.report_dir = o.common.report_dir,
		.listen = o.common.listen,
		.input_path = o.capture,
		.shutdown_deadline_s = o.common.shutdown_deadline_s,
	};
	if (ct_report_sink_open(&sink_cfg, &sink, err, sizeof(err))) {
		fprintf(stderr, "commtap analyze: %s\n", err);
		goto cleanup;
	}
	if (o.common.listen)
		fprintf(stderr, "commtap analyze: serving /metrics on port %u\n",
			ct_report_sink_port(sink));
	rc = ct_capture_open(o.capture, &cap, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap analyze: %s\n", err);
		goto cleanup;
	}
	cfg.memory_budget = o.common.memory_budget;
	cfg.idle_timeout_ns = o.common.idle_timeout_ns;
	cfg.tcp_msg_gap_ns = o.common.tcp_msg_gap_ns;
	cfg.burst_gap_ns = o.common.burst_gap_ns;
	rc = ct_engine_create(&cfg, &engine);
	if (rc == -EINVAL) {
		fprintf(stderr,
			"commtap analyze: --memory: %zu bytes is too small for the flow table (it "
			"needs "
			"room for at least %d flows of %zu bytes)\n",
			o.common.memory_budget, CT_FLOW_TABLE_MIN, ct_flow_table_bytes_per_flow());
		goto cleanup;
	} else if (rc) {
		fprintf(stderr, "commtap analyze: cannot create the engine with %zu bytes: %s\n",
			o.common.memory_budget, strerror(-rc));
		goto cleanup;
	}
	ct_flow_set_init(&got.flows);
	ct_flow_set_limit(&got.flows, o.report_flows);
	got.flows.on_summed = on_summed;
	got.flows.on_summed_ctx = &got;
	/* no SA_RESTART: a read blocked on a pipe returns, and the report is written */
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	progress_start(&progress);
	while (!interrupted && (rc = ct_capture_next(cap, &pkt)) == 1) {
		if (o.pace > 0) {
			if (!started.tv_sec && !started.tv_nsec) {
				clock_gettime(CLOCK_MONOTONIC, &started);
				first_ts = pkt.ts_ns;
			}
			pace_until(o.pace, first_ts, pkt.ts_ns, &started);
		}
		ct_engine_feed(engine, &pkt, 1);
		if (ct_capture_packets_read(cap) % DRAIN_EVERY == 0) {
			drain(engine, &got);
			show_progress(&progress, engine, cap);
		}
		if (!interval_ns)
			continue;
		if (!next_report) {
			origin = pkt.ts_ns;
			next_report = interval_end(origin, interval_ns, pkt.ts_ns);
		} else if (pkt.ts_ns < origin) {
			backwards++; /* before the first packet: counted, it ends no interval */
		} else if (pkt.ts_ns >= next_report) {
			put_interval_report(&o, &know, engine, &got, pkt.ts_ns, sink, &watch);
			next_report = interval_end(origin, interval_ns, pkt.ts_ns);
		} else if (hang_watch_due(&watch, engine, &got.flows, pkt.ts_ns)) {
			/* the job silent as long as a hang pages: said now, not at the interval's
			 * end */
			put_interval_report(&o, &know, engine, &got, pkt.ts_ns, sink, &watch);
		}
	}
	progress_end(&progress);
	if (backwards)
		ct_log(CT_LOG_WARN,
		       "%llu packets were timestamped before the first one; they end no interval",
		       (unsigned long long)backwards);
	if (interrupted)
		report.error = "interrupted before the end of the capture";
	else if (rc < 0)
		report.error = ct_capture_error(cap);
	if (report.error)
		fprintf(stderr, "commtap analyze: %s; the report covers the %llu packets read\n",
			report.error, ct_capture_packets_read(cap));

	ct_engine_finish(engine, collect, &got);
	drain(engine, &got);
	ct_engine_get_counters(engine, &report.counters);
	in.n_cm = ct_engine_cm_events(engine, &in.cm);
	in.bursts = &got.bursts;
	in.min_period_s = o.common.min_period_s;
	report.flows = got.flows;
	report.flows.on_summed = NULL; /* the bursts are gathered */
	describe_source(&report, &o);
	if (got.bursts.dropped)
		ct_log(CT_LOG_INFO,
		       "the periodicity covers the newest %zu bursts; %llu older ones were "
		       "dropped to bound memory (flows' totals are whole)",
		       got.bursts.n, (unsigned long long)got.bursts.dropped);

	if (ct_report_sink_analyse(sink, &in, &report, 1, interrupted))
		status = CT_EXIT_ERROR;
	else
		status = report.error ? CT_EXIT_INCOMPLETE : CT_EXIT_OK;
	if (ct_report_sink_failures(sink)) /* interval reports' files included */
		status = CT_EXIT_ERROR;
	/* the final report on /metrics, served until a signal asks to stop */
	while (o.common.listen && !interrupted)
		nanosleep(&tick, NULL);
cleanup:
	hang_watch_free(&watch);
	ct_report_sink_close(sink);
	ct_knowledge_free(&know);
	ct_burst_log_free(&got.bursts);
	free(got.summed);
	ct_flow_set_free(&report.flows);
	ct_engine_destroy(engine);
	ct_capture_close(cap);
	return status;
}
