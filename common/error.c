// SPDX-License-Identifier: MIT
/* The libraries' error messages (error.h). */
#include <commtap/error.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int ct_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc < 0 ? rc : -EINVAL;
}

int ct_load_fail(const struct ct_load_err *L, const char *path, const char *fmt, ...)
{
	int n = snprintf(L->err, L->errlen, "%s: %s: ", L->file, path);
	va_list ap;

	if (n < 0 || (size_t)n >= L->errlen)
		return -EINVAL; /* the message does not fit after its place */
	va_start(ap, fmt);
	vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
