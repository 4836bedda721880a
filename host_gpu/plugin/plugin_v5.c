// SPDX-License-Identifier: MIT
/* The v5 table (NCCL 2.28): API events, kernel launch, and the v4 set. */
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

static nccl_result_t v5_start(void *context, void **handle, struct np_descr_v5 *d)
{
	const struct np_ctx *ctx = context;
	struct np_event *ev;
	uint16_t type;

	if (!handle)
		return NCCL_OK;
	*handle = NULL;
	if (!ctx || !d || !(d->type & (uint64_t)ctx->mask))
		return NCCL_OK;
	/* One bit per descriptor: its position picks the record type. */
	if (d->type & (d->type - 1) || !(type = rec_type_of_bit[__builtin_ctzll(d->type) & 15]))
		return NCCL_OK;
	ev = np_event_start(ctx, type, d->rank, d->parent);
	if (!ev)
		return NCCL_OK;
	switch (type) {
	case CT_GPU_REC_GROUP_API:
		ev->rec.op.graph_captured = d->group_api.graph_captured;
		ev->rec.op.group_depth = d->group_api.group_depth;
		break;
	case CT_GPU_REC_COLL_API:
		ev->rec.op.func = np_func_id(d->coll_api.func);
		ev->rec.op.count = d->coll_api.count;
		ev->rec.op.datatype = np_dtype_id(d->coll_api.datatype);
		ev->rec.op.root = d->coll_api.root;
		ev->rec.op.peer = -1;
		ev->rec.op.stream = (uintptr_t)d->coll_api.stream;
		ev->rec.op.graph_captured = d->coll_api.graph_captured;
		break;
	case CT_GPU_REC_P2P_API:
		ev->rec.op.func = np_func_id(d->p2p_api.func);
		ev->rec.op.count = d->p2p_api.count;
		ev->rec.op.datatype = np_dtype_id(d->p2p_api.datatype);
		ev->rec.op.root = -1;
		ev->rec.op.peer = -1;
		ev->rec.op.stream = (uintptr_t)d->p2p_api.stream;
		ev->rec.op.graph_captured = d->p2p_api.graph_captured;
		break;
	case CT_GPU_REC_KERNEL_LAUNCH:
		ev->rec.op.stream = (uintptr_t)d->kernel_launch.stream;
		break;
	case CT_GPU_REC_COLL:
		np_fill_coll(ev, &d->coll.c);
		break;
	case CT_GPU_REC_P2P:
		np_fill_p2p(ev, &d->p2p.p);
		break;
	case CT_GPU_REC_PROXY_OP:
		np_fill_proxy_op(ev, &d->proxy_op);
		break;
	case CT_GPU_REC_PROXY_STEP:
		np_fill_proxy_step(ev, d->proxy_step.step);
		break;
	case CT_GPU_REC_KERNEL_CH:
		np_fill_kernel_ch(ev, &d->kernel_ch);
		break;
	case CT_GPU_REC_NET_OTHER:
		np_fill_net(ev, &d->net_plugin);
		break;
	default:
		break;
	}
	*handle = np_event_handle(ev);
	return NCCL_OK;
}

static nccl_result_t v5_stop(void *handle)
{
	np_event_stop(np_event_of(handle));
	return NCCL_OK;
}

static nccl_result_t v5_state(void *handle, int state, union np_state_args *a)
{
	np_event_state(np_event_of(handle), state, a);
	return NCCL_OK;
}

static nccl_result_t v5_finalize(void *ctx)
{
	np_ctx_finalize(ctx);
	return NCCL_OK;
}

__attribute__((visibility("default"))) const struct np_profiler_v5 ncclProfiler_v5 = {
	.name = "commtap",
	.init = v5_init,
	.start_event = v5_start,
	.stop_event = v5_stop,
	.record_event_state = v5_state,
	.finalize = v5_finalize,
};
