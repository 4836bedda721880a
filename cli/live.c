// SPDX-License-Identifier: MIT
/*
 * commtap analyze --live IFACE[,IFACE...]: packets from the interfaces'
 * kernel rings (live_ring.c) through one engine per worker thread, as
 * commtap-mirror's workers; each worker holds a socket on every interface
 * and the kernel's fanout hashes the flows over the workers. Reports merge
 * the workers' snapshots (dataplane/snapshot.c) as the mirror's do, and go
 * to the report sink every --interval and at the end (SIGINT/SIGTERM,
 * --duration).
 *
 * Order of start: the sockets open (CAP_NET_RAW), then the privileges drop
 * (--user, app_common/privilege.c), then the sink (its /metrics thread)
 * and the workers start.
 */
#include "analyze.h"
#include "hang_watch.h"
#include "live_ring.h"

#include "privilege.h"
#include "report_sink.h"

#include <commtap/analysis.h>
#include <commtap/exit_status.h>
#include <commtap/log.h>
#include <commtap/snapshot.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#define MAX_IFACES 8
/*
 * The kernel hands a partly filled block over after this long: the latency
 * of a quiet link's packets, and how long a worker waits at the end for the
 * last block (twice this, so none is left in the ring).
 */
#define RETIRE_MS 10
#define POLL_MS	  RETIRE_MS
/* the main thread's nap between looks at the clock, the signals and the answers */
#define TICK_NS (20 * 1000 * 1000)

struct live;

struct worker {
	struct live *live;
	pthread_t thread;
	int started;
	struct live_ring *rings[MAX_IFACES];
	unsigned n_rings;
	struct ct_engine *engine;
	uint8_t *scratch;
	/* the main thread asks (snap_req), the worker answers (snap_done) */
	atomic_uint snap_req, snap_done;
	struct ct_snapshot snap; /* the worker's while a request is open, else the main thread's */
	uint64_t cpu_ns;	 /* the thread's CPU time, at its end */
	int last_error[MAX_IFACES]; /* the socket error said last (wait_blocks) */
};

struct live {
	const struct analyze_opts *o;
	char source[MAX_IFACES * 17];
	const char *ifaces[MAX_IFACES];
	unsigned n_ifaces;
	struct worker *workers;
	unsigned n_workers;
	struct live_filter *filter;
	const char *filter_expr;
	struct ct_knowledge know;
	struct ct_report_sink *sink;
	atomic_int quit;
	/* kernel counters summed over the sockets, at the last report */
	uint64_t kernel_packets, kernel_drops;
	uint64_t prev_packets, prev_ns;
	struct hang_watch watch; /* set by each report's analysis */
};

/* What the filter keeps when --filter is not given: RoCEv2 and TCP, and the
 * frames the parser also reads: GRE/ERSPAN mirror copies (IP protocol 47),
 * pause/PFC frames (0x8808) and tagged frames the kernel left tagged */
#define DEFAULT_FILTER                                                                             \
	"udp dst port 4791 or tcp or ip proto 47 or ip6 proto 47 or ether proto 0x8808 or vlan"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void feed(const struct ct_packet *pkts, unsigned n, void *ctx)
{
	ct_engine_feed(ctx, pkts, n);
}

/* A snapshot the main thread asked for, taken on the engine's own thread. */
static void answer(struct worker *w)
{
	unsigned req = atomic_load_explicit(&w->snap_req, memory_order_acquire);

	if (req == atomic_load_explicit(&w->snap_done, memory_order_relaxed))
		return;
	if (ct_snapshot_take(w->engine, &w->snap))
		ct_log(CT_LOG_WARN, "out of memory: a snapshot misses flows or bursts");
	atomic_store_explicit(&w->snap_done, req, memory_order_release);
}

/* Every block the kernel has handed over, on every ring of the worker. */
static unsigned read_ready(struct worker *w)
{
	unsigned got = 0, n;

	for (unsigned i = 0; i < w->n_rings; i++)
		while ((n = live_ring_read_block(w->rings[i], w->scratch, feed, w->engine))) {
			got += n;
			answer(w);
		}
	return got;
}

/*
 * Wait for a block. A socket error (the interface went down: ENETDOWN) is
 * said once per change and cleared, so that poll does not spin on it; the
 * ring goes on when the interface comes back.
 */
