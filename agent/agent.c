// SPDX-License-Identifier: MIT
/*
 * commtap agent --iface IF ...: attach the host probe, and every interval
 * read its maps and ring into the analysis `commtap analyze` runs and write
 * a cumulative commtap.report/v1 report. SIGINT/SIGTERM: a final report,
 * then detach (or, with --persist, leave the probe counting for the next
 * agent).
 *
 * Least privilege: once the probe is attached and its maps and ring are
 * open, the agent forks its reader, which drops to --user (by default the
 * owner of --report-dir when that is not root) with no capability and does
 * everything else: reads the maps, parses the GPU rings, analyses, writes
 * the reports, serves /metrics. The root process only waits for it, passes
 * on SIGINT/SIGTERM, and detaches and unpins when it has exited.
 */
#include "agent_cmd.h"
#include "collect.h"
#include "atomic_file.h"
#include "gpu_link.h"
#include "job_names.h"
#include "privilege.h"
#include "probe.h"

#include "app_args.h"
#include "hang_watch.h"
#include "producer_options.h"
#include "report_sink.h"

#include <commtap/analysis.h>
#include <commtap/exit_status.h>
#include <commtap/log.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_IFACES 8

struct iface_list {
	const char *names[MAX_IFACES];
	unsigned n;
};

struct agent_opts {
	struct iface_list ifaces;
	double duration_s; /* 0: until a signal */
	int persist;
	const char *gpu_dir;	  /* the GPU rings (NCCL plugin, CUPTI) */
	const char *user;	  /* the reader's user, or NULL: the report dir's owner */
	int no_job_names;	  /* do not name jobs from the local processes */
	const char *pod_log_root; /* the kubelet's pod log directories (kube_pod.h) */
	uint32_t ring_kib;
	struct ct_probe_config probe;
	struct ct_producer_options common;
};

static volatile sig_atomic_t stop;
static volatile pid_t reader_pid; /* in the root process, once the reader runs */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The root process passes a stop on to the reader, which writes the final report. */
static void pass_signal(int sig)
{
	if (reader_pid > 0)
		kill(reader_pid, sig);
}

static int parse_iface(const char *text, void *value, char *err, size_t errlen)
{
	struct iface_list *l = value;

	if (l->n == MAX_IFACES) {
		snprintf(err, errlen, "--iface %s: at most %d interfaces", text, MAX_IFACES);
		return -EINVAL;
	}
	l->names[l->n++] = text;
	return 0;
}

static int parse_transports(const char *text, void *value, char *err, size_t errlen)
{
	char buf[64], *save = NULL;
	uint32_t *out = value;

	*out = 0;
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "roce"))
			*out |= CTP_EN_ROCE;
		else if (!strcmp(t, "tcp"))
			*out |= CTP_EN_TCP;
		else {
			snprintf(err, errlen, "--transports: '%s' is not roce or tcp", t);
			return -EINVAL;
		}
	}
	if (!*out) {
		snprintf(err, errlen, "--transports: '%s' names no transport", text);
		return -EINVAL;
	}
	return 0;
}

#define AGENT(field) offsetof(struct agent_opts, field)

