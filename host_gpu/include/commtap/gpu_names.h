/* SPDX-License-Identifier: MIT */
/* Names NCCL and CUDA use for functions, data types, algorithms, protocols. */
#ifndef COMMTAP_GPU_NAMES_H
#define COMMTAP_GPU_NAMES_H

#include <stdint.h>

#include "commtap/gpu_ring.h"

enum ct_gpu_dtype {
	CT_DT_UNKNOWN = 0,
	CT_DT_INT8,
	CT_DT_UINT8,
	CT_DT_INT32,
	CT_DT_UINT32,
	CT_DT_INT64,
	CT_DT_UINT64,
	CT_DT_FLOAT16,
	CT_DT_FLOAT32,
	CT_DT_FLOAT64,
	CT_DT_BFLOAT16,
	CT_DT_FP8E4M3,
	CT_DT_FP8E5M2,
	CT_DT_COUNT,
};

enum ct_gpu_algo {
	CT_ALGO_UNKNOWN = 0,
	CT_ALGO_TREE,
	CT_ALGO_RING,
	CT_ALGO_COLLNET_DIRECT,
	CT_ALGO_COLLNET_CHAIN,
	CT_ALGO_NVLS,
	CT_ALGO_NVLS_TREE,
	CT_ALGO_PAT,
	CT_ALGO_COUNT,
};

enum ct_gpu_proto {
	CT_PROTO_UNKNOWN = 0,
	CT_PROTO_LL,
	CT_PROTO_LL128,
	CT_PROTO_SIMPLE,
	CT_PROTO_COUNT,
};

/* String to id; NULL or unknown strings give 0. */
uint8_t ct_gpu_func_id(const char *s);
uint8_t ct_gpu_dtype_id(const char *s);
uint8_t ct_gpu_algo_id(const char *s);
uint8_t ct_gpu_proto_id(const char *s);
/* Bytes per element, 0 when unknown. */
unsigned ct_gpu_dtype_size(uint8_t id);

/* Id to a printable name ("unknown" for out-of-range ids). */
const char *ct_gpu_func_name(uint8_t id);
const char *ct_gpu_dtype_name(uint8_t id);
const char *ct_gpu_algo_name(uint8_t id);
const char *ct_gpu_proto_name(uint8_t id);

/* Classify a CUDA kernel by its (possibly mangled) name: returns
 * CT_KCLASS_NCCL with *func set, or CT_KCLASS_COMPUTE. */
int ct_gpu_kernel_class(const char *name, uint8_t *func);

#endif
