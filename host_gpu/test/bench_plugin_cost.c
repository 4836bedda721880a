// SPDX-License-Identifier: MIT
/*
 * Per-event cost of any NCCL profiler plugin, driven as NCCL core drives it:
 * two communicators, each with an API thread (group API → collective / p2p
 * API → group → collective / p2p → kernel launch) and a proxy thread (proxy
 * op → proxy step → IB QP net event, kernel channels) that gets the
 * collective's handle from the API thread, as NCCL's proxy does: 4 threads.
 * Only the event types the plugin enabled are started. The activation mask
 * is handed to commtap's plugin (COMMTAP_NCCL_MASK) and to NVIDIA's example
 * (NCCL_PROFILE_EVENT_MASK) alike.
 *
 * Figures, medians over --reps timed passes:
 * - ns per event: the 4 threads' CPU time (CLOCK_THREAD_CPUTIME_ID) over the
 *   driving loops (read around each batch, not over the waits between
 *   batches), less that of the same loops driving a plugin that does
 *   nothing (the driver's descriptors, the clock reads), / the events NCCL
 *   started (the same count for every plugin);
 * - inside the plugin: the TSC ticks spent in start / stop / state calls,
 *   less the timer's own cost, per event type, per collective, per p2p.
 * - recorded: the share of NCCL's events the plugin recorded. commtap: the
 *   records read back from its ring by a reader thread that drains it every
 *   millisecond (as the agent does), over the events started; any other
 *   plugin: the events it returned a handle for, over the events started.
 * Several plugins in one run take turns within each rep (each with a null
 * pass of its own mask before it), so that they see the same machine; the
 * ratio is taken rep by rep against the first. Each commtap build gets its
 * own ring directory, so two builds of it compare side by side.
 *
 * The AllReduce uses --channels channels (default 1) of 8 steps each; with
 * --p2p a Send of one channel of 8 steps follows each (NVIDIA's example
 * clears 23 MB per p2p event it reuses: leave it out when comparing). NVIDIA's example (2.28, 2.29)
 * reads its one-byte kernel-channel type as 8 bytes, so with more than one channel it loses count
 * of a collective's children, its pools run dry and it returns NULL for everything after: compare
 * with one channel.
 *
 *   gpu-plugin-cost PLUGIN.so [PLUGIN.so ...] [--version 4|5|6] [--colls N] [--mask M]
 *                   [--reps N] [--channels N] [--p2p]
 */
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "nccl_driver.h"

/* Operations the API thread hands to the proxy at once. The two take turns
 * (the proxy is at most one batch behind), which keeps NVIDIA's example
 * inside its pools (docs/performance.md gives the pool sizes). */
#define BATCH	 8
#define N_COMMS	 2
#define MAX_REPS 15

static struct drv_coll allreduce = {.func = "AllReduce",
				    .datatype = "ncclBfloat16",
				    .algo = "Ring",
				    .proto = "Simple",
				    .count = 1 << 20,
				    .n_channels = 1,
				    .n_steps = 8,
				    .chunk = 1 << 16,
				    .peer = 1,
				    .qpn_base = 0x200};

static long n_colls = 20000;
static int with_p2p; /* a Send after each AllReduce */
static int version;
static int n_reps = 5;

/* One communicator: its two threads, the batches between them. */
struct comm_run {
	struct drv_comm api, proxy;
	struct {
		void *coll[BATCH];
		void *p2p[BATCH];
	} batch;
	sem_t full, empty;
	long n;		  /* operations this pass */
	int timed;	  /* time every plugin call */
	double cpu_ns[2]; /* API, proxy thread CPU time of the pass */
	struct drv_cost coll_cost[2], p2p_cost[2];
	sem_t go[2], done; /* a pass for each thread; each thread's end of it */
	int started;
	pthread_t th[2];
};

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void api_pass(struct comm_run *r)
{
	struct drv_coll op = allreduce;
	double cpu = 0;

	for (long i = 0; i < r->n; i += BATCH) {
		double c0;

		sem_wait(&r->empty);
		c0 = thread_cpu_ns();
		for (int k = 0; k < BATCH; k++) {
			op.seq = (uint64_t)(i + k);
			r->api.cost = r->timed ? &r->coll_cost[0] : NULL;
			r->batch.coll[k] = drv_coll_launch(&r->api, &op);
			if (!with_p2p)
				continue;
			r->api.cost = r->timed ? &r->p2p_cost[0] : NULL;
			r->batch.p2p[k] = drv_p2p_launch(&r->api, "Send", 1 << 16, 1);
		}
		cpu += thread_cpu_ns() - c0;
		sem_post(&r->full);
	}
	r->cpu_ns[0] = cpu;
}

