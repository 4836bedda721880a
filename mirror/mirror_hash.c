// SPDX-License-Identifier: MIT
/*
 * Hashes for the software distribution mode (both directions of an IP pair
 * meet on one worker) and for de-duplication (the same packet mirrored at
 * both ends of a link, or by two sessions, differs only in MACs, TTL, IP
 * checksum and the encapsulation around it).
 *
 * Both read the frame the engine analyses: the dataplane parser unwraps a
 * GRE/ERSPAN mirror copy, so every copy of one session does not land on one
 * worker, and two sessions' copies of one packet are recognised.
 */
#include "mirror.h"

#include <rte_byteorder.h>
#include <rte_thash.h>
#include <string.h>

/*
 * A Toeplitz key that repeats every 16 bits gives the same hash for
 * (src, dst) and (dst, src): a NIC's symmetric RSS key.
 */
static const uint8_t symmetric_key[40] __attribute__((aligned(4))) = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

/* The address as the words of an RSS tuple (CPU order): 1 for IPv4, 4 for IPv6. */
static unsigned tuple_words(const struct ct_addr *a, uint32_t *out)
{
	unsigned first = ct_addr_is_v4(a) ? 3 : 0;

	for (unsigned i = first; i < 4; i++) {
		uint32_t w;

		memcpy(&w, a->b + 4 * i, 4);
		out[i - first] = rte_be_to_cpu_32(w);
	}
	return 4 - first;
}

uint32_t mirror_flow_hash(const uint8_t *d, uint32_t len)
{
	struct ct_pkt p;
	uint32_t ip_off, tuple[8];
	unsigned n;

	ct_parse_ip(d, len, len, &p, &ip_off);
	if (!ip_off)
		return 0;
	/* the IP addresses only, as an RSS_IP hash: a flow's packets never split */
	n = tuple_words(&p.src, tuple);
	n += tuple_words(&p.dst, tuple + n);
	return rte_softrss(tuple, n, symmetric_key);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

uint64_t mirror_dedup_digest(const uint8_t *d, uint32_t len)
{
	struct ct_pkt p;
	uint32_t off, end;
	uint64_t h = 0xcbf29ce484222325ull;
	int v4, v6;

	ct_parse_ip(d, len, len, &p, &off);
	v4 = off && (d[off] >> 4) == 4;
	v6 = off && (d[off] >> 4) == 6;
	if (!off)
		off = len < 12 ? len : 12; /* not IP: from the EtherType on */
	end = len < off + 96 ? len : off + 96;
	for (uint32_t i = off; i < end; i++) {
		uint32_t rel = i - off;

		/* IPv4 TTL and header checksum, IPv6 hop limit change hop by hop */
		if (v4 && (rel == 8 || rel == 10 || rel == 11))
			continue;
		if (v6 && rel == 7)
			continue;
		h = (h ^ d[i]) * 0x100000001b3ull;
	}
	/* the bytes digested, not the frame's length: encapsulations differ */
	return mix(h, end - off);
}
