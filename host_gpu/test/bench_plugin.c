// SPDX-License-Identifier: MIT
/*
 * Per-event overhead of libnccl-profiler-commtap.so: each thread drives its
 * own communicator with start/stop pairs of collective events (the hot path:
 * pool take, two clock reads, ring push, pool give back) and reports
 * ns per pair. With --drain a reader thread empties the ring as the agent
 * does (every millisecond); without it the ring fills and the rest measures the drop path.
 *
 *   gpu-plugin-bench PLUGIN.so [--threads N] [--pairs N] [--drain]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_driver.h"

static struct drv_lib lib;
static long pairs = 2000000;
static volatile int running = 1;
static struct ct_gpu_ring ring;

struct thr {
	pthread_t th;
	int idx;
	double ns_per_pair;
	double cpu_ns_per_pair;
	unsigned long null_handles;
};

static double now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	struct drv_comm c;
	struct drv_coll op = {.func = "AllReduce",
			      .datatype = "ncclBfloat16",
			      .algo = "Ring",
			      .proto = "Simple",
			      .count = 1 << 20,
			      .n_channels = 4};
	double t0, c0;

	if (drv_init(&c, &lib, 5, 0xbe0c0000ull + (uint64_t)t->idx, "bench", 1, 8, t->idx))
		return NULL;
	for (long i = 0; i < pairs / 10; i++)
		drv_coll_pair(&c, &op);
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < pairs; i++) {
		op.seq = (uint64_t)i;
		drv_coll_pair(&c, &op);
	}
	t->cpu_ns_per_pair = (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)pairs;
	t->ns_per_pair = (now_ns(CLOCK_MONOTONIC) - t0) / (double)pairs;
	t->null_handles = c.null_handles;
	drv_finalize(&c);
	return NULL;
}

static void *drainer(void *arg)
{
	struct ct_gpu_rec r;
	unsigned long *n = arg;

	/* As the agent does: empty the ring, then wait a millisecond. */
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
		while (ct_gpu_ring_pop(&ring, &r) == 1)
			(*n)++;
		usleep(1000);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int threads = 4, drain = 0;
	struct thr t[64];
	double v[64], cpu[64];
	char dir[] = "/tmp/commtap-gpu-bench.XXXXXX", path[512];
	unsigned long drained = 0;
	pthread_t dt;
	struct drv_comm first;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN.so [--threads N] [--pairs N] [--drain]\n",
			argv[0]);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
			pairs = atol(argv[++i]);
		else if (!strcmp(argv[i], "--drain"))
			drain = 1;
		else {
			fprintf(stderr, "gpu-plugin-bench: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || pairs < 1) {
		fprintf(stderr, "gpu-plugin-bench: --threads 1..64, --pairs > 0\n");
		return 2;
	}
	if (!mkdtemp(dir) || setenv("COMMTAP_GPU_RING_DIR", dir, 1))
		return 1;
	if (drv_open(&lib, argv[1])) {
		fprintf(stderr, "gpu-plugin-bench: %s: not a commtap profiler plugin\n", argv[1]);
		return 1;
	}
	if (drv_init(&first, &lib, 5, 1, "bench-setup", 1, 1, 0) || !first.ctx) {
		fprintf(stderr, "gpu-plugin-bench: plugin init failed\n");
		return 1;
	}
	drv_ring_path(path, sizeof(path));
	if (ct_gpu_ring_open(&ring, path)) {
		fprintf(stderr, "gpu-plugin-bench: %s: cannot open the ring\n", path);
		return 1;
	}
	if (drain)
		pthread_create(&dt, NULL, drainer, &drained);
	for (int i = 0; i < threads; i++) {
		t[i].idx = i;
		pthread_create(&t[i].th, NULL, worker, &t[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i].th, NULL);
		v[i] = t[i].ns_per_pair;
		cpu[i] = t[i].cpu_ns_per_pair;
	}
	__atomic_store_n(&running, 0, __ATOMIC_RELEASE);
	if (drain)
		pthread_join(dt, NULL);
	qsort(v, (size_t)threads, sizeof(v[0]), cmp_double);
	qsort(cpu, (size_t)threads, sizeof(cpu[0]), cmp_double);
	printf("threads %d pairs/thread %ld mode %s\n", threads, pairs, drain ? "drain" : "full");
	/* Thread CPU time excludes time the thread waited for a core. */
	printf("ns per start/stop pair (thread CPU time): median %.1f min %.1f max %.1f\n",
	       cpu[threads / 2], cpu[0], cpu[threads - 1]);
	printf("ns per start/stop pair (wall): median %.1f min %.1f max %.1f\n", v[threads / 2],
	       v[0], v[threads - 1]);
	printf("records drained %lu dropped %llu pool-empty %llu\n", drained,
	       (unsigned long long)ct_gpu_ring_dropped(&ring),
	       (unsigned long long)ct_gpu_ring_errors(&ring));
	drv_finalize(&first);
	ct_gpu_ring_close(&ring);
	unlink(path);
	rmdir(dir);
	return 0;
}
