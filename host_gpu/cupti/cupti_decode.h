/* SPDX-License-Identifier: MIT */
/* CUPTI activity records to commtap ring records. */
#ifndef COMMTAP_CUPTI_DECODE_H
#define COMMTAP_CUPTI_DECODE_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#include "commtap/gpu_ring.h"

/* Convert one activity record. Returns 1 when `out` was filled (kernel or
 * memcpy), 0 for kinds commtap does not keep. */
int ct_cupti_decode(const CUpti_Activity *a, struct ct_gpu_rec *out);

/* Walk a completed CUPTI buffer (`valid` bytes) with cuptiActivityGetNextRecord
 * and hand each converted record to `emit`. Returns the number converted,
 * or a negative errno when CUPTI reports a malformed buffer. */
long ct_cupti_decode_buffer(uint8_t *buf, size_t valid,
			    void (*emit)(void *arg, const struct ct_gpu_rec *rec), void *arg);

#endif
