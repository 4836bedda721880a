// SPDX-License-Identifier: MIT
/*
 * Classification by a profile (analysis/classify_profile.c through
 * ct_classify with a struct ct_class_expect): the classes the profile sends
 * between a flow's two hosts, and when they run in the iteration when
 * there are several.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/classify.h>

#include "flow_builder.h"

#define H0 "198.18.0.5" /* the profile's host 0 */
#define H1 "198.18.0.3" /* host 1: listed after host 0 though its address is lower */
#define H2 "198.18.0.4" /* host 2 */
#define XX "198.18.0.9" /* no host of the profile */

static const struct ct_addr *profile_hosts(void)
{
	static struct ct_addr h[3];

	h[0] = addr_of(H0);
	h[1] = addr_of(H1);
	h[2] = addr_of(H2);
	return h;
}

static void assert_class(const struct ct_classification *c, const struct ct_flow_set *set,
			 const struct ct_flow_key *k, enum ct_class cls, enum ct_class_source src)
{
	const struct ct_flow_class *fc = &c->flows[set_index(set, k)];

	if (fc->cls != cls || fc->source != src)
		fail_msg("class %s source %d (%s), expected %s source %d", ct_class_name(fc->cls),
			 fc->source, fc->evidence, ct_class_name(cls), src);
}

/*
 * The profile: host 0 -> host 1 carries PP only, host 1 -> host 2 DP only.
 * Flows: H0 -> H1 (PP), its reverse H1 -> H0 with PSNs answering it and
 * fewer bytes (PP by connection), H1 -> H2 (DP), H2 -> H0 (the profile
 * sends nothing that way: Other) and XX -> H2 (not a host of the profile:
 * Other). No periodicity is needed: one class a pair.
 */
static void test_one_class_per_pair(void **state)
{
	struct ct_flow_key pp = roce_key(H0, H1, 1), back = roce_key(H1, H0, 2);
	struct ct_flow_key dp = roce_key(H1, H2, 3), none = roce_key(H2, H0, 4);
	struct ct_flow_key stranger = roce_key(XX, H2, 5);
	struct ct_flow_summary s[5] = {
		summary_of(&pp, 1 << 20, T0, T0 + 10 * MS),
		summary_of(&back, 6400, T0, T0 + 10 * MS),
		summary_of(&dp, 1 << 20, T0, T0 + 10 * MS),
		summary_of(&none, 1 << 20, T0, T0 + 10 * MS),
		summary_of(&stranger, 1 << 20, T0, T0 + 10 * MS),
	};
	const struct ct_expect_xfer xfers[2] = {
		{.src_rank = 1,
		 .dst_rank = 2,
		 .src_host = 1,
		 .dst_host = 2,
		 .cls = CT_CLASS_DP,
		 .phase_start = 0.7,
		 .phase_end = 0.9,
		 .bytes = 4e6},
		{.src_rank = 0,
		 .dst_rank = 1,
		 .src_host = 0,
		 .dst_host = 1,
		 .cls = CT_CLASS_PP,
		 .phase_start = 0.1,
		 .phase_end = 0.2,
		 .bytes = 1e6},
	};
	const struct ct_class_expect expect = {"test", 3, profile_hosts(), xfers, 2};
	struct ct_classification c;
	struct ct_flow_set set;

	(void)state;
	s[0].seen |= CT_SEEN_REQ_PSN;
	s[0].req_first_psn = 10;
	s[0].req_last_psn = 90;
	s[1].seen |= CT_SEEN_RESP_PSN;
	s[1].resp_first_psn = 10;
	s[1].resp_last_psn = 90;
	ct_flow_set_init(&set);
	for (int i = 0; i < 5; i++)
		set_add(&set, &s[i]);
	ct_flow_set_sort(&set);
	ct_flow_set_pair(&set, NULL, 0);
	assert_int_equal(ct_classify(&set, NULL, NULL, &expect, &c), 0);
	assert_string_equal(c.method, "profile");
	assert_int_equal(c.n, 5);
	assert_class(&c, &set, &pp, CT_CLASS_PP, CT_CLASS_BY_PROFILE);
	assert_class(&c, &set, &back, CT_CLASS_PP, CT_CLASS_BY_CONNECTION);
	assert_class(&c, &set, &dp, CT_CLASS_DP, CT_CLASS_BY_PROFILE);
	assert_class(&c, &set, &none, CT_CLASS_OTHER, CT_CLASS_BY_PROFILE);
	assert_class(&c, &set, &stranger, CT_CLASS_OTHER, CT_CLASS_BY_PROFILE);
	ct_classification_free(&c);
	ct_flow_set_free(&set);
}

