// SPDX-License-Identifier: MIT
/*
 * The plugin's shared clock reads: calls NCCL makes back to back on one
 * thread (group API start, its GroupStartApiStop, the collective API start;
 * group start and task starts; task stops and group stop; a step on the
 * wire and its QP event's start; a QP event's stop and its step's stop)
 * carry one time; any other call in between, or another thread, gets a
 * read of its own.
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
#include <unistd.h>

#include <cmocka.h>

#include "nccl_driver.h"

static const char *plugin_path;
static struct drv_lib lib;
static struct drv_comm comm;
static struct ct_gpu_ring ring;
static char ring_dir[] = "/tmp/commtap-gpu-clock.XXXXXX";
static struct ct_gpu_rec recs[4096];
static size_t n_recs;

static void drain(void)
{
	n_recs = 0;
	while (n_recs < sizeof(recs) / sizeof(recs[0]) &&
	       ct_gpu_ring_pop(&ring, &recs[n_recs]) == 1)
		n_recs++;
}

/* The only record of `type` drained, or fails. */
static const struct ct_gpu_rec *one(int type)
{
	const struct ct_gpu_rec *r = NULL;

	for (size_t i = 0; i < n_recs; i++) {
		if (recs[i].type == type) {
			assert_null(r);
			r = &recs[i];
		}
	}
	assert_non_null(r);
	return r;
}

static const struct ct_gpu_rec *by_id(uint64_t id)
{
	for (size_t i = 0; i < n_recs; i++)
		if (recs[i].id == id)
			return &recs[i];
	fail_msg("no record of id %llu", (unsigned long long)id);
	return NULL;
}

/* One AllReduce as NCCL emits it: the partners share, the rest read. */
static void test_collective(void **state)
{
	const struct drv_coll op = {.func = "AllReduce",
				    .datatype = "ncclFloat32",
				    .algo = "Ring",
				    .proto = "Simple",
				    .count = 1 << 20,
				    .root = -1,
				    .n_channels = 2,
				    .n_steps = 3,
				    .chunk = 65536,
				    .peer = 1,
				    .qpn_base = 0x100};
	const struct ct_gpu_rec *gapi, *capi, *group, *coll;
	unsigned long nets = 0;

	(void)state;
	drain();
	drv_collective(&comm, &op);
	drain();
	gapi = one(CT_GPU_REC_GROUP_API);
	capi = one(CT_GPU_REC_COLL_API);
	group = one(CT_GPU_REC_GROUP);
	coll = one(CT_GPU_REC_COLL);
	/* ncclGroupStart: start, GroupStartApiStop, the API event's start. */
	assert_int_equal(gapi->op.t_mark1, gapi->t_start);
	assert_int_equal(capi->t_start, gapi->t_start);
	/* The enqueue between the API event's start and stop is timed. */
	assert_true(capi->t_stop > capi->t_start);
	assert_true(gapi->op.t_mark2 > gapi->op.t_mark1);
	/* hostStreamPlanTask: group and task starts, task and group stops. */
	assert_int_equal(coll->t_start, group->t_start);
	assert_int_equal(coll->t_stop, group->t_stop);
	assert_true(group->t_start > gapi->op.t_mark2);
	for (size_t i = 0; i < n_recs; i++) {
		const struct ct_gpu_rec *net = &recs[i], *step;

		if (net->type != CT_GPU_REC_NET_QP)
			continue;
		step = by_id(net->parent_id);
		assert_int_equal(step->type, CT_GPU_REC_PROXY_STEP);
		/* isend / irecv starts the QP event, the step goes on the wire;
		 * test() completes it, the step stops. */
		assert_int_equal(net->t_start, step->proxy.t_net);
		if (step->proxy.is_send)
			assert_int_equal(step->t_stop, net->t_stop);
		else /* RecvGPUWait, after the flush, comes between: a read */
			assert_true(step->t_stop > net->t_stop);
		assert_true(net->t_stop > net->t_start);
		assert_true(step->proxy.t_net > step->t_start);
		nets++;
	}
	assert_int_equal(nets, 2 * 3);
}

