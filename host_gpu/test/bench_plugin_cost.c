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
 * A reader thread drains commtap's ring every millisecond (as the agent
 * does) when there is one; the ring gets 4 lanes (one per thread) of 2^19
 * slots (256 MiB) unless COMMTAP_GPU_RING_SLOTS / _LANES say otherwise, so
 * that a pass of up to 25000 collectives drops nothing even when the
 * reader gets no CPU meanwhile.
 *
 * The AllReduce uses --channels channels (default 1) of 8 steps each; with
 * --p2p a Send of one channel of 8 steps follows each (NVIDIA's example
 * clears 23 MB per p2p event it reuses: leave it out when comparing). NVIDIA's example (2.28, 2.29)
 * reads its one-byte kernel-channel type as 8 bytes, so with more than one channel it loses count
 * of a collective's children, its pools run dry and it returns NULL for everything after: compare
 * with one channel.
 *
 *   gpu-plugin-cost PLUGIN.so [--version 4|5|6] [--colls N] [--mask M] [--reps N]
 *                   [--channels N] [--p2p]
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

static struct drv_lib lib;
static long n_colls = 20000;
static int with_p2p; /* a Send after each AllReduce */
static int version;

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
	pthread_t th[2];
};

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *api_thread(void *arg)
{
	struct comm_run *r = arg;
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
	return NULL;
}

