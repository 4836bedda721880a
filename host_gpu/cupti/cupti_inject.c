// SPDX-License-Identifier: MIT
/*
 * libcommtap-cupti.so: loaded by the CUDA driver through
 * CUDA_INJECTION64_PATH, which calls InitializeInjection once. It enables
 * CUPTI activity for concurrent kernels and memcopies with asynchronous
 * buffers, makes CUPTI timestamp with CLOCK_REALTIME (the pcap clock), and
 * writes each record to the ring commtap-cupti.<pid> in the ring directory
 * (gpu_ring_dir.h), removed at exit unless a reader attached or
 * COMMTAP_GPU_RING_KEEP=1. Any failure disables it with one line on stderr;
 * the application runs on.
 */
#include <cupti.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commtap/gpu_ring.h"
#include "commtap/gpu_ring_dir.h"
#include "cupti_decode.h"

#define BUF_SIZE  (4u << 20)
#define BUF_ALIGN 8
#define SLOTS	  65536

static struct ct_gpu_ring ring;
static char ring_path[512];
static int disabled;

/* Setup failed: leave no ring behind for the agent to wait on. */
static void drop_ring(void)
{
	ct_gpu_ring_close(&ring);
	unlink(ring_path);
}

static void fail(const char *what, CUptiResult st)
{
	const char *msg = "?";

	if (__atomic_exchange_n(&disabled, 1, __ATOMIC_ACQ_REL))
		return;
	cuptiGetResultString(st, &msg);
	fprintf(stderr, "commtap cupti: disabled: %s: %s\n", what, msg);
}

static uint64_t CUPTIAPI realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = disabled ? NULL : aligned_alloc(BUF_ALIGN, BUF_SIZE);
	*size = *buffer ? BUF_SIZE : 0;
	*max_records = 0;
}

static void emit(void *arg, const struct ct_gpu_rec *rec)
{
	ct_gpu_ring_push(arg, rec);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	size_t dropped = 0;

	if (!disabled && ct_cupti_decode_buffer(buffer, valid, emit, &ring) < 0)
		fail("reading an activity buffer", CUPTI_ERROR_INVALID_PARAMETER);
	if (!disabled && cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		while (dropped--)
			ct_gpu_ring_count_error(&ring);
	free(buffer);
}

static void flush_at_exit(void)
{
	const char *keep = getenv("COMMTAP_GPU_RING_KEEP");

	if (!disabled)
		cuptiActivityFlushAll(1);
	if (!disabled && !ct_gpu_ring_attached(&ring) && !(keep && !strcmp(keep, "1")))
		unlink(ring_path);
}

static int ring_create(void)
{
	char name[64];
	int dirfd, err;
	size_t n;

	dirfd = ct_gpu_ring_dir_open(ring_path, sizeof(ring_path));
	if (dirfd < 0)
		return dirfd;
	snprintf(name, sizeof(name), "commtap-cupti.%d", (int)getpid());
	n = strlen(ring_path);
	snprintf(ring_path + n, sizeof(ring_path) - n, "/%s", name);
	err = ct_gpu_ring_dir_prune(dirfd, ct_gpu_ring_bytes(SLOTS, 1), ct_gpu_ring_dir_max(), true);
	if (!err) {
		err = ct_gpu_ring_create_at(&ring, dirfd, name, SLOTS, 1, CT_GPU_SRC_CUPTI);
		ct_gpu_ring_dir_unlock(dirfd);
	}
	close(dirfd);
	return err;
}

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	const char *path = ring_path;
	CUptiResult st;
	int err;

	err = ring_create();
	if (err) {
		fprintf(stderr, "commtap cupti: disabled: %s: %s\n", path, strerror(-err));
		disabled = 1;
		return 1; /* the application must not fail because of us */
	}
	st = cuptiActivityRegisterTimestampCallback(realtime_ns);
	if (st != CUPTI_SUCCESS) {
		fail("cuptiActivityRegisterTimestampCallback", st);
		drop_ring();
		return 1;
	}
	st = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (st == CUPTI_SUCCESS)
		st = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (st == CUPTI_SUCCESS)
		st = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
	if (st != CUPTI_SUCCESS) {
		fail("enabling activity", st);
		drop_ring();
		return 1;
	}
	atexit(flush_at_exit);
	fprintf(stderr, "commtap cupti: ring %s (clock CLOCK_REALTIME)\n", path);
	return 1;
}
