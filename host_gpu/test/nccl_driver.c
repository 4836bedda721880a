// SPDX-License-Identifier: MIT
/* NCCL's side of the profiler plugin ABI, for the harness and the benchmark. */
#include "nccl_driver.h"

#include "commtap/gpu_ring_dir.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

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
	lib->v6 = dlsym(lib->dl, "ncclProfiler_v6");
	lib->v5 = dlsym(lib->dl, "ncclProfiler_v5");
	lib->v4 = dlsym(lib->dl, "ncclProfiler_v4");
	return lib->v6 || lib->v5 || lib->v4 ? 0 : -1;
}

int drv_newest(const struct drv_lib *lib)
{
	return lib->v6 ? 6 : lib->v5 ? 5 : lib->v4 ? 4 : 0;
}

void drv_close(struct drv_lib *lib)
{
	if (lib->dl)
		dlclose(lib->dl);
	lib->dl = NULL;
}

int drv_ring_path(char *buf, size_t len)
{
	char dir[512];
	int err = ct_gpu_ring_dir_path(dir, sizeof(dir));

	return err ? err : ct_gpu_ring_path(buf, len, dir, "nccl", getpid());
}

int drv_init(struct drv_comm *c, struct drv_lib *lib, int version, uint64_t hash, const char *name,
	     int n_nodes, int nranks, int rank)
{
	int rc, mask;

	memset(c, 0, sizeof(*c));
	c->lib = lib;
	c->version = version;
	c->hash = hash;
	c->rank = rank;
	c->nranks = nranks;
	/* As NCCL: one mask for the process, handed to every init (a plugin
	 * may set it at its first init only); each comm keeps what it saw.
	 * The init writes a copy: comms of different profiler versions, which
	 * one NCCL never mixes but test_threads_v5_v4 does, each keep their
	 * own (through the shared int a v5 comm read v4's mask in 3 runs of 40
	 * on a loaded machine). */
	mask = __atomic_load_n(&lib->mask, __ATOMIC_RELAXED);
	if (version == 6 && lib->v6)
		rc = lib->v6->init(&c->ctx, hash, &mask, name, n_nodes, nranks, rank, drv_log);
	else if (version == 5 && lib->v5)
		rc = lib->v5->init(&c->ctx, hash, &mask, name, n_nodes, nranks, rank, drv_log);
	else if (version == 4 && lib->v4)
		rc = lib->v4->init(&c->ctx, &mask, name, hash, n_nodes, nranks, rank, drv_log);
	else
		rc = NCCL_INTERNAL_ERROR;
	c->mask = mask;
	__atomic_store_n(&lib->mask, mask, __ATOMIC_RELAXED);
	return rc == NCCL_OK ? 0 : -1;
}

int drv_finalize(struct drv_comm *c)
{
	nccl_result_t rc;

	if (c->version == 6)
		rc = c->lib->v6->finalize(c->ctx);
	else if (c->version == 5)
		rc = c->lib->v5->finalize(c->ctx);
	else
		rc = c->lib->v4->finalize(c->ctx);
	return rc == NCCL_OK ? 0 : -1;
}

static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

static void cost_add(struct drv_comm *c, uint64_t type, uint64_t t0, int started)
{
	unsigned bit = (unsigned)__builtin_ctzll(type) & 15;

	c->cost->ticks[bit] += ticks() - t0;
	c->cost->events[bit] += (uint64_t)started;
	c->cost->calls[bit]++;
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
	case NP_CE_COLL:
		return CT_GPU_REC_CE_COLL;
	case NP_CE_SYNC:
		return CT_GPU_REC_CE_SYNC;
	case NP_CE_BATCH:
		return CT_GPU_REC_CE_BATCH;
	default:
		return 0;
	}
}

/* Start an event described by a v6 descriptor; v5 gets its leading part
 * (the same offsets), v4 the same fields in its own layout. */
