/* SPDX-License-Identifier: MIT */
/*
 * A progress line for a long read on a terminal: packets, bytes, rate, the
 * share of the file read and the time left, on stderr (never in a report),
 * from the first second on, four times a second, gone at the end.
 */
#ifndef COMMTAP_PROGRESS_H
#define COMMTAP_PROGRESS_H

#include <stdint.h>

struct progress {
	int tty; /* stderr is a terminal: otherwise nothing is shown */
	uint64_t start_ns, next_ns;
	int shown;
};

void progress_start(struct progress *p);
/* done/total: bytes of the file read and its size (total 0: unknown, a pipe) */
void progress_update(struct progress *p, uint64_t packets, uint64_t bytes, uint64_t done,
		     uint64_t total);
/* Clear the line if one was shown. */
void progress_end(struct progress *p);

#endif
