// SPDX-License-Identifier: MIT
/*
 * commtap-mirror's NIC clock conversion (mirror/mirror_clock.c):
 * the line through two readings turns raw RX timestamps into ns since the
 * epoch, for the clocks NICs have (a free-running counter at the core
 * clock, a PTP clock in ns), and clocks that are not clocks are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>

#include "mirror_clock.h"

#define NS	   1000000000ull
#define EPOCH_2026 (1795000000ull * NS)

/* What a reading of a clock ticking hz from origin_ticks at origin_ns shows at t_ns. */
static struct mirror_clock_sample reading(double hz, uint64_t origin_ticks, uint64_t origin_ns,
					  uint64_t t_ns)
{
	struct mirror_clock_sample s = {
		.ticks = origin_ticks + (uint64_t)((double)(t_ns - origin_ns) * hz / 1e9),
		.ns = t_ns,
		.bracket_ns = 40,
	};
	return s;
}

static void assert_near(uint64_t got, uint64_t want, uint64_t tolerance)
{
	uint64_t d = got > want ? got - want : want - got;

	if (d > tolerance)
		fail_msg("%llu ns off (tolerance %llu)", (unsigned long long)d,
			 (unsigned long long)tolerance);
}

/* A ConnectX-style free-running counter at 156.25 MHz, started at boot. */
static void test_free_running_counter(void **state)
{
	const double hz = 156.25e6;
	const uint64_t boot = EPOCH_2026 - 3600 * NS; /* the counter's zero */
	struct mirror_clock_sample a = reading(hz, 0, boot, EPOCH_2026);
	struct mirror_clock_sample b = reading(hz, 0, boot, EPOCH_2026 + 50000000);
	struct mirror_clock_line line;

	(void)state;
	assert_int_equal(mirror_clock_fit(&a, &b, &line), 0);
	assert_true(line.ns_per_tick > 6.399 && line.ns_per_tick < 6.401);
	/* a packet at the base, one 2 s later, one 10 ms before it (an earlier burst) */
	assert_near(mirror_clock_to_ns(&line, b.ticks), b.ns, 0);
	assert_near(mirror_clock_to_ns(&line, reading(hz, 0, boot, b.ns + 2 * NS).ticks),
		    b.ns + 2 * NS, 10);
	assert_near(mirror_clock_to_ns(&line, reading(hz, 0, boot, b.ns - 10000000).ticks),
		    b.ns - 10000000, 10);
}

/* A PTP clock in ns (real-time format), 37 s ahead of CLOCK_REALTIME (TAI). */
static void test_ptp_clock_in_ns(void **state)
{
	const uint64_t tai = EPOCH_2026 + 37 * NS;
	struct mirror_clock_sample a = {tai, EPOCH_2026, 40};
	struct mirror_clock_sample b = {tai + 50000000, EPOCH_2026 + 50000000, 40};
	struct mirror_clock_line line;

	(void)state;
	assert_int_equal(mirror_clock_fit(&a, &b, &line), 0);
	assert_near(mirror_clock_to_ns(&line, tai + 3 * NS), EPOCH_2026 + 3 * NS, 1);
}

/*
 * Readings are off by up to their bracket: over 50 ms, 1 us off gives a
 * 20 ppm slope (20 us after a second); from the first reading to one 100 s
 * later the same error gives 0.01 ppm (the recalibration's point).
 */
static void test_longer_baseline_is_better(void **state)
{
	/* a clock in ns: ticks = true ns */
	const uint64_t t0 = EPOCH_2026, tb = t0 + 50000000, tc = t0 + 100 * NS;
	/* b's and c's CLOCK_REALTIME reads came 1 us late */
	struct mirror_clock_sample a = {t0, t0, 40}, b = {tb, tb + 1000, 40},
				   c = {tc, tc + 1000, 40};
	struct mirror_clock_line short_line, long_line;
	uint64_t got;

	(void)state;
	assert_int_equal(mirror_clock_fit(&a, &b, &short_line), 0);
	assert_int_equal(mirror_clock_fit(&a, &c, &long_line), 0);
	/* a packet 1 s after each line's base: 1 us offset plus 1 s of slope error */
	got = mirror_clock_to_ns(&short_line, tb + NS);
	assert_near(got, tb + NS, 22000);
	assert_true(got - (tb + NS) > 15000);
	assert_near(mirror_clock_to_ns(&long_line, tc + NS), tc + NS, 1100);
}

static void test_not_a_clock(void **state)
{
	struct mirror_clock_sample a = {1000, EPOCH_2026, 40};
	struct mirror_clock_sample same = a, back = {999, EPOCH_2026 + NS, 40};
	struct mirror_clock_sample slow = {1000 + 500000, EPOCH_2026 + NS, 40}; /* 0.5 MHz */
	struct mirror_clock_sample fast = {1000 + 200000000000ull, EPOCH_2026 + NS, 40};
	struct mirror_clock_sample stopped_time = {2000, EPOCH_2026, 40};
	struct mirror_clock_line line = {1, 2, 3.0};

	(void)state;
	assert_int_equal(mirror_clock_fit(&a, &same, &line), -ERANGE);
	assert_int_equal(mirror_clock_fit(&a, &back, &line), -ERANGE);
	assert_int_equal(mirror_clock_fit(&a, &slow, &line), -ERANGE);
	assert_int_equal(mirror_clock_fit(&a, &fast, &line), -ERANGE);
	assert_int_equal(mirror_clock_fit(&a, &stopped_time, &line), -ERANGE);
	/* a refused reading leaves the line as it was */
	assert_int_equal(line.base_ticks, 1);
	assert_int_equal(line.base_ns, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_running_counter),
		cmocka_unit_test(test_ptp_clock_in_ns),
		cmocka_unit_test(test_longer_baseline_is_better),
		cmocka_unit_test(test_not_a_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
