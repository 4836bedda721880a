// SPDX-License-Identifier: MIT
/*
 * The v6 table (NCCL 2.29, 2.30): the v5 event set plus the copy-engine
 * collective events: a CE collective (child of its collective API event),
 * its synchronisations and its batches of copies (children of the CE
 * collective). NCCL takes this table when it knows v6.
 */
#include "plugin_core.h"

#include <string.h>

#include "commtap/gpu_names.h"

static nccl_result_t v6_init(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
			     int n_nodes, int nranks, int rank, nccl_logger_t logfn)
{
	if (ctx)
		*ctx = np_ctx_init(6, comm_id, comm_name, n_nodes, nranks, rank, mask, logfn);
	else if (mask)
		*mask = 0;
	return NCCL_OK;
}

static uint8_t sync_id(const char *s)
{
	if (!s)
		return 0;
	return !strcmp(s, "MC") ? 1 : !strcmp(s, "UC") ? 2 : 0;
}

static void fill_ce_coll(struct np_event *ev, const struct np_descr_v6 *d)
{
	struct ct_gpu_ce_info *ce = &ev->rec.ce;
	unsigned sz;

	ce->seq = d->ce_coll.seq_number;
	ce->count = d->ce_coll.count;
	ce->func = np_func_id(d->ce_coll.func);
	ce->datatype = np_dtype_id(d->ce_coll.datatype);
	sz = ct_gpu_dtype_size(ce->datatype);
	ce->bytes = sz && ce->count <= UINT64_MAX / sz ? ce->count * sz : 0;
	ce->stream = (uintptr_t)d->ce_coll.stream;
	ce->sync = sync_id(d->ce_coll.sync_strategy);
	ce->intra_sync = d->ce_coll.intra_batch_sync;
	ce->root = d->ce_coll.root;
	ce->batch_size = d->ce_coll.batch_size;
	ce->n_batches = d->ce_coll.num_batches;
	ce->ce_seq = d->ce_coll.ce_seq;
}

static nccl_result_t v6_start(void *context, void **handle, struct np_descr_v6 *d)
{
	const struct np_ctx *ctx = context;
	struct np_event *ev;

	if (!handle)
		return NCCL_OK;
	*handle = NULL;
	if (!ctx || !d || !(d->type & (uint64_t)ctx->mask))
		return NCCL_OK;
	switch (d->type) {
	case NP_CE_COLL:
		ev = np_event_start(ctx, CT_GPU_REC_CE_COLL, d->rank, d->parent);
		if (ev)
			fill_ce_coll(ev, d);
		break;
	case NP_CE_SYNC:
		ev = np_event_start(ctx, CT_GPU_REC_CE_SYNC, d->rank, d->parent);
		if (ev) {
			ev->rec.ce.complete = d->ce_sync.is_complete;
			ev->rec.ce.n_ranks = d->ce_sync.n_ranks;
		}
		break;
	case NP_CE_BATCH:
		ev = np_event_start(ctx, CT_GPU_REC_CE_BATCH, d->rank, d->parent);
		if (ev) {
			ev->rec.ce.n_ops = d->ce_batch.num_ops;
			ev->rec.ce.bytes = d->ce_batch.total_bytes;
			ev->rec.ce.intra_sync = d->ce_batch.use_intra_sync;
		}
		break;
	default:
		return np_start_v5(ctx, handle, d->type, d->parent, d->rank, &d->group_api);
	}
	*handle = np_event_handle(ev);
	return NCCL_OK;
}

__attribute__((visibility("default"))) const struct np_profiler_v6 ncclProfiler_v6 = {
	.name = "commtap",
	.init = v6_init,
	.start_event = v6_start,
	.stop_event = np_stop,
	.record_event_state = np_state,
	.finalize = np_finalize,
};
