// SPDX-License-Identifier: MIT
/*
 * The pod of a process (kube_pod.h). The kubelet names each pod's cgroup
 * after its UID, in one of two spellings by its cgroup driver:
 *   systemd:  .../kubepods.slice/kubepods-burstable.slice/
 *             kubepods-burstable-pod1a2b3c4d_..._.slice/cri-containerd-ID.scope
 *   cgroupfs: .../kubepods/burstable/pod1a2b3c4d-.../ID
 * (Guaranteed pods sit directly under kubepods). A component is taken as a
 * pod's only with the kubelet's prefix and a UID's exact shape, so that a
 * user's own cgroup called "pod..." is not mistaken for one.
 */
#include "kube_pod.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define UID_LEN 36 /* 8-4-4-4-12 hex digits and their 4 separators */

/* A UID spelled with sep between its groups, at p: copied with dashes into uid. */
static int take_uid(const char *p, size_t len, char sep, char uid[37])
{
	if (len != UID_LEN)
		return 0;
	for (size_t i = 0; i < UID_LEN; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;
		char c = p[i];

		if (dash ? c != sep : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
		uid[i] = dash ? '-' : c;
	}
	uid[UID_LEN] = '\0';
	return 1;
}

static int has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/* One path component (not NUL-terminated): a pod's cgroup, by either driver. */
static int pod_component(const char *c, size_t len, const char *parent, size_t parent_len,
			 char uid[37])
{
	static const char *const slices[] = {"kubepods-pod", "kubepods-burstable-pod",
					     "kubepods-besteffort-pod"};
	static const char suffix[] = ".slice";
	size_t sl = sizeof(suffix) - 1;

	for (size_t i = 0; i < sizeof(slices) / sizeof(slices[0]); i++) {
		size_t n = strlen(slices[i]);

		if (has_prefix(c, len, slices[i]) && len > n + sl &&
		    !memcmp(c + len - sl, suffix, sl))
			return take_uid(c + n, len - n - sl, '_', uid);
	}
	/* cgroupfs: pod<UID> right under kubepods, kubepods/burstable or kubepods/besteffort */
	if (!has_prefix(c, len, "pod") || !parent)
		return 0;
	if (!((parent_len == 8 && !memcmp(parent, "kubepods", 8)) ||
	      (parent_len == 9 && !memcmp(parent, "burstable", 9)) ||
	      (parent_len == 10 && !memcmp(parent, "besteffort", 10))))
		return 0;
	return take_uid(c + 3, len - 3, '-', uid);
}

int ct_pod_uid_of_cgroup(const char *cgroup, char uid[37])
{
	const char *parent = NULL, *c = cgroup;
	size_t parent_len = 0;

	/* every hierarchy's path, line by line (v1 lists several, v2 one "0::") */
	while (*c) {
		size_t len = strcspn(c, "/\n");

		if (len && pod_component(c, len, parent, parent_len, uid))
			return 0;
		parent = c;
		parent_len = len;
		c += len;
		if (*c == '\n')
			parent = NULL;
		if (*c)
			c++;
	}
	return -ENOENT;
}

int ct_pod_find(const char *root, const char *uid, struct ct_pod *pod)
{
	size_t uid_len = strlen(uid);
	struct dirent *e;
	int rc = -ENOENT;
	DIR *d;

	d = opendir(root);
	if (!d)
		return -errno;
	while (rc == -ENOENT && (e = readdir(d))) {
		/* NAMESPACE_NAME_UID: neither a namespace nor a pod name holds '_' */
		size_t len = strlen(e->d_name);
		const char *first = strchr(e->d_name, '_');
		const char *last = strrchr(e->d_name, '_');
		size_t ns_len, name_len;

		if (len <= uid_len + 1 || strcmp(e->d_name + len - uid_len, uid) ||
		    last != e->d_name + len - uid_len - 1 || !first || first == last)
			continue;
		ns_len = (size_t)(first - e->d_name);
		name_len = (size_t)(last - first - 1);
		if (!ns_len || ns_len >= sizeof(pod->ns) || !name_len ||
		    name_len >= sizeof(pod->name))
			continue;
		memcpy(pod->ns, e->d_name, ns_len);
		pod->ns[ns_len] = '\0';
		memcpy(pod->name, first + 1, name_len);
		pod->name[name_len] = '\0';
		snprintf(pod->uid, sizeof(pod->uid), "%s", uid);
		rc = 0;
	}
	closedir(d);
	return rc;
}
