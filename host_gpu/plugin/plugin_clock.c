// SPDX-License-Identifier: MIT
/* TSC-based CLOCK_REALTIME for the plugin's hot path (see plugin_clock.h). */
#include "plugin_clock.h"

#include <stdio.h>
#include <string.h>

#ifdef NP_HAVE_TSC
uint64_t np_tsc_mult;
uint64_t np_tsc_window = UINT64_MAX;
__thread uint64_t np_tl_tsc0 __attribute__((tls_model("initial-exec")));
__thread uint64_t np_tl_ns0 __attribute__((tls_model("initial-exec")));

static int tsc_usable;
static uint64_t cal_tsc, cal_ns; /* calibration start */
static uint64_t cal_span_ns;	 /* span the current rate was measured over */

/* A (tsc, realtime) pair read as close together as possible. */
static void anchor(uint64_t *tsc, uint64_t *ns)
{
	uint64_t a = __rdtsc();

	*ns = np_realtime_ns();
	*tsc = a + (__rdtsc() - a) / 2;
}

void np_clock_init(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "flags", 5)) {
			tsc_usable = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	}
	if (f)
		fclose(f);
	if (tsc_usable)
		anchor(&cal_tsc, &cal_ns);
}

uint64_t np_clock_slow(void)
{
	uint64_t tsc, ns, span;

	if (!tsc_usable)
		return np_realtime_ns();
	anchor(&tsc, &ns);
	span = ns - cal_ns;
	/* (Re)measure the rate when the span has doubled, up to 10 s. Racing
	 * threads compute nearly the same value; any of them may win. */
	if (span >= 20000000ull && span >= 2 * __atomic_load_n(&cal_span_ns, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&cal_span_ns, __ATOMIC_RELAXED) < 10000000000ull && tsc > cal_tsc) {
		uint64_t mult = (uint64_t)(((unsigned __int128)span << 32) / (tsc - cal_tsc));

		__atomic_store_n(&cal_span_ns, span, __ATOMIC_RELAXED);
		/* ~50 ms of ticks per window */
		__atomic_store_n(&np_tsc_window, (uint64_t)(50000000ull << 32) / (mult ? mult : 1),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&np_tsc_mult, mult, __ATOMIC_RELAXED);
	}
	np_tl_tsc0 = tsc;
	np_tl_ns0 = ns;
	return ns;
}
#else
void np_clock_init(void)
{
}

uint64_t np_clock_slow(void)
{
	return np_realtime_ns();
}
#endif
