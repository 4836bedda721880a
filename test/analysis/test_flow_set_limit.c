// SPDX-License-Identifier: MIT
/*
 * A flow set's limit on the flows kept in detail (flow_set.h): past it the
 * lightest are summed into rest, exactly, the producer is told of each,
 * and ct_burst_log_drop takes exactly their bursts out of the log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/flow_set.h>
#include <commtap/periodicity.h>

#define FLOWS 1000
#define LIMIT 100

static struct ct_flow_key key_of(unsigned i)
{
	struct ct_flow_key k = {0};

	k.src.b[15] = 1;
	k.dst.b[14] = (uint8_t)(i >> 8);
	k.dst.b[15] = (uint8_t)i;
	k.id = i + 1;
	k.transport = CT_TRANSPORT_ROCE;
	return k;
}

/* Flow i: i + 1 packets of 100 bytes: the heaviest are the last. */
static struct ct_flow_summary summary_of(unsigned i)
{
	struct ct_flow_summary s = {0};

	s.key = key_of(i);
	s.packets = i + 1;
	s.bytes = 100ull * (i + 1);
	s.messages = 1;
	s.message_bytes = 64;
	s.first_ts = 1000 + i;
	s.last_ts = 2000 + i;
	s.records = 1;
	return s;
}

struct told {
	struct ct_flow_key keys[FLOWS];
	size_t n;
};

static void on_summed(const struct ct_flow_summary *f, void *ctx)
{
	struct told *t = ctx;

	t->keys[t->n++] = f->key;
}

static void test_limit_sums_the_lightest(void **state)
{
	static struct told told;
	struct ct_flow_set s;
	uint64_t packets = 0, bytes = 0;

	(void)state;
	ct_flow_set_init(&s);
	ct_flow_set_limit(&s, LIMIT);
	s.on_summed = on_summed;
	s.on_summed_ctx = &told;
	for (unsigned i = 0; i < FLOWS; i++) {
		struct ct_flow_summary f = summary_of(i);

		assert_int_equal(ct_flow_set_add_summary(&s, &f), 0);
		/* a record of a flow in detail merges into it */
		if (i % 10 == 9)
			assert_int_equal(ct_flow_set_add_summary(&s, &f), 0);
	}
	assert_true(s.count <= LIMIT);
	assert_true(s.cap <= LIMIT);
	assert_int_equal(s.count + s.rest.flows, FLOWS);
	assert_int_equal(told.n, s.rest.flows);
	for (size_t i = 0; i < s.count; i++) {
		packets += s.flows[i].packets;
		bytes += s.flows[i].bytes;
	}
	packets += s.rest.packets;
	bytes += s.rest.bytes;
	/* every flow once, every 10th twice */
	assert_int_equal(packets, (uint64_t)FLOWS * (FLOWS + 1) / 2 +
					  (uint64_t)(FLOWS / 10) * (FLOWS / 10 + 1) / 2 * 10);
	assert_int_equal(bytes, 100 * packets);
	/* the heaviest flows (added last) kept their detail */
	for (unsigned i = FLOWS - LIMIT / 2; i < FLOWS; i++) {
		struct ct_flow_key k = key_of(i);

		assert_true(ct_flow_set_find(&s, &k) >= 0);
	}
	/* the flows told of are the ones no longer in the set */
	for (size_t i = 0; i < told.n; i++)
		assert_true(ct_flow_set_find(&s, &told.keys[i]) < 0);
	ct_flow_set_free(&s);
}

static void test_burst_log_drop(void **state)
{
	struct ct_burst_log log = {0};
	struct ct_flow_key drop[3] = {key_of(7), key_of(3), key_of(5)};
	size_t left[FLOWS] = {0};

	(void)state;
	for (unsigned r = 0; r < 4; r++)
		for (unsigned i = 0; i < 10; i++) {
			struct ct_flow_burst b = {.key = key_of(i), .start = r, .end = r + 1};

			assert_int_equal(ct_burst_log_add(&log, &b), 0);
		}
	assert_int_equal(ct_burst_log_drop(&log, drop, 3), 12);
	assert_int_equal(log.n, 28);
	for (size_t k = 0; k < log.n; k++)
		left[log.b[k].key.id - 1]++;
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(left[i], i == 3 || i == 5 || i == 7 ? 0 : 4);
	/* the order of what stays is kept */
	assert_int_equal(log.b[0].key.id, 1);
	assert_int_equal(log.b[27].key.id, 10);
	assert_int_equal(ct_burst_log_drop(&log, drop, 0), 0);
	ct_burst_log_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_sums_the_lightest),
		cmocka_unit_test(test_burst_log_drop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
