// SPDX-License-Identifier: MIT
/*
 * Dropping the agent's reader to an ordinary user with no capability
 * (privilege.h). Raw capget/capset: the three capability words the kernel
 * has kept since 2.6.26, no library needed.
 */
#include "privilege.h"

#include <commtap/error.h>

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fill_from(const struct passwd *pw, struct ct_run_as *u, char *err, size_t errlen)
{
	int n = CT_RUN_AS_MAX_GROUPS;

	memset(u, 0, sizeof(*u));
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &n) < 0)
		return ct_fail(err, errlen, -E2BIG, "user %s is in more than %d groups",
			       pw->pw_name, CT_RUN_AS_MAX_GROUPS);
	u->n_groups = n;
	return 0;
}

int ct_run_as_lookup(const char *name, struct ct_run_as *u, char *err, size_t errlen)
{
	struct passwd *pw;
	char *end;
	unsigned long id;

	errno = 0;
	pw = getpwnam(name);
	if (!pw && *name >= '0' && *name <= '9') {
		id = strtoul(name, &end, 10);
		if (!*end && id < (uid_t)-1)
			pw = getpwuid((uid_t)id);
	}
	if (!pw)
		return ct_fail(err, errlen, errno ? -errno : -ENOENT, "--user %s: no such user%s%s",
			       name, errno ? ": " : "", errno ? strerror(errno) : "");
	return fill_from(pw, u, err, errlen);
}

int ct_run_as_owner_of(const char *path, struct ct_run_as *u, char *err, size_t errlen)
{
	struct passwd *pw;
	struct stat st;

	if (stat(path, &st))
		return ct_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (!st.st_uid)
		return 0;
	pw = getpwuid(st.st_uid);
	if (!pw)
		return 0; /* an owner without a name has no groups to join: stay as started */
	return fill_from(pw, u, err, errlen) ?: 1;
}

/* The highest capability number this kernel knows. */
static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int last = 63;

	if (f) {
		if (fscanf(f, "%d", &last) != 1 || last < 0 || last > 63)
			last = 63;
		fclose(f);
	}
	return last;
}

static int drop_bounding_set(char *err, size_t errlen)
{
	int last = last_cap();

	for (int cap = 0; cap <= last; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) <= 0)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return ct_fail(err, errlen, -errno,
				       "dropping capability %d from the bounding set: %s (needs "
				       "CAP_SETPCAP)",
				       cap, strerror(errno));
	}
	return 0;
}

static int cap_sets(struct __user_cap_data_struct data[2], int set)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};

	return (int)syscall(set ? SYS_capset : SYS_capget, &hdr, data);
}

int ct_privileges_drop(const struct ct_run_as *u, char *err, size_t errlen)
{
	struct __user_cap_data_struct caps[2] = {0};
	uid_t ruid, euid, suid;
	int rc;

	/* ambient capabilities would survive the uid change: none */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return ct_fail(err, errlen, -errno, "clearing the ambient capabilities: %s",
			       strerror(errno));
	rc = drop_bounding_set(err, errlen);
	if (rc)
		return rc;
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
		return ct_fail(err, errlen, -errno, "PR_SET_KEEPCAPS: %s", strerror(errno));
	if (setgroups((size_t)u->n_groups, u->groups))
		return ct_fail(err, errlen, -errno, "setgroups for user %s: %s", u->name,
			       strerror(errno));
	if (setresgid(u->gid, u->gid, u->gid))
		return ct_fail(err, errlen, -errno, "setgid %u (user %s): %s", (unsigned)u->gid,
			       u->name, strerror(errno));
	if (setresuid(u->uid, u->uid, u->uid))
		return ct_fail(err, errlen, -errno, "setuid %u (user %s): %s", (unsigned)u->uid,
			       u->name, strerror(errno));
	/* the uid change cleared them already, unless the user is root itself */
	if (cap_sets(caps, 1))
		return ct_fail(err, errlen, -errno, "capset: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return ct_fail(err, errlen, -errno, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	/*
	 * not dumpable, whatever fs.suid_dumpable says: other processes of the
	 * user cannot ptrace the reader and take its map descriptors
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return ct_fail(err, errlen, -errno, "PR_SET_DUMPABLE: %s", strerror(errno));

	/* the drop holds: no way back to another uid, no capability left */
	if (getresuid(&ruid, &euid, &suid) || ruid != u->uid || euid != u->uid || suid != u->uid)
		return ct_fail(err, errlen, -EPERM, "the uid did not change to %u (user %s)",
			       (unsigned)u->uid, u->name);
	if (u->uid && !setuid(0))
		return ct_fail(err, errlen, -EPERM, "root could be regained after dropping to %s",
			       u->name);
	if (cap_sets(caps, 0))
		return ct_fail(err, errlen, -errno, "capget: %s", strerror(errno));
	if (caps[0].permitted || caps[1].permitted || caps[0].effective || caps[1].effective)
		return ct_fail(err, errlen, -EPERM, "capabilities are left after dropping to %s",
			       u->name);
	return 0;
}
