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

/*
 * The profile's groups of class cls, as one label per host: its group's
 * union-find root, or -1 where none of the class's transfers leaves it for
 * another host; size[root] the group's hosts. Returns how many groups.
 */
static unsigned profile_groups(const struct ct_class_expect *e, int cls, size_t *parent,
			       long *label, unsigned *size)
{
	unsigned n = 0;

	for (unsigned h = 0; h < e->hosts; h++) {
		parent[h] = h;
		label[h] = -1;
		size[h] = 0;
	}
	for (size_t k = 0; k < e->n_xfers; k++) {
		const struct ct_expect_xfer *x = &e->xfers[k];

		if (x->cls != cls || x->src_host == x->dst_host || x->bytes <= 0)
			continue;
		label[x->src_host] = label[x->dst_host] = 0;
		parent[ct_uf_find(parent, x->src_host)] = ct_uf_find(parent, x->dst_host);
	}
	for (unsigned h = 0; h < e->hosts; h++) {
		if (label[h] < 0)
			continue;
		label[h] = (long)ct_uf_find(parent, h);
		n += !size[label[h]]++;
	}
	return n;
}

/*
 * Whether a group the wire shows is one of the profile's: every host one
 * of the profile's, all with one label, as many as that group has. why
 * says what broke it when an address is not the profile's.
 */
static int group_alike(const struct ct_layout *wire, const struct ct_layout_group *grp,
		       const struct ct_profile_host *hosts, unsigned n_hosts, const long *label,
		       const unsigned *size, const char **why)
{
	long root = -2;

	for (size_t k = 0; k < grp->n; k++) {
		long h = ct_profile_host_of(hosts, n_hosts, &wire->group_hosts[grp->first + k]);

		if (h < 0) {
			*why = "an address the profile does not name";
			return 0;
		}
		if (label[h] < 0 || (root != -2 && label[h] != root))
			return 0;
		root = label[h];
	}
	return root >= 0 && size[root] == grp->n;
}

int ct_layout_check(const struct ct_class_expect *e, const struct ct_layout *wire,
		    struct ct_layout_check *out)
{
	unsigned H = e->hosts;
	size_t *parent = malloc((H + 1) * sizeof(*parent));
	long *label = malloc((H + 1) * sizeof(*label));
	unsigned *size = malloc((H + 1) * sizeof(*size));
	unsigned n_addr = 0;
	struct ct_profile_host *hosts = ct_profile_hosts(e, &n_addr);
	size_t len = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!parent || !label || !size || !hosts)
		goto cleanup;
	out->done = 1;
	out->agree = 1;
	for (int cls = 0; cls < CT_CLASS_COUNT; cls++) {
		unsigned n = profile_groups(e, cls, parent, label, size), matched = 0, wire_n = 0;
		const char *why = NULL;

		for (size_t g = 0; g < wire->n_groups; g++) {
			if (wire->groups[g].cls != cls)
				continue;
			wire_n++;
			matched += group_alike(wire, &wire->groups[g], hosts, n_addr, label, size,
					       &why);
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
	err = 0;
cleanup:
	free(parent);
	free(label);
	free(size);
	free(hosts);
	return err;
}