/*
 * Host 0 -> host 1 carries both PP and DP (ranks 0 -> 1), once an
 * iteration each, so that only when they run tells them apart. The
 * profile's iteration starts with the forward pass: PP at phases 0.05 to
 * 0.15 (2 MB), DP at 0.45 to 0.55 (5 MB). The capture, every 100 ms for 20
 * iterations: QP 1 sends 2 MB in 10 ms at 5 ms, QP 2 sends 5 MB in 10 ms at
 * 45 ms. Wherever the observed iterations start, the classifier slides
 * the observed phases onto the profile's; then QP 1's bursts fall when PP
 * runs: PP; QP 2's when DP runs: DP.
 */
static const struct ct_expect_xfer two_classes[2] = {
	{.dst_rank = 1,
	 .dst_host = 1,
	 .cls = CT_CLASS_PP,
	 .phase_start = 0.05,
	 .phase_end = 0.15,
	 .bytes = 2e6},
	{.dst_rank = 1,
	 .dst_host = 1,
	 .cls = CT_CLASS_DP,
	 .phase_start = 0.45,
	 .phase_end = 0.55,
	 .bytes = 5e6},
};

/* from_dp: the capture begins with the first DP burst (PP from the next iteration on). */
static void log_two_classes(struct ct_burst_log *log, const struct ct_flow_key *pp,
			    const struct ct_flow_key *dp, int from_dp)
{
	log_train(log, pp, 100 * MS, 20 - from_dp, (5 + 100 * from_dp) * MS, 10 * MS, 2000000);
	log_train(log, dp, 100 * MS, 20, 45 * MS, 10 * MS, 5000000);
}