static void proxy_pass(struct comm_run *r)
{
	double cpu = 0;

	for (long i = 0; i < r->n; i += BATCH) {
		double c0;

		sem_wait(&r->full);
		c0 = thread_cpu_ns();
		for (int k = 0; k < BATCH; k++) {
			r->proxy.cost = r->timed ? &r->coll_cost[1] : NULL;
			drv_coll_progress(&r->proxy, r->batch.coll[k], &allreduce);
			if (!with_p2p)
				continue;
			r->proxy.cost = r->timed ? &r->p2p_cost[1] : NULL;
			drv_p2p_progress(&r->proxy, r->batch.p2p[k], "Send", 1 << 16, 1, 8);
		}
		cpu += thread_cpu_ns() - c0;
		sem_post(&r->empty);
	}
	r->cpu_ns[1] = cpu;
}

/* The threads live as long as the communicator, as NCCL's proxy thread and
 * the application's API thread do (a plugin may keep per-thread state, such
 * as commtap's ring lane); each pass is started by `go`. n < 0: exit. */
static void *api_thread(void *arg)
{
	struct comm_run *r = arg;

	for (;;) {
		sem_wait(&r->go[0]);
		if (r->n < 0)
			return NULL;
		api_pass(r);
		sem_post(&r->done);
	}
}

static void *proxy_thread(void *arg)
{
	struct comm_run *r = arg;

	for (;;) {
		sem_wait(&r->go[1]);
		if (r->n < 0)
			return NULL;
		proxy_pass(r);
		sem_post(&r->done);
	}
}

static void start_threads(struct comm_run *runs)
{
	for (int c = 0; c < N_COMMS; c++) {
		sem_init(&runs[c].go[0], 0, 0);
		sem_init(&runs[c].go[1], 0, 0);
		sem_init(&runs[c].done, 0, 0);
		sem_init(&runs[c].full, 0, 0);
		sem_init(&runs[c].empty, 0, 1);
		pthread_create(&runs[c].th[0], NULL, api_thread, &runs[c]);
		pthread_create(&runs[c].th[1], NULL, proxy_thread, &runs[c]);
		runs[c].started = 1;
	}
}

static void stop_threads(struct comm_run *runs)
{
	for (int c = 0; c < N_COMMS; c++) {
		if (!runs[c].started)
			continue;
		runs[c].n = -1;
		sem_post(&runs[c].go[0]);
		sem_post(&runs[c].go[1]);
		pthread_join(runs[c].th[0], NULL);
		pthread_join(runs[c].th[1], NULL);
		runs[c].started = 0;
	}
}

static void run_pass(struct comm_run *runs, long n, int timed)
{
	for (int c = 0; c < N_COMMS; c++) {
		struct comm_run *r = &runs[c];

		r->n = n;
		r->timed = timed;
		memset(r->coll_cost, 0, sizeof(r->coll_cost));
		memset(r->p2p_cost, 0, sizeof(r->p2p_cost));
		memset(r->api.started, 0, sizeof(r->api.started));
		memset(r->proxy.started, 0, sizeof(r->proxy.started));
		r->api.null_handles = r->proxy.null_handles = 0;
	}
	for (int c = 0; c < N_COMMS; c++) {
		sem_post(&runs[c].go[0]);
		sem_post(&runs[c].go[1]);
	}
	for (int c = 0; c < N_COMMS; c++) {
		sem_wait(&runs[c].done);
		sem_wait(&runs[c].done);
	}
}

/* Events NCCL started in the last pass (handles or not) and NULL handles. */
static void count_events(const struct comm_run *runs, unsigned long *events, unsigned long *nulls)
{
	*events = *nulls = 0;
	for (int c = 0; c < N_COMMS; c++) {
		for (int t = 0; t < 32; t++)
			*events += runs[c].api.started[t] + runs[c].proxy.started[t];
		*nulls += runs[c].api.null_handles + runs[c].proxy.null_handles;
	}
	*events += *nulls;
}

