/* SPDX-License-Identifier: MIT */
/*
 * Files written whole or not at all: reports, labels, pages. A reader (a
 * dashboard, a collector, the operator's script) never sees half a file,
 * and a failure (full disk, out of memory) leaves the previous file or
 * none, never a truncated one.
 */
#ifndef COMMTAP_EXPORT_ATOMIC_FILE_H
#define COMMTAP_EXPORT_ATOMIC_FILE_H

#include <stdio.h>

/* Writes the content; returns 0 or a negative errno. */
typedef int (*ct_file_writer_fn)(FILE *out, void *ctx);

/*
 * Write path. A regular file or a new path: through a new file beside it
 * (created with O_EXCL under a random name, so never through a link
 * someone planted; its mode as the umask makes it), fsync'd, renamed over
 * path, and the directory fsync'd. An existing device or FIFO: opened and
 * written in place, never replaced (a FIFO's reader waited for 10 s). A
 * symbolic link: refused (-ELOOP), its target untouched. "-" and
 * "/dev/stdout" write to stdout. Returns 0 or a negative errno, the one the failed write(2) gave
 * (-ENOSPC for a full disk, not -EIO).
 */
int ct_write_file_atomic(const char *path, ct_file_writer_fn write, void *ctx);

/* What a negative errno of ct_write_file_atomic means, for a message that names the path. */
const char *ct_output_strerror(int rc);

/* 1 when both paths name one existing file (an output that would overwrite the input). */
int ct_same_file(const char *a, const char *b);

#endif
