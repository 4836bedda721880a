// SPDX-License-Identifier: MIT
/* The v5 table (NCCL 2.28): API events, kernel launch, and the v4 set; its
 * event set is v6's too. */
#include "plugin_core.h"

#include "commtap/gpu_names.h"

static nccl_result_t v5_init(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
			     int n_nodes, int nranks, int rank, nccl_logger_t logfn)
{
	if (ctx)
		*ctx = np_ctx_init(5, comm_id, comm_name, n_nodes, nranks, rank, mask, logfn);
	else if (mask)
		*mask = 0;
	return NCCL_OK;
}

/* Record type of each event bit v5 knows (0: none). */
static const uint16_t rec_type_of_bit[16] = {
	[0] = CT_GPU_REC_GROUP,	    [1] = CT_GPU_REC_COLL,	     [2] = CT_GPU_REC_P2P,
	[3] = CT_GPU_REC_PROXY_OP,  [4] = CT_GPU_REC_PROXY_STEP,     [6] = CT_GPU_REC_KERNEL_CH,
	[7] = CT_GPU_REC_NET_OTHER, [8] = CT_GPU_REC_GROUP_API,	     [9] = CT_GPU_REC_COLL_API,
	[10] = CT_GPU_REC_P2P_API,  [11] = CT_GPU_REC_KERNEL_LAUNCH,
};

/* The v5 event set, shared with v6: `u` is the descriptor's union (the same
 * member types at the same offsets in both). */
nccl_result_t np_start_v5(const struct np_ctx *ctx, void **handle, uint64_t type_bit, void *parent,
			  int rank, const void *u)
{
	struct np_event *ev;
	uint16_t type;

	/* One bit per descriptor: its position picks the record type. */
	if (type_bit & (type_bit - 1) || !(type = rec_type_of_bit[__builtin_ctzll(type_bit) & 15]))
		return NCCL_OK;
	ev = np_event_start(ctx, type, rank, parent);
	if (!ev)
		return NCCL_OK;
	switch (type) {
	case CT_GPU_REC_GROUP_API: {
		const struct np_group_api *g = u;

		ev->rec.op.graph_captured = g->graph_captured;
		ev->rec.op.group_depth = g->group_depth;
		break;
	}
	case CT_GPU_REC_COLL_API: {
		const struct np_coll_api *c = u;

		ev->rec.op.func = np_func_id(c->func);
		ev->rec.op.count = c->count;
		ev->rec.op.datatype = np_dtype_id(c->datatype);
		ev->rec.op.root = c->root;
		ev->rec.op.peer = -1;
		ev->rec.op.stream = (uintptr_t)c->stream;
		ev->rec.op.graph_captured = c->graph_captured;
		break;
	}
	case CT_GPU_REC_P2P_API: {
		const struct np_p2p_api *p = u;

		ev->rec.op.func = np_func_id(p->func);
		ev->rec.op.count = p->count;
		ev->rec.op.datatype = np_dtype_id(p->datatype);
		ev->rec.op.root = -1;
		ev->rec.op.peer = -1;
		ev->rec.op.stream = (uintptr_t)p->stream;
		ev->rec.op.graph_captured = p->graph_captured;
		break;
	}
	case CT_GPU_REC_KERNEL_LAUNCH:
		ev->rec.op.stream = (uintptr_t)((const struct np_kernel_launch *)u)->stream;
		break;
	case CT_GPU_REC_COLL:
		np_fill_coll(ev, &((const struct np_coll_v5 *)u)->c);
		break;
	case CT_GPU_REC_P2P:
		np_fill_p2p(ev, &((const struct np_p2p_v5 *)u)->p);
		break;
	case CT_GPU_REC_PROXY_OP:
		np_fill_proxy_op(ev, u);
		break;
	case CT_GPU_REC_PROXY_STEP:
		np_fill_proxy_step(ev, ((const struct np_proxy_step *)u)->step);
		break;
	case CT_GPU_REC_KERNEL_CH:
		np_fill_kernel_ch(ev, u);
		break;
	case CT_GPU_REC_NET_OTHER:
		np_fill_net(ev, u);
		break;
	default:
		break;
	}
	*handle = np_event_handle(ev);
	return NCCL_OK;
}

static nccl_result_t v5_start(void *context, void **handle, struct np_descr_v5 *d)
{
	const struct np_ctx *ctx = context;

	if (!handle)
		return NCCL_OK;
	*handle = NULL;
	if (!ctx || !d || !(d->type & (uint64_t)ctx->mask))
		return NCCL_OK;
	return np_start_v5(ctx, handle, d->type, d->parent, d->rank, &d->group_api);
}

/* Stop, state and finalize are the same for v5 and v6. */
nccl_result_t np_stop(void *handle)
{
	np_event_stop(np_event_of(handle));
	return NCCL_OK;
}

nccl_result_t np_state(void *handle, int state, union np_state_args *a)
{
	np_event_state(np_event_of(handle), state, a);
	return NCCL_OK;
}

nccl_result_t np_finalize(void *ctx)
{
	np_ctx_finalize(ctx);
	return NCCL_OK;
}

__attribute__((visibility("default"))) const struct np_profiler_v5 ncclProfiler_v5 = {
	.name = "commtap",
	.init = v5_init,
	.start_event = v5_start,
	.stop_event = np_stop,
	.record_event_state = np_state,
	.finalize = np_finalize,
};