static void *proxy_thread(void *arg)
{
	struct comm_run *r = arg;
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
	return NULL;
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
		sem_init(&r->full, 0, 0);
		sem_init(&r->empty, 0, 1);
	}
	for (int c = 0; c < N_COMMS; c++) {
		pthread_create(&runs[c].th[0], NULL, api_thread, &runs[c]);
		pthread_create(&runs[c].th[1], NULL, proxy_thread, &runs[c]);
	}
	for (int c = 0; c < N_COMMS; c++) {
		pthread_join(runs[c].th[0], NULL);
		pthread_join(runs[c].th[1], NULL);
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
static unsigned long null_mask;

static nccl_result_t null_init(void **ctx, uint64_t id, int *mask, const char *name, int n_nodes,
			       int nranks, int rank, nccl_logger_t logfn)
{
	(void)id, (void)name, (void)n_nodes, (void)nranks, (void)rank, (void)logfn;
	*ctx = &null_obj;
	*mask = (int)null_mask;
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

static volatile int draining = 1;
static struct ct_gpu_ring ring;
static unsigned long drained;

static void *drain_thread(void *arg)
{
	struct ct_gpu_rec rec;

	(void)arg;
	while (__atomic_load_n(&draining, __ATOMIC_ACQUIRE)) {
		unsigned long n = 0;

		while (ct_gpu_ring_pop(&ring, &rec) == 1)
			n++;
		drained += n;
		usleep(1000); /* as the agent: empty the ring, wait a millisecond */
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *const bit_names[16] = {"Group",     "Coll",	    "P2p",	"ProxyOp",
					  "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin",
					  "GroupApi",  "CollApi",   "P2pApi",	"KernelLaunch",
					  "CeColl",    "CeSync",    "CeBatch",	"-"};

int main(int argc, char **argv)
{
	static struct comm_run runs[N_COMMS], null_runs[N_COMMS];
	static struct drv_lib null_lib;
	double base_event[MAX_REPS];
	char dir[] = "/dev/shm/commtap-gpu-cost.XXXXXX", path[512], mask_s[32];
	double per_event[MAX_REPS], in_plugin[MAX_REPS], per_coll[MAX_REPS], per_p2p[MAX_REPS];
	double type_ns[16][MAX_REPS], tick_ns, timer;
	unsigned long events = 0, nulls = 0, type_events[16] = {0};
	unsigned long mask = 2047;
	int reps = 5, have_ring;
	pthread_t dt;

	if (argc < 2) {
		fprintf(stderr,
			"usage: %s PLUGIN.so [--version 4|5|6] [--colls N] [--mask M] [--reps N] "
			"[--channels N] [--p2p]\n",
			argv[0]);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
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
			reps = atoi(argv[++i]);
		else {
			fprintf(stderr, "gpu-plugin-cost: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (n_colls < BATCH || reps < 1 || reps > MAX_REPS || allreduce.n_channels < 1 ||
	    allreduce.n_channels > 32) {
		fprintf(stderr, "gpu-plugin-cost: --colls >= %d, --reps 1..%d, --channels 1..32\n",
			BATCH, MAX_REPS);
		return 2;
	}
	n_colls -= n_colls % BATCH;
	snprintf(mask_s, sizeof(mask_s), "%lu", mask);
	if (!mkdtemp(dir) || setenv("COMMTAP_GPU_RING_DIR", dir, 1) ||
	    setenv("COMMTAP_NCCL_MASK", mask_s, 1) ||
	    setenv("NCCL_PROFILE_EVENT_MASK", mask_s, 1) ||
	    setenv("COMMTAP_GPU_RING_SLOTS", "2097152", 0) ||
	    setenv("COMMTAP_GPU_RING_LANES", "4", 0))
		return 1;
	if (drv_open(&lib, argv[1])) {
		fprintf(stderr, "gpu-plugin-cost: %s: no ncclProfiler_v4/v5/v6 table\n", argv[1]);
		return 1;
	}
	if (!version)
		version = drv_newest(&lib);
	for (int c = 0; c < N_COMMS; c++) {
		char name[32];

		snprintf(name, sizeof(name), "bench-%d", c);
		if (drv_init(&runs[c].api, &lib, version, 0xc0570000ull + (uint64_t)c, name, 2, 2,
			     c) ||
		    !runs[c].api.ctx) {
			fprintf(stderr, "gpu-plugin-cost: init through the v%d table failed\n",
				version);
			return 1;
		}
		runs[c].proxy = runs[c].api;
	}
	null_mask = (unsigned long)lib.mask;
	null_lib.v6 = &null_v6;
	for (int c = 0; c < N_COMMS; c++) {
		if (drv_init(&null_runs[c].api, &null_lib, 6, 0x11, "null", 2, 2, c))
			return 1;
		null_runs[c].proxy = null_runs[c].api;
	}
	drv_ring_path(path, sizeof(path));
	have_ring = access(path, F_OK) == 0 && ct_gpu_ring_open(&ring, path) == 0;
	if (have_ring)
		pthread_create(&dt, NULL, drain_thread, NULL);
	tick_ns = ns_per_tick();
	timer = timer_ticks();

	run_pass(runs, n_colls / 5, 0); /* warm-up */
	run_pass(null_runs, n_colls / 5, 0);
	for (int rep = 0; rep < reps; rep++) {
		double cpu = 0, tk = 0, tk_coll = 0, tk_p2p = 0;

		unsigned long base_events, base_nulls;
		double base = 0;

		run_pass(null_runs, n_colls, 0);
		count_events(null_runs, &base_events, &base_nulls);
		for (int c = 0; c < N_COMMS; c++)
			base += null_runs[c].cpu_ns[0] + null_runs[c].cpu_ns[1];
		base_event[rep] = base / (double)base_events;
		run_pass(runs, n_colls, 0);
		count_events(runs, &events, &nulls);
		for (int c = 0; c < N_COMMS; c++)
			cpu += runs[c].cpu_ns[0] + runs[c].cpu_ns[1];
		if (base_events != events) {
			fprintf(stderr,
				"gpu-plugin-cost: the baseline started %lu events, the plugin "
				"%lu\n",
				base_events, events);
			return 1;
		}
		per_event[rep] = (cpu - base) / (double)events;

		run_pass(runs, n_colls, 1);
		for (int bit = 0; bit < 16; bit++) {
			double t = 0, tc = 0, tp = 0;
			uint64_t n = 0;

			for (int c = 0; c < N_COMMS; c++) {
				for (int s = 0; s < 2; s++) {
					const struct drv_cost *cc = &runs[c].coll_cost[s];
					const struct drv_cost *pc = &runs[c].p2p_cost[s];

					tc += (double)cc->ticks[bit] -
					      timer * (double)cc->calls[bit];
					tp += (double)pc->ticks[bit] -
					      timer * (double)pc->calls[bit];
					n += cc->events[bit] + pc->events[bit];
				}
			}
			t = tc + tp;
			tk += t;
			tk_coll += tc;
			tk_p2p += tp;
			type_ns[bit][rep] = n ? t * tick_ns / (double)n : 0;
			type_events[bit] = n;
		}
		in_plugin[rep] = tk * tick_ns / (double)events;
		per_coll[rep] = tk_coll * tick_ns / (double)(n_colls * N_COMMS);
		per_p2p[rep] = tk_p2p * tick_ns / (double)(n_colls * N_COMMS);
	}
	__atomic_store_n(&draining, 0, __ATOMIC_RELEASE);
	if (have_ring)
		pthread_join(dt, NULL);

	printf("plugin %s table v%d mask %lu: %d communicators x (API thread + proxy thread), "
	       "%ld AllReduce (%d channels x 8 steps)%s each, %d reps\n",
	       argv[1], version, mask, N_COMMS, n_colls, allreduce.n_channels,
	       with_p2p ? " + as many Send (8 steps)" : "", reps);
	printf("events NCCL started per pass %lu (NULL handles %lu)\n", events, nulls);
	printf("ns per event, thread CPU time, less the baseline (a plugin that does nothing): "
	       "median %.1f\n",
	       median(per_event, reps));
	printf("  (baseline: the driver and the clock reads alone: %.1f ns per event)\n",
	       median(base_event, reps));
	printf("ns per event inside the plugin calls: median %.1f\n", median(in_plugin, reps));
	printf("ns per collective (AllReduce with its children): median %.0f\n",
	       median(per_coll, reps));
	if (with_p2p)
		printf("ns per p2p (Send with its children): median %.0f\n", median(per_p2p, reps));
	printf("per event type (inside the plugin, start + states + stop):\n");
	for (int bit = 0; bit < 16; bit++)
		if (type_events[bit])
			printf("  %-12s events/pass %9lu  ns/event %.1f\n", bit_names[bit],
			       type_events[bit], median(type_ns[bit], reps));
	if (have_ring)
		printf("ring: drained %lu dropped %llu errors %llu\n", drained,
		       (unsigned long long)ct_gpu_ring_dropped(&ring),
		       (unsigned long long)ct_gpu_ring_errors(&ring));
	for (int c = 0; c < N_COMMS; c++)
		drv_finalize(&runs[c].api);
	if (have_ring) {
		ct_gpu_ring_close(&ring);
		unlink(path);
	}
	rmdir(dir);
	return 0;
}
