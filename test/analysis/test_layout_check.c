// SPDX-License-Identifier: MIT
/*
 * A profile's groups of hosts against the wire's (analysis/layout_check.c).
 * The profile: four hosts, 198.18.0.1 .. .4 (hosts 0..3), and transfers
 *
 *   PP  0 -> 1, 1 -> 2      one chain {0, 1, 2}
 *   DP  2 -> 3              one ring {2, 3}
 *   DP  0 -> 1, 0 bytes     carries nothing: no group
 *   TP  3 -> 3              inside a host: never on the wire, no group
 *
 * so per class: TP 0 groups, PP 1, DP 1, EP 0. The wire's groups are built
 * by hand in each test; the expected counts and summary follow from the
 * rules: a wire group is the profile's when every host is the profile's,
 * all in one of its groups, and as many as that group has; a class agrees
 * when the wire shows as many groups as the profile and all alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/classify.h>

#include "classify_internal.h"
#include "flow_builder.h"

static struct ct_addr host_addr[4];

static const struct ct_expect_xfer xfers[] = {
	{.src_host = 0, .dst_host = 1, .cls = CT_CLASS_PP, .bytes = 1e6},
	{.src_host = 1, .dst_host = 2, .cls = CT_CLASS_PP, .bytes = 1e6},
	{.src_host = 2, .dst_host = 3, .cls = CT_CLASS_DP, .bytes = 1e6},
	{.src_host = 0, .dst_host = 1, .cls = CT_CLASS_DP, .bytes = 0},
	{.src_host = 3, .dst_host = 3, .cls = CT_CLASS_TP, .bytes = 1e6},
};

static struct ct_class_expect expect(void)
{
	static const char *const text[4] = {"198.18.0.1", "198.18.0.2", "198.18.0.3", "198.18.0.4"};

	for (int h = 0; h < 4; h++)
		host_addr[h] = addr_of(text[h]);
	return (struct ct_class_expect){.profile = "hand-made",
					.hosts = 4,
					.host_addr = host_addr,
					.xfers = xfers,
					.n_xfers = sizeof(xfers) / sizeof(xfers[0])};
}

/* A wire layout of groups given as (class, "a,b,c": last bytes of 198.18.0.x). */
struct wire {
	struct ct_layout l;
	struct ct_layout_group groups[4];
	struct ct_addr hosts[16];
};

static void wire_add(struct wire *w, uint8_t cls, const char *hosts)
{
	struct ct_layout_group *g = &w->groups[w->l.n_groups++];

	w->l.groups = w->groups;
	w->l.group_hosts = w->hosts;
	*g = (struct ct_layout_group){.cls = cls, .first = w->l.n_group_hosts};
	for (const char *p = hosts; *p;) {
		char text[24], *end;

		snprintf(text, sizeof(text), "198.18.0.%ld", strtol(p, &end, 10));
		w->hosts[w->l.n_group_hosts++] = addr_of(text);
		g->n++;
		p = *end == ',' ? end + 1 : end;
	}
}

/* The wire shows the profile's chain and ring: every class agrees. */
static void test_agree(void **state)
{
	struct ct_class_expect e = expect();
	struct wire w = {0};
	struct ct_layout_check c;

	(void)state;
	wire_add(&w, CT_CLASS_PP, "1,2,3");
	wire_add(&w, CT_CLASS_DP, "3,4");
	assert_int_equal(ct_layout_check(&e, &w.l, &c), 0);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.agree, 1);
	assert_int_equal(c.profile_groups[CT_CLASS_TP], 0);
	assert_int_equal(c.profile_groups[CT_CLASS_PP], 1);
	assert_int_equal(c.profile_groups[CT_CLASS_DP], 1);
	assert_int_equal(c.profile_groups[CT_CLASS_EP], 0);
	assert_int_equal(c.same[CT_CLASS_PP], 1);
	assert_int_equal(c.same[CT_CLASS_DP], 1);
	assert_string_equal(c.summary,
			    "every class's groups of hosts on the wire are the profile's");
}

/*
 * The wire's chain stops at .2 (two hosts where the profile's group has
 * three: not alike), the ring is right, and an EP group joins 198.18.0.9
 * and .10, no hosts of the profile. PP: 1 group, the wire 1, 0 alike; DP
 * agrees; EP: the profile 0 groups, the wire 1, 0 alike, with the reason.
 * (The reason is given when the first host that breaks a group is the
 * unknown one: an EP group {.1, .9} stops at .1, which has no EP group,
 * and says no reason.)
 */
static void test_disagree(void **state)
{
	struct ct_class_expect e = expect();
	struct wire w = {0};
	struct ct_layout_check c;

	(void)state;
	wire_add(&w, CT_CLASS_PP, "1,2");
	wire_add(&w, CT_CLASS_DP, "3,4");
	wire_add(&w, CT_CLASS_EP, "9,10");
	assert_int_equal(ct_layout_check(&e, &w.l, &c), 0);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.agree, 0);
	assert_int_equal(c.wire_groups[CT_CLASS_PP], 1);
	assert_int_equal(c.same[CT_CLASS_PP], 0);
	assert_int_equal(c.same[CT_CLASS_DP], 1);
	assert_int_equal(c.wire_groups[CT_CLASS_EP], 1);
	assert_int_equal(c.same[CT_CLASS_EP], 0);
	assert_string_equal(c.summary,
			    "PP: the profile puts 1 group on the wire, the wire shows 1, 0 alike; "
			    "EP: the profile puts 0 groups on the wire, the wire shows 1, 0 alike "
			    "(an address the profile does not name)");
}

/*
 * The DP ring split the other way: {2, 3} on the wire as {.2, .3}, hosts
 * 1 and 2 of the profile, which are in its PP chain and not in one DP
 * group (host 1 has no DP transfer that carries bytes): not alike.
 */
static void test_wrong_hosts(void **state)
{
	struct ct_class_expect e = expect();
	struct wire w = {0};
	struct ct_layout_check c;

	(void)state;
	wire_add(&w, CT_CLASS_PP, "1,2,3");
	wire_add(&w, CT_CLASS_DP, "2,3");
	assert_int_equal(ct_layout_check(&e, &w.l, &c), 0);
	assert_int_equal(c.agree, 0);
	assert_int_equal(c.same[CT_CLASS_PP], 1);
	assert_int_equal(c.same[CT_CLASS_DP], 0);
	assert_string_equal(c.summary,
			    "DP: the profile puts 1 group on the wire, the wire shows 1, 0 alike");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agree),
		cmocka_unit_test(test_disagree),
		cmocka_unit_test(test_wrong_hosts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
