// SPDX-License-Identifier: MIT
/*
 * One flow's iterations from the repetition of its bytes
 * (analysis/period_repeat.c), on hand-made flows whose iterations are
 * known, the figures worked out in each test from the rules in the file:
 * the lag in bins of total / 4096 bytes, the anchors on the boundary
 * phase, the period from the anchors' starts and, when the flow begins on
 * a boundary and its last iteration is whole, from the first anchor to the
 * last byte plus the median idle time before a boundary.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flow_builder.h"
#include "period_repeat.h"

/* Fewer than three bursts: nothing to repeat, every candidate empty. */
static void test_too_few(void **state)
{
	struct ct_burst b[2] = {{.start = T0, .end = T0 + MS, .bytes = 1000},
				{.start = T0 + 100 * MS, .end = T0 + 101 * MS, .bytes = 1000}};
	struct ct_flow_repeat out[CT_REPEAT_CANDIDATES];

	(void)state;
	assert_int_equal(ct_flow_repeat(b, 2, out), 0);
	for (int i = 0; i < CT_REPEAT_CANDIDATES; i++) {
		assert_true(out[i].repeat == 0);
		assert_true(out[i].bytes_per_iteration == 0);
		assert_int_equal(out[i].anchors, 0);
	}
}

/*
 * Once an iteration: 16 bursts of 1 MB, one every 100 ms, 1 ms long; 16 MB
 * over 4096 bins is 3906.25 bytes a bin, a burst exactly 256. The idle
 * times are all 99 ms: the bytes repeat every burst (or, finding no
 * repetition, the alike sizes score 1), so the iteration is one burst:
 * bytes per iteration 1 MB, every burst an anchor (16), the intervals all
 * 100 ms (cv 0). The flow begins on a boundary and its last iteration
 * (1 MB) is whole, so the period runs from the first start to the last
 * end, 15 * 100 + 1 = 1501 ms, plus the median idle time 99 ms, over 16
 * iterations: 1600 / 16 = 100 ms.
 */
static void test_once_an_iteration(void **state)
{
	struct ct_burst b[16];
	struct ct_flow_repeat out[CT_REPEAT_CANDIDATES];

	(void)state;
	for (uint32_t i = 0; i < 16; i++)
		b[i] = (struct ct_burst){.start = T0 + i * 100 * MS,
					 .end = T0 + i * 100 * MS + MS,
					 .bytes = 1000000,
					 .messages = 1};
	assert_int_equal(ct_flow_repeat(b, 16, out), 0);
	assert_true(out[0].repeat > 0.9);
	assert_near(out[0].bytes_per_iteration, 1e6, 1e-6);
	assert_int_equal(out[0].anchors, 16);
	assert_near(out[0].interval_cv, 0, 1e-12);
	assert_int_equal(out[0].whole_last, 1);
	assert_near(out[0].period_ns, 100.0 * MS, 1e-3);
	for (uint32_t i = 0; i < 16; i++)
		assert_int_equal(out[0].idx[i], i);
	for (int i = 0; i < CT_REPEAT_CANDIDATES; i++)
		ct_flow_repeat_free(&out[i]);
}

/*
 * Two bursts an iteration: 16 iterations of 200 ms, burst 2j at j * 200 ms
 * and burst 2j + 1 10 ms later, 1 MB and 1 ms each. The idle times
 * alternate 189 ms (before an iteration) and 9 ms, a series that repeats
 * every 2 MB. 32 MB over 4096 bins is 7812.5 bytes a bin, 2 MB exactly 256
 * bins: bytes per iteration 2,000,000. The boundary is at the long idle
 * times: the anchors are the even bursts, 16 of them, 200 ms apart (cv 0).
 * The flow begins on a boundary and its last iteration (bursts 30, 31:
 * 2 MB) is whole, so the period is (15 * 200 + 10 + 1 = 3011 ms, to the
 * last end) + 189 ms (the median idle time before an anchor) over 16
 * iterations: 3200 / 16 = 200 ms.
 */
