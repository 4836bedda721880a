// SPDX-License-Identifier: MIT
/*
 * The sorts of bursts (analysis/burst_sort.c) on inputs whose sorted order
 * is worked out in each test: small inputs (the comparison and insertion
 * sorts), and from RADIX_FROM (2048) bursts the radix sort with keys wide
 * enough for several 11-bit digits, ties, and runs for the merge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/burst_sort.h>

#define BIG 4096 /* above RADIX_FROM: the radix sort runs */

static struct ct_burst *bursts(size_t n)
{
	struct ct_burst *b = calloc(n, sizeof(*b));

	assert_non_null(b);
	return b;
}

/* Five bursts, a comparison sort: the starts 30, 10, 50, 20, 40 come out 10..50. */
static void test_small_by_start(void **state)
{
	static const uint64_t start[5] = {30, 10, 50, 20, 40};
	static const uint32_t want_flow[5] = {1, 3, 0, 4, 2}; /* where 10, 20, ... were */
	struct ct_burst b[5] = {{0}};

	(void)state;
	for (unsigned i = 0; i < 5; i++) {
		b[i].start = start[i];
		b[i].end = start[i] + 5;
		b[i].flow = i;
	}
	assert_int_equal(ct_bursts_sort_by_start(b, 5), 0);
	for (unsigned k = 0; k < 5; k++) {
		assert_int_equal(b[k].start, 10 * (k + 1));
		assert_int_equal(b[k].end, 10 * (k + 1) + 5); /* the whole record moved */
		assert_int_equal(b[k].flow, want_flow[k]);
	}
}

/*
 * 4096 bursts whose starts are a permutation: burst i starts at
 * T0 + ((1021 i) mod 4096) us. 1021 is odd, so i -> 1021 i mod 4096 is a
 * bijection of 0..4095, and sorted, position k holds start T0 + k us. It
 * came from the i with 1021 i = k (mod 4096): i = 341 k mod 4096, since
 * 1021 * 341 = 348161 = 85 * 4096 + 1. The starts span 4095 us = 4.1e9 ns,
 * 32 bits: three digits of 11 bits; T0 near 2^60 checks that keys are taken
 * relative to their minimum.
 */
static void test_radix_by_start_permutation(void **state)
{
	const uint64_t t0 = 1ull << 60, us = 1000000;
	struct ct_burst *b = bursts(BIG);

	(void)state;
	for (uint32_t i = 0; i < BIG; i++) {
		b[i].start = t0 + (uint64_t)((1021u * i) % BIG) * us;
		b[i].flow = i;
		b[i].bytes = i; /* rides along */
	}
	assert_int_equal(ct_bursts_sort_by_start(b, BIG), 0);
	for (uint32_t k = 0; k < BIG; k++) {
		assert_int_equal(b[k].start, t0 + (uint64_t)k * us);
		assert_int_equal(b[k].flow, (341u * k) % BIG);
		assert_int_equal(b[k].bytes, b[k].flow);
	}
	free(b);
}

/*
 * Ties keep their order (the radix sort is stable): burst i of 2048 starts
 * at ((2047 - i) / 2) * 10, so starts come in equal pairs, descending. Start
 * v = (p / 2) * 10 sits at positions p = 2m, 2m + 1 (m = v / 10) and belongs
 * to i = 2046 - 2m and i = 2047 - 2m, the smaller i first: position p holds
 * flow 2046 - p when p is even, 2048 - p when odd.
 */
static void test_radix_by_start_stable(void **state)
{
	const size_t n = 2048;
	struct ct_burst *b = bursts(n);

	(void)state;
	for (uint32_t i = 0; i < n; i++) {
		b[i].start = (uint64_t)((2047 - i) / 2) * 10;
		b[i].flow = i;
	}
	assert_int_equal(ct_bursts_sort_by_start(b, n), 0);
	for (uint32_t p = 0; p < n; p++) {
		assert_int_equal(b[p].start, (p / 2) * 10);
		assert_int_equal(b[p].flow, p % 2 ? 2048 - p : 2046 - p);
	}
	free(b);
}

