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
	const struct np_profiler_v5 *v5;
	const struct np_profiler_v4 *v4;
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

/* Returns 0 or -1 (the plugin returned an error). */
int drv_init(struct drv_comm *c, struct drv_lib *lib, int version, uint64_t hash, const char *name,
	     int n_nodes, int nranks, int rank);
int drv_finalize(struct drv_comm *c);

/* One collective with its whole hierarchy (v5: group API → coll API →
 * kernel launch; group → coll → proxy op → step → net; kernel channel). */
void drv_collective(struct drv_comm *c, const struct drv_coll *op);
/* One send or recv ("Send"/"Recv") to `peer` with its proxy activity. */
void drv_p2p(struct drv_comm *c, const char *func, size_t count, int peer, int n_steps);

/* Start/stop one collective event only (the benchmark's pair). */
void drv_coll_pair(struct drv_comm *c, const struct drv_coll *op);

/* The ring file the plugin writes for this process. */
int drv_ring_path(char *buf, size_t len);

#endif