static void classify_two_classes(int from_dp)
{
	struct ct_flow_key pp = roce_key(H0, H1, 1), dp = roce_key(H0, H1, 2);
	const struct ct_class_expect expect = {"test", 3, profile_hosts(), two_classes, 2};
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	log_two_classes(&log, &pp, &dp, from_dp);
	set_of_log(&set, &log);
	assert_int_equal(ct_periodicity_compute(&set, &log, 0.02, &per), 0);
	assert_true(per.job.periodic);
	assert_near(per.job.period_s, 0.1, 0.0005);
	/* otherwise this case would not need the phases slid */
	if (from_dp && fabs(per.flows[set_index(&set, &dp)].phase_first - 0.45) < 0.1)
		fail_msg("the observed iterations start where the profile's do");
	assert_int_equal(ct_classify(&set, &per, NULL, &expect, &c), 0);
	assert_class(&c, &set, &pp, CT_CLASS_PP, CT_CLASS_BY_PROFILE);
	assert_class(&c, &set, &dp, CT_CLASS_DP, CT_CLASS_BY_PROFILE);
	assert_true(c.flows[set_index(&set, &pp)].confidence > 0.5);
	assert_true(c.flows[set_index(&set, &dp)].confidence > 0.5);
	ct_classification_free(&c);
	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/* The capture begins with the forward pass, as the profile's iteration does. */
static void test_two_classes_by_phase(void **state)
{
	(void)state;
	classify_two_classes(0);
}

/* It begins with DP, which the observed iterations then start with. */
static void test_two_classes_by_phase_shifted(void **state)
{
	(void)state;
	classify_two_classes(1);
}

/*
 * The same flows without a period to place them in: the pair's largest
 * class by the profile's bytes, DP's 5 MB over PP's 2 MB, for both.
 */
static void test_two_classes_unplaced(void **state)
{
	struct ct_flow_key pp = roce_key(H0, H1, 1), dp = roce_key(H0, H1, 2);
	const struct ct_class_expect expect = {"test", 3, profile_hosts(), two_classes, 2};
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_flow_set set;

	(void)state;
	log_two_classes(&log, &pp, &dp, 0);
	set_of_log(&set, &log);
	assert_int_equal(ct_classify(&set, NULL, NULL, &expect, &c), 0);
	assert_class(&c, &set, &pp, CT_CLASS_DP, CT_CLASS_BY_PROFILE);
	assert_class(&c, &set, &dp, CT_CLASS_DP, CT_CLASS_BY_PROFILE);
	assert_near(c.flows[set_index(&set, &dp)].confidence, 5.0 / 7, 1e-9);
	ct_classification_free(&c);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/*
 * Rail-optimized hosts: two NICs each (host 0: 198.18.1.1 and .2.1, host 1:
 * 198.18.1.2 and .2.2), the profile's hosts named by other addresses. The
 * profile sends PP from host 0 to host 1. Both rails' flows are the hosts'
 * (PP); a flow from an address of no NIC of the profile is Other. Before
 * the NICs were looked up, every rail flow was Other (10.6-13.4% of bytes
 * right on the development matrix's rail cases with their profile).
 */
static void test_rail_nics(void **state)
{
	static struct ct_addr hosts[2], nics[4];
	struct ct_flow_key rail0 = roce_key("198.18.1.1", "198.18.1.2", 1);
	struct ct_flow_key rail1 = roce_key("198.18.2.1", "198.18.2.2", 2);
	struct ct_flow_key stranger = roce_key("198.18.3.1", "198.18.1.2", 3);
	struct ct_flow_summary s[3] = {
		summary_of(&rail0, 1 << 20, T0, T0 + 10 * MS),
		summary_of(&rail1, 1 << 20, T0, T0 + 10 * MS),
		summary_of(&stranger, 1 << 20, T0, T0 + 10 * MS),
	};
	const struct ct_expect_xfer xfers[1] = {
		{.dst_rank = 1, .dst_host = 1, .cls = CT_CLASS_PP, .phase_end = 1, .bytes = 1e6},
	};
	struct ct_class_expect expect = {"rails", 2, hosts, xfers, 1};
	struct ct_classification c;
	struct ct_flow_set set;

	(void)state;
	hosts[0] = addr_of("198.18.0.1");
	hosts[1] = addr_of("198.18.0.2");
	nics[0] = addr_of("198.18.1.1"); /* host 0, NIC 0 */
	nics[1] = addr_of("198.18.2.1"); /* host 0, NIC 1 */
	nics[2] = addr_of("198.18.1.2"); /* host 1, NIC 0 */
	nics[3] = addr_of("198.18.2.2"); /* host 1, NIC 1 */
	expect.nic_addr = nics;
	expect.nics_per_host = 2;
	ct_flow_set_init(&set);
	for (int i = 0; i < 3; i++)
		set_add(&set, &s[i]);
	ct_flow_set_sort(&set);
	ct_flow_set_pair(&set, NULL, 0);
	assert_int_equal(ct_classify(&set, NULL, NULL, &expect, &c), 0);
	assert_class(&c, &set, &rail0, CT_CLASS_PP, CT_CLASS_BY_PROFILE);
	assert_class(&c, &set, &rail1, CT_CLASS_PP, CT_CLASS_BY_PROFILE);
	assert_class(&c, &set, &stranger, CT_CLASS_OTHER, CT_CLASS_BY_PROFILE);
	ct_classification_free(&c);
	ct_flow_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_class_per_pair),
		cmocka_unit_test(test_rail_nics),
		cmocka_unit_test(test_two_classes_by_phase),
		cmocka_unit_test(test_two_classes_by_phase_shifted),
		cmocka_unit_test(test_two_classes_unplaced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