static const struct ct_param agent_params[] = {
	{.name = "iface",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "IF",
	 .offset = AGENT(ifaces),
	 .parse = parse_iface,
	 .help = "an interface to watch (up to 8; repeat the option)"},
	{.name = "persist",
	 .type = CT_PARAM_FLAG,
	 .offset = AGENT(persist),
	 .help = "leave the probe attached and its maps pinned on exit: the\n"
		 "next agent continues the counters"},
	{.name = "flows",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = AGENT(probe.flow_entries),
	 .min = 1,
	 .max = 1 << 28,
	 .show_default = 1,
	 .help = "flow-table entries per interface, IPv4 flows"},
	{.name = "flows6",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = AGENT(probe.flow_entries6),
	 .min = 1,
	 .max = 1 << 28,
	 .help = "flow-table entries per interface, IPv6 flows (default\n"
		 "--flows / 8, at least 64)"},
	{.name = "ring-kib",
	 .type = CT_PARAM_U32,
	 .arg = "K",
	 .offset = AGENT(ring_kib),
	 .min = 4,
	 .max = 1 << 20,
	 .show_default = 1,
	 .help = "ring buffer size per interface, KiB, a power of 2"},
	{.name = "sample",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = AGENT(probe.sample_every),
	 .min = 1,
	 .max = 1 << 30,
	 .show_default = 1,
	 .help = "flows see one packet in N (totals see all)"},
	{.name = "transports",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "LIST",
	 .offset = AGENT(probe.transports),
	 .parse = parse_transports,
	 .help = "roce,tcp (default both)"},
	{.name = "skb-mode",
	 .type = CT_PARAM_FLAG,
	 .offset = AGENT(probe.skb_mode),
	 .help = "attach XDP in generic (skb) mode"},
	{.name = "duration",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "S",
	 .offset = AGENT(duration_s),
	 .min = 0,
	 .max = 1e9,
	 .help = "stop by itself after S seconds (as on SIGTERM)"},
	{.name = "gpu",
	 .type = CT_PARAM_STRING,
	 .arg = "DIR",
	 .offset = AGENT(gpu_dir),
	 .help = "where the NCCL profiler plugin and the CUPTI library write\n"
		 "their rings (default $COMMTAP_GPU_RING_DIR, else\n"
		 "/dev/shm/commtap-UID of the agent's user); when rings are\n"
		 "there, the final report joins them (\"gpu\") and\n"
		 "commtap-labels.json is written beside it; the rings read\n"
		 "whose processes have ended are removed"},
	{.name = "no-job-names",
	 .type = CT_PARAM_FLAG,
	 .offset = AGENT(no_job_names),
	 .help = "do not name each flow's job from the environment of the local\n"
		 "process that owns its socket or QP (SLURM_JOB_ID, a pod's job,\n"
		 "TORCHELASTIC_RUN_ID, MASTER_ADDR:MASTER_PORT; the fleet's ct_job)"},
	{.name = "pin-root",
	 .type = CT_PARAM_STRING,
	 .arg = "DIR",
	 .offset = AGENT(probe.pin_root),
	 .help = "where the probe's programs and maps are pinned, on a bpffs\n"
		 "(default " CT_PROBE_PIN_ROOT "; one directory per network\n"
		 "namespace and interface below it)"},
	{.name = "pod-log-root",
	 .type = CT_PARAM_STRING,
	 .arg = "DIR",
	 .offset = AGENT(pod_log_root),
	 .help = "the kubelet's pod log root, one NAMESPACE_NAME_UID directory\n"
		 "per pod (default " CT_POD_LOG_ROOT "): a process in a pod's cgroup is\n"
		 "named by its pod, or by the PyTorchJob, JobSet or Volcano job\n"
		 "the pod's environment names"},
	{.name = "user",
	 .type = CT_PARAM_STRING,
	 .arg = "NAME",
	 .offset = AGENT(user),
	 .help = "once the probe is attached, read, analyse, write reports and\n"
		 "serve /metrics as this user, with no capability; a root\n"
		 "process stays only to detach on exit (default: the owner of\n"
		 "--report-dir when it is not root; --user root: no drop)"},
	CT_PARAM_TABLE_END,
};

const struct ct_app_args agent_app_args = {
	.prog = "commtap agent",
	.usage = "usage: commtap agent --iface IF [--iface IF2 ...] [options]\n"
		 "  Attach the host probe (XDP ingress, TC egress) and report the flows it "
		 "sees:\n"
		 "  commtap-report-NNNNNN.json every --interval in --report-dir, and\n"
		 "  commtap-report-final.json on SIGINT/SIGTERM.\n",
	.notes = "Needs CAP_BPF and CAP_NET_ADMIN (root) and a kernel with BTF; once attached,\n"
		 "it reads and reports as --user without capabilities (docs/deploy-host.md).\n",
};

