// SPDX-License-Identifier: MIT
/*
 * Jobs on a shared fabric (analysis/jobs.c): groups of hosts with periods
 * of their own, the busiest first; a storage server that only takes
 * checkpoints bridges no two jobs and joins none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow_builder.h"

#define MIN_PER_S 0.02

/* Job 1, every 100 ms for 20 iterations: a ring A -> B -> C -> A, 10 MB in 10 ms each. */
#define A "198.18.1.1"
#define B "198.18.1.2"
#define C "198.18.1.3"
/* Job 2, every 70 ms for 28 iterations from 3 ms on: D -> E, then E -> D, 4 MB each. */
#define D "198.18.0.1"
#define E "198.18.0.2"

static void log_ring(struct ct_burst_log *log)
{
	struct ct_flow_key ab = roce_key(A, B, 1), bc = roce_key(B, C, 1), ca = roce_key(C, A, 1);

	log_train(log, &ab, 100 * MS, 20, 0, 10 * MS, 10000000);
	log_train(log, &bc, 100 * MS, 20, 10 * MS, 10 * MS, 10000000);
	log_train(log, &ca, 100 * MS, 20, 20 * MS, 10 * MS, 10000000);
}

static void log_pair(struct ct_burst_log *log)
{
	struct ct_flow_key de = roce_key(D, E, 1), ed = roce_key(E, D, 1);

	log_train(log, &de, 70 * MS, 28, 3 * MS, 10 * MS, 4000000);
	log_train(log, &ed, 70 * MS, 28, 18 * MS, 10 * MS, 4000000);
}

/* Bursts of bytes at random times over the 2 s, from src to dst. */
static void log_noise(struct ct_burst_log *log, const char *src, const char *dst, unsigned n,
		      uint64_t bytes, uint64_t seed)
{
	struct ct_flow_key k = roce_key(src, dst, 9);

	for (unsigned i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t t = T0 + (seed >> 33) % (1990 * MS);

		log_burst(log, &k, t, t + 2 * MS, bytes);
	}
}

static void assert_hosts(const struct ct_job *job, const char *const *want, size_t n)
{
	assert_int_equal(job->n_hosts, n);
	for (size_t i = 0; i < n; i++) {
		struct ct_addr a = addr_of(want[i]);

		assert_memory_equal(&job->hosts[i], &a, sizeof(a));
	}
}

/*
 * The ring carries 3 x 20 x 10 MB = 600 MB, the pair 2 x 28 x 4 MB =
 * 224 MB: the ring is the first job (period 0.1 s, hosts A B C), the pair
 * the second (0.07 s, 28 iterations, hosts D E, though their addresses
 * come first). The report's job period is the first's; the pair's flows
 * are measured against 0.07 s: D -> E's own period is 0.07 s and E -> D
 * starts 15 ms into D -> E's iteration, phase 15/70. Returns per for
 * checks of the flows and bytes.
 */
static void check_two_jobs(const struct ct_burst_log *log, const struct ct_flow_set *set,
			   struct ct_periodicity *out)
{
	static const char *const ring[] = {A, B, C}, *const pair[] = {D, E};
	struct ct_flow_key ab = roce_key(A, B, 1), de = roce_key(D, E, 1), ed = roce_key(E, D, 1);
	const struct ct_flow_periodicity *fp;
	struct ct_periodicity per;

	assert_int_equal(ct_periodicity_compute(set, log, MIN_PER_S, &per), 0);
	assert_int_equal(per.n_jobs, 2);
	assert_true(per.job.periodic);
	assert_near(per.job.period_s, 0.1, 0.0005);
	assert_near(ct_periodicity_job_period(&per, 0)->period_s, 0.1, 0.0005);
	assert_hosts(&per.jobs[0], ring, 3);
	assert_near(ct_periodicity_job_period(&per, 1)->period_s, 0.07, 0.00035);
	assert_int_equal(per.jobs[1].period.iterations, 28);
	assert_hosts(&per.jobs[1], pair, 2);

	assert_int_equal(per.flows[set_index(set, &ab)].job, 0);
	fp = &per.flows[set_index(set, &de)];
	assert_int_equal(fp->job, 1);
	assert_true(fp->periodic);
	assert_near(fp->period_s, 0.07, 0.00035);
	assert_near(ct_periodicity_period_of(&per, set_index(set, &de))->period_s, 0.07, 0.00035);
	fp = &per.flows[set_index(set, &ed)];
	assert_int_equal(fp->job, 1);
	assert_near(fp->phase_first, 15.0 / 70, 0.005);
	*out = per;
}

static void test_two_groups_two_jobs(void **state)
{
	struct ct_burst_log log = {0};
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	log_pair(&log);
	log_ring(&log);
	set_of_log(&set, &log);
	check_two_jobs(&log, &set, &per);
	assert_int_equal(per.jobs[0].flows, 3);
	assert_int_equal(per.jobs[0].bytes, 600000000);
	assert_int_equal(per.jobs[1].flows, 2);
	assert_int_equal(per.jobs[1].bytes, 224000000);
	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/*
 * A storage server S takes checkpoints from A and from D at random times
 * (1 MB bursts) and answers with next to nothing: it sends under 1 % of
 * what the busiest host sends, so it bridges neither group into one job
 * and joins none. The two jobs come out as without it. A flow counts to
 * its source's job, else its destination's: the checkpoints are their
 * job's traffic, so the pair's job has 4 flows (D -> E, E -> D, D -> S,
 * S -> D) and 224 MB + 30 MB + 30 x 640 B.
 */
static void test_storage_bridges_no_jobs(void **state)
{
	struct ct_burst_log log = {0};
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	log_pair(&log);
	log_ring(&log);
	log_noise(&log, A, "198.18.2.1", 30, 1000000, 5);
	log_noise(&log, D, "198.18.2.1", 30, 1000000, 6);
	log_noise(&log, "198.18.2.1", A, 30, 640, 7);
	log_noise(&log, "198.18.2.1", D, 30, 640, 8);
	set_of_log(&set, &log);
	check_two_jobs(&log, &set, &per);
	assert_int_equal(per.jobs[1].flows, 4);
	assert_int_equal(per.jobs[1].bytes, 224000000 + 30000000 + 30 * 640);
	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/* The ring alone: one job of its three hosts, every 0.1 s, the report's job period. */
static void test_one_group_one_job(void **state)
{
	static const char *const ring[] = {A, B, C};
	struct ct_burst_log log = {0};
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	log_ring(&log);
	set_of_log(&set, &log);
	assert_int_equal(ct_periodicity_compute(&set, &log, MIN_PER_S, &per), 0);
	assert_int_equal(per.n_jobs, 1);
	assert_near(per.job.period_s, 0.1, 0.0005);
	assert_hosts(&per.jobs[0], ring, 3);
	assert_int_equal(per.jobs[0].flows, 3);
	for (size_t f = 0; f < set.count; f++)
		assert_int_equal(per.flows[f].job, 0);
	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_groups_two_jobs),
		cmocka_unit_test(test_storage_bridges_no_jobs),
		cmocka_unit_test(test_one_group_one_job),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