static void *start_group(void *arg)
{
	struct np_descr_v5 d = {.type = NP_GROUP};

	comm.lib->v5->start_event(comm.ctx, arg, &d);
	return NULL;
}

/* Not partners: another call between them, or another thread. */
static void test_not_adjacent(void **state)
{
	struct np_descr_v5 d = {.type = NP_GROUP};
	void *group = NULL, *coll = NULL, *other = NULL;
	pthread_t th;

	(void)state;
	drain();
	/* A group API state between the group's and the task's start. */
	comm.lib->v5->start_event(comm.ctx, &other, &(struct np_descr_v5){.type = NP_GROUP_API});
	comm.lib->v5->start_event(comm.ctx, &group, &d);
	usleep(100);
	comm.lib->v5->record_event_state(other, NS_GROUP_END_API_START, NULL);
	d = (struct np_descr_v5){.type = NP_COLL, .parent = NULL};
	d.coll.c.func = "AllReduce";
	comm.lib->v5->start_event(comm.ctx, &coll, &d);
	comm.lib->v5->stop_event(coll);
	comm.lib->v5->stop_event(group);
	comm.lib->v5->stop_event(other);
	/* The group started on another thread: the task reads the clock. */
	group = coll = NULL;
	assert_int_equal(pthread_create(&th, NULL, start_group, &group), 0);
	pthread_join(th, NULL);
	usleep(100);
	comm.lib->v5->start_event(comm.ctx, &coll, &d);
	comm.lib->v5->stop_event(coll);
	comm.lib->v5->stop_event(group);
	drain();
	assert_int_equal(n_recs, 5);
	for (int k = 0; k < 2; k++) {
		const struct ct_gpu_rec *g = NULL, *c = NULL;
		int seen = 0;

		for (size_t i = 0; i < n_recs; i++) {
			if (recs[i].type == CT_GPU_REC_GROUP && seen++ == k)
				g = &recs[i];
		}
		seen = 0;
		for (size_t i = 0; i < n_recs; i++) {
			if (recs[i].type == CT_GPU_REC_COLL && seen++ == k)
				c = &recs[i];
		}
		assert_non_null(g);
		assert_non_null(c);
		assert_true(c->t_start >= g->t_start + 100000);
	}
}

static int setup(void **state)
{
	char path[512];

	(void)state;
	if (!mkdtemp(ring_dir))
		return -1;
	setenv("COMMTAP_GPU_RING_DIR", ring_dir, 1);
	setenv("COMMTAP_GPU_RING_SLOTS", "4096", 1);
	/* Every type NCCL 2.28 has under v5 but the kernel launch and the proxy
	 * control (2047 without ProxyCtrl) */
	setenv("COMMTAP_NCCL_MASK", "2015", 1);
	if (drv_open(&lib, plugin_path) || drv_init(&comm, &lib, 5, 0xc10c, "clock", 1, 2, 0) ||
	    !comm.ctx)
		goto fail;
	drv_ring_path(path, sizeof(path));
	if (ct_gpu_ring_open(&ring, path))
		goto fail;
	ct_gpu_ring_attach(&ring);
	return 0;
fail:
	/* cmocka runs no group teardown after a failed setup: nothing left in /tmp */
	if (comm.ctx)
		drv_finalize(&comm);
	drv_ring_path(path, sizeof(path));
	unlink(path);
	rmdir(ring_dir);
	return -1;
}

static int teardown(void **state)
{
	char path[512];

	(void)state;
	drv_finalize(&comm);
	drv_ring_path(path, sizeof(path));
	ct_gpu_ring_close(&ring);
	unlink(path);
	rmdir(ring_dir);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collective),
		cmocka_unit_test(test_not_adjacent),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	plugin_path = argv[1];
	return cmocka_run_group_tests(tests, setup, teardown);
}
