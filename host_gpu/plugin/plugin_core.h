/* SPDX-License-Identifier: MIT */
/* State shared by the v4 and v5 entry points of the NCCL profiler plugin. */
#ifndef COMMTAP_PLUGIN_CORE_H
#define COMMTAP_PLUGIN_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "commtap/gpu_ring.h"
#include "nccl_profiler_abi.h"
#include "plugin_clock.h"

/* One communicator (NCCL's per-communicator profiler context). */
struct np_ctx {
	uint64_t comm_hash;
	int rank;
	int version;
	int mask; /* activation mask handed to NCCL */
};

/* A started event: the record it will become, built in place, in two cache
 * lines. The record's first 8 bytes are the ring's sequence word, never
 * copied into the ring: the event keeps its `busy` flag there. Its slot in
 * the pool and its generation are in its id. */
struct np_event {
	union {
		struct ct_gpu_rec rec;
		struct {
			uint32_t busy; /* started, not yet stopped */
			uint32_t pad;
		} m;
	};
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct np_event) == 128, "an event object is two cache lines");

extern int np_disabled;

/* Process-wide setup on the first init; 0 or negative errno. */
int np_global_init(nccl_logger_t logfn);
/* Disable the plugin for good and log `what` once. */
void np_fail(const char *what, int err);

/* Common init/finalize: fills *mask, returns the context or NULL. */
struct np_ctx *np_ctx_init(int version, uint64_t comm_hash, const char *name, int n_nodes,
			   int nranks, int rank, int *mask, nccl_logger_t logfn);
void np_ctx_finalize(struct np_ctx *ctx);

/* Take an event object for `type` with its parent; NULL when the pool is
 * empty (counted) or the plugin is off. `parent` may be anything NCCL
 * passed: it is only used when it is one of ours. */
struct np_event *np_event_start(const struct np_ctx *ctx, uint16_t type, int rank, void *parent);
/* The pool, for the inline lookups below. */
extern struct np_event *np_events;
extern uint32_t np_events_mask;

/* The event a handle names, or NULL (stale, foreign or NULL handle). A
 * handle is the event's id, not a pointer: (generation << 24 | slot) + 1.
 * It resolves only while the slot still holds that event, so stale and
 * foreign handles are recognised without dereferencing them. */
static inline struct np_event *np_event_of(void *handle)
{
	uint64_t id = (uintptr_t)handle;
	struct np_event *ev;

	if (!id || !np_events)
		return NULL;
	ev = &np_events[(id - 1) & np_events_mask];
	return __atomic_load_n(&ev->rec.id, __ATOMIC_RELAXED) == id ? ev : NULL;
}
/* The handle NCCL gets for an event. */
void *np_event_handle(const struct np_event *ev);
void np_event_stop(struct np_event *ev);
void np_event_state(struct np_event *ev, int state, const union np_state_args *a);

/* String to id through a per-thread cache keyed by the string's address. */
uint8_t np_func_id(const char *s);
uint8_t np_dtype_id(const char *s);

/* Shared by v4 and v5: fill an op record from NCCL's coll / p2p fields. */
void np_fill_coll(struct np_event *ev, const struct np_coll *c);
void np_fill_p2p(struct np_event *ev, const struct np_p2p *p);
void np_fill_proxy_op(struct np_event *ev, const struct np_proxy_op *p);
void np_fill_proxy_step(struct np_event *ev, int step);
void np_fill_kernel_ch(struct np_event *ev, const struct np_kernel_ch *k);
void np_fill_net(struct np_event *ev, const struct np_net_plugin *n);

/* The v5 event set (plugin_v5.c); v6 adds the copy-engine events to it. */
nccl_result_t np_start_v5(const struct np_ctx *ctx, void **handle, uint64_t type_bit, void *parent,
			  int rank, const void *u);
nccl_result_t np_stop(void *handle);
nccl_result_t np_state(void *handle, int state, union np_state_args *a);
nccl_result_t np_finalize(void *ctx);

#endif
