// SPDX-License-Identifier: MIT
/*
 * A profile's layout held against the wire's: the groups of hosts the
 * profile's transfers join for each class (the hosts its ranks sit on,
 * transfers inside a host left out: they never reach a NIC) against the
 * groups the signatures find. A wrong mapping or a wrong t moves the
 * groups, and the report says so rather than scoring flows against a
 * layout the job does not have.
 */
#include "classify_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t find(size_t *parent, size_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

static int host_of(const struct ct_class_expect *e, const struct ct_addr *a)
{
	for (unsigned h = 0; h < e->hosts; h++)
		if (!memcmp(&e->host_addr[h], a, sizeof(*a)))
			return (int)h;
	return -1;
}

/* A group as a sorted list of host indices, -1 ends it; compared as a set. */
static int same_group(const int *a, const int *b, unsigned n)
{
	return !memcmp(a, b, n * sizeof(*a));
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * The profile's groups of class cls: rows of expect->hosts ints, each a
 * group's hosts sorted and -1 filled. Returns how many.
 */
static unsigned profile_groups(const struct ct_class_expect *e, int cls, size_t *parent,
			       uint8_t *used, int *rows)
{
	unsigned n = 0, H = e->hosts;

	for (unsigned h = 0; h < H; h++) {
		parent[h] = h;
		used[h] = 0;
	}
	for (size_t k = 0; k < e->n_xfers; k++) {
		const struct ct_expect_xfer *x = &e->xfers[k];

		if (x->cls != cls || x->src_host == x->dst_host || x->bytes <= 0)
			continue;
		used[x->src_host] = used[x->dst_host] = 1;
		parent[find(parent, x->src_host)] = find(parent, x->dst_host);
	}
	for (unsigned h = 0; h < H; h++) {
		unsigned fill = 0;
		int *row;

		if (!used[h] || find(parent, h) != h)
			continue;
		row = rows + (size_t)n++ * H;
		for (unsigned g = 0; g < H; g++)
			if (used[g] && find(parent, g) == h)
				row[fill++] = (int)g;
		while (fill < H)
			row[fill++] = -1;
	}
	return n;
}

int ct_layout_check(const struct ct_class_expect *e, const struct ct_layout *wire,
		    struct ct_layout_check *out)
{
	unsigned H = e->hosts;
	size_t *parent = malloc((H + 1) * sizeof(*parent));
	uint8_t *used = malloc(H + 1);
	int *rows = malloc(((size_t)H * H + 1) * sizeof(*rows));
	int *mine = malloc((H + 1) * sizeof(*mine));
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	if (!parent || !used || !rows || !mine) {
		free(parent);
		free(used);
		free(rows);
		free(mine);
		return -ENOMEM;
	}
	out->done = 1;
	out->agree = 1;
	for (int cls = 0; cls < CT_CLASS_COUNT; cls++) {
		unsigned n = profile_groups(e, cls, parent, used, rows), matched = 0, wire_n = 0;
		const char *why = NULL;

		for (size_t g = 0; g < wire->n_groups; g++) {
			const struct ct_layout_group *grp = &wire->groups[g];
			unsigned fill = 0;

			if (grp->cls != cls)
				continue;
			wire_n++;
			for (size_t k = 0; k < grp->n && fill <= H; k++) {
				int h = host_of(e, &wire->group_hosts[grp->first + k]);

				if (h < 0) {
					why = "an address the profile does not name";
					fill = H + 1;
					break;
				}
				mine[fill++] = h;
			}
			if (fill > H)
				continue;
			qsort(mine, fill, sizeof(*mine), int_cmp);
			while (fill < H)
				mine[fill++] = -1;
			for (unsigned r = 0; r < n; r++)
				if (same_group(rows + (size_t)r * H, mine, H)) {
					matched++;
					break;
				}
		}
		out->profile_groups[cls] = n;
		out->wire_groups[cls] = wire_n;
		out->same[cls] = matched;
		if (matched == n && wire_n == n)
			continue;
		out->agree = 0;
		if (len < sizeof(out->summary))
			len += (size_t)snprintf(
				out->summary + len, sizeof(out->summary) - len,
				"%s%s: the profile puts %u group%s on the wire, the "
				"wire shows %u, %u alike%s%s",
				len ? "; " : "", ct_class_name((enum ct_class)cls), n,
				n == 1 ? "" : "s", wire_n, matched, why ? " (" : "",
				why ? why : "");
		if (why && len < sizeof(out->summary))
			len += (size_t)snprintf(out->summary + len, sizeof(out->summary) - len,
						")");
	}
	if (out->agree)
		snprintf(out->summary, sizeof(out->summary),
			 "every class's groups of hosts on the wire are the profile's");
	free(parent);
	free(used);
	free(rows);
	free(mine);
	return 0;
}
