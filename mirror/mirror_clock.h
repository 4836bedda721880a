/* SPDX-License-Identifier: MIT */
/*
 * A NIC's hardware clock as ns since the Unix epoch. A NIC that timestamps
 * RX in hardware writes raw ticks of its own free-running counter (its
 * frequency and origin are the driver's business); rte_eth_read_clock reads
 * the same counter. Readings of it, each bracketed by two CLOCK_REALTIME
 * reads, give the line that converts ticks to ns: its slope from the first
 * reading to the latest (the baseline grows, so the frequency error falls),
 * its origin at the latest (the offset stays within one bracket).
 */
#ifndef COMMTAP_MIRROR_CLOCK_H
#define COMMTAP_MIRROR_CLOCK_H

#include <stdint.h>

/* One reading: the NIC's counter and CLOCK_REALTIME at the same instant. */
struct mirror_clock_sample {
	uint64_t ticks;
	uint64_t ns;
	uint64_t bracket_ns; /* the two CLOCK_REALTIME reads apart: the reading's error */
};

/* ticks -> ns: ns = base_ns + (ticks - base_ticks) * ns_per_tick */
struct mirror_clock_line {
	uint64_t base_ticks;
	uint64_t base_ns;
	double ns_per_tick;
};

/*
 * The line through first and last (last later). Returns 0, or -ERANGE when
 * the two readings do not advance together or give a frequency outside
 * 1 MHz..100 GHz (a clock that is not a clock).
 */
int mirror_clock_fit(const struct mirror_clock_sample *first,
		     const struct mirror_clock_sample *last, struct mirror_clock_line *out);

/* A raw timestamp in ns; ticks before the line's base (an earlier packet) work too. */
static inline uint64_t mirror_clock_to_ns(const struct mirror_clock_line *l, uint64_t ticks)
{
	int64_t d = (int64_t)(ticks - l->base_ticks);

	return l->base_ns + (uint64_t)(int64_t)((double)d * l->ns_per_tick);
}

/*
 * Read port's clock between two CLOCK_REALTIME reads, the tightest bracket
 * of a few tries. Returns 0 or the negative errno of rte_eth_read_clock
 * (-ENOTSUP where the driver has no clock to read).
 */
int mirror_clock_sample(uint16_t port, struct mirror_clock_sample *s);

#endif
