// SPDX-License-Identifier: MIT
/*
 * Hosts of a report: every address a flow has, ranked in address order
 * (receivers and jobs are reported in it). A hash table names them, one sort
 * of the distinct ones ranks them: no sort of the flows by address.
 */
#include "periodicity_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t addr_hash(const struct ct_addr *a)
{
	uint64_t x, y;

	memcpy(&x, a->b, 8);
	memcpy(&y, a->b + 8, 8);
	x ^= y * 0x9e3779b97f4a7c15ull;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static int id_addr_cmp(const void *a, const void *b, void *arg)
{
	const struct ct_addr *const *addr = arg;

	return memcmp(addr[*(const uint32_t *)a], addr[*(const uint32_t *)b], sizeof(**addr));
}

void ct_hosts_free(struct ct_hosts *h)
{
	free(h->src);
	free(h->dst);
	free(h->addr);
	memset(h, 0, sizeof(*h));
}

int ct_hosts_rank(const struct ct_flow_set *set, struct ct_hosts *h)
{
	size_t nf = set->count, slots = 64, n = 0;
	const struct ct_addr **addr;
	uint32_t *table, *order;
	int err = 0;

	while (slots < 4 * nf)
		slots *= 2; /* two addresses a flow, at most half full */
	h->src = malloc((nf + 1) * sizeof(*h->src));
	h->addr = malloc((2 * nf + 1) * sizeof(*h->addr));
	h->dst = malloc((nf + 1) * sizeof(*h->dst));
	table = malloc(slots * sizeof(*table));
	addr = malloc((2 * nf + 1) * sizeof(*addr));
	order = malloc((2 * nf + 1) * sizeof(*order));
	if (!h->src || !h->dst || !h->addr || !table || !addr || !order) {
		err = -ENOMEM;
		goto out;
	}
	memset(table, 0xff, slots * sizeof(*table));
	for (size_t i = 0; i < 2 * nf; i++) {
		const struct ct_flow_key *k = &set->flows[i / 2].key;
		const struct ct_addr *a = i & 1 ? &k->dst : &k->src;
		size_t j = addr_hash(a) & (slots - 1);

		while (table[j] != UINT32_MAX && memcmp(addr[table[j]], a, sizeof(*a)))
			j = (j + 1) & (slots - 1);
		if (table[j] == UINT32_MAX) {
			table[j] = (uint32_t)n;
			addr[n++] = a;
		}
		*(i & 1 ? &h->dst[i / 2] : &h->src[i / 2]) = table[j]; /* its id, for now */
	}
	/* ids in address order; table[id] becomes the id's rank */
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), id_addr_cmp, addr);
	for (size_t r = 0; r < n; r++) {
		table[order[r]] = (uint32_t)r;
		h->addr[r] = *addr[order[r]];
	}
	for (size_t f = 0; f < nf; f++) {
		h->src[f] = table[h->src[f]];
		h->dst[f] = table[h->dst[f]];
	}
	h->n = n;
out:
	free(table);
	free(addr);
	free(order);
	if (err)
		ct_hosts_free(h);
	return err;
}
