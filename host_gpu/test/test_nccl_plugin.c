// SPDX-License-Identifier: MIT
/*
 * Harness test of libnccl-profiler-commtap.so: dlopen it, drive the v6, v5
 * and v4 tables as NCCL does (from several threads), and check what reaches
 * the ring.
 * argv[1]: the plugin's path.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "commtap/gpu_names.h"
#include "nccl_driver.h"

/* Room for a whole threaded run in each lane: two workers share the last
 * lane and the drainer may fall far behind them (on a loaded 2-core machine
 * 1,396 records dropped at 8192 slots). Drops of a full ring are
 * test_ring_full_drops' subject. */
#define RING_SLOTS  65536
#define RING_LANES  4
#define LANE_SLOTS  (RING_SLOTS / RING_LANES)
#define POOL_EVENTS 16384

static const char *plugin_path;
static struct drv_lib lib;
static struct ct_gpu_ring ring;
static char ring_dir[] = "/tmp/commtap-gpu-test.XXXXXX";

/* Everything drained so far. */
static struct ct_gpu_rec *recs;
static size_t n_recs, cap_recs;
static volatile int draining;

static void drain(void)
{
	struct ct_gpu_rec r;

	while (ct_gpu_ring_pop(&ring, &r) == 1) {
		if (n_recs == cap_recs) {
			cap_recs = cap_recs ? cap_recs * 2 : 4096;
			recs = realloc(recs, cap_recs * sizeof(*recs));
			assert_non_null(recs);
		}
		recs[n_recs++] = r;
	}
}

static void *drain_thread(void *arg)
{
	while (__atomic_load_n(&draining, __ATOMIC_ACQUIRE)) {
		drain();
		usleep(100);
	}
	return NULL;
}

