/* SPDX-License-Identifier: MIT */
/*
 * The directory the GPU rings live in, and their lifecycle there
 * (docs/security.md, "GPU rings").
 *
 * By default each user has one: /dev/shm/commtap-<uid>, mode 0700, created
 * by the first writer; COMMTAP_GPU_RING_DIR names another (tests use one
 * of their own). A writer uses a directory only when it is a real directory
 * (not a symbolic link) owned by its user and writable by nobody else.
 *
 * The directory is bounded in total (COMMTAP_GPU_RING_DIR_MAX bytes, default
 * CT_GPU_RING_DIR_MAX_DEFAULT): before a writer creates its ring it removes
 * the rings of writers that are gone, oldest first, until its own fits; a
 * ring whose writer still runs is never removed, so when live rings alone
 * fill the bound the new ring is refused (-ENOSPC) and that process runs
 * unprofiled.
 */
#ifndef COMMTAP_GPU_RING_DIR_H
#define COMMTAP_GPU_RING_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commtap/gpu_ring.h"

/* 128 MiB: one 8-GPU node's ranks, each with a plugin ring (8 MiB at the
 * default 65,536 slots) and a CUPTI ring (8 MiB), fit with no room to
 * spare; rings of ended processes beyond it are removed oldest first. */
#define CT_GPU_RING_DIR_MAX_DEFAULT (128ull << 20)

/* Its path only (for a reader): $COMMTAP_GPU_RING_DIR, else
 * /dev/shm/commtap-<euid>. 0 or -ENAMETOOLONG. */
int ct_gpu_ring_dir_path(char *buf, size_t len);

/*
 * The ring directory writers use: $COMMTAP_GPU_RING_DIR, else
 * /dev/shm/commtap-<euid> (created 0700 when missing). Opens it without
 * following a symbolic link and checks that it is a directory owned by this
 * user and writable by no one else. Returns its descriptor (O_DIRECTORY)
 * with the path in buf, or -errno (-EPERM: wrong owner or mode).
 */
int ct_gpu_ring_dir_open(char *buf, size_t len);

/* The directory's bound in bytes: $COMMTAP_GPU_RING_DIR_MAX, else the default. */
uint64_t ct_gpu_ring_dir_max(void);

/*
 * Make room for a ring of `need` bytes in the directory dirfd: rings of
 * gone writers are removed oldest first (those no reader has attached to
 * before those one has) while the total would exceed `max`. Takes the
 * directory's lock (flock) for the time it runs; returns with it held when
 * `hold` (the caller creates its ring, then calls ct_gpu_ring_dir_unlock).
 * 0, -ENOSPC when live rings alone leave no room, or -errno.
 */
int ct_gpu_ring_dir_prune(int dirfd, uint64_t need, uint64_t max, bool hold);
void ct_gpu_ring_dir_unlock(int dirfd);

/* Whether the process that wrote the ring has ended (its pid is free, or
 * now names a process that started after the ring was made). */
bool ct_gpu_ring_writer_gone(const struct ct_gpu_ring_hdr *h);

#endif
