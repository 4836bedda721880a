// SPDX-License-Identifier: MIT
/*
 * Ranking a report's hosts (analysis/hosts.c): every address a flow has,
 * once, in address order, and each flow's source and destination by rank.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flow_builder.h"
#include "periodicity_internal.h"

static void assert_addr(const struct ct_addr *got, const char *want)
{
	struct ct_addr w = addr_of(want);
	char text[64];

	if (memcmp(got, &w, sizeof(w)))
		fail_msg("address %s, expected %s", ct_addr_format(got, text, sizeof(text)), want);
}

/*
 * Three hosts met in the order .10, .9, .200 (by text "198.18.0.10" sorts
 * before "198.18.0.9"; by address .9 < .10 < .200): ranks 0 = .9,
 * 1 = .10, 2 = .200. Flows: .10 -> .9, .200 -> .10, .9 -> .200, .10 -> .200.
 */
static void test_three_hosts_in_address_order(void **state)
{
	static const char *const flows[][2] = {
		{"198.18.0.10", "198.18.0.9"},
		{"198.18.0.200", "198.18.0.10"},
		{"198.18.0.9", "198.18.0.200"},
		{"198.18.0.10", "198.18.0.200"},
	};
	static const uint32_t src_rank[] = {1, 2, 0, 1}, dst_rank[] = {0, 1, 2, 2};
	struct ct_flow_set set;
	struct ct_hosts h = {0};

	(void)state;
	ct_flow_set_init(&set);
	for (unsigned i = 0; i < 4; i++) {
		struct ct_flow_key k = roce_key(flows[i][0], flows[i][1], 0x100 + i);
		struct ct_flow_summary s = summary_of(&k, 1000, T0, T0 + MS);

		set_add(&set, &s);
	}
	assert_int_equal(ct_hosts_rank(&set, &h), 0);
	assert_int_equal(h.n, 3);
	assert_addr(&h.addr[0], "198.18.0.9");
	assert_addr(&h.addr[1], "198.18.0.10");
	assert_addr(&h.addr[2], "198.18.0.200");
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(h.src[i], src_rank[i]);
		assert_int_equal(h.dst[i], dst_rank[i]);
	}
	ct_hosts_free(&h);
	ct_flow_set_free(&set);
}

/*
 * 300 hosts 198.18.1.0 .. 198.18.2.43 (rank r is 198.18.0.0 + 256 + r),
 * met in a scrambled order (r = 7 i mod 300, 7 and 300 coprime), each
 * sending to the next host in address order (the last to the first) and
 * to itself plus 150 (both directions of the address pair seen): every
 * host once, ranks in address order, more hosts than the table's first
 * size so it grows.
 */
static void test_many_hosts_scrambled(void **state)
{
	const unsigned n = 300;
	struct ct_flow_set set;
	struct ct_hosts h = {0};
	char src[32], dst[32];

	(void)state;
	ct_flow_set_init(&set);
	for (unsigned i = 0; i < n; i++) {
		unsigned r = 7 * i % n, next = (r + 1) % n, far = (r + 150) % n;
		struct ct_flow_key k;
		struct ct_flow_summary s;

		snprintf(src, sizeof(src), "198.18.%u.%u", 1 + r / 256, r % 256);
		snprintf(dst, sizeof(dst), "198.18.%u.%u", 1 + next / 256, next % 256);
		k = roce_key(src, dst, 1);
		s = summary_of(&k, 1000, T0, T0 + MS);
		set_add(&set, &s);
		snprintf(dst, sizeof(dst), "198.18.%u.%u", 1 + far / 256, far % 256);
		k = roce_key(src, dst, 2);
		s = summary_of(&k, 1000, T0, T0 + MS);
		set_add(&set, &s);
	}
	assert_int_equal(set.count, 2 * n);
	assert_int_equal(ct_hosts_rank(&set, &h), 0);
	assert_int_equal(h.n, n);
	for (unsigned r = 0; r < n; r++) {
		snprintf(src, sizeof(src), "198.18.%u.%u", 1 + r / 256, r % 256);
		assert_addr(&h.addr[r], src);
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned r = 7 * i % n;

		assert_int_equal(h.src[2 * i], r);
		assert_int_equal(h.dst[2 * i], (r + 1) % n);
		assert_int_equal(h.src[2 * i + 1], r);
		assert_int_equal(h.dst[2 * i + 1], (r + 150) % n);
	}
	ct_hosts_free(&h);
	ct_flow_set_free(&set);
}

/* No flows, no hosts. */
static void test_empty(void **state)
{
	struct ct_flow_set set;
	struct ct_hosts h = {0};

	(void)state;
	ct_flow_set_init(&set);
	assert_int_equal(ct_hosts_rank(&set, &h), 0);
	assert_int_equal(h.n, 0);
	ct_hosts_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_hosts_in_address_order),
		cmocka_unit_test(test_many_hosts_scrambled),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
