// SPDX-License-Identifier: MIT
/* The v4 table (NCCL 2.27): group → coll/p2p → proxy op → step → net, kernel channel. */
#include "plugin_core.h"

static nccl_result_t v4_init(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash,
			     int n_nodes, int nranks, int rank, nccl_logger_t logfn)
{
	if (ctx)
		*ctx = np_ctx_init(4, comm_hash, comm_name, n_nodes, nranks, rank, mask, logfn);
	else if (mask)
		*mask = 0;
	return NCCL_OK;
}

static nccl_result_t v4_start(void *context, void **handle, struct np_descr_v4 *d)
{
	const struct np_ctx *ctx = context;
	struct np_event *ev;

	if (!handle)
		return NCCL_OK;
	*handle = NULL;
	if (!ctx || !d || !(d->type & ctx->mask))
		return NCCL_OK;
	switch (d->type) {
	case NP_GROUP:
		ev = np_event_start(ctx, CT_GPU_REC_GROUP, d->rank, d->parent);
		break;
	case NP_COLL:
		ev = np_event_start(ctx, CT_GPU_REC_COLL, d->rank, d->parent);
		if (ev)
			np_fill_coll(ev, &d->coll);
		break;
	case NP_P2P:
		ev = np_event_start(ctx, CT_GPU_REC_P2P, d->rank, d->parent);
		if (ev)
			np_fill_p2p(ev, &d->p2p);
		break;
	case NP_PROXY_OP:
		ev = np_event_start(ctx, CT_GPU_REC_PROXY_OP, d->rank, d->parent);
		if (ev)
			np_fill_proxy_op(ev, &d->proxy_op);
		break;
	case NP_PROXY_STEP:
		ev = np_event_start(ctx, CT_GPU_REC_PROXY_STEP, d->rank, d->parent);
		if (ev)
			np_fill_proxy_step(ev, d->proxy_step.step);
		break;
	case NP_KERNEL_CH:
		ev = np_event_start(ctx, CT_GPU_REC_KERNEL_CH, d->rank, d->parent);
		if (ev)
			np_fill_kernel_ch(ev, &d->kernel_ch);
		break;
	case NP_NET_PLUGIN:
		ev = np_event_start(ctx, CT_GPU_REC_NET_OTHER, d->rank, d->parent);
		if (ev)
			np_fill_net(ev, &d->net_plugin);
		break;
	default:
		return NCCL_OK;
	}
	*handle = np_event_handle(ev);
	return NCCL_OK;
}

static nccl_result_t v4_stop(void *handle)
{
	np_event_stop(np_event_of(handle));
	return NCCL_OK;
}

static nccl_result_t v4_state(void *handle, int state, union np_state_args *a)
{
	np_event_state(np_event_of(handle), state, a);
	return NCCL_OK;
}

static nccl_result_t v4_finalize(void *ctx)
{
	np_ctx_finalize(ctx);
	return NCCL_OK;
}

__attribute__((visibility("default"))) const struct np_profiler_v4 ncclProfiler_v4 = {
	.name = "commtap",
	.init = v4_init,
	.start_event = v4_start,
	.stop_event = v4_stop,
	.record_event_state = v4_state,
	.finalize = v4_finalize,
};
