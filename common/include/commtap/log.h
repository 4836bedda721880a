/* SPDX-License-Identifier: MIT */
/*
 * How commtap's libraries say things: through a print callback the caller
 * installs (as libbpf_set_print does), never straight to stderr and never
 * on an environment variable. Without a callback the libraries are silent.
 */
#ifndef COMMTAP_LOG_H
#define COMMTAP_LOG_H

#include <stdarg.h>

enum ct_log_level {
	CT_LOG_WARN,  /* something the report lost or could not do */
	CT_LOG_INFO,  /* what a run did, once per report */
	CT_LOG_DEBUG, /* the estimators' working (candidate lags, anchors, hosts' fits) */
};

typedef int (*ct_print_fn)(enum ct_log_level level, const char *fmt, va_list args);

/* Install fn (NULL: silent); returns the one installed before. */
ct_print_fn ct_set_print(ct_print_fn fn);

/*
 * The callback programs install for a terminal: each message as one line
 * on stderr, "PREFIX: message" (the prefix is copied, up to 63 bytes).
 */
void ct_log_to_stderr(const char *prefix);

/* Whether a message of this level would reach the callback (to skip costly formatting). */
int ct_log_enabled(enum ct_log_level level);

/* Set the most detailed level passed on (default CT_LOG_INFO). */
void ct_set_log_level(enum ct_log_level level);

void ct_log(enum ct_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
