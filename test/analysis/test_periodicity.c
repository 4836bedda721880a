// SPDX-License-Identifier: MIT
/*
 * A report's periodicity (analysis/periodicity.c, flow_periodicity.c) and
 * the congestion-control figures per receiver (cc.c) on hand-made bursts
 * whose period, phases, incast and rates are worked out below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/traffic_class.h>

#include "flow_builder.h"

#define PERIOD	  (100 * MS)
#define ITERS	  20
#define MIN_PER_S 0.02 /* no iteration shorter than 20 ms claimed */

static const struct ct_flow_periodicity *
fp_of(const struct ct_periodicity *p, const struct ct_flow_set *set, const struct ct_flow_key *k)
{
	return &p->flows[set_index(set, k)];
}

/*
 * Every 100 ms for 20 iterations (ms into each):
 *   X  A -> B  [0, 20)  20 MB    the iteration's start: after the longest
 *                                quiet phase, [65, 100)
 *   Z  B -> C  [35, 38) and [60, 65), 1 MB each
 *   Y  C -> D  [40, 50)  5 MB
 *   W  D -> A  [70, 72) in iterations 3 and 7 only
 * So the job's period is 0.1 s over 20 iterations starting at X; Y starts at
 * phase 0.40 every iteration with 5 MB each (no variation) and a period of
 * its own of 0.1 s; Z's first burst is at 0.35 and its last at 0.60; W
 * starts at 0.70 but in two iterations only, too few to be periodic.
 */
