// SPDX-License-Identifier: MIT
/* On-off statistics and congestion-control figures on bursts of known shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>

#include <commtap/burst_stats.h>

#define MS 1000000ull

static void test_dist(void **s)
{
	double v[] = {5, 1, 4, 2, 3};
	struct ct_dist d;

	(void)s;
	ct_dist_of(v, 5, &d);
	assert_float_equal(d.median, 3, 1e-12);
	assert_float_equal(d.p10, 1.4, 1e-12);
	assert_float_equal(d.p90, 4.6, 1e-12);
	ct_dist_of(v, 0, &d);
	assert_int_equal(d.n, 0);
}

static void test_onoff(void **s)
{
	struct ct_burst b[10];
	struct ct_onoff o;

	(void)s;
	/* 10 ms on, 30 ms off, 1 MB per burst: duty cycle 10/(10·40-30) */
	for (int i = 0; i < 10; i++)
		b[i] = (struct ct_burst){i * 40 * MS, i * 40 * MS + 10 * MS, 1000000, 4, 0};
	assert_int_equal(ct_onoff_of(b, 10, &o), 0);
	assert_int_equal(o.bursts, 10);
	assert_float_equal(o.duty_cycle, 100.0 / 370, 1e-9);
	assert_float_equal(o.on_s.median, 0.010, 1e-12);
	assert_float_equal(o.off_s.median, 0.030, 1e-12);
	assert_float_equal(o.burst_bytes.median, 1e6, 1e-6);
	assert_float_equal(o.peak_gbps, 0.8, 1e-9); /* 8 Mbit in 10 ms */
	/* with the packet count known, the last packet's bytes are not in the time:
	 * 10 packets of 4000 B, the first at 0 and the last at 3.2 us: 9 x 4000 B
	 * in 3.2 us = 90 Gb/s (not 100) */
	struct ct_burst line = {0, 3200, 40000, 1, 0, 10};

	assert_int_equal(ct_onoff_of(&line, 1, &o), 0);
	assert_float_equal(o.peak_gbps, 90.0, 1e-9);
	/* overlapping bursts of an aggregate are one on period */
	b[1].start = 5 * MS;
	assert_int_equal(ct_onoff_of(b, 10, &o), 0);
	assert_int_equal(o.bursts, 9);
	/* nine on periods: eight of 1 MB, one of 2 MB; p90 interpolates at rank 7.2 */
	assert_float_equal(o.burst_bytes.p90, 1.2e6, 1e-6);
}

static void test_iteration_volumes(void **s)
{
	struct ct_burst b[8];
	uint64_t starts[4] = {0, 100 * MS, 200 * MS, 300 * MS};
	struct ct_period p = {.periodic = 1, .period_s = 0.1, .iterations = 4, .starts = starts};
	struct ct_iteration_volumes v;

	(void)s;
	/* per iteration: one burst at phase 0.2 and one at 0.8; bytes 2, 2, 2, 6 MB */
	for (int i = 0; i < 4; i++) {
		b[2 * i] = (struct ct_burst){i * 100 * MS + 20 * MS, i * 100 * MS + 21 * MS, 1000000, 1, 0};
		b[2 * i + 1] = (struct ct_burst){i * 100 * MS + 80 * MS, i * 100 * MS + 81 * MS,
						 i == 3 ? 5000000 : 1000000, 1, 0};
	}
	assert_int_equal(ct_iteration_volumes_of(b, 8, &p, &v), 0);
	assert_int_equal(v.iterations, 4);
	assert_float_equal(v.bytes[0], 2e6, 1e-6);
	assert_float_equal(v.bytes[3], 6e6, 1e-6);
	/* mean 3e6, sample stdev 2e6 */
	assert_float_equal(v.bytes_cv, 2.0 / 3, 1e-9);
	assert_float_equal(v.phase_first, 0.2, 1e-9);
	assert_float_equal(v.phase_last, 0.8, 1e-9);
	ct_iteration_volumes_free(&v);
}

static void test_incast_and_spread(void **s)
{
	struct ct_burst b[6];
	uint64_t starts[2] = {0, 100 * MS};
	struct ct_period p = {.periodic = 1, .period_s = 0.1, .iterations = 2, .starts = starts};
	unsigned senders;
	double peak;

	(void)s;
	/* three senders into one receiver, overlapping 2..3 ms; each 1 Gb/s */
	b[0] = (struct ct_burst){0, 4 * MS, 500000, 1, 7};
	b[1] = (struct ct_burst){1 * MS, 3 * MS, 250000, 1, 8};
	b[2] = (struct ct_burst){2 * MS, 6 * MS, 500000, 1, 9};
	/* a second burst of sender 7 later does not add a sender */
	b[3] = (struct ct_burst){50 * MS, 51 * MS, 125000, 1, 7};
	b[4] = (struct ct_burst){100 * MS, 101 * MS, 125000, 1, 7};
	b[5] = (struct ct_burst){103 * MS, 104 * MS, 125000, 1, 8};
	assert_int_equal(ct_incast_of(b, 6, &senders, &peak), 0);
	assert_int_equal(senders, 3);
	assert_float_equal(peak, 3.0, 1e-9);
	/* first starts: iteration 0 at 0, 1, 2 ms (spread 2 ms); iteration 1: 100, 103 (3 ms) */
	assert_float_equal(ct_start_spread_s(b, 6, &p), 0.0025, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dist),
		cmocka_unit_test(test_onoff),
		cmocka_unit_test(test_iteration_volumes),
		cmocka_unit_test(test_incast_and_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
