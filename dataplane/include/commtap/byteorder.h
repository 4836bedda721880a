/* SPDX-License-Identifier: MIT */
/* Network byte order on unaligned bytes: one load or store and a swap each. */
#ifndef COMMTAP_BYTEORDER_H
#define COMMTAP_BYTEORDER_H

#include <stdint.h>
#include <string.h>

static inline uint16_t ct_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap16(v);
}

static inline uint32_t ct_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap32(v);
}

static inline uint64_t ct_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap64(v);
}

/* 24 bits (QPN, PSN, MSN) from three bytes. */
static inline uint32_t ct_get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline void ct_put16(uint8_t *p, uint16_t v)
{
	v = __builtin_bswap16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void ct_put32(uint8_t *p, uint32_t v)
{
	v = __builtin_bswap32(v);
	memcpy(p, &v, sizeof(v));
}

#endif
