// SPDX-License-Identifier: MIT
/*
 * CUPTI activity records to ring records. Kernel records (CONCURRENT_KERNEL
 * and KERNEL share the layout's leading fields) and memcpy records carry
 * start/end in the clock CUPTI was given (CLOCK_REALTIME through
 * cuptiActivityRegisterTimestampCallback in the injection library).
 */
#include "cupti_decode.h"

#include <errno.h>
#include <string.h>

#include "commtap/gpu_names.h"

/* "_Z28ncclDevKernel_AllReduce..." → "ncclDevKernel_AllReduce...": the
 * Itanium prefix and length say nothing and would eat the short name field. */
static const char *demangle_prefix(const char *name)
{
	if (name[0] == '_' && name[1] == 'Z') {
		const char *p = name + 2;

		while (*p == 'N' || *p == 'L')
			p++;
		if (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
			return p;
		}
	}
	return name;
}

int ct_cupti_decode(const CUpti_Activity *a, struct ct_gpu_rec *out)
{
	memset(out, 0, sizeof(*out));
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
		const char *name = k->name ? k->name : "";

		out->type = CT_GPU_REC_CUPTI_KERNEL;
		out->t_start = k->start;
		out->t_stop = k->end;
		out->id = k->correlationId;
		out->rank = -1;
		out->cupti.gpu_start = k->start;
		out->cupti.gpu_end = k->end;
		out->cupti.correlation_id = k->correlationId;
		out->cupti.stream_id = k->streamId;
		out->cupti.device_id = k->deviceId;
		out->cupti.kclass = (uint8_t)ct_gpu_kernel_class(name, &out->cupti.func);
		strncpy(out->cupti.name, demangle_prefix(name), sizeof(out->cupti.name) - 1);
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;

		out->type = CT_GPU_REC_CUPTI_MEMCPY;
		out->t_start = m->start;
		out->t_stop = m->end;
		out->id = m->correlationId;
		out->rank = -1;
		out->cupti.gpu_start = m->start;
		out->cupti.gpu_end = m->end;
		out->cupti.bytes = m->bytes;
		out->cupti.correlation_id = m->correlationId;
		out->cupti.stream_id = m->streamId;
		out->cupti.device_id = m->deviceId;
		out->cupti.copy_kind = m->copyKind;
		return 1;
	}
	default:
		return 0;
	}
}

long ct_cupti_decode_buffer(uint8_t *buf, size_t valid,
			    void (*emit)(void *arg, const struct ct_gpu_rec *rec), void *arg)
{
	CUpti_Activity *a = NULL;
	struct ct_gpu_rec rec;
	long n = 0;
	CUptiResult st;

	if (!buf || !valid)
		return 0;
	while ((st = cuptiActivityGetNextRecord(buf, valid, &a)) == CUPTI_SUCCESS) {
		if (ct_cupti_decode(a, &rec)) {
			emit(arg, &rec);
			n++;
		}
	}
	return st == CUPTI_ERROR_MAX_LIMIT_REACHED ? n : -EPROTO;
}
