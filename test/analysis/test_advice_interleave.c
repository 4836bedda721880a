// SPDX-License-Identifier: MIT
/*
 * Interleaving for shared links (analysis/advice_interleave.c) on a
 * hand-made fabric of two jobs with different periods sharing a receiver:
 *
 *   job A, hosts .0.1 and .0.2, every 100 ms:  .0.1 <-> .0.2 [40, 70) ms,
 *                                               .0.1 -> R      [0, 20) ms
 *   job B, hosts .1.1 and .1.2, every 150 ms:  .1.1 <-> .1.2 [60, 110) ms,
 *                                               .1.1 -> R      [0, 20) ms
 *
 * R (198.18.2.1) only receives, so it joins no job (jobs.c) and its
 * downlink is the one link both jobs use. Their common cycle is 300 ms:
 * A on R's link at [0, 20), [100, 120), [200, 220), B at [0, 20),
 * [150, 170): they overlap 20 ms a cycle now. Delaying B by 20-30 ms
 * (or A by 120-130 ms) clears A's bursts in both of B's iterations: no
 * overlap left.
 *
 * The advised shift is checked on the bursts themselves: both trains laid
 * out in time, B delayed by it, their intersection measured interval by
 * interval, not through the phase bins the advice folds them into; and a
 * shift half of B's period off is shown to fail the same check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include <commtap/advice.h>

#include "flow_builder.h"

#define TA	(100 * MS)
#define TB	(150 * MS)
#define ITER_A	30
#define ITER_B	20
#define A_ON	(20 * MS) /* A's bursts toward R, at the start of its iterations */
#define B_ON	(20 * MS) /* B's */
#define MIN_PER 0.02

struct fabric {
	struct ct_burst_log log;
	struct ct_flow_set set;
	struct ct_periodicity per;
	struct ct_report r;
};

static void fabric_make(struct fabric *f)
{
	struct ct_flow_key a12 = roce_key("198.18.0.1", "198.18.0.2", 1);
	struct ct_flow_key a21 = roce_key("198.18.0.2", "198.18.0.1", 2);
	struct ct_flow_key ar = roce_key("198.18.0.1", "198.18.2.1", 3);
	struct ct_flow_key b12 = roce_key("198.18.1.1", "198.18.1.2", 4);
	struct ct_flow_key b21 = roce_key("198.18.1.2", "198.18.1.1", 5);
	struct ct_flow_key br = roce_key("198.18.1.1", "198.18.2.1", 6);

	memset(f, 0, sizeof(*f));
	log_train(&f->log, &a12, TA, ITER_A, 40 * MS, 30 * MS, 300000000);
	log_train(&f->log, &a21, TA, ITER_A, 40 * MS, 30 * MS, 300000000);
	log_train(&f->log, &ar, TA, ITER_A, 0, A_ON, 100000000);
	log_train(&f->log, &b12, TB, ITER_B, 60 * MS, 50 * MS, 500000000);
	log_train(&f->log, &b21, TB, ITER_B, 60 * MS, 50 * MS, 500000000);
	log_train(&f->log, &br, TB, ITER_B, 0, B_ON, 150000000);
	set_of_log(&f->set, &f->log);
	assert_int_equal(ct_periodicity_compute(&f->set, &f->log, MIN_PER, &f->per), 0);
	f->r.flows = f->set;
	f->r.periodicity = &f->per;
	f->r.nic_gbps = 100;
}

static void fabric_free(struct fabric *f)
{
	ct_periodicity_free(&f->per);
	ct_flow_set_free(&f->set);
	ct_burst_log_free(&f->log);
}

/*
 * Seconds both trains toward R are on over the common window [0, 3 s),
 * B's delayed by shift_s (modulo its period): interval by interval.
 */
static double trains_overlap(double shift_s)
{
	double total = 0, d = shift_s - (double)TB / 1e9 * (long)(shift_s / ((double)TB / 1e9));

	for (int i = -1; i < ITER_A + 1; i++)
		for (int k = -1; k < ITER_B + 1; k++) {
			double a0 = i * (double)TA / 1e9, a1 = a0 + (double)A_ON / 1e9;
			double b0 = k * (double)TB / 1e9 + d, b1 = b0 + (double)B_ON / 1e9;
			double s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;

			if (s < 0)
				s = 0;
			if (e > 3.0)
				e = 3.0;
			if (e > s)
				total += e - s;
		}
	return total / 3.0;
}

