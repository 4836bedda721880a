// SPDX-License-Identifier: MIT
/* NCCL's side of the profiler plugin ABI, for the harness and the benchmark. */
#include "nccl_driver.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int drv_warnings;

static void drv_log(int level, unsigned long flags, const char *file, int line, const char *fmt,
		    ...)
{
	va_list ap;

	if (level <= NCCL_LOG_WARN)
		__atomic_fetch_add(&drv_warnings, 1, __ATOMIC_RELAXED);
	if (level > NCCL_LOG_WARN && !getenv("COMMTAP_DRIVER_VERBOSE"))
		return;
	va_start(ap, fmt);
	fprintf(stderr, "NCCL %s:%d ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int drv_open(struct drv_lib *lib, const char *path)
{
	memset(lib, 0, sizeof(*lib));
	lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib->dl) {
		fprintf(stderr, "%s\n", dlerror());
		return -1;
	}
	lib->v5 = dlsym(lib->dl, "ncclProfiler_v5");
	lib->v4 = dlsym(lib->dl, "ncclProfiler_v4");
	return lib->v5 && lib->v4 ? 0 : -1;
}

void drv_close(struct drv_lib *lib)
{
	if (lib->dl)
		dlclose(lib->dl);
	lib->dl = NULL;
}

int drv_ring_path(char *buf, size_t len)
{
	const char *dir = getenv("COMMTAP_GPU_RING_DIR");

	return ct_gpu_ring_path(buf, len, dir && *dir ? dir : "/dev/shm", "nccl", getpid());
}

int drv_init(struct drv_comm *c, struct drv_lib *lib, int version, uint64_t hash, const char *name,
	     int n_nodes, int nranks, int rank)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->lib = lib;
	c->version = version;
	c->hash = hash;
	c->rank = rank;
	c->nranks = nranks;
	if (version == 5)
		rc = lib->v5->init(&c->ctx, hash, &c->mask, name, n_nodes, nranks, rank, drv_log);
	else
		rc = lib->v4->init(&c->ctx, &c->mask, name, hash, n_nodes, nranks, rank, drv_log);
	return rc == NCCL_OK ? 0 : -1;
}

int drv_finalize(struct drv_comm *c)
{
	const struct np_profiler_v5 *v5 = c->lib->v5;
	const struct np_profiler_v4 *v4 = c->lib->v4;

	return (c->version == 5 ? v5->finalize(c->ctx) : v4->finalize(c->ctx)) == NCCL_OK ? 0 : -1;
}

static int rec_type_of(uint64_t bit)
{
	switch (bit) {
	case NP_GROUP_API:
		return CT_GPU_REC_GROUP_API;
	case NP_COLL_API:
		return CT_GPU_REC_COLL_API;
	case NP_P2P_API:
		return CT_GPU_REC_P2P_API;
	case NP_KERNEL_LAUNCH:
		return CT_GPU_REC_KERNEL_LAUNCH;
	case NP_GROUP:
		return CT_GPU_REC_GROUP;
	case NP_COLL:
		return CT_GPU_REC_COLL;
	case NP_P2P:
		return CT_GPU_REC_P2P;
	case NP_PROXY_OP:
		return CT_GPU_REC_PROXY_OP;
	case NP_PROXY_STEP:
		return CT_GPU_REC_PROXY_STEP;
	case NP_KERNEL_CH:
		return CT_GPU_REC_KERNEL_CH;
	case NP_NET_PLUGIN:
		return CT_GPU_REC_NET_QP;
	default:
		return 0;
	}
}

/* Start an event described by a v5 descriptor; v4 gets the same fields. */
static void *start(struct drv_comm *c, struct np_descr_v5 *d)
{
	void *h = NULL;

	if (!(c->mask & d->type))
		return NULL; /* NCCL never starts a disabled type */
	d->rank = c->rank;
	if (c->version == 5) {
		c->lib->v5->start_event(c->ctx, &h, d);
	} else {
		struct np_descr_v4 d4;

		memset(&d4, 0, sizeof(d4));
		d4.type = (uint8_t)d->type;
		d4.parent = d->parent;
		d4.rank = d->rank;
		switch (d->type) {
		case NP_COLL:
			d4.coll = d->coll.c;
			break;
		case NP_P2P:
			d4.p2p = d->p2p.p;
			break;
		case NP_PROXY_OP:
			d4.proxy_op = d->proxy_op;
			break;
		case NP_PROXY_STEP:
			d4.proxy_step.step = d->proxy_step.step;
			break;
		case NP_KERNEL_CH:
			d4.kernel_ch = d->kernel_ch;
			break;
		case NP_NET_PLUGIN:
			d4.net_plugin = d->net_plugin;
			break;
		default:
			break;
		}
		c->lib->v4->start_event(c->ctx, &h, &d4);
	}
	if (h)
		c->started[rec_type_of(d->type)]++;
	else
		c->null_handles++;
	return h;
}

