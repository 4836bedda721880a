/* SPDX-License-Identifier: MIT */
/*
 * CLOCK_REALTIME in ns at the cost of one TSC read. clock_gettime costs
 * 30-70 ns under a paravirtual clock source; two per event would be most of
 * the plugin's budget. Each thread keeps an anchor (tsc, realtime) refreshed
 * every ~50 ms with clock_gettime; in between, time is the anchor plus TSC
 * ticks scaled by a rate measured against CLOCK_REALTIME (over 20 ms at
 * first, re-measured as the span grows, up to 10 s). The error is the rate
 * error over one window: under 1 µs. Without an invariant TSC (or off x86)
 * it is clock_gettime every time.
 */
#ifndef COMMTAP_PLUGIN_CLOCK_H
#define COMMTAP_PLUGIN_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define NP_HAVE_TSC 1
#endif

void np_clock_init(void);
uint64_t np_clock_slow(void);

static inline uint64_t np_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifdef NP_HAVE_TSC
extern uint64_t np_tsc_mult;   /* ns per tick << 32; 0 until calibrated */
extern uint64_t np_tsc_window; /* ticks between anchor refreshes */
extern __thread uint64_t np_tl_tsc0 __attribute__((tls_model("initial-exec")));
extern __thread uint64_t np_tl_ns0 __attribute__((tls_model("initial-exec")));

static inline uint64_t np_now(void)
{
	uint64_t d = __rdtsc() - np_tl_tsc0;
	uint64_t mult = __atomic_load_n(&np_tsc_mult, __ATOMIC_RELAXED);

	if (__builtin_expect(d < np_tsc_window && mult, 1))
		return np_tl_ns0 + (uint64_t)(((unsigned __int128)d * mult) >> 32);
	return np_clock_slow();
}
#else
static inline uint64_t np_now(void)
{
	return np_realtime_ns();
}
#endif

#endif