static void test_cycle(void **state)
{
	(void)state;
	assert_near(ct_interleave_cycle(0.1, 0.15), 0.3, 1e-9);
	assert_near(ct_interleave_cycle(0.15, 0.1), 0.3, 1e-9);
	assert_near(ct_interleave_cycle(0.1, 0.1), 0.1, 1e-9);
	/* 17 x 0.1 against 0.1 x 17/16: no cycle within 16 iterations of either */
	assert_true(ct_interleave_cycle(0.1, 0.1 * 17 / 16 * (1 + 0.003)) == 0 ||
		    ct_interleave_cycle(0.1, 0.1 * 17 / 16 * (1 + 0.003)) > 1.5);
}

/* The folded overlap of two hand-made profiles against the closed form. */
static void test_overlap_profiles(void **state)
{
	struct ct_interleave_profile a = {.period_s = 0.1}, b = {.period_s = 0.15};

	(void)state;
	for (unsigned i = 0; i < CT_INTERLEAVE_BINS; i++) {
		a.on[i] = i < CT_INTERLEAVE_BINS / 5;	   /* [0, 20) ms of 100 */
		b.on[i] = i < CT_INTERLEAVE_BINS * 2 / 15; /* [0, 19.9) ms of 150 */
	}
	/* aligned: [0, 20) of the 300 ms cycle: 1/15 */
	assert_near(ct_interleave_overlap(&a, &b, 0.3, 0), 20.0 / 300, 0.002);
	/* B 25 ms later: [25, 45) and [175, 195) miss A's bursts */
	assert_near(ct_interleave_overlap(&a, &b, 0.3, 0.025), 0, 0.002);
	/* no common cycle: the product of the shares on */
	assert_near(ct_interleave_overlap(&a, &b, 0, 0.025), 0.2 * 34 / 256, 0.002);
}

static void test_fabric_shift(void **state)
{
	struct fabric f;
	struct ct_advice a;
	const struct ct_advice_interleave *il;
	const struct ct_interleave_link *l;
	double now, after, wrong;

	(void)state;
	fabric_make(&f);
	assert_int_equal(f.per.n_jobs, 2);
	assert_int_equal(ct_advice_compute(&f.r, &a), 0);
	il = &a.interleave;
	if (il->reason)
		print_message("%s\n", il->reason);
	assert_null(il->reason);
	assert_int_equal(il->n_jobs, 2);
	assert_int_equal(il->n_links, 1);
	l = &il->links[0];
	assert_true(l->rx);
	/* the job with the most bytes first: B (1.15 GB an iteration) */
	assert_near(ct_periodicity_job_period(&f.per, 0)->period_s, 0.15, 0.001);
	assert_near(il->cycle_s[1], 0.3, 0.003);
	/* now: 20 ms of each 300 both on, measured and folded alike */
	assert_near(l->now, 20.0 / 300, 0.005);
	assert_near(l->now_model, 20.0 / 300, 0.005);
	assert_true(l->after <= l->now / 2);
	assert_near(il->shift_s[0], 0, 1e-12);

	/* the advice moves job 1 (A) against job 0 (B): B against A is the opposite */
	now = trains_overlap(0);
	after = trains_overlap(0.15 - fmod(il->shift_s[1], 0.15));
	wrong = trains_overlap(0.15 - fmod(il->shift_s[1] + 0.075, 0.15));
	print_message("overlap on R's link: now %.4f, after the shift of %.4f s %.4f, "
		      "half a period off %.4f\n",
		      now, il->shift_s[1], after, wrong);
	assert_near(now, 20.0 / 300, 0.002);
	assert_true(after <= now / 2);
	assert_false(wrong <= now / 2);
	ct_advice_free(&a);
	fabric_free(&f);
}

/* The section: present with two jobs, each figure as computed. */
static void test_json(void **state)
{
	struct fabric f;
	struct ct_advice a;
	json_object *o, *il, *v;

	(void)state;
	fabric_make(&f);
	assert_int_equal(ct_advice_compute(&f.r, &a), 0);
	o = ct_advice_json(&a);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "interleave", &il));
	assert_true(json_object_object_get_ex(il, "links", &v));
	assert_int_equal(json_object_array_length(v), 1);
	v = json_object_array_get_idx(v, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(v, "address")),
			    "198.18.2.1");
	assert_string_equal(json_object_get_string(json_object_object_get(v, "direction")), "rx");
	assert_true(json_object_object_get_ex(il, "overlap_after", &v));
	assert_near(json_object_get_double(v), a.interleave.after, 1e-12);
	json_object_put(o);
	ct_advice_free(&a);
	fabric_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_overlap_profiles),
		cmocka_unit_test(test_fabric_shift),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
