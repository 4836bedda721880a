// SPDX-License-Identifier: MIT
/* The libraries' print callback (log.h). */
#include <commtap/log.h>

#include <stddef.h>

static ct_print_fn print_fn;
static enum ct_log_level max_level = CT_LOG_INFO;

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