static void test_flow_phase_and_period(void **state)
{
	struct ct_flow_key x = roce_key("198.18.0.1", "198.18.0.2", 1);
	struct ct_flow_key z = roce_key("198.18.0.2", "198.18.0.3", 3);
	struct ct_flow_key y = roce_key("198.18.0.3", "198.18.0.4", 2);
	struct ct_flow_key w = roce_key("198.18.0.4", "198.18.0.1", 4);
	struct ct_burst_log log = {0};
	struct ct_periodicity per;
	const struct ct_flow_periodicity *fp;
	struct ct_flow_set set;

	(void)state;
	log_train(&log, &x, PERIOD, ITERS, 0, 20 * MS, 20000000);
	log_train(&log, &z, PERIOD, ITERS, 35 * MS, 3 * MS, 1000000);
	log_train(&log, &z, PERIOD, ITERS, 60 * MS, 5 * MS, 1000000);
	log_train(&log, &y, PERIOD, ITERS, 40 * MS, 10 * MS, 5000000);
	log_burst(&log, &w, T0 + 3 * PERIOD + 70 * MS, T0 + 3 * PERIOD + 72 * MS, 100000);
	log_burst(&log, &w, T0 + 7 * PERIOD + 70 * MS, T0 + 7 * PERIOD + 72 * MS, 100000);
	set_of_log(&set, &log);
	assert_int_equal(ct_periodicity_compute(&set, &log, MIN_PER_S, &per), 0);

	assert_true(per.job.periodic);
	assert_near(per.job.period_s, 0.1, 0.0005);
	assert_int_equal(per.job.iterations, ITERS);
	assert_int_equal(per.bursts, 4 * ITERS + 2);
	assert_int_equal(per.n_flows, 4);

	fp = fp_of(&per, &set, &y);
	assert_true(fp->periodic);
	assert_near(fp->period_s, 0.1, 0.0005);
	assert_near(fp->phase_first, 0.40, 0.005);
	assert_near(fp->phase_last, 0.40, 0.005);
	assert_int_equal(fp->n_bursts, ITERS);
	assert_int_equal(fp->volumes.iterations, ITERS);
	for (size_t i = 0; i < ITERS; i++)
		assert_near(fp->volumes.bytes[i], 5e6, 0.5);
	assert_near(fp->volumes.bytes_cv, 0, 1e-9);

	fp = fp_of(&per, &set, &x);
	assert_near(fp->phase_first, 0, 0.005);
	/* X alone: 20 MB in 20 ms is 8 Gb/s, on 20 ms of every 100 */
	assert_near(fp->onoff.peak_gbps, 8, 0.01);
	assert_near(fp->onoff.on_s.median, 0.020, 1e-9);
	assert_near(fp->onoff.off_s.median, 0.080, 1e-9);

	fp = fp_of(&per, &set, &z);
	assert_true(fp->periodic);
	assert_near(fp->phase_first, 0.35, 0.005);
	assert_near(fp->phase_last, 0.60, 0.005);
	assert_int_equal(fp->n_bursts, 2 * ITERS);

	fp = fp_of(&per, &set, &w);
	assert_false(fp->periodic);
	assert_near(fp->phase_first, 0.70, 0.005);
	assert_int_equal(fp->n_bursts, 2);

	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/*
 * Bursts at random times, no two 100 ms apart more than by chance: no
 * period, and every flow's figures say so (no phase).
 */
static void test_no_period(void **state)
{
	struct ct_flow_key k = roce_key("198.18.0.1", "198.18.0.2", 1);
	struct ct_burst_log log = {0};
	struct ct_periodicity per;
	struct ct_flow_set set;
	uint64_t rng = 99, t = T0;

	(void)state;
	for (int i = 0; i < 40; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		t += 5 * MS + (rng >> 33) % (200 * MS);
		log_burst(&log, &k, t, t + 2 * MS, 1000000);
	}
	set_of_log(&set, &log);
	assert_int_equal(ct_periodicity_compute(&set, &log, MIN_PER_S, &per), 0);
	assert_false(per.job.periodic);
	assert_false(per.flows[0].periodic);
	assert_near(per.flows[0].phase_first, -1, 0);
	assert_int_equal(per.n_jobs, 0);
	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/*
 * Receiver R (198.18.0.100) and senders S1..S4 (.11 .. .14), every 100 ms
 * for 20 iterations (ms into each; rate = bytes * 8 / duration):
 *   S1 -> R QP 1  [0, 20)   7.5 MB  3 Gb/s  } one NIC: joined [0, 30),
 *   S1 -> R QP 5  [10, 30)  3.75 MB 1.5 Gb/s} 11.25 MB, 3 Gb/s
 *   S2 -> R       [10, 40)  7.5 MB  2 Gb/s
 *   S3 -> R       [20, 50)  3.75 MB 1 Gb/s
 *   S4 -> R       [60, 70)  5 MB    4 Gb/s
 * In [20, 30) S1, S2 and S3 are on together: incast degree 3, peak
 * 3 + 2 + 1 = 6 Gb/s (adding S1's QPs as if in parallel would give 6.5 in
 * [10, 20)); S4 alone is 4. R hears 4 senders. Traffic toward R is on
 * [0, 50) and [60, 70): 60 ms an iteration, 1.2 s in all. The senders'
 * first starts in an iteration are 0, 10, 20 and 60 ms: a spread of 60 ms.
 * R -> S1 (no bursts) carried 120 CNPs: 100 a second of R's on time. Of
 * the 5000 packets toward R (1000 a flow, set below), S1's QP 1 had 100
 * CE-marked: 2 %.
 */
static void test_receiver_incast(void **state)
{
	struct ct_flow_key s1a = roce_key("198.18.0.11", "198.18.0.100", 1);
	struct ct_flow_key s1b = roce_key("198.18.0.11", "198.18.0.100", 5);
	struct ct_flow_key s2 = roce_key("198.18.0.12", "198.18.0.100", 1);
	struct ct_flow_key s3 = roce_key("198.18.0.13", "198.18.0.100", 1);
	struct ct_flow_key s4 = roce_key("198.18.0.14", "198.18.0.100", 1);
	struct ct_flow_key cnp = roce_key("198.18.0.100", "198.18.0.11", 7);
	const struct ct_flow_key *into_r[] = {&s1a, &s1b, &s2, &s3, &s4};
	struct ct_burst_log log = {0};
	struct ct_periodicity per;
	const struct ct_receiver_cc *r;
	struct ct_flow_summary back;
	struct ct_flow_set set;

	(void)state;
	log_train(&log, &s1a, PERIOD, ITERS, 0, 20 * MS, 7500000);
	log_train(&log, &s1b, PERIOD, ITERS, 10 * MS, 20 * MS, 3750000);
	log_train(&log, &s2, PERIOD, ITERS, 10 * MS, 30 * MS, 7500000);
	log_train(&log, &s3, PERIOD, ITERS, 20 * MS, 30 * MS, 3750000);
	log_train(&log, &s4, PERIOD, ITERS, 60 * MS, 10 * MS, 5000000);
	set_of_log(&set, &log);
	back = summary_of(&cnp, 6400, T0, T0 + ITERS * PERIOD);
	back.cnp = 120;
	set_add(&set, &back);
	ct_flow_set_sort(&set);
	ct_flow_set_pair(&set, NULL, 0);
	for (int i = 0; i < 5; i++) {
		struct ct_flow_summary *f = &set.flows[set_index(&set, into_r[i])];

		f->packets = 1000;
		f->ecn_ce = i == 0 ? 100 : 0;
	}
	assert_int_equal(ct_periodicity_compute(&set, &log, MIN_PER_S, &per), 0);
	assert_true(per.job.periodic);
	assert_near(per.job.period_s, 0.1, 0.0005);

	/* receivers in address order: S1 (.11, from R's CNP flow), then R (.100) */
	assert_int_equal(per.n_receivers, 2);
	r = &per.receivers[0];
	assert_memory_equal(&r->host, &cnp.dst, sizeof(r->host));
	assert_int_equal(r->senders, 1);
	assert_int_equal(r->incast_degree, 0);
	r = &per.receivers[1];
	assert_memory_equal(&r->host, &s1a.dst, sizeof(r->host));
	assert_int_equal(r->cls, -1);
	assert_int_equal(r->senders, 4);
	assert_int_equal(r->incast_degree, 3);
	assert_near(r->peak_gbps, 6, 0.001);
	assert_near(r->onoff.total_on_s, 1.2, 1e-9);
	assert_near(r->start_spread_s, 0.060, 1e-9);
	assert_near(r->cnp_per_s_on, 100, 1e-6);
	assert_near(r->ecn_ce_fraction, 0.02, 1e-12);

	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/*
 * The same receiver split by class: S1 and S2 carry DP, S3 and S4 EP,
 * R's CNP flow Other. DP into R: S1 (3 Gb/s, [0, 30)) and S2 (2 Gb/s,
 * [10, 40)) overlap: incast 2, peak 5 Gb/s. EP into R: S3 [20, 50) and S4
 * [60, 70) never overlap: incast 1, peak S4's 4 Gb/s. Other: S1 hears R.
 * Listed by class, then host: DP/R, EP/R, Other/S1.
 */
static void test_receiver_by_class(void **state)
{
	struct ct_flow_key s1a = roce_key("198.18.0.11", "198.18.0.100", 1);
	struct ct_flow_key s1b = roce_key("198.18.0.11", "198.18.0.100", 5);
	struct ct_flow_key s2 = roce_key("198.18.0.12", "198.18.0.100", 1);
	struct ct_flow_key s3 = roce_key("198.18.0.13", "198.18.0.100", 1);
	struct ct_flow_key s4 = roce_key("198.18.0.14", "198.18.0.100", 1);
	struct ct_flow_key cnp = roce_key("198.18.0.100", "198.18.0.11", 7);
	struct ct_burst_log log = {0};
	struct ct_periodicity per;
	struct ct_flow_summary back;
	struct ct_flow_set set;
	uint8_t cls[6];

	(void)state;
	log_train(&log, &s1a, PERIOD, ITERS, 0, 20 * MS, 7500000);
	log_train(&log, &s1b, PERIOD, ITERS, 10 * MS, 20 * MS, 3750000);
	log_train(&log, &s2, PERIOD, ITERS, 10 * MS, 30 * MS, 7500000);
	log_train(&log, &s3, PERIOD, ITERS, 20 * MS, 30 * MS, 3750000);
	log_train(&log, &s4, PERIOD, ITERS, 60 * MS, 10 * MS, 5000000);
	set_of_log(&set, &log);
	back = summary_of(&cnp, 6400, T0, T0 + ITERS * PERIOD);
	set_add(&set, &back);
	ct_flow_set_sort(&set);
	assert_int_equal(set.count, 6);
	cls[set_index(&set, &s1a)] = CT_CLASS_DP;
	cls[set_index(&set, &s1b)] = CT_CLASS_DP;
	cls[set_index(&set, &s2)] = CT_CLASS_DP;
	cls[set_index(&set, &s3)] = CT_CLASS_EP;
	cls[set_index(&set, &s4)] = CT_CLASS_EP;
	cls[set_index(&set, &cnp)] = CT_CLASS_OTHER;
	assert_int_equal(ct_periodicity_compute(&set, &log, MIN_PER_S, &per), 0);
	assert_int_equal(ct_periodicity_cc_by_class(&per, &set, cls), 0);

	assert_int_equal(per.n_class_receivers, 3);
	assert_int_equal(per.class_receivers[0].cls, CT_CLASS_DP);
	assert_memory_equal(&per.class_receivers[0].host, &s1a.dst, sizeof(struct ct_addr));
	assert_int_equal(per.class_receivers[0].senders, 2);
	assert_int_equal(per.class_receivers[0].incast_degree, 2);
	assert_near(per.class_receivers[0].peak_gbps, 5, 0.001);
	assert_int_equal(per.class_receivers[1].cls, CT_CLASS_EP);
	assert_int_equal(per.class_receivers[1].senders, 2);
	assert_int_equal(per.class_receivers[1].incast_degree, 1);
	assert_near(per.class_receivers[1].peak_gbps, 4, 0.001);
	assert_int_equal(per.class_receivers[2].cls, CT_CLASS_OTHER);
	assert_memory_equal(&per.class_receivers[2].host, &cnp.dst, sizeof(struct ct_addr));
	assert_int_equal(per.class_receivers[2].senders, 1);

	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flow_phase_and_period),
		cmocka_unit_test(test_no_period),
		cmocka_unit_test(test_receiver_incast),
		cmocka_unit_test(test_receiver_by_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