static void stop(struct drv_comm *c, void *h)
{
	if (!h)
		return;
	if (c->version == 5)
		c->lib->v5->stop_event(h);
	else
		c->lib->v4->stop_event(h);
}

static void state(struct drv_comm *c, void *h, int s, union np_state_args *a)
{
	if (!h)
		return;
	if (c->version == 5)
		c->lib->v5->record_event_state(h, s, a);
	else
		c->lib->v4->record_event_state(h, s, a);
}

/* The proxy thread's and the kernel's events for one operation. */
static void proxy_and_kernel(struct drv_comm *c, void *op_handle, int n_channels, int n_steps,
			     int chunk, int peer, int qpn_base, void *net_data, int net_null,
			     int64_t net_id, int send_only)
{
	for (int ch = 0; ch < n_channels; ch++) {
		struct np_descr_v5 d = {.type = NP_PROXY_OP, .parent = op_handle};
		int is_send = send_only >= 0 ? send_only : !(ch & 1);
		void *op;

		d.proxy_op.pid = getpid();
		d.proxy_op.channel_id = (uint8_t)ch;
		d.proxy_op.peer = peer;
		d.proxy_op.n_steps = n_steps;
		d.proxy_op.chunk_size = chunk;
		d.proxy_op.is_send = is_send;
		op = start(c, &d);
		state(c, op, NS_PROXY_OP_IN_PROGRESS, NULL);
		for (int s = 0; s < n_steps; s++) {
			struct np_descr_v5 ds = {.type = NP_PROXY_STEP, .parent = op};
			union np_state_args a = {.proxy_step.trans_size = (size_t)chunk};
			struct np_net_ib_descr_v1 ib = {.type = NP_NET_IB_QP};
			struct np_descr_v5 dn = {.type = NP_NET_PLUGIN};
			void *step, *net;

			ds.proxy_step.step = s;
			step = start(c, &ds);
			state(c, step, is_send ? NS_STEP_SEND_GPU_WAIT : NS_STEP_RECV_WAIT, NULL);
			state(c, step, is_send ? NS_STEP_SEND_WAIT : NS_STEP_RECV_FLUSH_WAIT, &a);
			ib.qp.device = 0;
			ib.qp.wr_id = (uint64_t)s;
			ib.qp.opcode = is_send ? 4 /* IBV_WR_RDMA_WRITE_WITH_IMM */ : 0;
			ib.qp.qp_num = qpn_base + ch;
			ib.qp.length = (size_t)chunk;
			dn.parent = step;
			dn.net_plugin.id = net_id ? net_id : (int64_t)(NP_NET_TYPE_IB | 1);
			dn.net_plugin.data = net_null ? NULL : net_data ? net_data : &ib;
			net = start(c, &dn);
			state(c, net, NS_NET_PLUGIN_UPDATE, NULL);
			stop(c, net);
			if (!is_send)
				state(c, step, NS_STEP_RECV_GPU_WAIT, &a);
			stop(c, step);
		}
		stop(c, op);
	}
	for (int ch = 0; ch < n_channels; ch++) {
		struct np_descr_v5 d = {.type = NP_KERNEL_CH, .parent = op_handle};
		union np_state_args a;
		void *kc;

		d.kernel_ch.channel_id = (uint8_t)ch;
		d.kernel_ch.p_timer = 1000000000ull + (uint64_t)ch;
		kc = start(c, &d);
		a.kernel_ch.p_timer = d.kernel_ch.p_timer + 50000;
		state(c, kc, NS_KERNEL_CH_STOP, &a);
		stop(c, kc);
	}
}

