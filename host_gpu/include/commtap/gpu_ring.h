/* SPDX-License-Identifier: MIT */
/*
 * commtap GPU event ring: a shared-memory file that the NCCL profiler plugin
 * and the CUPTI injection library write and the agent reads.
 *
 * Layout (version 1, see docs/gpu.md): a 4 KiB header, then `lanes` lanes of
 * `lane_slots` fixed-size 128-byte slots each. A writing thread takes a lane
 * of its own at its first record while one of all but the last lane is
 * free (it then advances `tail` with plain stores); later threads share
 * the last lane, which nobody owns; a shared lane is a bounded multi-producer queue: a producer claims position p
 * with a CAS on the lane's `tail` when slot p % lane_slots has seq == p,
 * writes the record and publishes seq = p + 1; the reader consumes position
 * h when seq == h + 1 and frees the slot with seq = h + lane_slots. A
 * producer that finds the slot not yet freed counts a drop and returns: it
 * never waits. Records are ordered within a lane, not across lanes.
 */
#ifndef COMMTAP_GPU_RING_H
#define COMMTAP_GPU_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_GPU_RING_MAGIC    0x31524750544d4d43ull /* "CMMTPGR1" little-endian */
#define CT_GPU_RING_VERSION  1
#define CT_GPU_RING_HDR_SIZE 4096
#define CT_GPU_REC_SIZE	     128

/* Which library wrote the ring. */
enum ct_gpu_source {
	CT_GPU_SRC_NCCL_PLUGIN = 1,
	CT_GPU_SRC_CUPTI = 2,
	CT_GPU_SRC_HARNESS = 3,
};

/* Clock of the `t_start`/`t_stop` fields of every record. */
enum ct_gpu_clock {
	CT_GPU_CLOCK_REALTIME = 1, /* CLOCK_REALTIME, ns since the epoch (same as pcap) */
};

#define CT_GPU_RING_MAX_LANES 16

/* Header flags. READER: a reader (the agent) has attached and will remove
 * the ring once it has read it and its writer is gone; the writer then
 * leaves it at finalize. */
#define CT_GPU_RING_F_READER 1u

/* Per-lane counters: the producers' line, then the reader's. */
struct ct_gpu_lane_ctl {
	_Alignas(64) uint64_t tail; /* next position a producer claims */
	uint64_t dropped;	    /* records lost: lane full */
	uint64_t errors;	    /* records lost: no event object, internal error */
	_Alignas(64) uint64_t head; /* next position the reader consumes */
};

struct ct_gpu_ring_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint32_t rec_size;
	uint32_t slots;	     /* lanes * lane_slots */
	uint32_t lanes;	     /* power of two, at most CT_GPU_RING_MAX_LANES */
	uint32_t lane_slots; /* power of two */
	uint32_t source;     /* enum ct_gpu_source */
	uint32_t clock;	     /* enum ct_gpu_clock */
	int32_t pid;
	uint32_t flags; /* CT_GPU_RING_F_*, set atomically */
	/* One reading of CLOCK_REALTIME and CLOCK_MONOTONIC taken back to back at
	 * creation: monotonic = realtime - (realtime_ns - monotonic_ns). */
	uint64_t created_realtime_ns;
	uint64_t created_monotonic_ns;
	char comm[16]; /* the writing process's name */
	_Alignas(64) struct ct_gpu_lane_ctl lane[CT_GPU_RING_MAX_LANES];
};

/* Record types. */
enum ct_gpu_rec_type {
	CT_GPU_REC_COMM = 1,	  /* a communicator at init */
	CT_GPU_REC_GROUP_API = 2, /* v5 ncclProfileGroupApi */
	CT_GPU_REC_COLL_API = 3,  /* v5 ncclProfileCollApi */
	CT_GPU_REC_P2P_API = 4,	  /* v5 ncclProfileP2pApi */
	CT_GPU_REC_KERNEL_LAUNCH = 5,
	CT_GPU_REC_GROUP = 6, /* ncclProfileGroup */
	CT_GPU_REC_COLL = 7,
	CT_GPU_REC_P2P = 8,
	CT_GPU_REC_PROXY_OP = 9,
	CT_GPU_REC_PROXY_STEP = 10,
	CT_GPU_REC_KERNEL_CH = 11,
	CT_GPU_REC_NET_QP = 12,	   /* network plugin IB QP event */
	CT_GPU_REC_NET_OTHER = 13, /* a network plugin event of another kind */
	CT_GPU_REC_COMM_END = 14,  /* finalize of a communicator */
	CT_GPU_REC_CE_COLL = 15,   /* v6 copy-engine collective */
	CT_GPU_REC_CE_SYNC = 16,   /* v6 its synchronisation */
	CT_GPU_REC_CE_BATCH = 17,  /* v6 a batch of its copies */
	CT_GPU_REC_CUPTI_KERNEL = 20,
	CT_GPU_REC_CUPTI_MEMCPY = 21,
};

