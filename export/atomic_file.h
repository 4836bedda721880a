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
 * Write path through a new file beside it (created with O_EXCL under a
 * random name, so never through a link someone planted; its mode as the
 * umask makes it), fsync'd, renamed
 * over path, and the directory fsync'd. "-" writes to stdout. Returns 0 or
 * a negative errno (-ENOSPC for a full disk).
 */
int ct_write_file_atomic(const char *path, ct_file_writer_fn write, void *ctx);

/* 1 when both paths name one existing file (an output that would overwrite the input). */
int ct_same_file(const char *a, const char *b);

#endif
