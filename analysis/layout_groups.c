// SPDX-License-Identifier: MIT
/*
 * The jobs' layout as the wire shows it: for each class, the groups of
 * hosts its flows join (union-find over the classified data directions),
 * and the degrees p, t, d and ep as the hosts of the largest group of each.
 * A class whose flows never reach a NIC (TP and DP inside a host, NVLink)
 * has no group, and its degree is reported unknown rather than guessed.
 */
#include "classify_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct member {
	uint8_t cls;
	size_t root;		/* its group's union-find root */
	struct ct_addr addr;
};

static int addr_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_addr));
}

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return addr_cmp(&x->addr, &y->addr);
}

static size_t find(size_t *parent, size_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/* The flows that take part: classified data directions of a job. */
static int in_job(const uint8_t *to_classify, const struct ct_classification *out, size_t i)
{
	return to_classify[i] && out->flows[i].cls < CT_CLASS_COUNT;
}

int ct_layout_groups(const struct ct_flow_set *set, const uint8_t *to_classify,
		     struct ct_classification *out)
{
	struct ct_layout *l = &out->layout;
	struct ct_addr *addr = malloc((2 * set->count + 1) * sizeof(*addr));
	size_t n_addr = 0, w = 0, n_nodes, *parent = NULL, n_members = 0;
	struct member *m = NULL;
	int err = -ENOMEM;

	if (!addr)
		return -ENOMEM;
	for (size_t i = 0; i < set->count; i++)
		if (in_job(to_classify, out, i)) {
			addr[n_addr++] = set->flows[i].key.src;
			addr[n_addr++] = set->flows[i].key.dst;
		}
	qsort(addr, n_addr, sizeof(*addr), addr_cmp);
	for (size_t k = 0; k < n_addr; k++)
		if (!w || addr_cmp(&addr[k], &addr[w - 1]))
			addr[w++] = addr[k];
	n_addr = w;
	/* a node per (class, host) */
	n_nodes = CT_CLASS_COUNT * n_addr;
	parent = malloc((n_nodes + 1) * sizeof(*parent));
	m = malloc((n_nodes + 1) * sizeof(*m));
	if (!parent || !m)
		goto cleanup;
	for (size_t x = 0; x < n_nodes; x++)
		parent[x] = x;
	{
		uint8_t *used = calloc(n_nodes + 1, 1);

		if (!used)
			goto cleanup;
		for (size_t i = 0; i < set->count; i++) {
			const struct ct_flow_key *k = &set->flows[i].key;
			size_t cls, x, y;

			if (!in_job(to_classify, out, i))
				continue;
			cls = out->flows[i].cls;
			x = cls * n_addr + (size_t)((struct ct_addr *)bsearch(&k->src, addr, n_addr,
									 sizeof(*addr), addr_cmp) -
						     addr);
			y = cls * n_addr + (size_t)((struct ct_addr *)bsearch(&k->dst, addr, n_addr,
									 sizeof(*addr), addr_cmp) -
						     addr);
			used[x] = used[y] = 1;
			parent[find(parent, x)] = find(parent, y);
		}
		for (size_t x = 0; x < n_nodes; x++)
			if (used[x])
				m[n_members++] = (struct member){(uint8_t)(x / n_addr), find(parent, x),
								 addr[x % n_addr]};
		free(used);
	}
	qsort(m, n_members, sizeof(*m), member_cmp);
	l->group_hosts = malloc((n_members + 1) * sizeof(*l->group_hosts));
	l->groups = malloc((n_members + 1) * sizeof(*l->groups));
	if (!l->group_hosts || !l->groups)
		goto cleanup;
	l->n_groups = l->n_group_hosts = 0;
	l->p = l->t = l->d = l->ep = 0;
	for (size_t k = 0, e; k < n_members; k = e) {
		struct ct_layout_group *g = &l->groups[l->n_groups++];
		unsigned *degree = m[k].cls == CT_CLASS_PP   ? &l->p
				   : m[k].cls == CT_CLASS_TP ? &l->t
				   : m[k].cls == CT_CLASS_DP ? &l->d
				   : m[k].cls == CT_CLASS_EP ? &l->ep
							     : NULL;

		for (e = k; e < n_members && m[e].cls == m[k].cls && m[e].root == m[k].root; e++)
			l->group_hosts[l->n_group_hosts + (e - k)] = m[e].addr;
		*g = (struct ct_layout_group){m[k].cls, l->n_group_hosts, e - k};
		l->n_group_hosts += e - k;
		if (degree && g->n > *degree)
			*degree = (unsigned)g->n;
	}
	err = 0;
cleanup:
	free(addr);
	free(parent);
	free(m);
	return err;
}
