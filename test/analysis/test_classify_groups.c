// SPDX-License-Identifier: MIT
/*
 * Classification by the groups the wire shows (classify_groups.c,
 * layout_groups.c), on hand-made jobs of 20 iterations of 100 ms whose
 * answers follow from the structure alone: a ring that closes, one that
 * does not, a pipeline beside a collective and the embedding sync, and two
 * collectives of different rhythms.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/classify.h>

#include "flow_builder.h"

#define A      "198.18.0.1"
#define B      "198.18.0.2"
#define C      "198.18.0.3"
#define D      "198.18.0.4"
#define E      "198.18.0.5"
#define F      "198.18.0.6"
#define ITERS  20
#define PERIOD (100 * MS)

static void classified(const struct ct_flow_set *set, const struct ct_burst_log *log,
		       struct ct_periodicity *per, struct ct_classification *c)
{
	assert_int_equal(ct_periodicity_compute(set, log, 0.02, per), 0);
	assert_true(per->job.periodic);
	assert_near(per->job.period_s, 0.1, 0.001);
	assert_int_equal(ct_classify(set, per, NULL, NULL, c), 0);
	assert_string_equal(c->method, "signatures");
}

static const struct ct_flow_class *class_of(const struct ct_classification *c,
					    const struct ct_flow_set *set,
					    const struct ct_flow_key *k)
{
	return &c->flows[set_index(set, k)];
}

static void free_all(struct ct_classification *c, struct ct_periodicity *per,
		     struct ct_flow_set *set, struct ct_burst_log *log)
{
	ct_classification_free(c);
	ct_periodicity_free(per);
	ct_flow_set_free(set);
	ct_burst_log_free(log);
}

/*
 * One-way steps h[i] -> h[(i + 1) % n_hosts], i < n_steps, each 1 MB at
 * 80 ms for 5 ms of every iteration, nothing back; k[i] is step i's flow.
 */
static void one_way_steps(const char *const *h, int n_hosts, int n_steps, struct ct_flow_key *k,
			  struct ct_burst_log *log, struct ct_flow_set *set,
			  struct ct_periodicity *per, struct ct_classification *c)
{
	for (int i = 0; i < n_steps; i++) {
		k[i] = roce_key(h[i], h[(i + 1) % n_hosts], 100 + (uint32_t)i);
		log_train(log, &k[i], PERIOD, ITERS, 80 * MS, 5 * MS, 1000000);
	}
	set_of_log(set, log);
	classified(set, log, per, c);
}

/*
 * A -> B -> C -> D -> A, each step 1 MB at 80 ms for 5 ms, nothing back:
 * one ring, the job's only collective and short (5% of the iteration):
 * gradient sync, DP, with confidence. d = 4, the rest unknown.
 */
static void test_ring_closes(void **state)
{
	const char *h[4] = {A, B, C, D};
	struct ct_flow_key k[4];
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	one_way_steps(h, 4, 4, k, &log, &set, &per, &c);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(class_of(&c, &set, &k[i])->cls, CT_CLASS_DP);
		assert_true(class_of(&c, &set, &k[i])->confidence >= 0.8);
	}
	assert_int_equal(c.layout.d, 4);
	assert_int_equal(c.layout.p, 0);
	assert_int_equal(c.layout.t, 0);
	assert_int_equal(c.layout.ep, 0);
	assert_int_equal(c.layout.n_groups, 1);
	assert_int_equal(c.layout.groups[0].n, 4);
	free_all(&c, &per, &set, &log);
}

/*
 * The ring of test_ring_closes, but its step D -> A lands anywhere in the
 * iteration (1 MB, 5-95 ms in, a different place each time), as the step
 * into a late rank of a real gloo ring does: by its phase alone it is no
 * collective of the job, and the ring would stay open. Its bytes repeat
 * and continue the steps C -> D and A -> B: it rejoins them, the ring
 * closes, all four steps are DP. Storage traffic of other bytes between
 * the same hosts (A -> C, 300 kB anywhere) stays Other.
 */