static void wait_blocks(struct worker *w, struct pollfd *fds, int ms)
{
	if (poll(fds, w->n_rings, ms) <= 0)
		return;
	for (unsigned i = 0; i < w->n_rings; i++) {
		int e = 0;
		socklen_t len = sizeof(e);

		if (!(fds[i].revents & POLLERR) ||
		    getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &e, &len) || !e)
			continue;
		if (e != w->last_error[i])
			ct_log(CT_LOG_WARN, "--live %s: %s", live_ring_iface(w->rings[i]),
			       strerror(e));
		w->last_error[i] = e;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct live *l = w->live;
	struct pollfd fds[MAX_IFACES];
	uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), end;

	for (unsigned i = 0; i < w->n_rings; i++)
		fds[i] = (struct pollfd){.fd = live_ring_fd(w->rings[i]), .events = POLLIN};
	while (!atomic_load_explicit(&l->quit, memory_order_relaxed)) {
		if (!read_ready(w))
			wait_blocks(w, fds, POLL_MS);
		answer(w);
	}
	/* the blocks the kernel is still filling come over within the retire timeout */
	end = now_ns(CLOCK_MONOTONIC) + 2 * RETIRE_MS * 1000000ull;
	while (now_ns(CLOCK_MONOTONIC) < end)
		if (!read_ready(w))
			wait_blocks(w, fds, 1);
	read_ready(w);
	w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	return NULL;
}

/* Ask every worker for a snapshot and wait for the answers. */
static void snapshot_all(struct live *l)
{
	const struct timespec nap = {0, 1000 * 1000};

	for (unsigned i = 0; i < l->n_workers; i++)
		atomic_fetch_add_explicit(&l->workers[i].snap_req, 1, memory_order_release);
	for (unsigned i = 0; i < l->n_workers; i++) {
		struct worker *w = &l->workers[i];

		while (atomic_load_explicit(&w->snap_done, memory_order_acquire) !=
		       atomic_load_explicit(&w->snap_req, memory_order_relaxed))
			nanosleep(&nap, NULL);
	}
}

/* The kernel's counters of every socket, summed. */
static void read_kernel_stats(struct live *l)
{
	uint64_t packets = 0, drops = 0;

	for (unsigned i = 0; i < l->n_workers; i++)
		for (unsigned j = 0; j < l->workers[i].n_rings; j++) {
			uint64_t p, d;

			if (!live_ring_stats(l->workers[i].rings[j], &p, &d)) {
				packets += p;
				drops += d;
			}
		}
	l->kernel_packets = packets;
	l->kernel_drops = drops;
}

static void add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_int64((int64_t)v));
}

/* The report's "live" section: how the packets were read, and the last interval's rates. */
static struct json_object *live_section(struct live *l, const struct ct_snapshot *all)
{
	struct json_object *o = json_object_new_object(), *ifs = json_object_new_array();
	struct json_object *iv = json_object_new_object();
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	double secs = (double)(now - l->prev_ns) / 1e9;

	for (unsigned i = 0; i < l->n_ifaces; i++)
		json_object_array_add(ifs, json_object_new_string(l->ifaces[i]));
	json_object_object_add(o, "interfaces", ifs);
	add_u64(o, "workers", l->n_workers);
	json_object_object_add(o, "filter", json_object_new_string(l->filter_expr));
	add_u64(o, "snaplen", l->o->snaplen);
	add_u64(o, "ring_bytes_per_socket", l->o->ring_bytes);
	add_u64(o, "kernel_packets", l->kernel_packets);
	add_u64(o, "kernel_drops", l->kernel_drops);
	json_object_object_add(iv, "seconds", json_object_new_double(secs));
	add_u64(iv, "packets", all->counters.packets - l->prev_packets);
	json_object_object_add(
		iv, "pps",
		json_object_new_double(
			secs > 0 ? (double)(all->counters.packets - l->prev_packets) / secs : 0));
	json_object_object_add(o, "last_interval", iv);
	l->prev_packets = all->counters.packets;
	l->prev_ns = now;
	return o;
}

/*
 * Drop the bursts that ended before the window: no later interval report
 * looks at them (memory stays flat however long the capture runs), as
 * analyze does for a file. Only with interval reports: a single final
 * report's periodicity covers the whole run.
 */
