// SPDX-License-Identifier: MIT
/*
 * The GPU check: cuBLAS GEMMs and NCCL all-reduces on one GPU (a one-rank
 * communicator; out of place, so that even one rank moves the data), each
 * timed with CUDA events. Run it with the NCCL profiler
 * plugin and the CUPTI injection library loaded (docs/gpu.md); it writes one
 * line per timed kernel, "gemm MS" or "allreduce MS", to the file given, and
 * its pid to stdout, for `commtap-gpu check` to compare with the rings; each
 * line also has the CLOCK_REALTIME window (launch to synchronize) the
 * kernel ran in, so the check matches ring records to it.
 *
 *   gpu-check EVENTS_FILE [ITERATIONS]
 */
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call, what)                                                                  \
	do {                                                                               \
		if (!(call)) {                                                             \
			fprintf(stderr, "gpu-check: %s failed\n", what);                   \
			return 1;                                                          \
		}                                                                          \
	} while (0)

static unsigned long long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const int n = 4096; /* 4096^3 GEMM: about a millisecond, launch costs vanish */
	const size_t count = 64u << 20; /* 256 MiB of floats per all-reduce */
	int iters = argc > 2 ? atoi(argv[2]) : 20, dev = 0;
	float *a, *b, *c, *buf, *dst, one = 1.0f, zero = 0.0f;
	cudaEvent_t e0, e1;
	cublasHandle_t blas;
	ncclComm_t comm;
	cudaStream_t s;
	FILE *out;

	if (argc < 2 || iters < 1) {
		fprintf(stderr, "usage: %s EVENTS_FILE [ITERATIONS]\n", argv[0]);
		return 2;
	}
	out = fopen(argv[1], "w");
	CHECK(out, argv[1]);
	CHECK(cudaSetDevice(dev) == cudaSuccess, "cudaSetDevice");
	CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
	CHECK(cudaMalloc(&a, sizeof(float) * n * n) == cudaSuccess, "cudaMalloc");
	CHECK(cudaMalloc(&b, sizeof(float) * n * n) == cudaSuccess, "cudaMalloc");
	CHECK(cudaMalloc(&c, sizeof(float) * n * n) == cudaSuccess, "cudaMalloc");
	CHECK(cudaMalloc(&buf, sizeof(float) * count) == cudaSuccess, "cudaMalloc");
	CHECK(cudaMalloc(&dst, sizeof(float) * count) == cudaSuccess, "cudaMalloc");
	CHECK(cudaMemset(a, 0, sizeof(float) * n * n) == cudaSuccess, "cudaMemset");
	CHECK(cudaMemset(b, 0, sizeof(float) * n * n) == cudaSuccess, "cudaMemset");
	CHECK(cudaMemset(buf, 0, sizeof(float) * count) == cudaSuccess, "cudaMemset");
	CHECK(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
	CHECK(cublasSetStream(blas, s) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
	CHECK(ncclCommInitAll(&comm, 1, &dev) == ncclSuccess, "ncclCommInitAll");
	CHECK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess,
	      "cudaEventCreate");

	for (int i = -2; i < iters; i++) { /* two warm-up rounds, not reported */
		float ms;
		unsigned long long t0 = realtime_ns();

		cudaEventRecord(e0, s);
		cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
		cudaEventRecord(e1, s);
		CHECK(cudaEventSynchronize(e1) == cudaSuccess, "GEMM");
		cudaEventElapsedTime(&ms, e0, e1);
		if (i >= 0)
			fprintf(out, "gemm %.6f %llu %llu\n", ms, t0, realtime_ns());

		t0 = realtime_ns();
		cudaEventRecord(e0, s);
		CHECK(ncclAllReduce(buf, dst, count, ncclFloat, ncclSum, comm, s) == ncclSuccess,
		      "ncclAllReduce");
		cudaEventRecord(e1, s);
		CHECK(cudaEventSynchronize(e1) == cudaSuccess, "all-reduce");
		cudaEventElapsedTime(&ms, e0, e1);
		if (i >= 0)
			fprintf(out, "allreduce %.6f %llu %llu\n", ms, t0, realtime_ns());
	}
	fclose(out);
	ncclCommDestroy(comm);
	cublasDestroy(blas);
	printf("%d\n", (int)getpid());
	return 0;
}
