// SPDX-License-Identifier: MIT
/*
 * The advice (analysis/advice.c, advice_gpu.c, advice_json.c) on a
 * hand-made job whose computation and communication are known: every
 * figure below is worked out from the bursts laid down here, and the
 * scheduling bound is checked against its closed form,
 * (T_comp + T_comm - overlap) / max(T_comp, T_comm).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include <commtap/advice.h>
#include <commtap/traffic_class.h>

#include "flow_builder.h"

#define PERIOD	    (100 * MS)
#define ITERS	    12
#define MIN_PER_S   0.02 /* no iteration shorter than 20 ms claimed */
#define GBPS(g, ns) ((uint64_t)((g)*1e9 / 8 * (double)(ns) / 1e9)) /* bytes at g Gb/s */

/*
 * Every 100 ms, three hosts A, B, C (ms into each iteration):
 *   PP  B -> C  [10, 20)  at 100 Gb/s        C -> B  [20, 25)  at 100 Gb/s
 *   DP  A -> B  [60, 90)  at 50 Gb/s         B -> A  [60, 90)  at 50 Gb/s
 * So PP is on 15 ms (0.15 of the iteration) at the NIC's rate, DP 30 ms
 * (0.30) at half of it; the job communicates 45 ms and computes the 55 ms
 * off the wire. Perfect overlap: max(55, 45) = 55 ms, a bound of
 * 100 / 55 = 1.818 (the two-resource closed form); at the NIC's rate DP
 * would take 15 ms, the job 30 ms of communication, the iteration 85 ms.
 */
struct job {
	struct ct_burst_log log;
	struct ct_flow_set set;
	struct ct_periodicity per;
	struct ct_classification classes;
	struct ct_report r;
	struct ct_flow_key pp_bc, pp_cb, dp_ab, dp_ba;
};

static void job_make(struct job *j, double nic_gbps)
{
	uint8_t cls[4];

	memset(j, 0, sizeof(*j));
	j->pp_bc = roce_key("198.18.0.2", "198.18.0.3", 1);
	j->pp_cb = roce_key("198.18.0.3", "198.18.0.2", 2);
	j->dp_ab = roce_key("198.18.0.1", "198.18.0.2", 3);
	j->dp_ba = roce_key("198.18.0.2", "198.18.0.1", 4);
	log_train(&j->log, &j->pp_bc, PERIOD, ITERS, 10 * MS, 10 * MS, GBPS(100, 10 * MS));
	log_train(&j->log, &j->pp_cb, PERIOD, ITERS, 20 * MS, 5 * MS, GBPS(100, 5 * MS));
	log_train(&j->log, &j->dp_ab, PERIOD, ITERS, 60 * MS, 30 * MS, GBPS(50, 30 * MS));
	log_train(&j->log, &j->dp_ba, PERIOD, ITERS, 60 * MS, 30 * MS, GBPS(50, 30 * MS));
	set_of_log(&j->set, &j->log);
	assert_int_equal(ct_periodicity_compute(&j->set, &j->log, MIN_PER_S, &j->per), 0);
	assert_true(j->per.job.periodic);
	assert_true(j->per.n_jobs >= 1);
	j->classes.n = j->set.count;
	j->classes.flows = calloc(j->set.count, sizeof(*j->classes.flows));
	assert_non_null(j->classes.flows);
	j->classes.method = "labels";
	j->classes.flows[set_index(&j->set, &j->pp_bc)].cls = CT_CLASS_PP;
	j->classes.flows[set_index(&j->set, &j->pp_cb)].cls = CT_CLASS_PP;
	j->classes.flows[set_index(&j->set, &j->dp_ab)].cls = CT_CLASS_DP;
	j->classes.flows[set_index(&j->set, &j->dp_ba)].cls = CT_CLASS_DP;
	for (size_t i = 0; i < j->set.count; i++)
		cls[i] = j->classes.flows[i].cls;
	assert_int_equal(ct_periodicity_cc_by_class(&j->per, &j->set, cls), 0);
	j->r.flows = j->set;
	j->r.periodicity = &j->per;
	j->r.classes = &j->classes;
	j->r.nic_gbps = 100; /* the cc section's default: no statement of the rate */
	if (nic_gbps > 0) {
		j->r.nic_gbps_stated = nic_gbps;
		j->r.nic_source = "option";
	}
}

static void job_free(struct job *j)
{
	free(j->classes.flows);
	ct_periodicity_free(&j->per);
	ct_flow_set_free(&j->set);
	ct_burst_log_free(&j->log);
}