static void trim_bursts(struct live *l, uint64_t newest)
{
	uint64_t window = l->o->common.window_ns;

	if (!l->o->common.interval_s || !window || newest < window)
		return;
	for (unsigned i = 0; i < l->n_workers; i++) {
		struct ct_snapshot *s = &l->workers[i].snap;
		size_t keep = 0;

		for (size_t k = 0; k < s->n_bursts; k++)
			if (s->bursts[k].end + window >= newest)
				s->bursts[keep++] = s->bursts[k];
		s->n_bursts = keep;
	}
}

/* Merge the snapshots (taken) and hand the report to the sink. */
static int put_report(struct live *l, int final, uint64_t stopped_ns)
{
	const struct analyze_opts *o = l->o;
	struct ct_snapshot all;
	struct ct_report r = {0};
	struct ct_burst_log bursts = {0};
	struct ct_report_input in = {.know = &l->know,
				     .min_period_s = o->common.min_period_s,
				     .stopped_ns = stopped_ns,
				     .analysed = hang_watch_keep,
				     .ctx = &l->watch};
	struct json_object *section = NULL;
	int err = 0;

	read_kernel_stats(l);
	ct_snapshot_init(&all);
	ct_flow_set_init(&r.flows);
	ct_flow_set_limit(&r.flows, o->report_flows);
	for (unsigned i = 0; i < l->n_workers && !err; i++)
		err = ct_snapshot_merge(&all, &l->workers[i].snap);
	err = err ?: ct_report_of_snapshot(&all, &r, &bursts, &in);
	if (err) {
		ct_log(CT_LOG_WARN, "out of memory for a report");
		goto out;
	}
	trim_bursts(l, all.counters.last_ts);
	r.kernel_drops = l->kernel_drops;
	r.has_kernel_drops = 1;
	r.source = l->source;
	r.source_kind = "live";
	r.clock = "packet socket timestamps (the kernel's CLOCK_REALTIME at receipt, ns)";
	ct_producer_options_nic(&o->common, &r);
	r.table_flows = o->flows;
	section = live_section(l, &all);
	ct_report_add_section(&r, "live", section);
	err = ct_report_sink_analyse(l->sink, &in, &r, final, final && stopped_ns);
out:
	json_object_put(section);
	ct_burst_log_free(&bursts);
	ct_flow_set_free(&r.flows);
	ct_snapshot_free(&all);
	return err;
}

static int split_ifaces(struct live *l, char *list)
{
	char *save = NULL;

	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (l->n_ifaces == MAX_IFACES) {
			fprintf(stderr, "commtap analyze: --live: more than %d interfaces\n",
				MAX_IFACES);
			return -EINVAL;
		}
		l->ifaces[l->n_ifaces++] = t;
		snprintf(l->source + strlen(l->source), sizeof(l->source) - strlen(l->source),
			 "%s%s", l->n_ifaces > 1 ? "," : "", t);
	}
	if (!l->n_ifaces) {
		fprintf(stderr, "commtap analyze: --live: no interface named\n");
		return -EINVAL;
	}
	return 0;
}

/* Every worker's socket on every interface; the first of each starts its fanout group. */
static int open_rings(struct live *l)
{
	struct live_ring_config cfg = {
		.filter = l->filter, .ring_bytes = l->o->ring_bytes, .retire_ms = RETIRE_MS};
	char err[512];

	for (unsigned j = 0; j < l->n_ifaces; j++) {
		cfg.iface = l->ifaces[j];
		cfg.fanout_id = -1;
		for (unsigned i = 0; i < l->n_workers; i++) {
			struct worker *w = &l->workers[i];
			int rc = live_ring_open(&cfg, &w->rings[j], err, sizeof(err));

			if (rc) {
				fprintf(stderr, "commtap analyze: %s\n", err);
				return rc;
			}
			w->n_rings = j + 1;
			cfg.fanout_id = live_ring_fanout_id(w->rings[j]);
		}
	}
	return 0;
}

/*
 * Who reads and reports: --user, else the report directory's owner when
 * started as root and root does not own it (as the agent). 1: drop to u,
 * 0: stay as started, or a negative errno (said here).
 */