static void reset_recs(void)
{
	drain();
	n_recs = 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct ct_gpu_rec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct ct_gpu_rec *by_id(const struct ct_gpu_rec *sorted, size_t n, uint64_t id)
{
	struct ct_gpu_rec key = {.id = id};

	return bsearch(&key, sorted, n, sizeof(key), cmp_id);
}

static unsigned long count_type(uint64_t hash, int type)
{
	unsigned long n = 0;

	for (size_t i = 0; i < n_recs; i++)
		n += recs[i].comm_hash == hash && recs[i].type == type;
	return n;
}

static const struct drv_coll allreduce = {
	.func = "AllReduce",
	.datatype = "ncclFloat32",
	.algo = "Ring",
	.proto = "Simple",
	.count = 1 << 20,
	.root = -1,
	.n_channels = 2,
	.n_steps = 4,
	.chunk = 131072,
	.peer = 1,
	.qpn_base = 0x100,
};

struct worker {
	struct drv_comm comm;
	int version;
	uint64_t hash;
	int rank;
	int iters;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct drv_coll op = allreduce;
	char name[32];

	snprintf(name, sizeof(name), "dp-%d", w->rank);
	if (drv_init(&w->comm, &lib, w->version, w->hash, name, 2, 8, w->rank))
		return (void *)1;
	for (int i = 0; i < w->iters; i++) {
		op.seq = (uint64_t)i;
		drv_collective(&w->comm, &op);
		if (i % 3 == 0) {
			drv_p2p(&w->comm, "Send", 4096, (w->rank + 1) % 8, 2);
			drv_p2p(&w->comm, "Recv", 4096, (w->rank + 7) % 8, 2);
		}
	}
	return drv_finalize(&w->comm) ? (void *)1 : NULL;
}

static void check_hierarchy(const struct worker *w, const struct ct_gpu_rec *sorted, size_t n)
{
	unsigned long colls = 0, steps = 0, nets = 0, kchs = 0;

	for (size_t i = 0; i < n; i++) {
		const struct ct_gpu_rec *r = &sorted[i], *p;

		if (r->comm_hash != w->hash)
			continue;
		assert_int_equal(r->rank, w->rank);
		assert_true(r->t_stop >= r->t_start);
		p = r->parent_id ? by_id(sorted, n, r->parent_id) : NULL;
		switch (r->type) {
		case CT_GPU_REC_COLL:
			colls++;
			assert_int_equal(r->op.func, CT_FUNC_ALL_REDUCE);
			assert_int_equal(r->op.datatype, CT_DT_FLOAT32);
			assert_int_equal(r->op.algo, CT_ALGO_RING);
			assert_int_equal(r->op.proto, CT_PROTO_SIMPLE);
			assert_int_equal(r->op.n_channels, 2);
			assert_int_equal(r->op.bytes, (uint64_t)allreduce.count * 4);
			assert_non_null(p);
			assert_int_equal(p->type,
					 w->version == 5 ? CT_GPU_REC_COLL_API : CT_GPU_REC_GROUP);
			break;
		case CT_GPU_REC_P2P:
			assert_non_null(p);
			assert_true(r->op.func == CT_FUNC_SEND || r->op.func == CT_FUNC_RECV);
			assert_int_equal(r->op.bytes, 4096 * 2);
			break;
		case CT_GPU_REC_PROXY_OP:
			assert_non_null(p);
			assert_true(p->type == CT_GPU_REC_COLL || p->type == CT_GPU_REC_P2P);
			assert_int_equal(r->proxy.pid, getpid());
			assert_true(r->proxy.n_steps == 4 || r->proxy.n_steps == 2);
			break;
		case CT_GPU_REC_PROXY_STEP:
			steps++;
			assert_non_null(p);
			assert_int_equal(p->type, CT_GPU_REC_PROXY_OP);
			assert_int_equal(r->proxy.channel, p->proxy.channel);
			assert_int_equal(r->proxy.is_send, p->proxy.is_send);
			assert_true(r->proxy.trans_size > 0);
			assert_true(r->proxy.t_wait >= r->t_start &&
				    r->proxy.t_net >= r->proxy.t_wait);
			assert_true(r->t_stop >= r->proxy.t_net);
			if (!r->proxy.is_send)
				assert_true(r->proxy.t_done >= r->proxy.t_net);
			break;
		case CT_GPU_REC_NET_QP:
			nets++;
			assert_non_null(p);
			assert_int_equal(p->type, CT_GPU_REC_PROXY_STEP);
			assert_int_equal(r->net.plugin_id, NP_NET_TYPE_IB | 1);
			/* QP number = base + channel of the proxy op above. */
			assert_true(r->net.qpn == 0x100u + p->proxy.channel ||
				    r->net.qpn == 0x300u + p->proxy.channel);
			assert_int_equal(r->net.length, p->proxy.trans_size);
			break;
		case CT_GPU_REC_KERNEL_CH:
			kchs++;
			assert_non_null(p);
			assert_int_equal(r->kch.gpu_stop - r->kch.gpu_start, 50000);
			break;
		case CT_GPU_REC_COMM:
			assert_int_equal(r->comm.n_ranks, 8);
			assert_int_equal(r->comm.n_nodes, 2);
			assert_int_equal(r->comm.version, (uint32_t)w->version);
			assert_int_equal(strncmp(r->comm.name, "dp-", 3), 0);
			break;
		default:
			break;
		}
	}
	assert_int_equal(colls, (unsigned long)w->iters);
	assert_int_equal(steps, w->comm.started[CT_GPU_REC_PROXY_STEP]);
	assert_int_equal(nets, steps);
	assert_int_equal(kchs, w->comm.started[CT_GPU_REC_KERNEL_CH]);
}

static void test_threads_v5_v4(void **state)
{
	enum { N = 4 };
	struct worker w[N];
	pthread_t th[N], drainer;
	struct ct_gpu_rec *sorted;

	reset_recs();
	draining = 1;
	assert_int_equal(pthread_create(&drainer, NULL, drain_thread, NULL), 0);
	for (int i = 0; i < N; i++) {
		w[i] = (struct worker){.version = i & 1 ? 4 : 5,
				       .hash = 0xc0ffee00ull + (uint64_t)i,
				       .rank = i,
				       .iters = 60};
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		void *rc;

		pthread_join(th[i], &rc);
		assert_null(rc);
	}
	__atomic_store_n(&draining, 0, __ATOMIC_RELEASE);
	pthread_join(drainer, NULL);
	drain();
	assert_int_equal(ct_gpu_ring_dropped(&ring), 0);
	assert_int_equal(ct_gpu_ring_errors(&ring), 0);

	for (int i = 0; i < N; i++) {
		assert_int_equal(w[i].comm.null_handles, 0);
		assert_int_equal(count_type(w[i].hash, CT_GPU_REC_COMM), 1);
		assert_int_equal(count_type(w[i].hash, CT_GPU_REC_COMM_END), 1);
		for (int t = CT_GPU_REC_GROUP_API; t <= CT_GPU_REC_NET_QP; t++)
			assert_int_equal(count_type(w[i].hash, t), w[i].comm.started[t]);
		if (w[i].version == 5) {
			assert_int_equal(count_type(w[i].hash, CT_GPU_REC_COLL_API), 60);
			assert_int_equal(count_type(w[i].hash, CT_GPU_REC_KERNEL_LAUNCH), 60);
		} else {
			assert_int_equal(count_type(w[i].hash, CT_GPU_REC_COLL_API), 0);
		}
	}
	sorted = malloc(n_recs * sizeof(*sorted));
	assert_non_null(sorted);
	memcpy(sorted, recs, n_recs * sizeof(*sorted));
	qsort(sorted, n_recs, sizeof(*sorted), cmp_id);
	for (size_t i = 1; i < n_recs; i++)
		if (sorted[i].id)
			assert_true(sorted[i].id != sorted[i - 1].id);
	for (int i = 0; i < N; i++)
		check_hierarchy(&w[i], sorted, n_recs);
	free(sorted);
}

/* Each table NCCL may take (v6 on 2.29+, v5 on 2.28, v4 on 2.27), as the
 * driver loads it: the communicator record names the version, every event
 * NCCL started comes back, and v6's copy-engine events keep their fields
 * and their parents. */
static void test_each_table(void **state)
{
	struct drv_coll op = allreduce;

	assert_int_equal(drv_newest(&lib), 6);
	assert_non_null(lib.v6);
	assert_non_null(lib.v5);
	assert_non_null(lib.v4);
	for (int v = 4; v <= 6; v++) {
		const uint64_t hash = 0x7ab0 + (uint64_t)v;
		const struct ct_gpu_rec *comm = NULL, *ce = NULL, *coll_api = NULL;
		unsigned long syncs = 0, batches = 0, complete = 0;
		uint64_t batch_bytes = 0;
		struct drv_comm c;

		reset_recs();
		assert_int_equal(drv_init(&c, &lib, v, hash, "table", 2, 4, 1), 0);
		assert_int_equal(!!(c.mask & NP_CE_COLL), v == 6);
		op.seq = 41;
		drv_collective(&c, &op);
		drv_p2p(&c, "Send", 4096, 2, 2);
		drv_ce_collective(&c, &op, 3);
		assert_int_equal(drv_finalize(&c), 0);
		drain();
		assert_int_equal(c.null_handles, 0);
		for (int t = CT_GPU_REC_GROUP_API; t <= CT_GPU_REC_CE_BATCH; t++)
			if (t != CT_GPU_REC_NET_OTHER && t != CT_GPU_REC_COMM_END)
				assert_int_equal(count_type(hash, (uint16_t)t), c.started[t]);
		for (size_t i = 0; i < n_recs; i++) {
			const struct ct_gpu_rec *r = &recs[i];

			if (r->comm_hash != hash)
				continue;
			if (r->type == CT_GPU_REC_COMM)
				comm = r;
			else if (r->type == CT_GPU_REC_CE_COLL)
				ce = r;
			else if (r->type == CT_GPU_REC_COLL_API && r->op.seq == 0 && !coll_api)
				coll_api = r;
		}
		assert_non_null(comm);
		assert_int_equal(comm->comm.version, v);
		if (v < 6) {
			assert_null(ce);
			continue;
		}
		/* The CE collective's API event is the last collective API one. */
		for (size_t i = 0; i < n_recs; i++)
			if (recs[i].comm_hash == hash && recs[i].type == CT_GPU_REC_COLL_API)
				coll_api = &recs[i];
		assert_non_null(ce);
		assert_int_equal(ce->parent_id, coll_api->id);
		assert_int_equal(ce->ce.seq, 41);
		assert_int_equal(ce->ce.ce_seq, 41);
		assert_int_equal(ce->ce.func, CT_FUNC_ALL_REDUCE);
		assert_int_equal(ce->ce.count, allreduce.count);
		assert_int_equal(ce->ce.bytes, allreduce.count * 4);
		assert_int_equal(ce->ce.sync, 2);
		assert_true(ce->t_stop >= ce->t_start);
		for (size_t i = 0; i < n_recs; i++) {
			const struct ct_gpu_rec *r = &recs[i];

			if (r->comm_hash != hash)
				continue;
			if (r->type == CT_GPU_REC_CE_SYNC) {
				assert_int_equal(r->parent_id, ce->id);
				assert_int_equal(r->ce.n_ranks, 4);
				syncs++;
				complete += r->ce.complete;
			} else if (r->type == CT_GPU_REC_CE_BATCH) {
				assert_int_equal(r->parent_id, ce->id);
				assert_int_equal(r->ce.n_ops, 4);
				batches++;
				batch_bytes += r->ce.bytes;
			}
		}
		assert_int_equal(syncs, 2);
		assert_int_equal(complete, 1);
		assert_int_equal(batches, 3);
		assert_int_equal(batch_bytes, allreduce.count * 2 / 3 * 3);
	}
}

/* A disabled parent type: NCCL passes NULL parents to the children. */
static void test_disabled_parents(void **state)
{
	struct drv_comm c;
	char mask[32];

	reset_recs();
	snprintf(mask, sizeof(mask), "0x%x",
		 NP_GROUP_API | NP_COLL | NP_PROXY_STEP | NP_KERNEL_CH | NP_NET_PLUGIN);
	setenv("COMMTAP_NCCL_MASK", mask, 1);
	assert_int_equal(drv_init(&c, &lib, 5, 0xabc, "tp", 1, 4, 0), 0);
	unsetenv("COMMTAP_NCCL_MASK");
	assert_int_equal(c.mask,
			 NP_GROUP_API | NP_COLL | NP_PROXY_STEP | NP_KERNEL_CH | NP_NET_PLUGIN);
	drv_collective(&c, &allreduce);
	assert_int_equal(drv_finalize(&c), 0);
	drain();
	assert_int_equal(count_type(0xabc, CT_GPU_REC_COLL_API), 0);
	assert_int_equal(count_type(0xabc, CT_GPU_REC_PROXY_OP), 0);
	assert_int_equal(count_type(0xabc, CT_GPU_REC_PROXY_STEP), 8);
	for (size_t i = 0; i < n_recs; i++) {
		if (recs[i].type == CT_GPU_REC_COLL || recs[i].type == CT_GPU_REC_PROXY_STEP)
			assert_int_equal(recs[i].parent_id, 0);
		if (recs[i].type == CT_GPU_REC_KERNEL_CH || recs[i].type == CT_GPU_REC_NET_QP)
			assert_int_not_equal(recs[i].parent_id, 0);
	}
}

/* Unknown strings, huge counts, NULL buffers, foreign handles. */
static void test_odd_values(void **state)
{
	struct drv_comm c, c4;
	struct drv_coll op = allreduce;
	struct np_descr_v5 d = {.type = 1u << 20};
	void *h = (void *)0x1;
	int local;
	union np_state_args a = {0};

	reset_recs();
	assert_int_equal(drv_init(&c, &lib, 5, 0x0dd, NULL, -1, 0, -5), 0);
	op.func = "Gossip";
	op.datatype = NULL;
	op.algo = "";
	op.proto = "QuantumLL";
	op.count = SIZE_MAX;
	op.n_channels = 1;
	op.n_steps = 1;
	op.net_id_override = (int64_t)(NP_NET_TYPE_IB | 1);
	op.net_data_null = 1;
	drv_collective(&c, &op);
	/* A socket plugin's event and an IB one with a NULL payload. */
	op.net_id_override = (int64_t)(NP_NET_TYPE_SOCK | 1);
	op.net_data_null = 0;
	op.net_data_override = &local;
	drv_collective(&c, &op);

	/* An event type NCCL does not have, NULL handles, foreign pointers. */
	assert_int_equal(lib.v5->start_event(c.ctx, &h, &d), NCCL_OK);
	assert_null(h);
	assert_int_equal(lib.v5->start_event(c.ctx, NULL, &d), NCCL_OK);
	assert_int_equal(lib.v5->start_event(c.ctx, &h, NULL), NCCL_OK);
	assert_int_equal(lib.v5->start_event(NULL, &h, &d), NCCL_OK);
	assert_int_equal(lib.v5->stop_event(NULL), NCCL_OK);
	assert_int_equal(lib.v5->stop_event(&local), NCCL_OK);
	assert_int_equal(lib.v5->record_event_state(NULL, NS_KERNEL_CH_STOP, &a), NCCL_OK);
	assert_int_equal(lib.v5->record_event_state(&local, 9999, NULL), NCCL_OK);
	assert_int_equal(lib.v4->stop_event((char *)lib.v4 + 3), NCCL_OK);
	assert_int_equal(lib.v4->init(&c4.ctx, NULL, "x", 1, 1, 1, 0, NULL), NCCL_OK);
	assert_int_equal(lib.v5->init(NULL, 1, &local, "x", 1, 1, 0, NULL), NCCL_OK);
	assert_int_equal(local, 0);
	assert_int_equal(drv_finalize(&c), 0);
	assert_int_equal(lib.v5->finalize(NULL), NCCL_OK);
	drain();

	unsigned long colls = 0, net_other = 0;

	for (size_t i = 0; i < n_recs; i++) {
		const struct ct_gpu_rec *r = &recs[i];

		if (r->type == CT_GPU_REC_COLL) {
			colls++;
			assert_int_equal(r->op.func, CT_FUNC_UNKNOWN);
			assert_int_equal(r->op.datatype, CT_DT_UNKNOWN);
			assert_int_equal(r->op.algo, CT_ALGO_UNKNOWN);
			assert_int_equal(r->op.proto, CT_PROTO_UNKNOWN);
			assert_int_equal(r->op.count, SIZE_MAX);
			assert_int_equal(r->op.bytes, 0);
		}
		if (r->type == CT_GPU_REC_COMM && r->comm_hash == 0x0dd)
			assert_int_equal(r->comm.name[0], 0);
		net_other += r->type == CT_GPU_REC_NET_OTHER;
		assert_true(r->type != CT_GPU_REC_NET_QP);
	}
	assert_int_equal(colls, 2);
	assert_int_equal(net_other, 2);
	assert_int_equal(ct_gpu_ring_errors(&ring), 0);
}

/* Nobody reads: the ring fills, the rest is dropped and counted. */
static void test_ring_full_drops(void **state)
{
	struct drv_comm c;
	uint64_t before;
	const unsigned pairs = LANE_SLOTS + 1000;

	reset_recs();
	before = ct_gpu_ring_dropped(&ring);
	assert_int_equal(drv_init(&c, &lib, 5, 0xf011, "full", 1, 2, 0), 0);
	for (unsigned i = 0; i < pairs; i++)
		drv_coll_pair(&c, &allreduce);
	/* The comm record took one slot. */
	assert_int_equal(ct_gpu_ring_dropped(&ring) - before, pairs + 1 - LANE_SLOTS);
	assert_int_equal(c.null_handles, 0);
	drain();
	assert_int_equal(n_recs, LANE_SLOTS); /* one thread: one lane */
	/* Room again: the next record goes through. */
	drv_coll_pair(&c, &allreduce);
	assert_int_equal(drv_finalize(&c), 0);
	drain();
	assert_int_equal(n_recs, LANE_SLOTS + 2);
	assert_int_equal(ct_gpu_ring_dropped(&ring) - before, pairs + 1 - LANE_SLOTS);
}

/* More events open at once than the pool holds: NULL handles, counted. */
static void test_pool_exhaustion(void **state)
{
	struct drv_comm c;
	static void *open[POOL_EVENTS + 100];
	struct np_descr_v5 d = {.type = NP_COLL};
	unsigned got = 0;
	uint64_t errors = ct_gpu_ring_errors(&ring);

	reset_recs();
	assert_int_equal(drv_init(&c, &lib, 5, 0x9001, "pool", 1, 2, 0), 0);
	d.coll.c.func = "AllGather";
	for (unsigned i = 0; i < POOL_EVENTS + 100; i++) {
		open[i] = NULL;
		lib.v5->start_event(c.ctx, &open[i], &d);
		got += open[i] != NULL;
	}
	assert_int_equal(got, POOL_EVENTS);
	assert_int_equal(ct_gpu_ring_errors(&ring) - errors, 100);
	for (unsigned i = 0; i < POOL_EVENTS + 100; i++) {
		lib.v5->stop_event(open[i]);
		if (i % 1024 == 0)
			drain();
	}
	drain();
	assert_int_equal(count_type(0x9001, CT_GPU_REC_COLL), POOL_EVENTS);
	open[0] = NULL;
	lib.v5->start_event(c.ctx, &open[0], &d);
	assert_non_null(open[0]);
	lib.v5->stop_event(open[0]);
	assert_int_equal(drv_finalize(&c), 0);
}

static int setup(void **state)
{
	char path[512], slots[16], events[16];
	struct drv_comm c;

	if (!mkdtemp(ring_dir))
		return -1;
	setenv("COMMTAP_GPU_RING_DIR", ring_dir, 1);
	snprintf(slots, sizeof(slots), "%d", RING_SLOTS);
	snprintf(events, sizeof(events), "%d", POOL_EVENTS);
	setenv("COMMTAP_GPU_RING_SLOTS", slots, 1);
	snprintf(slots, sizeof(slots), "%d", RING_LANES);
	setenv("COMMTAP_GPU_RING_LANES", slots, 1);
	setenv("COMMTAP_NCCL_EVENTS", events, 1);
	if (drv_open(&lib, plugin_path))
		return -1;
	/* The first init creates the ring; this test reads it as the agent
	 * does, attached, so the ring outlives each communicator's finalize. */
	if (drv_init(&c, &lib, 5, 1, "setup", 1, 1, 0) || !c.ctx)
		return -1;
	drv_ring_path(path, sizeof(path));
	if (ct_gpu_ring_open(&ring, path))
		return -1;
	ct_gpu_ring_attach(&ring);
	return drv_finalize(&c) ? -1 : 0;
}

static int teardown(void **state)
{
	char path[512];

	drv_ring_path(path, sizeof(path));
	ct_gpu_ring_close(&ring);
	unlink(path);
	rmdir(ring_dir);
	free(recs);
	return 0;
}

/* In a child process whose ring cannot be created: the plugin disables
 * itself with one warning, hands NCCL an empty mask and NULL handles, and
 * every call still succeeds. Returns the child's verdict. */
static int disabled_child(void)
{
	struct drv_lib l;
	struct drv_comm c, c2;
	struct np_descr_v5 d = {.type = NP_COLL};
	void *h = (void *)1;

	setenv("COMMTAP_GPU_RING_DIR", "/nonexistent/commtap", 1);
	if (drv_open(&l, plugin_path))
		return 10;
	if (drv_init(&c, &l, 5, 7, "off", 1, 2, 0) || c.mask != 0)
		return 11;
	if (drv_init(&c2, &l, 4, 8, "off4", 1, 2, 1) || c2.mask != 0)
		return 12;
	if (l.v5->start_event(c.ctx, &h, &d) != NCCL_OK || h)
		return 13;
	if (drv_finalize(&c) || drv_finalize(&c2))
		return 14;
	return drv_warnings == 1 ? 0 : 15;
}

static void test_disabled_on_error(void **state)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(disabled_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest first[] = {cmocka_unit_test(test_disabled_on_error)};
	int rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_v5_v4),	cmocka_unit_test(test_disabled_parents),
		cmocka_unit_test(test_odd_values),	cmocka_unit_test(test_ring_full_drops),
		cmocka_unit_test(test_pool_exhaustion), cmocka_unit_test(test_each_table),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	plugin_path = argv[1];
	/* First, before this process has the plugin loaded: a failing init. */
	rc = cmocka_run_group_tests(first, NULL, NULL);
	return rc | cmocka_run_group_tests(tests, setup, teardown);
}
