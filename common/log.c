// SPDX-License-Identifier: MIT
/* The libraries' print callback (log.h). */
#include <commtap/log.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static ct_print_fn print_fn;
static enum ct_log_level max_level = CT_LOG_INFO;
static char stderr_prefix[64];

ct_print_fn ct_set_print(ct_print_fn fn)
{
	ct_print_fn old = print_fn;

	print_fn = fn;
	return old;
}

void ct_set_log_level(enum ct_log_level level)
{
	max_level = level;
}

int ct_log_enabled(enum ct_log_level level)
{
	return print_fn && level <= max_level;
}

void ct_log(enum ct_log_level level, const char *fmt, ...)
{
	va_list args;

	if (!ct_log_enabled(level))
		return;
	va_start(args, fmt);
	print_fn(level, fmt, args);
	va_end(args);
}

static int print_stderr_line(enum ct_log_level level, const char *fmt, va_list args)
{
	(void)level;
	fprintf(stderr, "%s: ", stderr_prefix);
	vfprintf(stderr, fmt, args);
	if (!*fmt || fmt[strlen(fmt) - 1] != '\n') /* one line each, whether or not fmt ends one */
		fputc('\n', stderr);
	return 0;
}

void ct_log_to_stderr(const char *prefix)
{
	snprintf(stderr_prefix, sizeof(stderr_prefix), "%s", prefix);
	ct_set_print(print_stderr_line);
}
