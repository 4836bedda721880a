/* SPDX-License-Identifier: MIT */
/*
 * The NCCL profiler plugin ABI, versions 4 (NCCL 2.27), 5 (NCCL 2.28) and
 * 6 (NCCL 2.29, 2.30: copy-engine collectives), declared from the published
 * interface description: field order, enum values and the exported symbol
 * names (ncclProfiler_v4, ncclProfiler_v5, ncclProfiler_v6).
 * Only what commtap uses is named; the layouts must match NCCL's exactly.
 */
#ifndef COMMTAP_NCCL_PROFILER_ABI_H
#define COMMTAP_NCCL_PROFILER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int nccl_result_t; /* ncclResult_t: 0 success, 3 internal error */
#define NCCL_OK		    0
#define NCCL_INTERNAL_ERROR 3

typedef void (*nccl_logger_t)(int level, unsigned long flags, const char *file, int line,
			      const char *fmt, ...);
#define NCCL_LOG_WARN	 2
#define NCCL_LOG_INFO	 3
#define NCCL_SUBSYS_INIT 1

/* Event type bits (activation mask and descriptor `type`). */
enum {
	NP_GROUP = 1 << 0,
	NP_COLL = 1 << 1,
	NP_P2P = 1 << 2,
	NP_PROXY_OP = 1 << 3,
	NP_PROXY_STEP = 1 << 4,
	NP_PROXY_CTRL = 1 << 5,
	NP_KERNEL_CH = 1 << 6,
	NP_NET_PLUGIN = 1 << 7,
	NP_GROUP_API = 1 << 8, /* v5 */
	NP_COLL_API = 1 << 9,
	NP_P2P_API = 1 << 10,
	NP_KERNEL_LAUNCH = 1 << 11,
	NP_CE_COLL = 1 << 12,  /* v6: copy-engine collective */
	NP_CE_SYNC = 1 << 13,  /* v6: its synchronisation, child of CE_COLL */
	NP_CE_BATCH = 1 << 14, /* v6: a batch of its copies, child of CE_COLL */
};

/* Event states passed to recordEventState (shared by v4 and v5). */
enum {
	NS_PROXY_OP_IN_PROGRESS = 19,
	NS_STEP_SEND_GPU_WAIT = 8,
	NS_STEP_SEND_PEER_WAIT = 20,
	NS_STEP_SEND_WAIT = 9,
	NS_STEP_RECV_WAIT = 10,
	NS_STEP_RECV_FLUSH_WAIT = 11,
	NS_STEP_RECV_GPU_WAIT = 12,
	NS_PROXY_CTRL_IDLE = 13,
	NS_PROXY_CTRL_APPEND_END = 18,
	NS_NET_PLUGIN_UPDATE = 21,
	NS_KERNEL_CH_STOP = 22,
	NS_GROUP_START_API_STOP = 23,
	NS_GROUP_END_API_START = 24,
	NS_CE_COLL_START = 25, /* v6 states; NCCL 2.29 does not send them */
	NS_CE_COLL_COMPLETE = 26,
	NS_CE_SYNC_START = 27,
	NS_CE_SYNC_COMPLETE = 28,
	NS_CE_BATCH_START = 29,
	NS_CE_BATCH_COMPLETE = 30,
};

/* Network plugin event ids: type in bits 16..31, version in bits 0..15. */
#define NP_NET_TYPE_IB	 (1u << 16)
#define NP_NET_TYPE_SOCK (2u << 16)
#define NP_NET_TYPE_MASK 0xffff0000u
#define NP_NET_IB_QP	 (1 << 0)

struct np_net_ib_descr_v1 {
	uint8_t type;
	struct {
		int device;
		uint64_t wr_id;
		int opcode;
		int qp_num;
		size_t length;
	} qp;
};

/* Members common to v4 and v5 descriptors, in order after the header. */
struct np_coll {
	uint64_t seq_number;
	const char *func;
	const void *send_buff;
	void *recv_buff;
	size_t count;
	int root;
	const char *datatype;
	uint8_t n_channels;
	uint8_t n_warps;
	const char *algo;
	const char *proto;
};