static void test_two_bursts_an_iteration(void **state)
{
	struct ct_burst b[32];
	struct ct_flow_repeat out[CT_REPEAT_CANDIDATES];

	(void)state;
	for (uint32_t k = 0; k < 32; k++) {
		uint64_t start = T0 + (k / 2) * 200 * MS + (k % 2) * 10 * MS;

		b[k] = (struct ct_burst){
			.start = start, .end = start + MS, .bytes = 1000000, .messages = 1};
	}
	assert_int_equal(ct_flow_repeat(b, 32, out), 0);
	assert_true(out[0].repeat > 0);
	assert_near(out[0].bytes_per_iteration, 2e6, 1e-6);
	assert_int_equal(out[0].anchors, 16);
	for (uint32_t j = 0; j < 16; j++)
		assert_int_equal(out[0].idx[j], 2 * j);
	assert_near(out[0].interval_cv, 0, 1e-12);
	assert_int_equal(out[0].whole_last, 1);
	assert_near(out[0].period_ns, 200.0 * MS, 1e-3);
	for (int i = 0; i < CT_REPEAT_CANDIDATES; i++)
		ct_flow_repeat_free(&out[i]);
}

/*
 * An iteration that falls between bins: 14 iterations of 50 ms, each 300
 * bursts of 1,000 bytes, 1 us long, the first after a 10 ms wait and the
 * others after 100-130 us, the same waits in every iteration (a
 * tensor-parallel flow that never pauses longer than its compute:
 * synthesized p4t2d1). 4.2 MB over 4096 bins is 1,025.4 bytes a bin, an
 * iteration (300,000 bytes) 292.57 bins: at lag 293 about half of the
 * bursts land a bin off, and the highest peak is at two iterations (585.14
 * bins, 0.95). Read there, the one-iteration divisor falls under the
 * floor (0.95 - sqrt(2) * 0.060, 4,200 bursts) and was no candidate; read
 * in bins that make it 293 whole ones, it repeats as well as its multiple
 * (the same bursts, 0.99) and is one: 300,000 bytes an iteration (to a
 * bin), 14 anchors 50 ms apart, the bursts after the long waits.
 */
static void test_iteration_between_bins(void **state)
{
	enum { ITERATIONS = 14, PER = 300 };
	struct ct_burst *b = calloc(ITERATIONS * PER, sizeof(*b));
	struct ct_flow_repeat out[CT_REPEAT_CANDIDATES];
	uint32_t seed = 1;
	int found = -1;

	(void)state;
	assert_non_null(b);
	for (uint32_t it = 0; it < ITERATIONS; it++) {
		uint64_t t = T0 + it * 50 * MS;

		seed = 1; /* the same waits every iteration */
		for (uint32_t i = 0; i < PER; i++) {
			seed = seed * 1103515245u + 12345u;
			t += i ? 100000 + (seed >> 16) % 30000 : 0;
			b[it * PER + i] = (struct ct_burst){
				.start = t, .end = t + 1000, .bytes = 1000, .messages = 1};
			t += 1000;
		}
	}
	assert_int_equal(ct_flow_repeat(b, ITERATIONS * PER, out), 0);
	for (int i = 0; i < CT_REPEAT_CANDIDATES; i++)
		if (out[i].anchors && fabs(out[i].bytes_per_iteration - 300000) < 1026)
			found = i;
	assert_true(found >= 0);
	assert_int_equal(out[found].anchors, ITERATIONS);
	for (uint32_t j = 0; j < ITERATIONS; j++)
		assert_int_equal(out[found].idx[j], j * PER);
	assert_near(out[found].period_ns, 50.0 * MS, 0.01 * MS);
	for (int i = 0; i < CT_REPEAT_CANDIDATES; i++)
		ct_flow_repeat_free(&out[i]);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_too_few),
		cmocka_unit_test(test_once_an_iteration),
		cmocka_unit_test(test_two_bursts_an_iteration),
		cmocka_unit_test(test_iteration_between_bins),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