const struct ct_param *const agent_options[] = {agent_params, ct_gap_params, ct_report_params,
						NULL};

static int parse_args(int argc, char **argv, struct agent_opts *o)
{
	const struct ct_param_set sets[] = {
		{agent_params, o},
		{ct_gap_params, &o->common},
		{ct_report_params, &o->common},
	};
	char err[512];
	int first, rc;

	ct_producer_options_init(&o->common);
	o->common.interval_s = 10;
	o->common.report_dir = ".";
	o->probe.flow_entries = 262144;
	o->ring_kib = 4096;
	o->probe.sample_every = 1;
	o->pod_log_root = CT_POD_LOG_ROOT;
	rc = ct_app_parse(&agent_app_args, sets, sizeof(sets) / sizeof(sets[0]), argc, argv,
			  &first);
	if (rc == 1)
		exit(CT_EXIT_OK);
	if (rc)
		return rc;
	if (!o->ifaces.n) {
		snprintf(err, sizeof(err), "missing --iface (try --help)");
		rc = -EINVAL;
	}
	if (!rc && (o->ring_kib & (o->ring_kib - 1))) {
		snprintf(err, sizeof(err), "--ring-kib: %u is not a power of 2", o->ring_kib);
		rc = -EINVAL;
	}
	if (!rc)
		rc = ct_producer_options_finish(&o->common, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap agent: %s\n", err);
		return rc;
	}
	o->probe.ring_bytes = o->ring_kib * 1024;
	o->probe.burst_gap_ns = o->common.burst_gap_ns;
	o->probe.tcp_msg_gap_ns = o->common.tcp_msg_gap_ns;
	o->probe.persist = o->persist;
	return 0;
}

/*
 * The GPU side, into the final report: the rings of the job's processes on
 * this host (read once: reading consumes them), and the agent labels beside
 * the report.
 */
static void gpu_join(const struct agent_opts *o, const struct ct_knowledge *k,
		     struct ct_collect *col, const struct ct_report *r, json_object **gpu)
{
	char buf[512], labels[4200], err[512] = "";
	const char *dir = ct_gpu_ring_dir_of(o->gpu_dir, buf, sizeof(buf));
	int rc;

	snprintf(labels, sizeof(labels), "%s/commtap-labels.json", o->common.report_dir);
	rc = ct_gpu_link(dir, k, r, &col->bursts, o->common.nic_gbps, labels, gpu, err,
			 sizeof(err));
	if (rc < 0)
		fprintf(stderr, "commtap agent: the GPU side is not in the report: %s\n", err);
	else if (rc > 0)
		fprintf(stderr, "commtap agent: GPU rings in %s joined; labels in %s\n", dir,
			labels);
	else if (o->gpu_dir)
		fprintf(stderr, "commtap agent: --gpu %s: no rings there\n", dir);
}

/* The rings there now are this agent's to read and remove: their writers
 * leave them at finalize (gpu_ring.h, CT_GPU_RING_F_READER). A ring made
 * and finished between two reports goes with its process. */
static void attach_rings(const struct agent_opts *o)
{
	char buf[512];

	ct_gpu_attach(ct_gpu_ring_dir_of(o->gpu_dir, buf, sizeof(buf)));
}

struct gpu_join_ctx {
	const struct agent_opts *o;
	const struct ct_knowledge *k;
	struct ct_collect *col;
	json_object *gpu;
};

/* After the final report's whole analysis: the GPU rings joined to its classes. */
static void join_gpu(struct ct_report *r, void *ctx)
{
	struct gpu_join_ctx *g = ctx;

	if (g->gpu)
		return; /* the rings are read once: reading consumes them */
	gpu_join(g->o, g->k, g->col, r, &g->gpu);
	if (g->gpu)
		ct_report_add_section(r, "gpu", g->gpu);
}

