/* SPDX-License-Identifier: MIT */
/*
 * How a library function says why it failed: the message into the caller's
 * buffer and a negative errno as the result, reported once at the edge
 * (the app prints err).
 */
#ifndef COMMTAP_ERROR_H
#define COMMTAP_ERROR_H

#include <stddef.h>

/* Write the message into err (errlen bytes); returns rc, or -EINVAL where rc is not negative. */
int ct_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A loader of a JSON document: its file's name and where its first error goes. */
struct ct_load_err {
	const char *file;
	char *err;
	size_t errlen;
};

/* "FILE: PATH: message" into L's buffer (PATH a JSONPath into the document); returns -EINVAL. */
int ct_load_fail(const struct ct_load_err *L, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
