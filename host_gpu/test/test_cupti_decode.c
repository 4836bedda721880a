// SPDX-License-Identifier: MIT
/*
 * CUPTI record decoding on activity buffers laid out as CUPTI defines them
 * (records back to back, each its cupti_activity.h struct), walked with the
 * real cuptiActivityGetNextRecord: no GPU involved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "commtap/gpu_names.h"
#include "cupti_decode.h"

static _Alignas(8) uint8_t buf[4096];
static struct ct_gpu_rec got[16];
static int n_got;

static void collect(void *arg, const struct ct_gpu_rec *rec)
{
	if (n_got < 16)
		got[n_got++] = *rec;
}

static size_t put_kernel(size_t off, const char *name, uint64_t start, uint64_t end, uint32_t corr)
{
	CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)(buf + off);

	memset(k, 0, sizeof(*k));
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = start;
	k->end = end;
	k->deviceId = 0;
	k->streamId = 7;
	k->correlationId = corr;
	k->name = name;
	return off + sizeof(*k);
}

static size_t put_memcpy(size_t off, uint64_t bytes, uint64_t start, uint64_t end)
{
	CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)(buf + off);

	memset(m, 0, sizeof(*m));
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m->bytes = bytes;
	m->start = start;
	m->end = end;
	m->streamId = 3;
	m->correlationId = 99;
	return off + sizeof(*m);
}

static void test_buffer(void **state)
{
	size_t off = 0;

	n_got = 0;
	off = put_kernel(off, "_Z28ncclDevKernel_AllReduce_Sum_f32_RING_LLP11ncclDevComm", 1000,
			 5000, 11);
	off = put_kernel(off, "ampere_sgemm_128x64_nn", 6000, 9000, 12);
	off = put_memcpy(off, 1 << 20, 9500, 9900);
	off = put_kernel(off, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 10000, 12000, 13);
	off = put_kernel(off, NULL, 13000, 13001, 14);
	assert_int_equal(ct_cupti_decode_buffer(buf, off, collect, NULL), 5);
	assert_int_equal(n_got, 5);

	assert_int_equal(got[0].type, CT_GPU_REC_CUPTI_KERNEL);
	assert_int_equal(got[0].cupti.kclass, CT_KCLASS_NCCL);
	assert_int_equal(got[0].cupti.func, CT_FUNC_ALL_REDUCE);
	assert_int_equal(got[0].t_start, 1000);
	assert_int_equal(got[0].t_stop, 5000);
	assert_int_equal(got[0].cupti.correlation_id, 11);
	assert_int_equal(got[0].cupti.stream_id, 7);
	assert_string_equal(got[0].cupti.name, "ncclDevKernel_AllReduce_Sum");

	assert_int_equal(got[1].cupti.kclass, CT_KCLASS_COMPUTE);
	assert_string_equal(got[1].cupti.name, "ampere_sgemm_128x64_nn");

	assert_int_equal(got[2].type, CT_GPU_REC_CUPTI_MEMCPY);
	assert_int_equal(got[2].cupti.bytes, 1 << 20);
	assert_int_equal(got[2].cupti.copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	assert_int_equal(got[2].t_stop - got[2].t_start, 400);

	assert_int_equal(got[3].cupti.kclass, CT_KCLASS_NCCL);
	assert_int_equal(got[3].cupti.func, CT_FUNC_SEND_RECV);

	assert_int_equal(got[4].cupti.kclass, CT_KCLASS_COMPUTE);
	assert_string_equal(got[4].cupti.name, "");
}

static void test_empty_and_truncated(void **state)
{
	size_t off;

	n_got = 0;
	assert_int_equal(ct_cupti_decode_buffer(NULL, 100, collect, NULL), 0);
	assert_int_equal(ct_cupti_decode_buffer(buf, 0, collect, NULL), 0);
	off = put_kernel(0, "k", 1, 2, 1);
	/* A buffer cut inside its second record yields the first one only. */
	off = put_kernel(off, "k2", 3, 4, 2);
	assert_true(ct_cupti_decode_buffer(buf, off - 8, collect, NULL) <= 1);
	assert_true(n_got <= 1);
}

static void test_kernel_names(void **state)
{
	uint8_t f;

	assert_int_equal(ct_gpu_kernel_class("ncclDevKernel_AllGather_RING_LL", &f),
			 CT_KCLASS_NCCL);
	assert_int_equal(f, CT_FUNC_ALL_GATHER);
	assert_int_equal(
		ct_gpu_kernel_class("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE", &f),
		CT_KCLASS_NCCL);
	assert_int_equal(f, CT_FUNC_REDUCE_SCATTER);
	assert_int_equal(ct_gpu_kernel_class("ncclDevKernel_Generic", &f), CT_KCLASS_NCCL);
	assert_int_equal(f, CT_FUNC_UNKNOWN);
	assert_int_equal(ct_gpu_kernel_class("volta_fp16_gemm_AllReduce_like", &f),
			 CT_KCLASS_COMPUTE);
	assert_int_equal(ct_gpu_kernel_class(NULL, &f), CT_KCLASS_COMPUTE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_empty_and_truncated),
		cmocka_unit_test(test_kernel_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