/* The jobs of this host's flows, kept from one report to the next (job_names.h). */
static struct ct_labels job_labels;

static int print_job_labels(FILE *out, void *ctx)
{
	return ct_job_labels_print(out, ctx);
}

/*
 * Each flow's job as the local process that owns it names it, for this
 * report's classification, and written beside the reports when it changed
 * (for a mirror and for the other probes' `--labels` directory). NULL:
 * none, or --no-job-names.
 */
/* A write of commtap-job-labels.json failed: the agent's exit status says so. */
static int job_labels_failed;

static const struct ct_labels *job_names(const struct agent_opts *o,
					 const struct ct_flow_set *flows)
{
	static int warned;
	char path[4200];
	int rc;

	if (o->no_job_names)
		return NULL;
	rc = ct_job_labels_update(&job_labels, flows, o->pod_log_root);
	if (rc > 0) {
		snprintf(path, sizeof(path), "%s/commtap-job-labels.json", o->common.report_dir);
		rc = ct_write_file_atomic(path, print_job_labels, &job_labels);
		if (rc && !warned++)
			fprintf(stderr, "commtap agent: cannot write %s: %s\n", path,
				ct_output_strerror(rc));
		job_labels_failed |= rc != 0;
	}
	return &job_labels;
}

static int put_report(const struct agent_opts *o, struct ct_knowledge *k, struct ct_collect *col,
		      const char *source, int final, struct ct_report_sink *sink,
		      uint64_t stopped_ns, struct hang_watch *watch)
{
	struct ct_report r = {0};
	struct gpu_join_ctx g = {o, k, col, NULL};
	/* the final report joins the GPU rings; an interval report keeps the hang watch */
	struct ct_report_input in = {
		.know = k,
		.bursts = &col->bursts,
		.min_period_s = o->common.min_period_s,
		.analysed = final ? join_gpu : hang_watch_keep,
		.ctx = final ? (void *)&g : (void *)watch,
		.stopped_ns = stopped_ns,
	};
	json_object *host = NULL;
	int rc;

	rc = ct_collect_read(col, final);
	if (rc) {
		fprintf(stderr, "commtap agent: reading the probe's maps failed: %s\n",
			strerror(-rc));
		return rc;
	}
	rc = ct_collect_report(col, &r, &host);
	if (!rc) {
		r.source = source;
		r.source_kind = "ebpf";
		r.clock =
			"the probe's CLOCK_MONOTONIC moved to CLOCK_REALTIME at the agent's start";
		ct_producer_options_nic(&o->common, &r);
		ct_report_add_section(&r, "host", host);
		in.more_labels = job_names(o, &r.flows);
		rc = ct_report_sink_analyse(sink, &in, &r, final, final && stop);
	} else {
		fprintf(stderr, "commtap agent: out of memory building the report\n");
	}
	if (col->oom)
		fprintf(stderr, "commtap agent: out of memory: %llu records are missing\n",
			(unsigned long long)col->oom);
	ct_flow_set_free(&r.flows);
	json_object_put(host);
	json_object_put(g.gpu);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The probe's timestamps' clock (moved to CLOCK_REALTIME), ns. */
static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Who the reader runs as: --user, else the report directory's owner when
 * the agent runs as root and root does not own it. Returns 1 (drop to u), 0
 * (stay as started) or a negative errno with err.
 */
static int reader_user(const struct agent_opts *o, struct ct_run_as *u, char *err, size_t errlen)
{
	int rc;

	if (o->user) {
		rc = ct_run_as_lookup(o->user, u, err, errlen);
		return rc ?: u->uid != 0;
	}
	if (geteuid())
		return 0;
	rc = ct_run_as_owner_of(o->common.report_dir, u, err, errlen);
	if (rc < 0)
		snprintf(err + strlen(err), errlen - strlen(err), " (--report-dir)");
	return rc;
}

/*
 * In the root process: wait for the reader, passing SIGINT/SIGTERM on.
 * started: whether the reader got as far as watching (it writes one byte
 * into the pipe then). Returns the agent's exit status.
 */
static int wait_reader(pid_t pid, int started_fd, const struct ct_run_as *u, int *started)
{
	struct sigaction sa = {.sa_handler = pass_signal};
	sigset_t stops;
	char byte;
	int ws;

	reader_pid = pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "commtap agent: waiting for the reader (pid %d): %s\n",
				(int)pid, strerror(errno));
			return CT_EXIT_ERROR;
		}
	reader_pid = 0;
	*started = read(started_fd, &byte, 1) == 1;
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	fprintf(stderr, "commtap agent: the reader (pid %d, user %s) ended by signal %d (%s)\n",
		(int)pid, u->name, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
	return CT_EXIT_ERROR;
}

