// SPDX-License-Identifier: MIT
/*
 * libcommtap-cupti.so: loaded by the CUDA driver through
 * CUDA_INJECTION64_PATH, which calls InitializeInjection once. It enables
 * CUPTI activity for concurrent kernels and memcopies with asynchronous
 * buffers, makes CUPTI timestamp with CLOCK_REALTIME (the pcap clock), and
 * writes each record to the ring <COMMTAP_GPU_RING_DIR>/commtap-cupti.<pid>.
 * Any failure disables it with one line on stderr; the application runs on.
 */
#include <cupti.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commtap/gpu_ring.h"
#include "cupti_decode.h"

#define BUF_SIZE  (4u << 20)
#define BUF_ALIGN 8

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
	if (!disabled)
		cuptiActivityFlushAll(1);
}

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	const char *dir = getenv("COMMTAP_GPU_RING_DIR");
	char *path = ring_path;
	CUptiResult st;
	int err;

	err = ct_gpu_ring_path(path, sizeof(ring_path), dir && *dir ? dir : "/dev/shm", "cupti",
			       getpid());
	if (!err)
		err = ct_gpu_ring_create(&ring, path, 65536, 1, CT_GPU_SRC_CUPTI);
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
