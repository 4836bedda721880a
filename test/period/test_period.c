// SPDX-License-Identifier: MIT
/* Period estimation on burst trains with a known period. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>

#include <commtap/period.h>

static uint64_t rng = 12345;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng >> 11) / (double)(1ull << 53);
}

/*
 * A GPT-like iteration of length len seconds from t: m micro-batch bursts
 * spread through the first 60%, a long DP burst at 75%.
 */
static void put_iteration(struct ct_burst *b, size_t *n, uint64_t t, double len, unsigned m)
{
	for (unsigned j = 0; j < m; j++) {
		uint64_t s = t + (uint64_t)(len * (0.05 + 0.55 * j / m) * 1e9);

		b[(*n)++] = (struct ct_burst){s, s + (uint64_t)(len * 0.01e9), 1 << 20, 8, 0};
	}
	uint64_t s = t + (uint64_t)(len * 0.75e9);

	b[(*n)++] = (struct ct_burst){s, s + (uint64_t)(len * 0.1e9), 64 << 20, 128, 1};
}

/*
 * Iterations of length T·(1 ± jitter). Returns the realized mean period;
 * skip names an iteration with no traffic (or -1).
 */
static double make_train(struct ct_burst *b, size_t *n, unsigned iters, double T, double jitter,
			 unsigned m, int skip, unsigned noise)
{
	uint64_t t = 1000000000ull;
	uint64_t first = t;

	*n = 0;
	for (unsigned it = 0; it < iters; it++) {
		double len = T * (1 + jitter * (2 * uniform() - 1));

		if ((int)it != skip)
			put_iteration(b, n, t, len, m);
		t += (uint64_t)(len * 1e9);
	}
	for (unsigned k = 0; k < noise; k++) {
		uint64_t s = first + (uint64_t)(uniform() * (double)(t - first));

		b[(*n)++] = (struct ct_burst){s, s + 100000, 50000, 1, 2};
	}
	return (double)(t - first) / iters / 1e9;
}

static void check(unsigned iters, double jitter, unsigned m, int skip, unsigned noise)
{
	struct ct_burst b[4096];
	struct ct_period p;
	size_t n;
	double truth = make_train(b, &n, iters, 2.0, jitter, m, skip, noise);

	assert_int_equal(ct_period_estimate(b, n, 0, &p), 0);
	if (!p.periodic)
		fail_msg("no period: %s", p.reason);
	printf("  %u iterations, jitter %.2f, %u micro-batches, skip %d, noise %u: period %.6f s "
	       "(truth %.6f, error %.3f%%), confidence %.2f, %zu iterations found\n",
	       iters, jitter, m, skip, noise, p.period_s, truth,
	       100 * fabs(p.period_s - truth) / truth, p.confidence, p.iterations);
	assert_true(fabs(p.period_s - truth) / truth < 0.01);
	ct_period_free(&p);
}

static void test_clean(void **s)
{
	(void)s;
	check(10, 0, 8, -1, 0);
}

static void test_jitter_nested_noise(void **s)
{
	(void)s;
	check(20, 0.05, 8, -1, 0);
	check(20, 0.05, 16, -1, 40);
	check(12, 0.05, 4, 5, 20); /* a missing iteration */
}

static void test_first_estimate_at_three_iterations(void **s)
{
	struct ct_burst b[256];
	struct ct_period p;
	size_t n;
	double truth = make_train(b, &n, 3, 2.0, 0.05, 8, -1, 0);

	(void)s;
	assert_int_equal(ct_period_estimate(b, n, 0, &p), 0);
	assert_true(p.periodic);
	assert_true(fabs(p.period_s - truth) / truth < 0.05);
	ct_period_free(&p);
}

/*
 * The mean period includes the last iteration, which the anchors' span
 * misses: twelve iterations of 2 s, the last 5% longer, put the mean 0.42%
 * above the other iterations' length. The bursts keep their places as each
 * iteration stretches, so the last one's length is read from its bytes.
 */
static void test_last_iteration_length(void **s)
{
	struct ct_burst b[256];
	struct ct_period p;
	size_t n = 0;
	uint64_t t = 1000000000ull, first = t;
	double truth, err;

	(void)s;
	for (unsigned it = 0; it < 12; it++) {
		double len = it == 11 ? 2.1 : 2.0 * (1 + 0.02 * (2 * uniform() - 1));

		put_iteration(b, &n, t, len, 8);
		t += (uint64_t)(len * 1e9);
	}
	truth = (double)(t - first) / 12 / 1e9;
	assert_int_equal(ct_period_estimate(b, n, 0, &p), 0);
	assert_true(p.periodic);
	assert_int_equal(p.iterations, 12);
	err = fabs(p.period_s - truth) / truth;
	printf("  last iteration 5%% longer: period %.6f s (truth %.6f, error %.4f%%)\n",
	       p.period_s, truth, 100 * err);
	assert_true(err < 0.0005);
	ct_period_free(&p);
}

static void test_not_periodic(void **s)
{
	struct ct_burst b[64];
	struct ct_period p;

	(void)s;
	/* one burst of 33 messages and a lone message 5 s later (the oferby capture) */
	b[0] = (struct ct_burst){0, 2600000, 33 * 2048, 33, 0};
	b[1] = (struct ct_burst){5002600000ull, 5002600000ull, 2048, 1, 0};
	assert_int_equal(ct_period_estimate(b, 2, 0, &p), 0);
	assert_false(p.periodic);
	assert_non_null(p.reason);
	ct_period_free(&p);
	/* random bursts */
	for (int i = 0; i < 60; i++) {
		uint64_t at = (uint64_t)(uniform() * 60e9);

		b[i] = (struct ct_burst){at, at + (uint64_t)(uniform() * 1e8), 1000, 1, 0};
	}
	assert_int_equal(ct_period_estimate(b, 60, 0, &p), 0);
	if (p.periodic)
		fail_msg("random bursts called periodic: %.3f s, confidence %.2f", p.period_s,
			 p.confidence);
	ct_period_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_jitter_nested_noise),
		cmocka_unit_test(test_first_estimate_at_three_iterations),
		cmocka_unit_test(test_last_iteration_length),
		cmocka_unit_test(test_not_periodic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
