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

struct member {
	uint8_t cls;
	size_t root;   /* its group's union-find root */
	uint32_t host; /* rank in address order (hosts.h) */
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return (x->host > y->host) - (x->host < y->host);
}

/* The flows that take part: classified data directions of a job. */
static int in_job(const uint8_t *to_classify, const struct ct_classification *out, size_t i)
{
	return to_classify[i] && out->flows[i].cls < CT_CLASS_COUNT;
}

/*
 * The groups of the members (sorted by class, root, host) into l, the
 * degrees from the largest of each class, and the hosts each class (and
 * any class) has: the groups of one class share no host.
 */
static void groups_fill(const struct member *m, size_t n_members, const struct ct_hosts *h,
			const uint8_t *any, struct ct_layout *l)
{
	l->n_groups = l->n_group_hosts = 0;
	l->p = l->t = l->d = l->ep = 0;
	l->pp_stages = l->dp_ring = l->ep_group = l->hosts = 0;
	for (size_t x = 0; x < h->n; x++)
		l->hosts += any[x];
	for (size_t k = 0, e; k < n_members; k = e) {
		struct ct_layout_group *g = &l->groups[l->n_groups++];
		unsigned *degree = m[k].cls == CT_CLASS_PP   ? &l->p
				   : m[k].cls == CT_CLASS_TP ? &l->t
				   : m[k].cls == CT_CLASS_DP ? &l->d
				   : m[k].cls == CT_CLASS_EP ? &l->ep
							     : NULL;
		unsigned *hosts = m[k].cls == CT_CLASS_PP   ? &l->pp_stages
				  : m[k].cls == CT_CLASS_DP ? &l->dp_ring
				  : m[k].cls == CT_CLASS_EP ? &l->ep_group
							    : NULL;

		for (e = k; e < n_members && m[e].cls == m[k].cls && m[e].root == m[k].root; e++)
			l->group_hosts[l->n_group_hosts + (e - k)] = h->addr[m[e].host];
		*g = (struct ct_layout_group){m[k].cls, l->n_group_hosts, e - k};
		l->n_group_hosts += e - k;
		if (degree && g->n > *degree)
			*degree = (unsigned)g->n;
		if (hosts)
			*hosts += (unsigned)g->n;
	}
}

int ct_layout_groups(const struct ct_flow_set *set, const struct ct_hosts *hosts,
		     const uint8_t *to_classify, struct ct_classification *out)
{
	struct ct_layout *l = &out->layout;
	size_t n_nodes, *parent = NULL, n_members = 0;
	struct member *m = NULL;
	uint8_t *used = NULL, *any = NULL;
	int err = -ENOMEM;

	/* a node per (class, host) */
	n_nodes = CT_CLASS_COUNT * hosts->n;
	parent = malloc((n_nodes + 1) * sizeof(*parent));
	m = malloc((n_nodes + 1) * sizeof(*m));
	used = calloc(n_nodes + 1, 1);
	any = calloc(hosts->n + 1, 1);
	if (!parent || !m || !used || !any)
		goto cleanup;
	for (size_t x = 0; x < n_nodes; x++)
		parent[x] = x;
	for (size_t i = 0; i < set->count; i++) {
		size_t x, y;

		if (!in_job(to_classify, out, i))
			continue;
		x = out->flows[i].cls * hosts->n + hosts->src[i];
		y = out->flows[i].cls * hosts->n + hosts->dst[i];
		used[x] = used[y] = any[hosts->src[i]] = any[hosts->dst[i]] = 1;
		parent[ct_uf_find(parent, x)] = ct_uf_find(parent, y);
	}
	for (size_t x = 0; x < n_nodes; x++)
		if (used[x])
			m[n_members++] =
				(struct member){(uint8_t)(x / hosts->n), ct_uf_find(parent, x),
						(uint32_t)(x % hosts->n)};
	qsort(m, n_members, sizeof(*m), member_cmp);
	l->group_hosts = malloc((n_members + 1) * sizeof(*l->group_hosts));
	l->groups = malloc((n_members + 1) * sizeof(*l->groups));
	if (!l->group_hosts || !l->groups)
		goto cleanup;
	groups_fill(m, n_members, hosts, any, l);
	err = 0;
cleanup:
	free(parent);
	free(m);
	free(used);
	free(any);
	return err;
}
