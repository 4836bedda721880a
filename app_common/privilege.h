/* SPDX-License-Identifier: MIT */
/*
 * The user a producer reads and reports as, and the drop to it: after the
 * privileged part is done (the agent's probe loaded and attached, its maps
 * and ring open; analyze --live's packet sockets open), the process that
 * reads them, analyses, writes reports and serves /metrics needs no
 * capability (map reads, the rings' mmap and reads of a packet socket work
 * on the file descriptors it holds), so it keeps none.
 */
#ifndef COMMTAP_APP_PRIVILEGE_H
#define COMMTAP_APP_PRIVILEGE_H

#include <stddef.h>
#include <sys/types.h>

#define CT_RUN_AS_MAX_GROUPS 64

struct ct_run_as {
	char name[64];
	uid_t uid;
	gid_t gid;
	gid_t groups[CT_RUN_AS_MAX_GROUPS]; /* supplementary groups, as login gives them */
	int n_groups;
};

/*
 * The user NAME (or a numeric uid) from the password database, with its
 * primary and supplementary groups. Returns 0, or a negative errno with a
 * one-line reason in err.
 */
int ct_run_as_lookup(const char *name, struct ct_run_as *u, char *err, size_t errlen);

/*
 * The owner of path, when it is not root: 1 with u filled, 0 when root owns
 * it (or nobody in the password database does), negative errno with err
 * when path cannot be examined.
 */
int ct_run_as_owner_of(const char *path, struct ct_run_as *u, char *err, size_t errlen);

/*
 * Become u for good: supplementary groups, gid, uid (real, effective and
 * saved), no capability left in any set (effective, permitted, inheritable,
 * ambient, bounding), no_new_privs, not dumpable (no ptrace by the user's
 * other processes). Call it single-threaded, before any
 * thread starts (capabilities are per thread). Checks that root cannot be
 * regained. Returns 0, or a negative errno with err naming the step.
 */
int ct_privileges_drop(const struct ct_run_as *u, char *err, size_t errlen);

#endif