/*
 * In the reader, just forked: become u, and die with the root process (a
 * reader left alone could not detach; the kernel would keep counting).
 */
static int become_reader(struct ct_probe **probes, unsigned n, const struct ct_run_as *u,
			 pid_t root_pid, char *err, size_t errlen)
{
	int rc;

	for (unsigned i = 0; i < n; i++)
		ct_probe_forked_copy(probes[i]);
	rc = ct_privileges_drop(u, err, errlen);
	if (rc)
		return rc;
	/* after the drop: changing credentials clears the parent-death signal */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != root_pid) {
		snprintf(err, errlen, "the root process (pid %d) is gone", (int)root_pid);
		return -ESRCH;
	}
	fprintf(stderr,
		"commtap agent: reading as user %s (uid %u, pid %d) without capabilities; "
		"pid %d (root) detaches on exit\n",
		u->name, (unsigned)u->uid, (int)getpid(), (int)root_pid);
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_opts o = {0};
	struct ct_knowledge know = {0};
	struct ct_probe *probes[MAX_IFACES] = {0};
	struct ct_collect col = {0};
	struct hang_watch watch = {0};
	struct ct_report_sink *sink = NULL;
	struct ct_report_sink_config sink_cfg = {0};
	struct ct_run_as user;
	struct sigaction sa = {0};
	sigset_t stops;
	char err[768], source[256] = "";
	unsigned n = 0;
	int status = CT_EXIT_ERROR, rc, started = 0, drop, pipe_fd[2] = {-1, -1};
	pid_t pid = 1; /* the root process keeps the probes; 0: the reader */
	double start, next;

	if (parse_args(argc, argv, &o))
		return CT_EXIT_ERROR;
	drop = reader_user(&o, &user, err, sizeof(err));
	if (drop < 0) {
		fprintf(stderr, "commtap agent: %s\n", err);
		return CT_EXIT_ERROR;
	}
	if (!drop && !geteuid())
		fprintf(stderr,
			"commtap agent: notice: running as root throughout (%s); give "
			"--user NAME to read and report without privileges\n",
			o.user ? "--user root" : "the report directory belongs to root");
	if (ct_knowledge_load(o.common.labels_path, o.common.profile_path, &know, err,
			      sizeof(err))) {
		fprintf(stderr, "commtap agent: %s\n", err);
		goto out;
	}
	for (; n < o.ifaces.n; n++) {
		rc = ct_probe_open(o.ifaces.names[n], &o.probe, &probes[n], err, sizeof(err));
		if (rc) {
			fprintf(stderr, "commtap agent: %s\n", err);
			goto out;
		}
		if (ct_probe_resumed(probes[n]))
			fprintf(stderr,
				"commtap agent: %s: continuing the pinned probe's counters\n",
				o.ifaces.names[n]);
		snprintf(source + strlen(source), sizeof(source) - strlen(source), "%s%s",
			 n ? "," : "", o.ifaces.names[n]);
	}
	if (ct_collect_init(&col, probes, n, o.common.window_ns, err, sizeof(err))) {
		fprintf(stderr, "commtap agent: %s\n", err);
		goto out;
	}
	/* a stop before the handlers are where they belong waits for them */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_BLOCK, &stops, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (drop) {
		pid_t root_pid = getpid();

		if (pipe2(pipe_fd, O_CLOEXEC)) {
			fprintf(stderr, "commtap agent: pipe: %s\n", strerror(errno));
			goto out;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "commtap agent: cannot fork the reader: %s\n",
				strerror(errno));
			goto out;
		}
		if (pid > 0) {
			close(pipe_fd[1]);
			status = wait_reader(pid, pipe_fd[0], &user, &started);
			close(pipe_fd[0]);
			goto out;
		}
		close(pipe_fd[0]);
		if (become_reader(probes, n, &user, root_pid, err, sizeof(err))) {
			fprintf(stderr, "commtap agent: dropping privileges: %s\n", err);
			goto out;
		}
	}
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	/* the /metrics server's thread starts here, after the drop */
	sink_cfg = (struct ct_report_sink_config){
		.report_dir = o.common.report_dir,
		.final_in_dir = 1,
		.resume_numbering = 1,
		.listen = o.common.listen,
		.shutdown_deadline_s = o.common.shutdown_deadline_s,
	};
	if (ct_report_sink_open(&sink_cfg, &sink, err, sizeof(err))) {
		fprintf(stderr, "commtap agent: %s%s%s\n", err, drop ? " as user " : "",
			drop ? user.name : "");
		goto out;
	}
	if (o.common.listen)
		fprintf(stderr, "commtap agent: serving /metrics on port %u\n",
			ct_report_sink_port(sink));
	fprintf(stderr, "commtap agent: watching %s (XDP %s), reports every %g s in %s\n", source,
		ct_probe_xdp_mode(probes[0]), o.common.interval_s, o.common.report_dir);
	if (drop && write(pipe_fd[1], "s", 1) != 1)
		fprintf(stderr, "commtap agent: telling the root process it started: %s\n",
			strerror(errno));
	start = now_s();
	next = start + o.common.interval_s;
	status = CT_EXIT_OK;
	started = 1;
	attach_rings(&o);
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
		t = now_s();
		if (t >= next) {
			put_report(&o, &know, &col, source, 0, sink, 0, &watch);
			attach_rings(&o);
			/* a report that took longer than the interval skips, not stacks, the next
			 */
			while (next <= t)
				next += o.common.interval_s;
		} else if (watch.due && realtime_ns() >= watch.due && !ct_collect_read(&col, 0)) {
			/*
			 * The job silent as long as a hang pages (the probe's clock
			 * is moved to CLOCK_REALTIME), by the packets the maps have
			 * seen since: said now, not at the interval's end.
			 */
			uint64_t live = hang_watch_last_in_set(&watch, &col.live),
				 gone = hang_watch_last_in_set(&watch, &col.retired);

			if (hang_watch_judge(&watch, live > gone ? live : gone, col.newest_ts))
				put_report(&o, &know, &col, source, 0, sink, 0, &watch);
		}
	}
	/* the shutdown deadline counts from here (the stop, or --duration) */
	if (put_report(&o, &know, &col, source, 1, sink, ct_monotonic_ns(), &watch))
		status = CT_EXIT_ERROR;
	/* every failed write, interval reports included, is the exit status's */
	if (ct_report_sink_failures(sink) || job_labels_failed)
		status = CT_EXIT_ERROR;
out:
	if (!pid && pipe_fd[1] >= 0)
		close(pipe_fd[1]);
	ct_collect_free(&col);
	/*
	 * an agent that never started leaves nothing behind but what it took
	 * over; a reader's copies only close their descriptors
	 */
	for (unsigned i = 0; i < n; i++)
		ct_probe_close(probes[i], o.persist && (started || ct_probe_resumed(probes[i])));
	hang_watch_free(&watch);
	ct_report_sink_close(sink);
	ct_knowledge_free(&know);
	ct_labels_free(&job_labels);
	return status;
}