static int reader_user(const struct analyze_opts *o, struct ct_run_as *u)
{
	char err[512];
	int rc;

	if (o->user)
		rc = ct_run_as_lookup(o->user, u, err, sizeof(err)) ?: u->uid != 0;
	else if (geteuid() || !o->common.report_dir)
		return 0;
	else
		rc = ct_run_as_owner_of(o->common.report_dir, u, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "commtap analyze: %s\n", err);
	return rc;
}

static int create_engines(struct live *l)
{
	const struct ct_producer_options *c = &l->o->common;
	struct ct_engine_config cfg = {
		.memory_budget = c->memory_budget,
		.idle_timeout_ns = c->idle_timeout_ns,
		.tcp_msg_gap_ns = c->tcp_msg_gap_ns,
		.burst_gap_ns = c->burst_gap_ns,
	};

	for (unsigned i = 0; i < l->n_workers; i++) {
		struct worker *w = &l->workers[i];
		int rc = ct_engine_create(&cfg, &w->engine);

		if (rc) {
			fprintf(stderr,
				"commtap analyze: cannot create an engine of %zu bytes (--memory, "
				"per worker): %s\n",
				c->memory_budget, strerror(-rc));
			return rc;
		}
		w->scratch = malloc(CT_LIVE_SCRATCH);
		if (!w->scratch)
			return -ENOMEM;
		ct_snapshot_init(&w->snap);
	}
	return 0;
}

static int start_workers(struct live *l)
{
	sigset_t all, old;
	int rc = 0;

	/* the signals are the main thread's: the workers block them */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (unsigned i = 0; i < l->n_workers && !rc; i++) {
		struct worker *w = &l->workers[i];

		w->live = l;
		rc = -pthread_create(&w->thread, NULL, worker_main, w);
		w->started = !rc;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		fprintf(stderr, "commtap analyze: cannot start a worker: %s\n", strerror(-rc));
	return rc;
}

static void stop_workers(struct live *l)
{
	atomic_store(&l->quit, 1);
	for (unsigned i = 0; i < l->n_workers; i++)
		if (l->workers[i].started)
			pthread_join(l->workers[i].thread, NULL);
}

int analyze_live(const struct analyze_opts *o)
{
	struct live l = {.o = o, .filter_expr = o->filter ? o->filter : DEFAULT_FILTER};
	struct ct_report_sink_config sink_cfg = {0};
	struct ct_run_as user;
	struct sigaction sa = {0};
	const struct timespec tick = {0, TICK_NS};
	char err[768], *list = strdup(o->live);
	int status = CT_EXIT_ERROR, drop, stopped = 0;
	uint64_t start, next_report = 0, interval_ns, stopped_ns = 0, cpu = 0, busiest = 0;
	struct ct_engine_counters total = {0};

	if (!list || split_ifaces(&l, list))
		goto out;
	l.n_workers = o->workers;
	l.workers = calloc(l.n_workers, sizeof(*l.workers));
	if (!l.workers)
		goto out;
	drop = reader_user(o, &user);
	if (drop < 0)
		goto out;
	if (ct_knowledge_load(o->common.labels_path, o->common.profile_path, &l.know, err,
			      sizeof(err))) {
		fprintf(stderr, "commtap analyze: %s\n", err);
		goto out;
	}
	if (live_filter_compile(l.filter_expr, o->snaplen, &l.filter, err, sizeof(err))) {
		fprintf(stderr, "commtap analyze: %s\n", err);
		goto out;
	}
	if (open_rings(&l))
		goto out;
	if (drop) {
		if (ct_privileges_drop(&user, err, sizeof(err))) {
			fprintf(stderr, "commtap analyze: dropping privileges: %s\n", err);
			goto out;
		}
		fprintf(stderr,
			"commtap analyze: reading as user %s (uid %u) without capabilities\n",
			user.name, (unsigned)user.uid);
	} else if (!geteuid()) {
		fprintf(stderr, "commtap analyze: notice: running as root throughout; give --user "
				"NAME to read and report without privileges\n");
	}
	/* the /metrics server's thread starts here, after the drop */
	sink_cfg = (struct ct_report_sink_config){
		.json_path = o->json_path,
		.lines_path = o->lines_path,
		.table = o->table,
		.report_dir = o->common.report_dir,
		.listen = o->common.listen,
		.shutdown_deadline_s = o->common.shutdown_deadline_s,
	};
	if (ct_report_sink_open(&sink_cfg, &l.sink, err, sizeof(err))) {
		fprintf(stderr, "commtap analyze: %s%s%s\n", err, drop ? " as user " : "",
			drop ? user.name : "");
		goto out;
	}
	if (o->common.listen)
		fprintf(stderr, "commtap analyze: serving /metrics on port %u\n",
			ct_report_sink_port(l.sink));
	if (create_engines(&l))
		goto out;
	sa.sa_handler = on_signal; /* no SA_RESTART: the nap ends at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (start_workers(&l))
		goto stop;
	fprintf(stderr, "commtap analyze: capturing on %s: %u worker(s), filter '%s'\n", l.source,
		l.n_workers, l.filter_expr);

	start = l.prev_ns = now_ns(CLOCK_MONOTONIC);
	interval_ns = (uint64_t)(o->common.interval_s * 1e9);
	if (interval_ns)
		next_report = start + interval_ns;
	while (!stop_signal) {
		uint64_t now;

		nanosleep(&tick, NULL);
		now = now_ns(CLOCK_MONOTONIC);
		if (o->duration_s > 0 && now - start >= (uint64_t)(o->duration_s * 1e9))
			break;
		if (next_report && now >= next_report && !stop_signal) {
			snapshot_all(&l);
			put_report(&l, 0, 0);
			/* a report that took longer than the interval skips, not stacks, the next
			 */
			now = now_ns(CLOCK_MONOTONIC);
			while (next_report <= now)
				next_report += interval_ns;
		} else if (l.watch.due && now_ns(CLOCK_REALTIME) >= l.watch.due && !stop_signal) {
			/*
			 * The job silent as long as a hang pages (packets carry
			 * CLOCK_REALTIME), by the packets that came since: said
			 * now, not at the interval's end.
			 */
			uint64_t last = 0, wire = 0;

			snapshot_all(&l);
			for (unsigned i = 0; i < l.n_workers; i++)
				hang_watch_snapshot(&l.watch, &l.workers[i].snap, &last, &wire);
			if (hang_watch_judge(&l.watch, last, wire))
				put_report(&l, 0, 0);
		}
	}
	if (stop_signal)
		stopped_ns = ct_monotonic_ns();
	stopped = 1;