static void test_ring_step_whose_phase_wanders(void **state)
{
	const char *h[4] = {A, B, C, D};
	struct ct_flow_key k[4], da = roce_key(D, A, 103), ac = roce_key(A, C, 200);
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int i = 0; i < 3; i++) {
		k[i] = roce_key(h[i], h[i + 1], 100 + (uint32_t)i);
		log_train(&log, &k[i], PERIOD, ITERS, 80 * MS, 5 * MS, 1000000);
	}
	k[3] = da;
	for (uint64_t i = 0, seed = 12345; i < ITERS; i++) {
		uint64_t at, noise;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		at = T0 + i * PERIOD + (5 + (seed >> 33) % 90) * MS;
		noise = T0 + i * PERIOD + (3 + (seed >> 40) % 90) * MS;

		log_burst(&log, &da, at, at + 5 * MS, 1000000);
		log_burst(&log, &ac, noise, noise + 1 * MS, 300000);
	}
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	for (int i = 0; i < 4; i++)
		assert_int_equal(class_of(&c, &set, &k[i])->cls, CT_CLASS_DP);
	assert_int_equal(class_of(&c, &set, &ac)->cls, CT_CLASS_OTHER);
	assert_int_equal(c.layout.d, 4);
	free_all(&c, &per, &set, &log);
}

/* A -> B -> C -> D with nothing back and no way from D to A: no ring, no collective. */
static void test_ring_open(void **state)
{
	const char *h[4] = {A, B, C, D};
	struct ct_flow_key k[3];
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	one_way_steps(h, 4, 3, k, &log, &set, &per, &c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(class_of(&c, &set, &k[i])->cls, CT_CLASS_OTHER);
	assert_non_null(strstr(class_of(&c, &set, &k[0])->evidence, "no ring"));
	assert_int_equal(c.layout.n_groups, 0);
	free_all(&c, &per, &set, &log);
}

/*
 * B's own view (its agent's): A -> B and B -> C, the same bytes, nothing
 * back. Every stream touches B, so the ring closes outside the view: one
 * collective, DP. What B's agent sees of an all-reduce ring.
 */
static void test_host_view_ring(void **state)
{
	const char *h[3] = {A, B, C};
	struct ct_flow_key k[2];
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	one_way_steps(h, 3, 2, k, &log, &set, &per, &c);
	for (int i = 0; i < 2; i++)
		assert_int_equal(class_of(&c, &set, &k[i])->cls, CT_CLASS_DP);
	assert_int_equal(c.layout.n_groups, 1);
	free_all(&c, &per, &set, &log);
}

/*
 * Two stages, A and B: activations A -> B at 10, 20, 30, 40 ms, gradients
 * B -> A at 25, 35, 45, 55 ms (100 kB, 2 ms each): the way back ends 15%
 * of the iteration later, the pipeline's cool-down: PP both ways. Beside
 * it A <-> C all-reduce 2 MB each way at 80 ms, aligned: a collective
 * that sends once (less often than the pipeline, not 8 times its bytes):
 * DP. And A <-> B 50 kB each way at 90 ms, aligned, between the two ends
 * of the chain: the embedding sync.
 */
static void test_pipeline_beside_collectives(void **state)
{
	struct ct_flow_key act = roce_key(A, B, 1), grad = roce_key(B, A, 2);
	struct ct_flow_key ac = roce_key(A, C, 3), ca = roce_key(C, A, 4);
	struct ct_flow_key emb_ab = roce_key(A, B, 5), emb_ba = roce_key(B, A, 6);
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int m = 0; m < 4; m++) {
		log_train(&log, &act, PERIOD, ITERS, (10 + 10 * (uint64_t)m) * MS, 2 * MS, 100000);
		log_train(&log, &grad, PERIOD, ITERS, (25 + 10 * (uint64_t)m) * MS, 2 * MS, 100000);
	}
	log_train(&log, &ac, PERIOD, ITERS, 80 * MS, 5 * MS, 2000000);
	log_train(&log, &ca, PERIOD, ITERS, 80 * MS, 5 * MS, 2000000);
	log_train(&log, &emb_ab, PERIOD, ITERS, 90 * MS, 1 * MS, 50000);
	log_train(&log, &emb_ba, PERIOD, ITERS, 90 * MS, 1 * MS, 50000);
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	assert_int_equal(class_of(&c, &set, &act)->cls, CT_CLASS_PP);
	assert_int_equal(class_of(&c, &set, &grad)->cls, CT_CLASS_PP);
	assert_int_equal(class_of(&c, &set, &ac)->cls, CT_CLASS_DP);
	assert_int_equal(class_of(&c, &set, &ca)->cls, CT_CLASS_DP);
	assert_int_equal(class_of(&c, &set, &emb_ab)->cls, CT_CLASS_EMB);
	assert_int_equal(class_of(&c, &set, &emb_ba)->cls, CT_CLASS_EMB);
	assert_int_equal(c.layout.p, 2);
	assert_int_equal(c.layout.d, 2);
	assert_int_equal(c.layout.t, 0);
	free_all(&c, &per, &set, &log);
}

