// SPDX-License-Identifier: MIT
/* A progress line on a terminal (progress.h). */
#include "progress.h"

#include <commtap/analysis.h>

#include <stdio.h>
#include <unistd.h>

#define SHOW_AFTER_NS 1000000000ull /* a read shorter than this shows nothing */
#define EVERY_NS      250000000ull

void progress_start(struct progress *p)
{
	p->tty = isatty(STDERR_FILENO);
	p->start_ns = ct_monotonic_ns();
	p->next_ns = p->start_ns + SHOW_AFTER_NS;
	p->shown = 0;
}

void progress_update(struct progress *p, uint64_t packets, uint64_t bytes, uint64_t done,
		     uint64_t total)
{
	uint64_t t;
	double secs;

	if (!p->tty)
		return;
	t = ct_monotonic_ns();
	if (t < p->next_ns)
		return;
	p->next_ns = t + EVERY_NS;
	secs = (double)(t - p->start_ns) / 1e9;
	fprintf(stderr, "\r%llu packets, %.1f MB on the wire, %.2f Mpps",
		(unsigned long long)packets, (double)bytes / 1e6, (double)packets / secs / 1e6);
	if (total && done && done <= total)
		fprintf(stderr, ", %.0f%% of the file, %.0f s left",
			100.0 * (double)done / (double)total,
			secs * (double)(total - done) / (double)done);
	fputs("\033[K", stderr); /* clear the rest of a longer line before */
	p->shown = 1;
}

void progress_end(struct progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}