struct np_p2p {
	const char *func;
	void *buff;
	const char *datatype;
	size_t count;
	int peer;
	uint8_t n_channels;
};

struct np_proxy_op {
	pid_t pid;
	uint8_t channel_id;
	int peer;
	int n_steps;
	int chunk_size;
	int is_send;
};

struct np_kernel_ch {
	uint8_t channel_id;
	uint64_t p_timer;
};

struct np_net_plugin {
	int64_t id;
	void *data;
};

/* The v5 API members, named so that v5 and v6 share them. */
struct np_group_api {
	bool graph_captured;
	int group_depth;
};

struct np_coll_api {
	const char *func;
	size_t count;
	const char *datatype;
	int root;
	void *stream;
	bool graph_captured;
};

struct np_p2p_api {
	const char *func;
	size_t count;
	const char *datatype;
	void *stream;
	bool graph_captured;
};

struct np_kernel_launch {
	void *stream;
};

struct np_proxy_step {
	int step;
};

struct np_coll_v5 {
	struct np_coll c;
	void *parent_group; /* the v4-style group parent */
};

struct np_p2p_v5 {
	struct np_p2p p;
	void *parent_group;
};

struct np_descr_v4 {
	uint8_t type;
	void *parent;
	int rank;
	union {
		struct np_coll coll;
		struct np_p2p p2p;
		struct np_proxy_op proxy_op;
		struct np_proxy_step proxy_step;
		struct np_kernel_ch kernel_ch;
		struct np_net_plugin net_plugin;
	};
};

struct np_descr_v5 {
	uint64_t type;
	void *parent;
	int rank;
	union {
		struct np_group_api group_api;
		struct np_coll_api coll_api;
		struct np_p2p_api p2p_api;
		struct np_kernel_launch kernel_launch;
		struct np_coll_v5 coll;
		struct np_p2p_v5 p2p;
		struct np_proxy_op proxy_op;
		struct np_proxy_step proxy_step;
		struct np_kernel_ch kernel_ch;
		struct np_net_plugin net_plugin;
	};
};

/* v6: the v5 descriptor with the copy-engine members added to the union;
 * every v5 member keeps its offset. */
struct np_descr_v6 {
	uint64_t type;
	void *parent;
	int rank;
	union {
		struct np_group_api group_api;
		struct np_coll_api coll_api;
		struct np_p2p_api p2p_api;
		struct np_kernel_launch kernel_launch;
		struct np_coll_v5 coll;
		struct np_p2p_v5 p2p;
		struct np_proxy_op proxy_op;
		struct np_proxy_step proxy_step;
		struct np_kernel_ch kernel_ch;
		struct np_net_plugin net_plugin;
		struct {
			uint64_t seq_number;
			const char *func;
			const void *send_buff;
			void *recv_buff;
			size_t count;
			int root;
			const char *datatype;
			const char *sync_strategy; /* "MC" (multicast) or "UC" */
			bool intra_batch_sync;
			uint32_t batch_size;
			uint32_t num_batches;
			uint32_t ce_seq;
			void *stream;
		} ce_coll;
		struct {
			bool is_complete;
			int n_ranks;
		} ce_sync;
		struct {
			int num_ops;
			size_t total_bytes;
			bool use_intra_sync;
		} ce_batch;
	};
};

/* recordEventState arguments (v4 and v5 are the same union). */
union np_state_args {
	struct {
		size_t trans_size;
	} proxy_step;
	struct {
		int appended_proxy_ops;
	} proxy_ctrl;
	struct {
		void *data;
	} net_plugin;
	struct {
		uint64_t p_timer;
	} kernel_ch;
};

struct np_profiler_v4 {
	const char *name;
	nccl_result_t (*init)(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash,
			      int n_nodes, int nranks, int rank, nccl_logger_t logfn);
	nccl_result_t (*start_event)(void *ctx, void **handle, struct np_descr_v4 *d);
	nccl_result_t (*stop_event)(void *handle);
	nccl_result_t (*record_event_state)(void *handle, int state, union np_state_args *a);
	nccl_result_t (*finalize)(void *ctx);
};