/* Collective / p2p function (the strings NCCL passes). */
enum ct_gpu_func {
	CT_FUNC_UNKNOWN = 0,
	CT_FUNC_ALL_REDUCE,
	CT_FUNC_ALL_GATHER,
	CT_FUNC_REDUCE_SCATTER,
	CT_FUNC_BROADCAST,
	CT_FUNC_REDUCE,
	CT_FUNC_SEND,
	CT_FUNC_RECV,
	CT_FUNC_ALL_TO_ALL,
	CT_FUNC_SEND_RECV, /* CUPTI: a SendRecv kernel (p2p and all-to-all) */
	CT_FUNC_COUNT,
};

/* Kernel class from the CUPTI name. */
enum ct_gpu_kclass {
	CT_KCLASS_COMPUTE = 0,
	CT_KCLASS_NCCL = 1,
};

/* Event-specific fields: 72 bytes at most. */
struct ct_gpu_comm_info {
	char name[48]; /* NCCL commName, truncated, NUL-terminated */
	int32_t n_nodes;
	int32_t n_ranks;
	int32_t rank;
	uint32_t version; /* profiler ABI version NCCL picked (4, 5 or 6) */
};

struct ct_gpu_op_info {
	uint64_t seq;	  /* NCCL seqNumber (coll), 0 otherwise */
	uint64_t count;	  /* elements */
	uint8_t func;	  /* enum ct_gpu_func */
	uint8_t datatype; /* enum ct_gpu_dtype in gpu_names.h */
	uint8_t algo;
	uint8_t proto;
	uint8_t n_channels;
	uint8_t n_warps;
	uint8_t graph_captured;
	uint8_t pad;
	int32_t root;
	int32_t peer;
	int32_t group_depth; /* group API */
	uint64_t bytes;	     /* count * datatype size, 0 if the type is unknown */
	uint64_t stream;     /* opaque CUDA stream handle (API, launch) */
	uint64_t t_mark1;    /* group API: ncclGroupStart returned (0 if not seen) */
	uint64_t t_mark2;    /* group API: ncclGroupEnd entered */
};

struct ct_gpu_proxy_info {
	int32_t pid;
	int32_t peer;
	int32_t n_steps;
	int32_t chunk_size;
	int32_t step;
	uint8_t channel;
	uint8_t is_send;
	uint8_t pad[2];
	uint64_t trans_size; /* proxy step: bytes moved */
	/* proxy step: state times (CLOCK_REALTIME ns, 0 if not seen) */
	uint64_t t_wait; /* SendGPUWait / RecvWait entered */
	uint64_t t_net;	 /* SendWait (on the wire) / RecvFlushWait */
	uint64_t t_done; /* RecvGPUWait or last state */
};

struct ct_gpu_kernel_ch_info {
	uint64_t gpu_start; /* GPU globaltimer ns */
	uint64_t gpu_stop;
	uint8_t channel;
};

struct ct_gpu_net_info {
	uint64_t wr_id;
	uint64_t length;
	int32_t device;
	int32_t opcode;
	uint32_t qpn;
	uint32_t plugin_id; /* type << 16 | version */
};

/* v6 copy-engine events (CE_COLL, CE_SYNC, CE_BATCH). */
struct ct_gpu_ce_info {
	uint64_t seq;	     /* CE_COLL: NCCL seqNumber */
	uint64_t count;	     /* CE_COLL: elements */
	uint64_t bytes;	     /* CE_COLL: count * datatype size; CE_BATCH: total bytes */
	uint64_t stream;     /* CE_COLL: opaque CUDA stream handle */
	uint8_t func;	     /* enum ct_gpu_func */
	uint8_t datatype;    /* enum ct_gpu_dtype */
	uint8_t sync;	     /* CE_COLL: 1 multicast ("MC"), 2 unicast ("UC"), 0 other */
	uint8_t intra_sync;  /* CE_COLL: intraBatchSync; CE_BATCH: useIntraSync */
	int32_t root;	     /* CE_COLL */
	uint32_t batch_size; /* CE_COLL */
	uint32_t n_batches;  /* CE_COLL */
	uint32_t ce_seq;     /* CE_COLL: the copy-engine sequence number */
	int32_t n_ranks;     /* CE_SYNC */
	int32_t n_ops;	     /* CE_BATCH */
	uint8_t complete;    /* CE_SYNC: isComplete */
};