static void test_wire_figures(void **state)
{
	struct job j;
	struct ct_advice a;
	const struct ct_advice_job *aj;

	(void)state;
	job_make(&j, 100);
	assert_int_equal(ct_advice_compute(&j.r, &a), 0);
	assert_int_equal(a.n_jobs, 1);
	assert_string_equal(a.nic_source, "option");
	aj = &a.jobs[0];
	assert_true(aj->present);
	assert_near(aj->period_s, 0.1, 0.0005);
	assert_int_equal(aj->iterations, ITERS - 1);
	/* the communication ratio per class and together */
	assert_true(aj->cls[CT_CLASS_PP].present && aj->cls[CT_CLASS_DP].present);
	assert_false(aj->cls[CT_CLASS_TP].present);
	assert_near(aj->cls[CT_CLASS_PP].comm_ratio, 0.15, 0.002);
	assert_near(aj->cls[CT_CLASS_DP].comm_ratio, 0.30, 0.002);
	assert_near(aj->comm_ratio, 0.45, 0.002);
	/* effective bandwidth against the NIC: PP at its rate, DP at half */
	assert_near(aj->cls[CT_CLASS_PP].util, 1.0, 0.01);
	assert_near(aj->cls[CT_CLASS_DP].util, 0.5, 0.01);
	assert_near(aj->cls[CT_CLASS_DP].gbps, 50, 0.5);
	assert_near(aj->cls[CT_CLASS_DP].bytes, 2 * GBPS(50, 30 * MS), 1e3);
	/* the scheduling bound: the closed form within 1% */
	assert_string_equal(aj->source, "wire");
	assert_near(aj->t_comm, 0.045, 0.0005);
	assert_near(aj->t_comp, 0.055, 0.0005);
	assert_near(aj->best_s, 0.055, 0.0005);
	assert_near(aj->speedup_bound, 0.1 / 0.055, 0.01 * 0.1 / 0.055);
	assert_near(aj->comp_to_comm, 55.0 / 45, 0.02);
	assert_string_equal(aj->regime, "balanced");
	/* the network bound: DP at the NIC's rate */
	assert_near(aj->cls[CT_CLASS_DP].on_s_at_nic, 0.015, 0.0003);
	assert_near(aj->cls[CT_CLASS_PP].on_s_at_nic, 0.015, 0.0003);
	assert_near(aj->comm_s_at_nic, 0.030, 0.0005);
	assert_near(aj->iter_s_at_nic, 0.085, 0.0005);
	assert_near(aj->network_speedup, 0.1 / 0.085, 0.01);
	ct_advice_free(&a);
	job_free(&j);
}

/* Nobody stated the NIC's rate: no utilization and no network bound, never a guess. */
static void test_rate_unknown(void **state)
{
	struct job j;
	struct ct_advice a;
	json_object *o, *jobs, *dp, *v;

	(void)state;
	job_make(&j, 0);
	assert_int_equal(ct_advice_compute(&j.r, &a), 0);
	assert_null(a.nic_source);
	assert_true(a.jobs[0].cls[CT_CLASS_DP].util < 0);
	assert_true(a.jobs[0].iter_s_at_nic < 0);
	/* the scheduling bound needs no rate */
	assert_near(a.jobs[0].speedup_bound, 0.1 / 0.055, 0.01 * 0.1 / 0.055);
	o = ct_advice_json(&a);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "nic_gbps", &v) && !v);
	assert_true(json_object_object_get_ex(o, "jobs", &jobs));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(jobs, 0), "classes", &dp));
	assert_true(json_object_object_get_ex(dp, "DP", &dp));
	assert_true(json_object_object_get_ex(dp, "bw_utilization", &v) && !v);
	assert_true(json_object_object_get_ex(dp, "comm_ratio", &v));
	assert_near(json_object_get_double(v), 0.30, 0.002);
	json_object_put(o);
	ct_advice_free(&a);
	job_free(&j);
}

/*
 * With the GPU side: T_comp 70 ms, T_comm = r_comm * T_iter + overlap =
 * 0.2 * 100 + 30 = 50 ms, 30 ms of it overlapped: today 90 ms of busy
 * time, at best max(70, 50) = 70 ms, a bound of 90 / 70 = 1.286, and the
 * job compute-bound (70 / 50 = 1.4 > 1.25).
 */
