// SPDX-License-Identifier: MIT
/* A NIC's hardware clock as ns since the Unix epoch (see mirror_clock.h). */
#include "mirror_clock.h"

#include <errno.h>
#include <time.h>

#include <rte_ethdev.h>

#define SAMPLE_TRIES 5

int mirror_clock_fit(const struct mirror_clock_sample *first,
		     const struct mirror_clock_sample *last, struct mirror_clock_line *out)
{
	double ns_per_tick;

	if (last->ticks <= first->ticks || last->ns <= first->ns)
		return -ERANGE;
	ns_per_tick = (double)(last->ns - first->ns) / (double)(last->ticks - first->ticks);
	if (ns_per_tick < 0.01 || ns_per_tick > 1000) /* 100 GHz .. 1 MHz */
		return -ERANGE;
	out->base_ticks = last->ticks;
	out->base_ns = last->ns;
	out->ns_per_tick = ns_per_tick;
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int mirror_clock_sample(uint16_t port, struct mirror_clock_sample *s)
{
	int got = 0;

	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t before = realtime_ns(), ticks, after;
		int rc = rte_eth_read_clock(port, &ticks);

		after = realtime_ns();
		if (rc)
			return rc;
		if (!got || after - before < s->bracket_ns) {
			s->ticks = ticks;
			s->ns = before + (after - before) / 2;
			s->bracket_ns = after - before;
			got = 1;
		}
	}
	return 0;
}
