// SPDX-License-Identifier: MIT
/*
 * Hashes for the software distribution mode (both directions of an IP pair
 * meet on one worker) and for de-duplication (the same packet mirrored at
 * both ends of a link differs only in MACs, TTL and IP checksum).
 */
#include "mirror.h"

#include <string.h>

/* Offset of the IP header after Ethernet and up to 4 VLAN tags; 0 if not IP. */
static uint32_t ip_offset(const uint8_t *d, uint32_t len, uint16_t *ethertype)
{
	uint32_t off = 12;

	for (int tags = 0; tags <= 4 && off + 2 <= len; tags++) {
		uint16_t et = (uint16_t)(d[off] << 8 | d[off + 1]);

		if (et == 0x8100 || et == 0x88a8 || et == 0x9100) {
			off += 4;
			continue;
		}
		*ethertype = et;
		return et == 0x0800 || et == 0x86dd ? off + 2 : 0;
	}
	return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

uint32_t mirror_flow_hash(const uint8_t *d, uint32_t len)
{
	uint16_t et = 0;
	uint32_t off = ip_offset(d, len, &et);
	uint64_t a = 0, b = 0, x;

	if (!off)
		return 0;
	if (et == 0x0800 && off + 20 <= len) {
		memcpy(&a, d + off + 12, 4);
		memcpy(&b, d + off + 16, 4);
	} else if (et == 0x86dd && off + 40 <= len) {
		uint64_t s[2], t[2];

		memcpy(s, d + off + 8, 16);
		memcpy(t, d + off + 24, 16);
		a = s[0] ^ s[1] * 31;
		b = t[0] ^ t[1] * 31;
	} else {
		return 0;
	}
	/* order-free: the same for (a, b) and (b, a) */
	x = mix(mix(0, a < b ? a : b), a < b ? b : a);
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(x >> 32);
}

uint64_t mirror_dedup_digest(const uint8_t *d, uint32_t len)
{
	uint16_t et = 0;
	uint32_t off = ip_offset(d, len, &et), end;
	uint64_t h = 0xcbf29ce484222325ull;

	if (!off)
		off = 12;
	end = len < off + 96 ? len : off + 96;
	for (uint32_t i = off; i < end; i++) {
		uint32_t rel = i - off;

		/* IPv4 TTL and header checksum, IPv6 hop limit change hop by hop */
		if (et == 0x0800 && (rel == 8 || rel == 10 || rel == 11))
			continue;
		if (et == 0x86dd && rel == 7)
			continue;
		h = (h ^ d[i]) * 0x100000001b3ull;
	}
	return mix(h, len);
}
