// SPDX-License-Identifier: MIT
/* NCCL / CUDA names to small ids and back. */
#include "commtap/gpu_names.h"

#include <string.h>
#include <strings.h>

static const char *const func_names[CT_FUNC_COUNT] = {
	"unknown", "AllReduce", "AllGather", "ReduceScatter", "Broadcast",
	"Reduce",  "Send",	"Recv",	     "AllToAll",      "SendRecv",
};

static const char *const dtype_names[CT_DT_COUNT] = {
	"unknown", "Int8",    "Uint8",	 "Int32",    "Uint32",	   "Int64",	 "Uint64",
	"Float16", "Float32", "Float64", "Bfloat16", "Float8e4m3", "Float8e5m2",
};

static const unsigned dtype_sizes[CT_DT_COUNT] = {0, 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

static const char *const algo_names[CT_ALGO_COUNT] = {
	"unknown", "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT",
};

static const char *const proto_names[CT_PROTO_COUNT] = {"unknown", "LL", "LL128", "Simple"};

static uint8_t lookup(const char *s, const char *const *names, unsigned n)
{
	if (!s)
		return 0;
	/* NCCL's data type strings carry an "nccl" prefix; accept both. */
	if (!strncmp(s, "nccl", 4))
		s += 4;
	for (unsigned i = 1; i < n; i++)
		if (!strcasecmp(s, names[i]))
			return (uint8_t)i;
	return 0;
}

uint8_t ct_gpu_func_id(const char *s)
{
	return lookup(s, func_names, CT_FUNC_COUNT);
}

uint8_t ct_gpu_dtype_id(const char *s)
{
	uint8_t id = lookup(s, dtype_names, CT_DT_COUNT);

	if (id || !s)
		return id;
	/* Aliases NCCL also accepts. */
	if (!strcasecmp(s, "ncclHalf") || !strcasecmp(s, "Half"))
		return CT_DT_FLOAT16;
	if (!strcasecmp(s, "ncclFloat") || !strcasecmp(s, "Float"))
		return CT_DT_FLOAT32;
	if (!strcasecmp(s, "ncclDouble") || !strcasecmp(s, "Double"))
		return CT_DT_FLOAT64;
	if (!strcasecmp(s, "ncclChar") || !strcasecmp(s, "Char"))
		return CT_DT_INT8;
	if (!strcasecmp(s, "ncclInt") || !strcasecmp(s, "Int"))
		return CT_DT_INT32;
	return 0;
}

uint8_t ct_gpu_algo_id(const char *s)
{
	return lookup(s, algo_names, CT_ALGO_COUNT);
}

uint8_t ct_gpu_proto_id(const char *s)
{
	return lookup(s, proto_names, CT_PROTO_COUNT);
}

unsigned ct_gpu_dtype_size(uint8_t id)
{
	return id < CT_DT_COUNT ? dtype_sizes[id] : 0;
}

static const char *name_of(uint8_t id, const char *const *names, unsigned n)
{
	return id < n ? names[id] : "unknown";
}

const char *ct_gpu_func_name(uint8_t id)
{
	return name_of(id, func_names, CT_FUNC_COUNT);
}

const char *ct_gpu_dtype_name(uint8_t id)
{
	return name_of(id, dtype_names, CT_DT_COUNT);
}

const char *ct_gpu_algo_name(uint8_t id)
{
	return name_of(id, algo_names, CT_ALGO_COUNT);
}

const char *ct_gpu_proto_name(uint8_t id)
{
	return name_of(id, proto_names, CT_PROTO_COUNT);
}

/* NCCL device kernels are named ncclKernel_<Func>_... or ncclDevKernel_<Func>_...
 * (inside a mangled C++ name); all-to-all runs as SendRecv kernels. */
int ct_gpu_kernel_class(const char *name, uint8_t *func)
{
	static const struct {
		const char *token;
		uint8_t func;
	} kinds[] = {
		{"AllReduce", CT_FUNC_ALL_REDUCE},
		{"AllGather", CT_FUNC_ALL_GATHER},
		{"ReduceScatter", CT_FUNC_REDUCE_SCATTER},
		{"Broadcast", CT_FUNC_BROADCAST},
		{"SendRecv", CT_FUNC_SEND_RECV},
		{"AllToAll", CT_FUNC_ALL_TO_ALL},
		{"Reduce", CT_FUNC_REDUCE},
		{"Send", CT_FUNC_SEND},
		{"Recv", CT_FUNC_RECV},
	};
	const char *k;

	*func = CT_FUNC_UNKNOWN;
	if (!name)
		return CT_KCLASS_COMPUTE;
	k = strstr(name, "ncclDevKernel_");
	if (k)
		k += strlen("ncclDevKernel_");
	else if ((k = strstr(name, "ncclKernel_")))
		k += strlen("ncclKernel_");
	else
		return CT_KCLASS_COMPUTE;
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].token);

		if (!strncmp(k, kinds[i].token, n) && (k[n] == '_' || k[n] == '(' || !k[n])) {
			*func = kinds[i].func;
			break;
		}
	}
	return CT_KCLASS_NCCL;
}