static void test_gpu_side(void **state)
{
	static const char *const gpu =
		"{\"schema\":\"commtap.gpu/v1\",\"iterations\":["
		"{\"t_iter\":0.1,\"t_comp\":0.07,\"r_comm\":0.2,\"overlap\":0.03},"
		"{\"t_iter\":0.1,\"t_comp\":0.07,\"r_comm\":0.2,\"overlap\":0.03},"
		"{\"t_iter\":0.5,\"t_comp\":0.07,\"r_comm\":0.9,\"overlap\":0.03}]}";
	struct job j;
	struct ct_advice a;
	const struct ct_advice_job *aj;

	(void)state;
	job_make(&j, 100);
	assert_int_equal(ct_report_add_section(&j.r, "gpu", json_tokener_parse(gpu)), 0);
	assert_int_equal(ct_advice_compute(&j.r, &a), 0);
	assert_true(a.gpu.present);
	assert_int_equal(a.gpu.iterations, 3);
	aj = &a.jobs[0];
	assert_string_equal(aj->source, "gpu");
	/* medians: the third, slow iteration does not move them */
	assert_near(aj->t_iter, 0.1, 1e-9);
	assert_near(aj->t_comm, 0.05, 1e-9);
	assert_near(aj->best_s, 0.07, 1e-9);
	assert_near(aj->speedup_bound, 0.09 / 0.07, 0.01 * 0.09 / 0.07);
	assert_string_equal(aj->regime, "compute-bound");
	/* the wire's figures stand beside it */
	assert_near(aj->comm_ratio, 0.45, 0.002);
	ct_advice_free(&a);
	json_object_put(j.r.sections[0].value);
	job_free(&j);
}

/* A receiver whose DP traffic is CE-marked stands in the way of DP's rate. */
static void test_blockers(void **state)
{
	struct job j;
	struct ct_advice a;
	const struct ct_advice_class *dp;
	struct ct_addr b = addr_of("198.18.0.2");
	size_t i;
	uint8_t cls[4];

	(void)state;
	job_make(&j, 100);
	/* 5% of A -> B's packets marked: recompute the per-class cc figures */
	i = set_index(&j.set, &j.dp_ab);
	j.set.flows[i].ecn_ce = j.set.flows[i].packets / 20;
	free(j.per.class_receivers);
	j.per.class_receivers = NULL;
	j.per.n_class_receivers = 0;
	for (size_t k = 0; k < j.set.count; k++)
		cls[k] = j.classes.flows[k].cls;
	assert_int_equal(ct_periodicity_cc_by_class(&j.per, &j.set, cls), 0);
	j.r.flows = j.set;
	assert_int_equal(ct_advice_compute(&j.r, &a), 0);
	dp = &a.jobs[0].cls[CT_CLASS_DP];
	assert_int_equal(dp->n_blockers, 1);
	assert_memory_equal(&dp->blockers[0].host, &b, sizeof(b));
	assert_near(dp->blockers[0].ecn_ce_fraction, 0.05, 0.001);
	/* PP runs at the NIC's rate with one sender toward each receiver: nobody blocks it */
	assert_int_equal(a.jobs[0].cls[CT_CLASS_PP].n_blockers, 0);
	ct_advice_free(&a);
	job_free(&j);
}

/*
 * Incast: A and B each send DP to C at 50 Gb/s over the same 30 ms, so C's
 * link is full (100 Gb/s at its peak, two senders at once) while each sender
 * uses half of its NIC: C holds them back. At the NIC's rate each sender
 * would need 15 ms, which C's link could not take: the network bound says
 * "at most", and C is named beside it.
 */
