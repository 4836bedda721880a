/* SPDX-License-Identifier: MIT */
/*
 * Drives a dlopen'ed NCCL profiler plugin the way NCCL does: init per
 * communicator, each version's event nesting, only the event types the
 * plugin enabled, NULL parents where a parent type is disabled, state
 * updates, finalize.
 */
#ifndef COMMTAP_NCCL_DRIVER_H
#define COMMTAP_NCCL_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "../plugin/nccl_profiler_abi.h"
#include "commtap/gpu_ring.h"

struct drv_lib {
	void *dl;
	const struct np_profiler_v6 *v6; /* NULL where the plugin lacks the table */
	const struct np_profiler_v5 *v5;
	const struct np_profiler_v4 *v4;
	int mask; /* NCCL's process-wide activation mask every init writes to */
};

/* Optional timing of the plugin calls (the cost benchmark): TSC ticks spent
 * inside start, stop and state calls, per NCCL event bit (index: the bit's
 * position), the events started (handle or not) and the calls timed. */
struct drv_cost {
	uint64_t ticks[16];
	uint64_t events[16];
	uint64_t calls[16];
};

struct drv_comm {
	struct drv_lib *lib;
	int version;
	void *ctx;
	int mask;
	uint64_t hash;
	int rank;
	int nranks;
	/* Handles started per record type (enum ct_gpu_rec_type), for checks. */
	unsigned long started[32];
	unsigned long null_handles; /* enabled types that got no handle */
	struct drv_cost *cost;	    /* non-NULL: time every plugin call */
};

/* One collective as NCCL describes it. */
struct drv_coll {
	const char *func;
	const char *datatype;
	const char *algo;
	const char *proto;
	size_t count;
	uint64_t seq;
	int root;
	int n_channels;		 /* kernel channels and proxy ops, one each */
	int n_steps;		 /* proxy steps per proxy op */
	int chunk;		 /* bytes per step */
	int peer;		 /* proxy peer rank */
	int qpn_base;		 /* IB QP numbers of net events: qpn_base + channel */
	void *net_data_override; /* non-NULL: passed as the net event data as is */
	int64_t net_id_override; /* non-zero: the net plugin id */
	int net_data_null;	 /* pass a NULL net event payload */
};

/* Warnings the plugin logged through NCCL's logger. */
extern int drv_warnings;

int drv_open(struct drv_lib *lib, const char *path);
void drv_close(struct drv_lib *lib);

/* The newest table the plugin exports (6, 5 or 4), as NCCL picks it. */
int drv_newest(const struct drv_lib *lib);

/* Returns 0 or -1 (the plugin returned an error or lacks that table). */
int drv_init(struct drv_comm *c, struct drv_lib *lib, int version, uint64_t hash, const char *name,
	     int n_nodes, int nranks, int rank);
int drv_finalize(struct drv_comm *c);

/* One collective with its whole hierarchy (v5: group API → coll API →
 * kernel launch; group → coll → proxy op → step → net; kernel channel). */
void drv_collective(struct drv_comm *c, const struct drv_coll *op);
/* The same in two halves, for an API thread and a proxy thread: the launch
 * (API events, group, collective, kernel launch) returns the collective's
 * handle; the progress (proxy ops, steps, net events, kernel channels) takes
 * it. `c` of each half may be a different drv_comm on the same ctx. */
void *drv_coll_launch(struct drv_comm *c, const struct drv_coll *op);
void drv_coll_progress(struct drv_comm *c, void *coll, const struct drv_coll *op);
/* A send or recv in two halves likewise. */
void *drv_p2p_launch(struct drv_comm *c, const char *func, size_t count, int peer);
void drv_p2p_progress(struct drv_comm *c, void *p2p, const char *func, size_t count, int peer,
		      int n_steps);
/* v6: a copy-engine collective (coll API → CE collective → CE sync, CE
 * batches) as NCCL 2.29 emits it; nothing under other versions. */
void drv_ce_collective(struct drv_comm *c, const struct drv_coll *op, int n_batches);
/* One send or recv ("Send"/"Recv") to `peer` with its proxy activity. */
void drv_p2p(struct drv_comm *c, const char *func, size_t count, int peer, int n_steps);

/* Start/stop one collective event only (the benchmark's pair). */
void drv_coll_pair(struct drv_comm *c, const struct drv_coll *op);

/* The ring file the plugin writes for this process. */
int drv_ring_path(char *buf, size_t len);

#endif