/*
 * By flow, stable, with and without the radix sort: burst i has flow
 * (n - 1 - i) % 3 and start i. Sorted by flow, the bursts of flow f keep
 * their order by start, which rises with i: flow 0 holds i = n-1, n-4, ...
 * read backwards, i.e. the i with (n - 1 - i) % 3 == f in rising order.
 * With n = 4095 (a multiple of 3) each flow has n / 3 bursts; flow f's k-th
 * (from 0) is i = (n - 1 - f) mod 3 + 3k, i.e. i = 2 - f + 3k.
 */
static void check_by_flow(size_t n, int with_tmp)
{
	struct ct_burst *b = bursts(n), *tmp = with_tmp ? bursts(n) : NULL;

	for (uint32_t i = 0; i < n; i++) {
		b[i].flow = (uint32_t)((n - 1 - i) % 3);
		b[i].start = i;
	}
	assert_int_equal(ct_bursts_sort_stable_by_flow_using(b, n, tmp), 0);
	for (uint32_t f = 0; f < 3; f++)
		for (uint32_t k = 0; k < n / 3; k++) {
			const struct ct_burst *x = &b[f * (n / 3) + k];

			assert_int_equal(x->flow, f);
			assert_int_equal(x->start, 2 - f + 3 * k);
		}
	free(b);
	free(tmp);
}

static void test_by_flow_stable(void **state)
{
	(void)state;
	check_by_flow(4095, 1); /* radix, the caller's room */
	check_by_flow(4095, 0); /* radix, its own room */
	check_by_flow(9, 0);	/* insertion sort */
}

/*
 * Without room (tmp NULL) the flow-then-start sort is a comparison sort of
 * (flow, start): (2, 5) (1, 9) (2, 1) (1, 3) -> (1, 3) (1, 9) (2, 1) (2, 5).
 */
static void test_flow_then_start(void **state)
{
	struct ct_burst b[4] = {{.flow = 2, .start = 5},
				{.flow = 1, .start = 9},
				{.flow = 2, .start = 1},
				{.flow = 1, .start = 3}};
	static const uint32_t want_flow[4] = {1, 1, 2, 2};
	static const uint64_t want_start[4] = {3, 9, 1, 5};

	(void)state;
	assert_int_equal(ct_bursts_sort_by_flow_then_start(b, 4, NULL), 0);
	for (unsigned k = 0; k < 4; k++) {
		assert_int_equal(b[k].flow, want_flow[k]);
		assert_int_equal(b[k].start, want_start[k]);
	}
}

/*
 * Runs merged: three runs in start order, [10 40 60] [20 50] [30 60 80 90]
 * (flows 0, 1, 2); 60 is in runs 0 and 2, and the merge is stable (ties:
 * the left run first), so run 0's 60 comes first. Sorted: 10(0) 20(1)
 * 30(2) 40(0) 50(1) 60(0) 60(2) 80(2) 90(2).
 */
static void test_merge_runs(void **state)
{
	static const uint64_t start[9] = {10, 40, 60, 20, 50, 30, 60, 80, 90};
	static const uint32_t flow[9] = {0, 0, 0, 1, 1, 2, 2, 2, 2};
	static const uint64_t want_start[9] = {10, 20, 30, 40, 50, 60, 60, 80, 90};
	static const uint32_t want_flow[9] = {0, 1, 2, 0, 1, 0, 2, 2, 2};
	struct ct_burst b[9] = {{0}}, tmp[9];
	size_t runs[10];

	(void)state;
	for (unsigned i = 0; i < 9; i++) {
		b[i].start = start[i];
		b[i].flow = flow[i];
	}
	ct_bursts_merge_runs_by_start(b, 9, tmp, runs);
	for (unsigned k = 0; k < 9; k++) {
		assert_int_equal(b[k].start, want_start[k]);
		assert_int_equal(b[k].flow, want_flow[k]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_by_start),
		cmocka_unit_test(test_radix_by_start_permutation),
		cmocka_unit_test(test_radix_by_start_stable),
		cmocka_unit_test(test_by_flow_stable),
		cmocka_unit_test(test_flow_then_start),
		cmocka_unit_test(test_merge_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