static void test_incast_blocker(void **state)
{
	struct ct_flow_key ac = roce_key("198.18.0.1", "198.18.0.3", 1);
	struct ct_flow_key bc = roce_key("198.18.0.2", "198.18.0.3", 2);
	struct ct_flow_key ab = roce_key("198.18.0.1", "198.18.0.2", 3);
	struct ct_burst_log log = {0};
	struct ct_flow_set set;
	struct ct_periodicity per;
	struct ct_classification classes = {0};
	struct ct_report r = {0};
	struct ct_advice a;
	struct ct_addr c = addr_of("198.18.0.3");
	uint8_t cls[3];

	(void)state;
	log_train(&log, &ac, PERIOD, ITERS, 60 * MS, 30 * MS, GBPS(50, 30 * MS));
	log_train(&log, &bc, PERIOD, ITERS, 60 * MS, 30 * MS, GBPS(50, 30 * MS));
	log_train(&log, &ab, PERIOD, ITERS, 10 * MS, 10 * MS, GBPS(100, 10 * MS));
	set_of_log(&set, &log);
	assert_int_equal(ct_periodicity_compute(&set, &log, MIN_PER_S, &per), 0);
	classes.n = set.count;
	classes.flows = calloc(set.count, sizeof(*classes.flows));
	assert_non_null(classes.flows);
	classes.flows[set_index(&set, &ac)].cls = CT_CLASS_DP;
	classes.flows[set_index(&set, &bc)].cls = CT_CLASS_DP;
	classes.flows[set_index(&set, &ab)].cls = CT_CLASS_PP;
	for (size_t i = 0; i < set.count; i++)
		cls[i] = classes.flows[i].cls;
	assert_int_equal(ct_periodicity_cc_by_class(&per, &set, cls), 0);
	r.flows = set;
	r.periodicity = &per;
	r.classes = &classes;
	r.nic_gbps_stated = 100;
	r.nic_source = "profile";
	assert_int_equal(ct_advice_compute(&r, &a), 0);
	assert_true(a.n_jobs >= 1 && a.jobs[0].present);
	assert_near(a.jobs[0].cls[CT_CLASS_DP].util, 0.5, 0.01);
	assert_int_equal(a.jobs[0].cls[CT_CLASS_DP].n_blockers, 1);
	assert_memory_equal(&a.jobs[0].cls[CT_CLASS_DP].blockers[0].host, &c, sizeof(c));
	assert_int_equal(a.jobs[0].cls[CT_CLASS_DP].blockers[0].incast_degree, 2);
	assert_near(a.jobs[0].cls[CT_CLASS_DP].blockers[0].peak_over_nic, 1.0, 0.02);
	/* PP at the NIC's rate, one sender: not held back */
	assert_int_equal(a.jobs[0].cls[CT_CLASS_PP].n_blockers, 0);
	ct_advice_free(&a);
	free(classes.flows);
	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

/*
 * A parameter server: workers W1..W4 push to servers S1, S2 over [0, 33)
 * ms of each 100 ms iteration, the servers pull back over [33, 66); 34 ms
 * off the wire. Two resources: 100 / max(34, 66) = 1.515. Push and pull
 * use the links' two directions, so three resources: 100 / max(34, 33,
 * 33) = 2.94, near the paper's 3x.
 */
static void test_push_pull(void **state)
{
	static const char *const workers[] = {"198.18.0.1", "198.18.0.2", "198.18.0.3",
					      "198.18.0.4"};
	static const char *const servers[] = {"198.18.0.11", "198.18.0.12"};
	struct ct_flow_key keys[16];
	struct ct_burst_log log = {0};
	struct ct_flow_set set;
	struct ct_periodicity per;
	struct ct_classification classes = {0};
	struct ct_report r = {0};
	struct ct_advice a;
	const struct ct_advice_job *aj;
	uint32_t qpn = 1;
	size_t n = 0;

	(void)state;
	for (int w = 0; w < 4; w++)
		for (int s = 0; s < 2; s++) {
			keys[n] = roce_key(workers[w], servers[s], qpn++);
			log_train(&log, &keys[n++], PERIOD, ITERS, 0, 33 * MS, GBPS(25, 33 * MS));
			keys[n] = roce_key(servers[s], workers[w], qpn++);
			log_train(&log, &keys[n++], PERIOD, ITERS, 33 * MS, 33 * MS,
				  GBPS(25, 33 * MS));
		}
	set_of_log(&set, &log);
	assert_int_equal(ct_periodicity_compute(&set, &log, MIN_PER_S, &per), 0);
	assert_true(per.n_jobs >= 1);
	classes.n = set.count;
	classes.flows = calloc(set.count, sizeof(*classes.flows));
	assert_non_null(classes.flows);
	for (size_t i = 0; i < set.count; i++) {
		classes.flows[i].cls = CT_CLASS_DP;
		classes.flows[i].op = CT_OP_PUSHPULL;
	}
	r.flows = set;
	r.periodicity = &per;
	r.classes = &classes;
	assert_int_equal(ct_advice_compute(&r, &a), 0);
	aj = &a.jobs[0];
	assert_true(aj->present && aj->push_pull);
	assert_near(aj->push_s, 0.033, 0.0005);
	assert_near(aj->pull_s, 0.033, 0.0005);
	assert_near(aj->t_comp, 0.034, 0.0005);
	assert_near(aj->speedup_bound, 0.1 / 0.066, 0.01 * 0.1 / 0.066);
	assert_near(aj->best3_s, 0.034, 0.0005);
	assert_near(aj->speedup_bound3, 0.1 / 0.034, 0.01 * 0.1 / 0.034);
	ct_advice_free(&a);
	/* the same traffic as a collective: no three-resource bound */
	for (size_t i = 0; i < set.count; i++)
		classes.flows[i].op = CT_OP_ALLREDUCE;
	assert_int_equal(ct_advice_compute(&r, &a), 0);
	assert_false(a.jobs[0].push_pull);
	ct_advice_free(&a);
	free(classes.flows);
	ct_periodicity_free(&per);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_figures),   cmocka_unit_test(test_rate_unknown),
		cmocka_unit_test(test_gpu_side),       cmocka_unit_test(test_blockers),
		cmocka_unit_test(test_incast_blocker), cmocka_unit_test(test_push_pull),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