/*
 * No pipeline, two collectives: A <-> B eight times an iteration (200 kB
 * at 0, 10, ... 70 ms, both ways at once) and A <-> C once (1 MB at
 * 85 ms). The rates differ eightfold: the frequent one runs per layer and
 * micro-batch, TP; the other once an iteration, DP; their busy spans (80%
 * against 5%) agree, so both are confident.
 */
static void test_two_rhythms(void **state)
{
	struct ct_flow_key ab = roce_key(A, B, 1), ba = roce_key(B, A, 2);
	struct ct_flow_key ac = roce_key(A, C, 3), ca = roce_key(C, A, 4);
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int l = 0; l < 8; l++) {
		log_train(&log, &ab, PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS, 200000);
		log_train(&log, &ba, PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS, 200000);
	}
	log_train(&log, &ac, PERIOD, ITERS, 85 * MS, 5 * MS, 1000000);
	log_train(&log, &ca, PERIOD, ITERS, 85 * MS, 5 * MS, 1000000);
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	assert_int_equal(class_of(&c, &set, &ab)->cls, CT_CLASS_TP);
	assert_int_equal(class_of(&c, &set, &ba)->cls, CT_CLASS_TP);
	assert_int_equal(class_of(&c, &set, &ac)->cls, CT_CLASS_DP);
	assert_int_equal(class_of(&c, &set, &ca)->cls, CT_CLASS_DP);
	assert_true(class_of(&c, &set, &ab)->confidence >= 0.8);
	assert_true(class_of(&c, &set, &ac)->confidence >= 0.8);
	assert_int_equal(c.layout.t, 2);
	assert_int_equal(c.layout.d, 2);
	free_all(&c, &per, &set, &log);
}

/*
 * A parameter server: workers A-D push 1 MB to each of servers E and F at
 * 60 ms (5 ms), the servers send 1 MB back to each at 80 ms. Each pair
 * exchanges both ways at other times, like a pipeline's link, but E and F
 * each exchange with four hosts (a pipeline stage with two at most) and
 * the workers with the servers only: a star, its push and pull DP, with
 * confidence. Read as pipelines, these were PP.
 */
static void test_parameter_server(void **state)
{
	const char *workers[4] = {A, B, C, D}, *servers[2] = {E, F};
	struct ct_flow_key push[8], pull[8];
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int w = 0; w < 4; w++)
		for (int v = 0; v < 2; v++) {
			int k = 2 * w + v;

			push[k] = roce_key(workers[w], servers[v], 10 + (uint32_t)k);
			pull[k] = roce_key(servers[v], workers[w], 30 + (uint32_t)k);
			log_train(&log, &push[k], PERIOD, ITERS, 60 * MS, 5 * MS, 1000000);
			log_train(&log, &pull[k], PERIOD, ITERS, 80 * MS, 5 * MS, 1000000);
		}
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	for (int k = 0; k < 8; k++) {
		const struct ct_flow_class *fp = class_of(&c, &set, &push[k]);
		const struct ct_flow_class *fl = class_of(&c, &set, &pull[k]);

		assert_int_equal(fp->cls, CT_CLASS_DP);
		assert_int_equal(fl->cls, CT_CLASS_DP);
		assert_int_equal(fp->op, CT_OP_PUSHPULL);
		assert_int_equal(fl->op, CT_OP_PUSHPULL);
		assert_true(fp->confidence >= 0.8);
	}
	assert_int_equal(c.layout.p, 0);
	free_all(&c, &per, &set, &log);
}

/*
 * One ring A -> B -> C -> D -> A sending 100 kB eight times an iteration
 * (at 0, 10, ... 70 ms, 2 ms each), nothing else: the job's only
 * collective, busy through 80% of the iteration. ZeRO-3's all-gathers and
 * TP across every host both look so: DP, the common layout, at a
 * confidence below 0.5, the evidence naming both.
 */
static void test_lone_ring_busy(void **state)
{
	const char *h[4] = {A, B, C, D};
	struct ct_flow_key k[4];
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int i = 0; i < 4; i++) {
		k[i] = roce_key(h[i], h[(i + 1) % 4], 100 + (uint32_t)i);
		for (int l = 0; l < 8; l++)
			log_train(&log, &k[i], PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS,
				  100000);
	}
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	for (int i = 0; i < 4; i++) {
		const struct ct_flow_class *fc = class_of(&c, &set, &k[i]);

		assert_int_equal(fc->cls, CT_CLASS_DP);
		assert_int_equal(fc->op, CT_OP_ALLREDUCE);
		assert_true(fc->confidence < 0.5);
		assert_non_null(strstr(fc->evidence, "TP across every host"));
	}
	assert_int_equal(c.layout.sharded, 0);
	free_all(&c, &per, &set, &log);
}