struct ct_gpu_cupti_info {
	uint64_t gpu_start; /* CUPTI timestamps (CLOCK_REALTIME via callback) */
	uint64_t gpu_end;
	uint64_t bytes; /* memcpy */
	uint32_t correlation_id;
	uint32_t stream_id;
	uint32_t device_id;
	uint8_t kclass;	   /* enum ct_gpu_kclass */
	uint8_t func;	   /* enum ct_gpu_func for NCCL kernels */
	uint8_t copy_kind; /* memcpy: CUpti_ActivityMemcpyKind */
	uint8_t pad;
	char name[28]; /* kernel name, truncated */
};

struct ct_gpu_rec {
	uint64_t seq;  /* ring protocol word, not data */
	uint16_t type; /* enum ct_gpu_rec_type */
	uint16_t flags;
	int32_t rank;
	uint64_t comm_hash;
	uint64_t id;	    /* event id, unique in the process; 0 for none */
	uint64_t parent_id; /* id of the parent event, 0 when NCCL gave none */
	uint64_t t_start;   /* CLOCK_REALTIME ns */
	uint64_t t_stop;
	union {
		struct ct_gpu_comm_info comm;
		struct ct_gpu_op_info op;
		struct ct_gpu_proxy_info proxy;
		struct ct_gpu_kernel_ch_info kch;
		struct ct_gpu_net_info net;
		struct ct_gpu_cupti_info cupti;
		struct ct_gpu_ce_info ce;
		uint8_t raw[72];
	};
};

_Static_assert(sizeof(struct ct_gpu_rec) == CT_GPU_REC_SIZE, "record is 128 bytes");
_Static_assert(sizeof(struct ct_gpu_ring_hdr) <= CT_GPU_RING_HDR_SIZE, "header fits");

/* A mapped ring (producer or reader side). */
struct ct_gpu_ring {
	struct ct_gpu_ring_hdr *hdr;
	struct ct_gpu_rec *slots;
	uint32_t mask; /* lane_slots - 1 */
	uint32_t lanes;
	uint32_t next_lane; /* reader: lane to look at first */
	uint32_t owned;	    /* producer: lanes a thread has for itself (bit per lane) */
	uint32_t epoch;	    /* producer: which ring of the process this is (from 1) */
	size_t map_len;
	int fd;
};

/* Producer: create (O_EXCL, mode 0600, replaced if a stale one exists)
 * `path` with `lanes` lanes (rounded to a power of two, 1..16) of `slots` /
 * `lanes` slots (rounded up to a power of two, at least 64). 0 or negative
 * errno. ct_gpu_ring_create_at: `name` in the directory dirfd. */
int ct_gpu_ring_create(struct ct_gpu_ring *r, const char *path, uint32_t slots, uint32_t lanes,
		       enum ct_gpu_source source);
int ct_gpu_ring_create_at(struct ct_gpu_ring *r, int dirfd, const char *name, uint32_t slots,
			  uint32_t lanes, enum ct_gpu_source source);
/* The file size ct_gpu_ring_create gives those slots and lanes. */
size_t ct_gpu_ring_bytes(uint32_t slots, uint32_t lanes);
/* Reader: map an existing ring read-write (the reader frees slots). */
int ct_gpu_ring_open(struct ct_gpu_ring *r, const char *path);
void ct_gpu_ring_close(struct ct_gpu_ring *r);

/* Reader: mark the ring as attached (CT_GPU_RING_F_READER). */
void ct_gpu_ring_attach(struct ct_gpu_ring *r);
/* Producer: whether a reader has attached. */
bool ct_gpu_ring_attached(const struct ct_gpu_ring *r);

/* Producer, any thread: copy `rec` (its seq is ignored) into the ring.
 * Returns true if written, false if dropped (counted). Never blocks. */
bool ct_gpu_ring_push(struct ct_gpu_ring *r, const struct ct_gpu_rec *rec);

/* Producer: count a record lost for another reason than a full lane. */
void ct_gpu_ring_count_error(struct ct_gpu_ring *r);

/* Reader (one at a time): take the next published record from any lane.
 * Returns 1 with *out filled, 0 when nothing is ready. */
int ct_gpu_ring_pop(struct ct_gpu_ring *r, struct ct_gpu_rec *out);

/* Sums over the lanes. */
uint64_t ct_gpu_ring_dropped(const struct ct_gpu_ring *r);
uint64_t ct_gpu_ring_errors(const struct ct_gpu_ring *r);

/* The path a process's ring has: "<dir>/commtap-<kind>.<pid>". */
int ct_gpu_ring_path(char *buf, size_t len, const char *dir, const char *kind, int pid);

#endif
