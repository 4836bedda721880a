// SPDX-License-Identifier: MIT
/*
 * A parameter server's two directions (docs/advice.md, the three-resource
 * bound): of the flows carrying PushPull, those toward a server push and
 * those from one pull. A server is the end with more PushPull peers: each
 * worker talks to every server, each server to every worker, and there
 * are fewer servers than workers (collectives.c names a star so only then).
 */
#include "advice_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct link {
	struct ct_addr a, b; /* a's peer b */
};

static int by_pair(const void *x, const void *y)
{
	const struct link *l = x, *m = y;
	int c = memcmp(&l->a, &m->a, sizeof(l->a));

	return c ? c : memcmp(&l->b, &m->b, sizeof(l->b));
}

static int by_addr(const void *key, const void *elem)
{
	return memcmp(key, &((const struct link *)elem)->a, sizeof(struct ct_addr));
}

static int is_pushpull(const struct ct_report *r, size_t f)
{
	return r->classes && f < r->classes->n && r->classes->flows[f].op == CT_OP_PUSHPULL;
}

/* The distinct peers of addr among the sorted, unique links. */
static size_t peers(const struct link *l, size_t n, const struct ct_addr *addr)
{
	const struct link *hit = bsearch(addr, l, n, sizeof(*l), by_addr);
	size_t lo, hi;

	if (!hit)
		return 0;
	lo = hi = (size_t)(hit - l);
	while (lo > 0 && !memcmp(&l[lo - 1].a, addr, sizeof(*addr)))
		lo--;
	while (hi + 1 < n && !memcmp(&l[hi + 1].a, addr, sizeof(*addr)))
		hi++;
	return hi - lo + 1;
}

int ct_advice_pushpull_dirs(const struct ct_report *r, uint8_t *dir)
{
	const struct ct_flow_set *s = &r->flows;
	struct link *l;
	size_t n = 0, u = 0;

	memset(dir, 0, s->count);
	for (size_t f = 0; f < s->count; f++)
		n += is_pushpull(r, f) ? 2 : 0;
	if (!n)
		return 0;
	l = malloc(n * sizeof(*l));
	if (!l)
		return -ENOMEM;
	n = 0;
	for (size_t f = 0; f < s->count; f++)
		if (is_pushpull(r, f)) {
			l[n++] = (struct link){s->flows[f].key.src, s->flows[f].key.dst};
			l[n++] = (struct link){s->flows[f].key.dst, s->flows[f].key.src};
		}
	qsort(l, n, sizeof(*l), by_pair);
	for (size_t i = 0; i < n; i++)
		if (!u || by_pair(&l[i], &l[u - 1]))
			l[u++] = l[i];
	for (size_t f = 0; f < s->count; f++) {
		size_t src, dst;

		if (!is_pushpull(r, f))
			continue;
		src = peers(l, u, &s->flows[f].key.src);
		dst = peers(l, u, &s->flows[f].key.dst);
		if (src != dst)
			dir[f] = dst > src ? CT_ADVICE_PUSH : CT_ADVICE_PULL;
	}
	free(l);
	return 0;
}