/*
 * ZeRO-3 over A-D: an all-gather one way around the ring A -> B -> C ->
 * D -> A, 100 kB eight times an iteration (forward and backward), and a
 * reduce-scatter among every pair, 300 kB each way at 85 ms. Two
 * operations (a ring, a mesh) over one group of hosts: one dimension's,
 * sharded DP, with confidence; the ring the all-gather (the heavier), the
 * mesh the reduce-scatter. A TP group and a DP group share one host at
 * most, so neither is TP.
 */
static void test_sharded(void **state)
{
	const char *h[4] = {A, B, C, D};
	struct ct_flow_key ring[4], mesh[12];
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;
	int n = 0;

	(void)state;
	for (int i = 0; i < 4; i++) {
		ring[i] = roce_key(h[i], h[(i + 1) % 4], 100 + (uint32_t)i);
		for (int l = 0; l < 8; l++)
			log_train(&log, &ring[i], PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS,
				  100000);
		for (int j = 0; j < 4; j++)
			if (j != i) {
				mesh[n] = roce_key(h[i], h[j], 200 + (uint32_t)n);
				log_train(&log, &mesh[n++], PERIOD, ITERS, 85 * MS, 5 * MS, 300000);
			}
	}
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(class_of(&c, &set, &ring[i])->cls, CT_CLASS_DP);
		assert_int_equal(class_of(&c, &set, &ring[i])->op, CT_OP_ALLGATHER);
		assert_true(class_of(&c, &set, &ring[i])->confidence >= 0.8);
	}
	for (int i = 0; i < 12; i++) {
		assert_int_equal(class_of(&c, &set, &mesh[i])->cls, CT_CLASS_DP);
		assert_int_equal(class_of(&c, &set, &mesh[i])->op, CT_OP_REDUCESCATTER);
	}
	assert_int_equal(c.layout.sharded, 1);
	assert_int_equal(c.layout.t, 0);
	assert_int_equal(c.layout.d, 4);
	free_all(&c, &per, &set, &log);
}

/*
 * A pipeline of four stages A - B - C - D in its steady state: each link
 * carries 100 kB both ways at once four times an iteration (1F1B sends an
 * activation and receives a gradient together), at 10, 30, 50 and 70 ms,
 * both directions ending together. Alignment and cool-down say
 * collective; but the links form a path, which no collective runs along
 * (rings close, all-to-alls are meshes, trees branch): PP, a chain of 4.
 */
static void test_chain_steady_state(void **state)
{
	const char *h[4] = {A, B, C, D};
	struct ct_flow_key fwd[3], bwd[3];
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int i = 0; i < 3; i++) {
		fwd[i] = roce_key(h[i], h[i + 1], 10 + (uint32_t)i);
		bwd[i] = roce_key(h[i + 1], h[i], 20 + (uint32_t)i);
		for (int m = 0; m < 4; m++) {
			log_train(&log, &fwd[i], PERIOD, ITERS, (10 + 20 * (uint64_t)m) * MS,
				  2 * MS, 100000);
			log_train(&log, &bwd[i], PERIOD, ITERS, (10 + 20 * (uint64_t)m) * MS,
				  2 * MS, 100000);
		}
	}
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(class_of(&c, &set, &fwd[i])->cls, CT_CLASS_PP);
		assert_int_equal(class_of(&c, &set, &bwd[i])->cls, CT_CLASS_PP);
		assert_int_equal(class_of(&c, &set, &fwd[i])->op, CT_OP_SENDRECV);
	}
	assert_int_equal(c.layout.p, 4);
	free_all(&c, &per, &set, &log);
}

/*
 * TP between A and B eight times an iteration (200 kB at 0, 10, ... 70 ms,
 * both ways at once) and DP between A and C (1 MB both ways) at 85 ms in
 * the first half, at 45 ms from iteration 10 on: a rank slowed from there
 * moves where the job's collectives fall. Taken over the whole capture the
 * DP's phases are spread (0.31); from one iteration to the next it stays
 * put but once: DP, not Other.
 */