stop:
	stop_workers(&l);
	/* the threads are gone: the engines are this thread's now */
	for (unsigned i = 0; i < l.n_workers && l.workers[i].engine; i++) {
		struct worker *w = &l.workers[i];

		if (ct_snapshot_finish(w->engine, &w->snap))
			ct_log(CT_LOG_WARN, "out of memory: a snapshot misses flows or bursts");
		ct_engine_counters_add(&total, &w->snap.counters);
		cpu += w->cpu_ns;
		busiest = w->cpu_ns > busiest ? w->cpu_ns : busiest;
	}
	if (stopped) {
		status = put_report(&l, 1, stopped_ns) ? CT_EXIT_ERROR : CT_EXIT_OK;
		if (ct_report_sink_failures(l.sink)) /* interval reports' files included */
			status = CT_EXIT_ERROR;
		fprintf(stderr,
			"commtap analyze: %s: %llu packets analysed, %llu passed the filter, %llu "
			"dropped by the kernel; workers' CPU %.3f s (the busiest %.3f s)\n",
			l.source, (unsigned long long)total.packets,
			(unsigned long long)l.kernel_packets, (unsigned long long)l.kernel_drops,
			(double)cpu / 1e9, (double)busiest / 1e9);
	}
out:
	for (unsigned i = 0; l.workers && i < l.n_workers; i++) {
		struct worker *w = &l.workers[i];

		for (unsigned j = 0; j < w->n_rings; j++)
			live_ring_close(w->rings[j]);
		ct_engine_destroy(w->engine);
		ct_snapshot_free(&w->snap);
		free(w->scratch);
	}
	free(l.workers);
	hang_watch_free(&l.watch);
	ct_report_sink_close(l.sink);
	ct_knowledge_free(&l.know);
	live_filter_free(l.filter);
	free(list);
	return status;
}