static uint64_t ticks(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/* ns per tick, measured against CLOCK_MONOTONIC over 100 ms. */
static double ns_per_tick(void)
{
	struct timespec a, b;
	uint64_t t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = ticks();
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 1e8);
	t1 = ticks();
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)(t1 - t0);
}

/* Ticks one timed call costs with an empty body: the minimum of many. */
static double timer_ticks(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 100000; i++) {
		uint64_t t0 = ticks();
		__asm__ volatile("" ::: "memory");
		uint64_t d = ticks() - t0;

		if (d < best)
			best = d;
	}
	return (double)best;
}

/* The baseline: a plugin that does nothing but hand out a handle, so the
 * driver takes the same paths; its CPU time is the driver's own and the
 * hand-off's, subtracted from the plugin's. */
static char null_obj;

static nccl_result_t null_init(void **ctx, uint64_t id, int *mask, const char *name, int n_nodes,
			       int nranks, int rank, nccl_logger_t logfn)
{
	(void)id, (void)name, (void)n_nodes, (void)nranks, (void)rank, (void)logfn;
	*ctx = &null_obj;
	(void)mask; /* the driver hands it the measured plugin's mask: kept */
	return NCCL_OK;
}

static nccl_result_t null_start(void *ctx, void **handle, struct np_descr_v6 *d)
{
	(void)ctx, (void)d;
	*handle = &null_obj;
	return NCCL_OK;
}

static nccl_result_t null_stop(void *handle)
{
	(void)handle;
	return NCCL_OK;
}

static nccl_result_t null_state(void *handle, int state, union np_state_args *a)
{
	(void)handle, (void)state, (void)a;
	return NCCL_OK;
}

static nccl_result_t null_finalize(void *ctx)
{
	(void)ctx;
	return NCCL_OK;
}

/* v5 and v4 callers see the same functions: only v6 is used for the
 * baseline, whatever table the plugin is driven through, so the null table
 * takes the v6 descriptor. The driver's per-version copy costs a few ns
 * more for v5 / v4; that is within the noise. */
static const struct np_profiler_v6 null_v6 = {"null",	 null_init,  null_start,
					      null_stop, null_state, null_finalize};

/* One plugin under test: its communicators, the null plugin's beside them
 * (the same mask), its ring (commtap's) and its figures per rep. */
struct plugin {
	const char *path;
	struct drv_lib lib, null_lib;
	struct comm_run runs[N_COMMS], null_runs[N_COMMS];
	char dir[64]; /* its own ring directory: two commtap builds side by side */
	struct ct_gpu_ring ring;
	int have_ring;
	unsigned long drained; /* records read back from its ring (drainer) */
	unsigned long events, nulls, type_events[16];
	double per_event[MAX_REPS], base_event[MAX_REPS], share[MAX_REPS], in_plugin[MAX_REPS];
	double per_coll[MAX_REPS], per_p2p[MAX_REPS], type_ns[16][MAX_REPS];
	double ratio[MAX_REPS]; /* per_event / the first plugin's, rep by rep */
};

#define MAX_PLUGINS 4
static struct plugin plugins[MAX_PLUGINS];
static int n_plugins;

static volatile int draining = 1;
static unsigned long drain_rounds; /* sweeps over every ring completed */

/* One reader for every commtap ring, as the agent: empty the rings, wait a
 * millisecond. */
static void *drain_thread(void *arg)
{
	struct ct_gpu_rec rec;

	(void)arg;
	while (__atomic_load_n(&draining, __ATOMIC_ACQUIRE)) {
		for (int p = 0; p < n_plugins; p++) {
			unsigned long n = 0;

			if (!plugins[p].have_ring)
				continue;
			while (ct_gpu_ring_pop(&plugins[p].ring, &rec) == 1)
				n++;
			__atomic_fetch_add(&plugins[p].drained, n, __ATOMIC_RELEASE);
		}
		__atomic_fetch_add(&drain_rounds, 1, __ATOMIC_RELEASE);
		usleep(1000);
	}
	return NULL;
}

