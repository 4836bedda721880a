// SPDX-License-Identifier: MIT
/*
 * The burst log is bounded: past CT_BURST_LOG_MAX bursts it keeps the
 * newest, counts the dropped ones, and its allocation stops growing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <commtap/periodicity.h>

static void test_bounded_newest_kept(void **state)
{
	struct ct_burst_log log = {0};
	struct ct_flow_burst b = {0};
	const uint64_t total = 3ull * CT_BURST_LOG_MAX;
	size_t cap_at_bound = 0;

	(void)state;
	for (uint64_t i = 0; i < total; i++) {
		b.start = b.end = i; /* one-packet bursts, in the order they end */
		b.packets = 1;
		assert_int_equal(ct_burst_log_add(&log, &b), 0);
		if (i + 1 == CT_BURST_LOG_MAX)
			cap_at_bound = log.cap;
	}
	print_message("%llu bursts: %zu kept (bound %u), %llu dropped, allocated for %zu\n",
		      (unsigned long long)total, log.n, CT_BURST_LOG_MAX,
		      (unsigned long long)log.dropped, log.cap);
	assert_true(log.n <= CT_BURST_LOG_MAX);
	assert_int_equal(log.cap, cap_at_bound);
	assert_int_equal(log.n + log.dropped, total);
	/* the newest, in order */
	assert_int_equal(log.b[log.n - 1].end, total - 1);
	for (size_t i = 1; i < log.n; i++)
		assert_int_equal(log.b[i].end, log.b[i - 1].end + 1);
	ct_burst_log_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_bounded_newest_kept)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
