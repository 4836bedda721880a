// SPDX-License-Identifier: MIT
/* Sparse communication matrices (see pair_bytes.h): open addressing, linear probing. */
#include "pair_bytes.h"

#include <errno.h>
#include <stdlib.h>

#define PAIR_MIN_SLOTS 1024

static uint64_t pack(unsigned cls, unsigned src, unsigned dst)
{
	return ((uint64_t)cls << 48 | (uint64_t)src << 24 | dst) + 1;
}

static size_t slot_of(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & mask;
}

static size_t find(const struct ct_pair_bytes *m, uint64_t key)
{
	size_t i = slot_of(key, m->mask);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & m->mask;
	return i;
}

/* Keep the load at most one half: probes stay short. */
static int grow(struct ct_pair_bytes *m)
{
	size_t slots = m->keys ? (m->mask + 1) * 2 : PAIR_MIN_SLOTS;
	struct ct_pair_bytes g = {.mask = slots - 1, .n = m->n};

	g.keys = calloc(slots, sizeof(*g.keys));
	g.bytes = malloc(slots * sizeof(*g.bytes));
	if (!g.keys || !g.bytes) {
		free(g.keys);
		free(g.bytes);
		return -ENOMEM;
	}
	for (size_t i = 0; m->keys && i <= m->mask; i++)
		if (m->keys[i]) {
			size_t j = find(&g, m->keys[i]);

			g.keys[j] = m->keys[i];
			g.bytes[j] = m->bytes[i];
		}
	ct_pair_bytes_free(m);
	*m = g;
	return 0;
}

int ct_pair_bytes_add(struct ct_pair_bytes *m, unsigned cls, unsigned src, unsigned dst,
		      double bytes)
{
	uint64_t key = pack(cls, src, dst);
	size_t i;

	if (!m->keys || 2 * (m->n + 1) > m->mask + 1) {
		int err = grow(m);

		if (err)
			return err;
	}
	i = find(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->bytes[i] = 0;
		m->n++;
	}
	m->bytes[i] += bytes;
	return 0;
}

double ct_pair_bytes_get(const struct ct_pair_bytes *m, unsigned cls, unsigned src, unsigned dst)
{
	size_t i;

	if (!m->keys)
		return 0;
	i = find(m, pack(cls, src, dst));
	return m->keys[i] ? m->bytes[i] : 0;
}

int ct_pair_bytes_at(const struct ct_pair_bytes *m, size_t i, unsigned *cls, unsigned *src,
		     unsigned *dst, double *bytes)
{
	uint64_t key;

	if (!m->keys || i > m->mask || !m->keys[i])
		return 0;
	key = m->keys[i] - 1;
	*cls = (unsigned)(key >> 48);
	*src = (unsigned)(key >> 24 & 0xffffff);
	*dst = (unsigned)(key & 0xffffff);
	*bytes = m->bytes[i];
	return 1;
}

size_t ct_pair_bytes_footprint(size_t n)
{
	size_t slots = PAIR_MIN_SLOTS;

	while (2 * n > slots)
		slots *= 2;
	return slots * (sizeof(uint64_t) + sizeof(double));
}

void ct_pair_bytes_free(struct ct_pair_bytes *m)
{
	free(m->keys);
	free(m->bytes);
	m->keys = NULL;
	m->bytes = NULL;
	m->mask = m->n = 0;
}
