/* SPDX-License-Identifier: MIT */
/*
 * Bytes per (class, source, destination): the model's communication
 * matrices, kept sparse. A rank talks to a few peers (ring neighbours, the
 * next stage, its expert group), so a dense ranks x ranks matrix per class
 * is almost all zeros: 16,384 ranks would need 12 GiB for it.
 */
#ifndef COMMTAP_PAIR_BYTES_H
#define COMMTAP_PAIR_BYTES_H

#include <stddef.h>
#include <stdint.h>

struct ct_pair_bytes {
	uint64_t *keys; /* 0: empty slot; else the packed (class, src, dst) + 1 */
	double *bytes;
	size_t mask, n; /* mask + 1 slots (a power of two), n used */
};

/* Add bytes to (cls, src, dst); src and dst below 2^24. 0 or -ENOMEM. */
int ct_pair_bytes_add(struct ct_pair_bytes *m, unsigned cls, unsigned src, unsigned dst,
		      double bytes);
/* The bytes of (cls, src, dst), 0 when none were added. */
double ct_pair_bytes_get(const struct ct_pair_bytes *m, unsigned cls, unsigned src, unsigned dst);
/* Slot i in use: its class, source, destination and bytes; 0 for an empty slot. */
int ct_pair_bytes_at(const struct ct_pair_bytes *m, size_t i, unsigned *cls, unsigned *src,
		     unsigned *dst, double *bytes);
/* Bytes a map of n entries takes (for the prediction's memory budget). */
size_t ct_pair_bytes_footprint(size_t n);
void ct_pair_bytes_free(struct ct_pair_bytes *m);

#endif