/* Records of `p` read back once every record pushed so far has been: waits
 * for a whole sweep that began after this call (the producers are done). */
static unsigned long drained_settled(struct plugin *p)
{
	unsigned long r0 = __atomic_load_n(&drain_rounds, __ATOMIC_ACQUIRE);

	while (__atomic_load_n(&drain_rounds, __ATOMIC_ACQUIRE) < r0 + 2)
		usleep(500);
	return __atomic_load_n(&p->drained, __ATOMIC_ACQUIRE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *in, int n)
{
	double v[MAX_REPS];

	memcpy(v, in, sizeof(*v) * (size_t)n);
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *const bit_names[16] = {"Group",     "Coll",	    "P2p",	"ProxyOp",
					  "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin",
					  "GroupApi",  "CollApi",   "P2pApi",	"KernelLaunch",
					  "CeColl",    "CeSync",    "CeBatch",	"-"};

static int plugin_open(struct plugin *p, const char *path, unsigned long mask)
{
	char ring_path[512];

	p->path = path;
	/* Each plugin its own ring directory: a commtap plugin creates its
	 * ring (named by the pid) at its first init, from this variable. */
	snprintf(p->dir, sizeof(p->dir), "/dev/shm/commtap-gpu-cost.XXXXXX");
	if (!mkdtemp(p->dir) || setenv("COMMTAP_GPU_RING_DIR", p->dir, 1))
		return -1;
	if (drv_open(&p->lib, path)) {
		fprintf(stderr, "gpu-plugin-cost: %s: no ncclProfiler_v4/v5/v6 table\n", path);
		return -1;
	}
	p->lib.mask = (int)mask;
	if (!version)
		version = drv_newest(&p->lib);
	for (int c = 0; c < N_COMMS; c++) {
		char name[32];

		snprintf(name, sizeof(name), "bench-%d", c);
		if (drv_init(&p->runs[c].api, &p->lib, version, 0xc0570000ull + (uint64_t)c, name,
			     2, 2, c) ||
		    !p->runs[c].api.ctx) {
			fprintf(stderr, "gpu-plugin-cost: %s: init through the v%d table failed\n",
				path, version);
			return -1;
		}
		p->runs[c].proxy = p->runs[c].api;
	}
	/* The null plugin starts exactly the events this plugin enabled. */
	p->null_lib.v6 = &null_v6;
	p->null_lib.mask = p->lib.mask;
	for (int c = 0; c < N_COMMS; c++) {
		if (drv_init(&p->null_runs[c].api, &p->null_lib, 6, 0x11, "null", 2, 2, c))
			return -1;
		p->null_runs[c].proxy = p->null_runs[c].api;
	}
	start_threads(p->runs);
	start_threads(p->null_runs);
	drv_ring_path(ring_path, sizeof(ring_path));
	p->have_ring = access(ring_path, F_OK) == 0 && ct_gpu_ring_open(&p->ring, ring_path) == 0;
	return 0;
}

static void plugin_close(struct plugin *p)
{
	char ring_path[512];

	stop_threads(p->runs);
	stop_threads(p->null_runs);
	for (int c = 0; c < N_COMMS; c++)
		if (p->runs[c].api.ctx)
			drv_finalize(&p->runs[c].api);
	if (setenv("COMMTAP_GPU_RING_DIR", p->dir, 1) == 0 &&
	    drv_ring_path(ring_path, sizeof(ring_path)) == 0)
		unlink(ring_path);
	if (p->have_ring)
		ct_gpu_ring_close(&p->ring);
	rmdir(p->dir);
}

/* One rep of one plugin: a null pass, a plugin pass (CPU time), a timed
 * pass (ticks inside the calls). 0, or -1 when the event counts differ. */
static int plugin_rep(struct plugin *p, int rep, double tick_ns, double timer)
{
	unsigned long base_events, base_nulls, before = 0;
	double cpu = 0, base = 0, tk = 0, tk_coll = 0, tk_p2p = 0;

	run_pass(p->null_runs, n_colls, 0);
	count_events(p->null_runs, &base_events, &base_nulls);
	for (int c = 0; c < N_COMMS; c++)
		base += p->null_runs[c].cpu_ns[0] + p->null_runs[c].cpu_ns[1];
	p->base_event[rep] = base / (double)base_events;
	if (p->have_ring)
		before = drained_settled(p);
	run_pass(p->runs, n_colls, 0);
	count_events(p->runs, &p->events, &p->nulls);
	for (int c = 0; c < N_COMMS; c++)
		cpu += p->runs[c].cpu_ns[0] + p->runs[c].cpu_ns[1];
	if (base_events != p->events) {
		fprintf(stderr,
			"gpu-plugin-cost: %s: the baseline started %lu events, the plugin %lu\n",
			p->path, base_events, p->events);
		return -1;
	}
	p->per_event[rep] = (cpu - base) / (double)p->events;
	/* The share of NCCL's events the plugin recorded: commtap, records read
	 * back from its ring; any other, the events it returned a handle for. */
	if (p->have_ring)
		p->share[rep] = (double)(drained_settled(p) - before) / (double)p->events;
	else
		p->share[rep] = (double)(p->events - p->nulls) / (double)p->events;

	run_pass(p->runs, n_colls, 1);
	for (int bit = 0; bit < 16; bit++) {
		double tc = 0, tp = 0;
		uint64_t n = 0;

		for (int c = 0; c < N_COMMS; c++) {
			for (int s = 0; s < 2; s++) {
				const struct drv_cost *cc = &p->runs[c].coll_cost[s];
				const struct drv_cost *pc = &p->runs[c].p2p_cost[s];

				tc += (double)cc->ticks[bit] - timer * (double)cc->calls[bit];
				tp += (double)pc->ticks[bit] - timer * (double)pc->calls[bit];
				n += cc->events[bit] + pc->events[bit];
			}
		}
		tk += tc + tp;
		tk_coll += tc;
		tk_p2p += tp;
		p->type_ns[bit][rep] = n ? (tc + tp) * tick_ns / (double)n : 0;
		p->type_events[bit] = n;
	}
	p->in_plugin[rep] = tk * tick_ns / (double)p->events;
	p->per_coll[rep] = tk_coll * tick_ns / (double)(n_colls * N_COMMS);
	p->per_p2p[rep] = tk_p2p * tick_ns / (double)(n_colls * N_COMMS);
	return 0;
}

static void plugin_print(const struct plugin *p, int reps)
{
	printf("\nplugin %s table v%d mask %d\n", p->path, version, p->lib.mask);
	printf("events NCCL started per pass %lu (NULL handles %lu)\n", p->events, p->nulls);
	if (p->have_ring)
		printf("recorded: %.2f%% of the events (records read back from its ring by the "
		       "drainer / events started; median of the passes); ring dropped %llu errors "
		       "%llu in all\n",
		       100 * median(p->share, n_reps),
		       (unsigned long long)ct_gpu_ring_dropped(&p->ring),
		       (unsigned long long)ct_gpu_ring_errors(&p->ring));
	else
		printf("recorded: %.2f%% of the events (events it returned a handle for / events "
		       "started; median of the passes)\n",
		       100 * median(p->share, n_reps));
	printf("ns per event, thread CPU time, less the baseline (a plugin that does nothing): "
	       "median %.1f\n",
	       median(p->per_event, n_reps));
	printf("  (baseline: the driver and the clock reads alone: %.1f ns per event)\n",
	       median(p->base_event, n_reps));
	printf("ns per event inside the plugin calls: median %.1f\n", median(p->in_plugin, n_reps));
	printf("ns per collective (AllReduce with its children): median %.0f\n",
	       median(p->per_coll, n_reps));
	if (with_p2p)
		printf("ns per p2p (Send with its children): median %.0f\n",
		       median(p->per_p2p, n_reps));
	printf("per event type (inside the plugin, start + states + stop):\n");
	for (int bit = 0; bit < 16; bit++)
		if (p->type_events[bit])
			printf("  %-12s events/pass %9lu  ns/event %.1f\n", bit_names[bit],
			       p->type_events[bit], median(p->type_ns[bit], n_reps));
}

int main(int argc, char **argv)
{
	const char *paths[MAX_PLUGINS];
	char mask_s[32];
	double tick_ns, timer;
	unsigned long mask = 2047;
	int rc = 0;
	pthread_t dt;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--version") && i + 1 < argc)
			version = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--colls") && i + 1 < argc)
			n_colls = atol(argv[++i]);
		else if (!strcmp(argv[i], "--mask") && i + 1 < argc)
			mask = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--p2p"))
			with_p2p = 1;
		else if (!strcmp(argv[i], "--channels") && i + 1 < argc)
			allreduce.n_channels = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			n_reps = atoi(argv[++i]);
		else if (argv[i][0] != '-' && n_plugins < MAX_PLUGINS)
			paths[n_plugins++] = argv[i];
		else {
			fprintf(stderr, "gpu-plugin-cost: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (!n_plugins) {
		fprintf(stderr,
			"usage: %s PLUGIN.so [PLUGIN.so ...] [--version 4|5|6] [--colls N] "
			"[--mask M] [--reps N] [--channels N] [--p2p]\n",
			argv[0]);
		return 2;
	}
	if (n_colls < BATCH || n_reps < 1 || n_reps > MAX_REPS || allreduce.n_channels < 1 ||
	    allreduce.n_channels > 32) {
		fprintf(stderr, "gpu-plugin-cost: --colls >= %d, --reps 1..%d, --channels 1..32\n",
			BATCH, MAX_REPS);
		return 2;
	}
	n_colls -= n_colls % BATCH;
	snprintf(mask_s, sizeof(mask_s), "%lu", mask);
	/* A pass of 25000 collectives x 2 communicators x 22 records fits the
	 * ring even when the drainer gets no CPU meanwhile: 2^21 slots (256
	 * MiB) in the plugin's default 8 lanes (each of the 4 threads owns
	 * one); the directory's bound (128 MiB by default) raised to let it. */
	if (setenv("COMMTAP_NCCL_MASK", mask_s, 1) ||
	    setenv("NCCL_PROFILE_EVENT_MASK", mask_s, 1) ||
	    setenv("COMMTAP_GPU_RING_SLOTS", "2097152", 0) ||
	    setenv("COMMTAP_GPU_RING_DIR_MAX", "1073741824", 0))
		return 1;
	for (int i = 0; i < n_plugins; i++) {
		if (plugin_open(&plugins[i], paths[i], mask)) {
			rc = 1;
			n_plugins = i + 1;
			goto out;
		}
	}
	pthread_create(&dt, NULL, drain_thread, NULL);
	tick_ns = ns_per_tick();
	timer = timer_ticks();

	for (int i = 0; i < n_plugins; i++) { /* warm-up */
		run_pass(plugins[i].runs, n_colls / 5, 0);
		run_pass(plugins[i].null_runs, n_colls / 5, 0);
	}
	for (int rep = 0; rep < n_reps && !rc; rep++) {
		/* Plugins in turn, the first one rotating, so that none always
		 * runs right after another's pass. */
		for (int k = 0; k < n_plugins && !rc; k++)
			rc = plugin_rep(&plugins[(rep + k) % n_plugins], rep, tick_ns, timer) ? 1
											      : 0;
		for (int i = 0; i < n_plugins; i++)
			plugins[i].ratio[rep] =
				plugins[i].per_event[rep] / plugins[0].per_event[rep];
	}
	__atomic_store_n(&draining, 0, __ATOMIC_RELEASE);
	pthread_join(dt, NULL);
	if (rc)
		goto out;

	printf("%d communicators x (API thread + proxy thread), %ld AllReduce (%d channels x 8 "
	       "steps)%s each, %d reps, plugins in turn in each rep\n",
	       N_COMMS, n_colls, allreduce.n_channels, with_p2p ? " + as many Send (8 steps)" : "",
	       n_reps);
	for (int i = 0; i < n_plugins; i++)
		plugin_print(&plugins[i], n_reps);
	printf("\nsummary (ns per event above the null plugin; ratio: rep by rep against the "
	       "first plugin, median)\n");
	for (int i = 0; i < n_plugins; i++)
		printf("  %-50s mask %5d  %7.1f ns  recorded %6.2f%%  ratio %.2f\n",
		       plugins[i].path, plugins[i].lib.mask, median(plugins[i].per_event, n_reps),
		       100 * median(plugins[i].share, n_reps), median(plugins[i].ratio, n_reps));
out:
	for (int i = 0; i < n_plugins; i++)
		plugin_close(&plugins[i]);
	return rc;
}