static void test_collective_whose_phase_moves(void **state)
{
	struct ct_flow_key ab = roce_key(A, B, 1), ba = roce_key(B, A, 2);
	struct ct_flow_key ac = roce_key(A, C, 3), ca = roce_key(C, A, 4);
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int l = 0; l < 8; l++) {
		log_train(&log, &ab, PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS, 200000);
		log_train(&log, &ba, PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS, 200000);
	}
	for (uint64_t i = 0; i < ITERS; i++) {
		uint64_t at = T0 + i * PERIOD + (i < ITERS / 2 ? 85 : 45) * MS;

		log_burst(&log, &ac, at, at + 5 * MS, 1000000);
		log_burst(&log, &ca, at, at + 5 * MS, 1000000);
	}
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	assert_int_equal(class_of(&c, &set, &ab)->cls, CT_CLASS_TP);
	assert_int_equal(class_of(&c, &set, &ac)->cls, CT_CLASS_DP);
	assert_int_equal(class_of(&c, &set, &ca)->cls, CT_CLASS_DP);
	free_all(&c, &per, &set, &log);
}

/*
 * test_two_rhythms' job, and C sends A a small message (2 kB in 4
 * frames) 10 ms after their DP exchange, as a gloo rank entering its next
 * collective early does: by its last burst C ends 10% of the iteration
 * after A, a pipeline's cool-down; by its bulk the two end together: one
 * collective, DP.
 */
static void test_collective_with_an_entry_message_after_it(void **state)
{
	struct ct_flow_key ab = roce_key(A, B, 1), ba = roce_key(B, A, 2);
	struct ct_flow_key ac = roce_key(A, C, 3), ca = roce_key(C, A, 4);
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_periodicity per;
	struct ct_flow_set set;

	(void)state;
	for (int l = 0; l < 8; l++) {
		log_train(&log, &ab, PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS, 200000);
		log_train(&log, &ba, PERIOD, ITERS, 10 * (uint64_t)l * MS, 2 * MS, 200000);
	}
	for (uint64_t i = 0; i < ITERS; i++) {
		uint64_t at = T0 + i * PERIOD + 80 * MS;
		struct ct_flow_burst *x;

		log_burst(&log, &ac, at, at + 5 * MS, 1000000);
		log_burst(&log, &ca, at, at + 5 * MS, 1000000);
		log_burst(&log, &ca, at + 15 * MS, at + 15 * MS + 20000, 2000);
		x = &log.b[log.n - 1];
		x->packets = 4;
		x->messages = 1;
	}
	set_of_log(&set, &log);
	classified(&set, &log, &per, &c);
	assert_int_equal(class_of(&c, &set, &ac)->cls, CT_CLASS_DP);
	assert_int_equal(class_of(&c, &set, &ca)->cls, CT_CLASS_DP);
	assert_int_equal(class_of(&c, &set, &ca)->op, CT_OP_ALLREDUCE);
	free_all(&c, &per, &set, &log);
}

/* With no periodicity at hand (per NULL), every flow is Other and nothing is grouped. */
static void test_no_periodicity(void **state)
{
	struct ct_flow_key ab = roce_key(A, B, 1), ba = roce_key(B, A, 2);
	struct ct_burst_log log = {0};
	struct ct_classification c;
	struct ct_flow_set set;

	(void)state;
	log_train(&log, &ab, PERIOD, ITERS, 80 * MS, 5 * MS, 1000000);
	log_train(&log, &ba, PERIOD, ITERS, 80 * MS, 5 * MS, 1000000);
	set_of_log(&set, &log);
	assert_int_equal(ct_classify(&set, NULL, NULL, NULL, &c), 0);
	assert_int_equal(class_of(&c, &set, &ab)->cls, CT_CLASS_OTHER);
	assert_int_equal(class_of(&c, &set, &ba)->cls, CT_CLASS_OTHER);
	assert_int_equal(c.layout.n_groups, 0);
	assert_int_equal(c.layout.hosts, 0);
	ct_classification_free(&c);
	ct_flow_set_free(&set);
	ct_burst_log_free(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_closes),
		cmocka_unit_test(test_ring_open),
		cmocka_unit_test(test_ring_step_whose_phase_wanders),
		cmocka_unit_test(test_host_view_ring),
		cmocka_unit_test(test_pipeline_beside_collectives),
		cmocka_unit_test(test_two_rhythms),
		cmocka_unit_test(test_parameter_server),
		cmocka_unit_test(test_lone_ring_busy),
		cmocka_unit_test(test_sharded),
		cmocka_unit_test(test_chain_steady_state),
		cmocka_unit_test(test_collective_whose_phase_moves),
		cmocka_unit_test(test_collective_with_an_entry_message_after_it),
		cmocka_unit_test(test_no_periodicity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