static void *start(struct drv_comm *c, struct np_descr_v6 *d)
{
	uint64_t t0 = c->cost ? ticks() : 0;
	void *h = NULL;

	if (!(c->mask & d->type))
		return NULL; /* NCCL never starts a disabled type */
	d->rank = c->rank;
	if (c->version == 6) {
		c->lib->v6->start_event(c->ctx, &h, d);
	} else if (c->version == 5) {
		struct np_descr_v5 d5;

		memcpy(&d5, d, sizeof(d5));
		c->lib->v5->start_event(c->ctx, &h, &d5);
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
	if (c->cost)
		cost_add(c, d->type, t0, 1);
	if (h)
		c->started[rec_type_of(d->type)]++;
	else
		c->null_handles++;
	return h;
}

/* `type`: the event's bit, for the timing only. */
static void stop(struct drv_comm *c, void *h, uint64_t type)
{
	uint64_t t0;

	if (!h)
		return;
	t0 = c->cost ? ticks() : 0;
	if (c->version == 6)
		c->lib->v6->stop_event(h);
	else if (c->version == 5)
		c->lib->v5->stop_event(h);
	else
		c->lib->v4->stop_event(h);
	if (c->cost)
		cost_add(c, type, t0, 0);
}

static void state(struct drv_comm *c, void *h, uint64_t type, int s, union np_state_args *a)
{
	uint64_t t0;

	if (!h)
		return;
	t0 = c->cost ? ticks() : 0;
	if (c->version == 6)
		c->lib->v6->record_event_state(h, s, a);
	else if (c->version == 5)
		c->lib->v5->record_event_state(h, s, a);
	else
		c->lib->v4->record_event_state(h, s, a);
	if (c->cost)
		cost_add(c, type, t0, 0);
}

#define DRV_MAX_CH 64

/* The proxy thread's and the kernel's events for one operation, in NCCL's
 * order: the proxy ops of every channel start when the operation is
 * appended, the kernel channels when the kernel is seen running, the steps
 * of the channels interleave, then the kernel channels and the proxy ops
 * stop. A plugin that counts open children (NVIDIA's example) relies on
 * the siblings overlapping like this. */
static void proxy_and_kernel(struct drv_comm *c, void *op_handle, int n_channels, int n_steps,
			     int chunk, int peer, int qpn_base, void *net_data, int net_null,
			     int64_t net_id, int send_only)
{
	void *op[DRV_MAX_CH], *kc[DRV_MAX_CH];

	if (n_channels > DRV_MAX_CH)
		n_channels = DRV_MAX_CH;
	for (int ch = 0; ch < n_channels; ch++) {
		struct np_descr_v6 d = {.type = NP_PROXY_OP, .parent = op_handle};

		d.proxy_op.pid = getpid();
		d.proxy_op.channel_id = (uint8_t)ch;
		d.proxy_op.peer = peer;
		d.proxy_op.n_steps = n_steps;
		d.proxy_op.chunk_size = chunk;
		d.proxy_op.is_send = send_only >= 0 ? send_only : !(ch & 1);
		op[ch] = start(c, &d);
		state(c, op[ch], NP_PROXY_OP, NS_PROXY_OP_IN_PROGRESS, NULL);
	}
	for (int ch = 0; ch < n_channels; ch++) {
		struct np_descr_v6 d = {.type = NP_KERNEL_CH, .parent = op_handle};

		d.kernel_ch.channel_id = (uint8_t)ch;
		d.kernel_ch.p_timer = 1000000000ull + (uint64_t)ch;
		kc[ch] = start(c, &d);
	}
	for (int s = 0; s < n_steps; s++) {
		for (int ch = 0; ch < n_channels; ch++) {
			struct np_descr_v6 ds = {.type = NP_PROXY_STEP, .parent = op[ch]};
			union np_state_args a = {.proxy_step.trans_size = (size_t)chunk};
			struct np_net_ib_descr_v1 ib = {.type = NP_NET_IB_QP};
			struct np_descr_v6 dn = {.type = NP_NET_PLUGIN};
			int is_send = send_only >= 0 ? send_only : !(ch & 1);
			void *step, *net;

			ds.proxy_step.step = s;
			step = start(c, &ds);
			state(c, step, NP_PROXY_STEP,
			      is_send ? NS_STEP_SEND_GPU_WAIT : NS_STEP_RECV_WAIT, NULL);
			state(c, step, NP_PROXY_STEP,
			      is_send ? NS_STEP_SEND_WAIT : NS_STEP_RECV_FLUSH_WAIT, &a);
			ib.qp.device = 0;
			ib.qp.wr_id = (uint64_t)s;
			ib.qp.opcode = is_send ? 4 /* IBV_WR_RDMA_WRITE_WITH_IMM */ : 0;
			ib.qp.qp_num = qpn_base + ch;
			ib.qp.length = (size_t)chunk;
			dn.parent = step;
			dn.net_plugin.id = net_id ? net_id : (int64_t)(NP_NET_TYPE_IB | 1);
			dn.net_plugin.data = net_null ? NULL : net_data ? net_data : &ib;
			net = start(c, &dn);
			state(c, net, NP_NET_PLUGIN, NS_NET_PLUGIN_UPDATE, NULL);
			stop(c, net, NP_NET_PLUGIN);
			if (!is_send)
				state(c, step, NP_PROXY_STEP, NS_STEP_RECV_GPU_WAIT, &a);
			stop(c, step, NP_PROXY_STEP);
		}
	}
	for (int ch = 0; ch < n_channels; ch++) {
		union np_state_args a = {.kernel_ch.p_timer = 1000000000ull + (uint64_t)ch + 50000};

		state(c, kc[ch], NP_KERNEL_CH, NS_KERNEL_CH_STOP, &a);
		stop(c, kc[ch], NP_KERNEL_CH);
	}
	for (int ch = 0; ch < n_channels; ch++)
		stop(c, op[ch], NP_PROXY_OP);
}

static int stream_token; /* stands for a cudaStream_t */

void *drv_coll_launch(struct drv_comm *c, const struct drv_coll *op)
{
	struct np_descr_v6 d;
	void *group_api = NULL, *coll_api = NULL, *group, *coll, *launch;

	if (c->version >= 5) {
		d = (struct np_descr_v6){.type = NP_GROUP_API};
		d.group_api.group_depth = 1;
		group_api = start(c, &d);
		state(c, group_api, NP_GROUP_API, NS_GROUP_START_API_STOP, NULL);
		d = (struct np_descr_v6){.type = NP_COLL_API, .parent = group_api};
		d.coll_api.func = op->func;
		d.coll_api.count = op->count;
		d.coll_api.datatype = op->datatype;
		d.coll_api.root = op->root;
		d.coll_api.stream = &stream_token;
		coll_api = start(c, &d);
		stop(c, coll_api, NP_COLL_API);
		state(c, group_api, NP_GROUP_API, NS_GROUP_END_API_START, NULL);
	}
	/* The launch plan: a group, the collective, the kernel launch. */
	d = (struct np_descr_v6){.type = NP_GROUP};
	group = start(c, &d);
	d = (struct np_descr_v6){.type = NP_COLL, .parent = c->version >= 5 ? coll_api : group};
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
	if (c->version >= 5) {
		d = (struct np_descr_v6){.type = NP_KERNEL_LAUNCH, .parent = group_api};
		d.kernel_launch.stream = &stream_token;
		launch = start(c, &d);
		stop(c, launch, NP_KERNEL_LAUNCH);
	}
	stop(c, coll, NP_COLL); /* enqueued: the children come after */
	stop(c, group, NP_GROUP);
	stop(c, group_api, NP_GROUP_API);
	return coll;
}

void drv_coll_progress(struct drv_comm *c, void *coll, const struct drv_coll *op)
{
	proxy_and_kernel(c, coll, op->n_channels, op->n_steps, op->chunk, op->peer, op->qpn_base,
			 op->net_data_override, op->net_data_null, op->net_id_override, -1);
}

void drv_collective(struct drv_comm *c, const struct drv_coll *op)
{
	drv_coll_progress(c, drv_coll_launch(c, op), op);
}

void *drv_p2p_launch(struct drv_comm *c, const char *func, size_t count, int peer)
{
	struct np_descr_v6 d;
	void *group_api = NULL, *p2p_api = NULL, *group, *p2p;

	if (c->version >= 5) {
		d = (struct np_descr_v6){.type = NP_GROUP_API};
		d.group_api.group_depth = 1;
		group_api = start(c, &d);
		d = (struct np_descr_v6){.type = NP_P2P_API, .parent = group_api};
		d.p2p_api.func = func;
		d.p2p_api.count = count;
		d.p2p_api.datatype = "ncclBfloat16";
		p2p_api = start(c, &d);
		stop(c, p2p_api, NP_P2P_API);
	}
	d = (struct np_descr_v6){.type = NP_GROUP};
	group = start(c, &d);
	d = (struct np_descr_v6){.type = NP_P2P, .parent = c->version >= 5 ? p2p_api : group};
	d.p2p.p.func = func;
	d.p2p.p.count = count;
	d.p2p.p.datatype = "ncclBfloat16";
	d.p2p.p.peer = peer;
	d.p2p.p.n_channels = 1;
	d.p2p.parent_group = group;
	p2p = start(c, &d);
	stop(c, p2p, NP_P2P);
	stop(c, group, NP_GROUP);
	stop(c, group_api, NP_GROUP_API);
	return p2p;
}

void drv_p2p_progress(struct drv_comm *c, void *p2p, const char *func, size_t count, int peer,
		      int n_steps)
{
	int is_send = func && !strcmp(func, "Send");

	proxy_and_kernel(c, p2p, 1, n_steps, (int)(count * 2 / (size_t)(n_steps ? n_steps : 1)),
			 peer, 0x300, NULL, 0, 0, is_send);
}

void drv_p2p(struct drv_comm *c, const char *func, size_t count, int peer, int n_steps)
{
	drv_p2p_progress(c, drv_p2p_launch(c, func, count, peer), func, count, peer, n_steps);
}

void drv_ce_collective(struct drv_comm *c, const struct drv_coll *op, int n_batches)
{
	struct np_descr_v6 d;
	void *group_api, *coll_api, *ce, *sync;

	if (c->version < 6)
		return;
	d = (struct np_descr_v6){.type = NP_GROUP_API};
	d.group_api.group_depth = 1;
	group_api = start(c, &d);
	d = (struct np_descr_v6){.type = NP_COLL_API, .parent = group_api};
	d.coll_api.func = op->func;
	d.coll_api.count = op->count;
	d.coll_api.datatype = op->datatype;
	d.coll_api.root = op->root;
	d.coll_api.stream = &stream_token;
	coll_api = start(c, &d);
	stop(c, coll_api, NP_COLL_API); /* enqueued; the CE work follows at group end */
	d = (struct np_descr_v6){.type = NP_CE_COLL, .parent = coll_api};
	d.ce_coll.seq_number = op->seq;
	d.ce_coll.func = op->func;
	d.ce_coll.count = op->count;
	d.ce_coll.root = op->root;
	d.ce_coll.datatype = op->datatype;
	d.ce_coll.sync_strategy = "UC";
	d.ce_coll.ce_seq = (uint32_t)op->seq;
	d.ce_coll.stream = &stream_token;
	ce = start(c, &d);
	d = (struct np_descr_v6){.type = NP_CE_SYNC, .parent = ce};
	d.ce_sync.is_complete = false;
	d.ce_sync.n_ranks = c->nranks;
	sync = start(c, &d);
	stop(c, sync, NP_CE_SYNC);
	for (int b = 0; b < n_batches; b++) {
		void *batch;

		d = (struct np_descr_v6){.type = NP_CE_BATCH, .parent = ce};
		d.ce_batch.num_ops = c->nranks;
		d.ce_batch.total_bytes = op->count * 2 / (size_t)(n_batches ? n_batches : 1);
		batch = start(c, &d);
		stop(c, batch, NP_CE_BATCH);
	}
	d = (struct np_descr_v6){.type = NP_CE_SYNC, .parent = ce};
	d.ce_sync.is_complete = true;
	d.ce_sync.n_ranks = c->nranks;
	sync = start(c, &d);
	stop(c, sync, NP_CE_SYNC);
	stop(c, ce, NP_CE_COLL);
	stop(c, group_api, NP_GROUP_API);
}

void drv_coll_pair(struct drv_comm *c, const struct drv_coll *op)
{
	struct np_descr_v6 d = {.type = NP_COLL};
	void *h;

	d.coll.c.seq_number = op->seq;
	d.coll.c.func = op->func;
	d.coll.c.count = op->count;
	d.coll.c.datatype = op->datatype;
	d.coll.c.n_channels = (uint8_t)op->n_channels;
	d.coll.c.algo = op->algo;
	d.coll.c.proto = op->proto;
	h = start(c, &d);
	stop(c, h, NP_COLL);
}
