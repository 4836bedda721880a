/* SPDX-License-Identifier: MIT */
/* Inside the slow path: every address of a report's flows, ranked (hosts.c). */
#ifndef COMMTAP_ANALYSIS_HOSTS_H
#define COMMTAP_ANALYSIS_HOSTS_H

#include <commtap/flow_set.h>

/* Every address a flow has, ranked in address order. */
struct ct_hosts {
	size_t n;
	uint32_t *src, *dst;  /* per flow: its source's and destination's rank */
	struct ct_addr *addr; /* per rank */
};

int ct_hosts_rank(const struct ct_flow_set *set, struct ct_hosts *h);
void ct_hosts_free(struct ct_hosts *h);

/* Union-find over host ranks (or any indices): x's root, paths halved. */
static inline size_t ct_uf_find(size_t *parent, size_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

#endif