struct np_profiler_v5 {
	const char *name;
	nccl_result_t (*init)(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
			      int n_nodes, int nranks, int rank, nccl_logger_t logfn);
	nccl_result_t (*start_event)(void *ctx, void **handle, struct np_descr_v5 *d);
	nccl_result_t (*stop_event)(void *handle);
	nccl_result_t (*record_event_state)(void *handle, int state, union np_state_args *a);
	nccl_result_t (*finalize)(void *ctx);
};

struct np_profiler_v6 {
	const char *name;
	nccl_result_t (*init)(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
			      int n_nodes, int nranks, int rank, nccl_logger_t logfn);
	nccl_result_t (*start_event)(void *ctx, void **handle, struct np_descr_v6 *d);
	nccl_result_t (*stop_event)(void *handle);
	nccl_result_t (*record_event_state)(void *handle, int state, union np_state_args *a);
	nccl_result_t (*finalize)(void *ctx);
};

/* The layouts NCCL uses on x86-64 / aarch64 (LP64), checked once against
 * NCCL's own declarations: a change here breaks the ABI. */
#if defined(__LP64__)
_Static_assert(sizeof(struct np_descr_v5) == 112, "np_descr_v5");
_Static_assert(sizeof(struct np_descr_v4) == 104, "np_descr_v4");
_Static_assert(offsetof(struct np_descr_v5, rank) == 16, "np_descr_v5.rank");
_Static_assert(offsetof(struct np_descr_v5, coll.c.proto) == 96, "np_descr_v5.coll.c.proto");
_Static_assert(offsetof(struct np_descr_v5, coll.parent_group) == 104,
	       "np_descr_v5.coll.parent_group");
_Static_assert(offsetof(struct np_descr_v5, p2p.parent_group) == 64,
	       "np_descr_v5.p2p.parent_group");
_Static_assert(offsetof(struct np_descr_v5, coll_api.graph_captured) == 64,
	       "np_descr_v5.coll_api.graph_captured");
_Static_assert(offsetof(struct np_descr_v5, proxy_op.is_send) == 44,
	       "np_descr_v5.proxy_op.is_send");
_Static_assert(offsetof(struct np_descr_v5, kernel_ch.p_timer) == 32,
	       "np_descr_v5.kernel_ch.p_timer");
_Static_assert(offsetof(struct np_descr_v4, coll.proto) == 96, "np_descr_v4.coll.proto");
_Static_assert(offsetof(struct np_descr_v4, proxy_op.chunk_size) == 40,
	       "np_descr_v4.proxy_op.chunk_size");
_Static_assert(offsetof(struct np_descr_v4, net_plugin.data) == 32, "np_descr_v4.net_plugin.data");
_Static_assert(offsetof(struct np_net_ib_descr_v1, qp.length) == 32,
	       "np_net_ib_descr_v1.qp.length");
_Static_assert(offsetof(struct np_profiler_v5, finalize) == 40, "np_profiler_v5.finalize");
_Static_assert(sizeof(struct np_descr_v6) == 112, "np_descr_v6");
_Static_assert(offsetof(struct np_descr_v6, group_api) == offsetof(struct np_descr_v5, group_api),
	       "v5 and v6 unions start at the same offset");
_Static_assert(offsetof(struct np_descr_v6, coll.parent_group) == 104,
	       "np_descr_v6.coll.parent_group");
_Static_assert(offsetof(struct np_descr_v6, ce_coll.sync_strategy) == 80,
	       "np_descr_v6.ce_coll.sync_strategy");
_Static_assert(offsetof(struct np_descr_v6, ce_coll.ce_seq) == 100, "np_descr_v6.ce_coll.ce_seq");
_Static_assert(offsetof(struct np_descr_v6, ce_coll.stream) == 104, "np_descr_v6.ce_coll.stream");
_Static_assert(offsetof(struct np_descr_v6, ce_batch.total_bytes) == 32,
	       "np_descr_v6.ce_batch.total_bytes");
#endif

#endif