void drv_collective(struct drv_comm *c, const struct drv_coll *op)
{
	struct np_descr_v5 d;
	void *group_api = NULL, *coll_api = NULL, *group, *coll, *launch;
	int stream;

	if (c->version == 5) {
		d = (struct np_descr_v5){.type = NP_GROUP_API};
		d.group_api.group_depth = 1;
		group_api = start(c, &d);
		state(c, group_api, NS_GROUP_START_API_STOP, NULL);
		d = (struct np_descr_v5){.type = NP_COLL_API, .parent = group_api};
		d.coll_api.func = op->func;
		d.coll_api.count = op->count;
		d.coll_api.datatype = op->datatype;
		d.coll_api.root = op->root;
		d.coll_api.stream = &stream;
		coll_api = start(c, &d);
		stop(c, coll_api);
		state(c, group_api, NS_GROUP_END_API_START, NULL);
	}
	/* The launch plan: a group, the collective, the kernel launch. */
	d = (struct np_descr_v5){.type = NP_GROUP};
	group = start(c, &d);
	d = (struct np_descr_v5){.type = NP_COLL, .parent = c->version == 5 ? coll_api : group};
	d.coll.c.seq_number = op->seq;
	d.coll.c.func = op->func;
	d.coll.c.count = op->count;
	d.coll.c.root = op->root;
	d.coll.c.datatype = op->datatype;
	d.coll.c.n_channels = (uint8_t)op->n_channels;
	d.coll.c.n_warps = 16;
	d.coll.c.algo = op->algo;
	d.coll.c.proto = op->proto;
	d.coll.parent_group = group;
	coll = start(c, &d);
	if (c->version == 5) {
		d = (struct np_descr_v5){.type = NP_KERNEL_LAUNCH, .parent = group_api};
		d.kernel_launch.stream = &stream;
		launch = start(c, &d);
		stop(c, launch);
	}
	stop(c, coll); /* enqueued: the children come after */
	stop(c, group);
	stop(c, group_api);
	proxy_and_kernel(c, coll, op->n_channels, op->n_steps, op->chunk, op->peer, op->qpn_base,
			 op->net_data_override, op->net_data_null, op->net_id_override, -1);
}

void drv_p2p(struct drv_comm *c, const char *func, size_t count, int peer, int n_steps)
{
	struct np_descr_v5 d;
	void *group_api = NULL, *p2p_api = NULL, *group, *p2p;
	int is_send = func && !strcmp(func, "Send");

	if (c->version == 5) {
		d = (struct np_descr_v5){.type = NP_GROUP_API};
		d.group_api.group_depth = 1;
		group_api = start(c, &d);
		d = (struct np_descr_v5){.type = NP_P2P_API, .parent = group_api};
		d.p2p_api.func = func;
		d.p2p_api.count = count;
		d.p2p_api.datatype = "ncclBfloat16";
		p2p_api = start(c, &d);
		stop(c, p2p_api);
	}
	d = (struct np_descr_v5){.type = NP_GROUP};
	group = start(c, &d);
	d = (struct np_descr_v5){.type = NP_P2P, .parent = c->version == 5 ? p2p_api : group};
	d.p2p.p.func = func;
	d.p2p.p.count = count;
	d.p2p.p.datatype = "ncclBfloat16";
	d.p2p.p.peer = peer;
	d.p2p.p.n_channels = 1;
	d.p2p.parent_group = group;
	p2p = start(c, &d);
	stop(c, p2p);
	stop(c, group);
	stop(c, group_api);
	proxy_and_kernel(c, p2p, 1, n_steps, (int)(count * 2 / (size_t)(n_steps ? n_steps : 1)),
			 peer, 0x300, NULL, 0, 0, is_send);
}

void drv_coll_pair(struct drv_comm *c, const struct drv_coll *op)
{
	struct np_descr_v5 d = {.type = NP_COLL};
	void *h;

	d.coll.c.seq_number = op->seq;
	d.coll.c.func = op->func;
	d.coll.c.count = op->count;
	d.coll.c.datatype = op->datatype;
	d.coll.c.n_channels = (uint8_t)op->n_channels;
	d.coll.c.algo = op->algo;
	d.coll.c.proto = op->proto;
	h = start(c, &d);
	stop(c, h);
}
