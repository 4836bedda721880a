/* SPDX-License-Identifier: MIT */
/*
 * Network–GPU correlation, the library the agent calls: read the plugin's and
 * CUPTI's rings, map communicators to parallel groups, link wire flows to
 * communicators (QP map + time overlap), write commtap.labels/v1, and compute
 * per-iteration T_comp, T_comm per class, overlap, R_comm, bubble, effective
 * bandwidth, and predicted versus observed. Every time is CLOCK_REALTIME ns
 * (plugin: TSC scaled to CLOCK_REALTIME; CUPTI: CLOCK_REALTIME through its
 * timestamp callback; pcap: CLOCK_REALTIME); see docs/gpu.md.
 */
#ifndef COMMTAP_GPU_CORR_H
#define COMMTAP_GPU_CORR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <commtap/parse.h>
#include <commtap/traffic_class.h>

#include "commtap/gpu_ring.h"
#include "model.h"
#include "profile.h"

struct gc_comm {
	uint64_t hash;
	int32_t pid;
	int rank, nranks, n_nodes;
	char name[48];
	int cls;		/* enum ct_class, CT_CLASS_OTHER until classified */
	char why[96];		/* how the class was decided */
	unsigned n_coll, n_p2p; /* operations seen */
	uint64_t bytes;		/* sum of operation bytes */
	uint8_t main_func;	/* the most frequent function */
	uint64_t t_init;	/* the plugin's init for it (its COMM record) */
	uint64_t t_first_op;	/* its first operation's enqueue, 0 if none: it
				 * connected (created its QPs) in between */
};

struct gc_op {
	uint64_t id;
	int32_t pid;
	uint32_t comm;	    /* index into comms */
	uint64_t t_enqueue; /* API start */
	uint64_t t_start;   /* first kernel channel / proxy activity, else t_enqueue */
	uint64_t t_end;	    /* last child stop, else the record's stop */
	uint64_t bytes;
	uint64_t wire_bytes; /* joined packets (gc_join) */
	uint8_t func;
	bool p2p;
	int32_t peer;
	uint64_t seq; /* NCCL's collective sequence number */
};

struct gc_kernel {
	int32_t pid;
	uint64_t t_start, t_end;
	uint8_t kclass;
};

/* How a QP's communicator is known. */
enum gc_qp_source {
	GC_QP_PROCESS = 0,   /* the process only (one netlink dump) */
	GC_QP_NET_EVENT = 1, /* the plugin's IB QP network events name it */
	GC_QP_CONNECT = 2,   /* created while that communicator connected */
};

/* A local QP. QP numbers are reused: the mapping holds in [valid_from,
 * valid_to) only (0 and UINT64_MAX when unbounded). */
struct gc_qp {
	int32_t pid;
	uint32_t lqpn, rqpn;
	int comm;	/* index into comms, -1 when not known */
	uint8_t source; /* enum gc_qp_source */
	uint64_t valid_from, valid_to;
	uint64_t seen_first; /* QP tables: the first snapshot holding it, else 0 */
};

/* A TCP socket of a local process (NCCL's socket transport). */
struct gc_sock {
	int32_t pid;
	uint16_t lport, rport; /* rport 0: any */
};

struct gc_job {
	struct gc_comm *comms;
	size_t n_comms;
	struct gc_op *ops;
	size_t n_ops, cap_ops;
	struct gc_kernel *kernels;
	size_t n_kernels, cap_kernels;
	struct gc_qp *qps;
	size_t n_qps, cap_qps;
	struct gc_sock *socks;
	size_t n_socks, cap_socks;
	uint64_t dropped, errors; /* summed over the rings read */
	unsigned rings;
	unsigned rings_skipped; /* files in the ring directory that failed validation */
	char skip_note[320];	/* the first one: "NAME: why" */
	bool reap;		/* gc_job_read_dir removes each ring it has read
				 * whose writer is gone (the agent) */
	unsigned rings_removed; /* so removed */
};

void gc_job_init(struct gc_job *j);
void gc_job_free(struct gc_job *j);

/* Read every record of one ring file (plugin or CUPTI). 0 or -errno. */
int gc_job_read_ring(struct gc_job *j, const char *path);
/*
 * Read every commtap-nccl.* and commtap-cupti.* ring in dir. A file that is
 * no valid ring (not a regular file, too short, wrong magic, version or
 * sizes) or that is owned by someone else than root, the directory's owner
 * or the user of the process its header names is skipped: counted in
 * rings_skipped, the first in skip_note. Rings read, or -errno (-ENOMEM, or
 * the directory cannot be read).
 */
int gc_job_read_dir(struct gc_job *j, const char *dir);
/* Attach to every valid ring in dir (CT_GPU_RING_F_READER): its writer
 * leaves it at finalize for a reader with j->reap to read and remove.
 * Rings attached, or -errno when dir cannot be read. */
int gc_rings_attach(const char *dir);
/* Add a QP of the RDMA QP map (or of a plugin network event). */
int gc_job_add_qp(struct gc_job *j, int32_t pid, uint32_t lqpn, uint32_t rqpn);
/* QP table snapshots as `commtap-rdma-qp` writes them, each after a line
 * "# at NS" (CLOCK_REALTIME): a QP's validity runs from the last snapshot
 * without it before its first one to the first snapshot without it after.
 * `name` is for errors; err gets one line. Returns QPs added or -errno. */
int gc_job_read_qp_table(struct gc_job *j, FILE *in, const char *name, char *err, size_t errlen);
/* After gc_job_finish: give each QP whose communicator is not known the one
 * communicator of its process that connected (between its init and its
 * first operation) while the QP may have been created; none when several
 * could have. Returns the QPs assigned. */
size_t gc_assign_qps(struct gc_job *j);
/* Add a TCP socket of a local process (from /proc or the agent's BPF). */
int gc_job_add_socket(struct gc_job *j, int32_t pid, uint16_t lport, uint16_t rport);
/* The TCP sockets of every process on this host, from /proc/net/tcp{,6} and
 * /proc/PID/fd. Returns the count or -errno. */
int gc_job_add_proc_sockets(struct gc_job *j);
/* One /proc/net/tcp line: local and remote port and the inode; 0 or -EINVAL. */
int gc_proc_tcp_line(const char *line, uint16_t *lport, uint16_t *rport, unsigned long *inode);
/* After reading: resolve operation end times from their children. */
void gc_job_finish(struct gc_job *j);

/* Classify every communicator, with the profile/prediction when given. */
void gc_classify(struct gc_job *j, const struct ct_profile *p, const struct ct_prediction *pr);

/* Wire flows seen from the local host. */
struct gc_flow {
	struct ct_addr src, dst;
	bool tcp;
	uint32_t qpn;	       /* RoCE destination QP */
	uint16_t sport, dport; /* TCP */
	uint64_t bytes, packets;
	int comm;	       /* linked communicator, -1 if none */
	int cls;	       /* label, CT_CLASS_OTHER if none */
	uint64_t joined_bytes; /* bytes inside the linked comm's operation windows */
	int qp;		       /* the local QP that linked it, -1 if none */
	bool has_seq;	       /* the collectives its packets fell in: */
	uint64_t seq_first, seq_last;
};

struct gc_flows {
	struct gc_flow *v;
	size_t n, cap;
	/* packets, kept for the join: (flow, ts, bytes) */
	struct gc_pkt {
		uint32_t flow;
		uint32_t bytes;
		uint64_t ts;
	} * pkts;
	size_t n_pkts, cap_pkts;
};

/* Read a capture's RoCE and TCP packets sent by `local` into flows. 0 or -errno;
 * err gets a one-line reason. */
int gc_flows_read_pcap(struct gc_flows *f, const char *pcap, const struct ct_addr *local, char *err,
		       size_t errlen);
void gc_flows_free(struct gc_flows *f);

/* Link each flow to a communicator: the QP map gives the process (the flow's
 * destination QPN is a local QP's remote QPN); among that process's
 * communicators the one whose operation windows hold most of the flow's
 * bytes wins. Also adds each operation's wire bytes. Returns flows linked. */
size_t gc_join(struct gc_job *j, struct gc_flows *f, uint64_t slack_ns);

/* commtap.labels/v1 for the linked flows. 0 or -errno. */
int gc_write_labels(const struct gc_job *j, const struct gc_flows *f, FILE *out);

struct gc_iter {
	uint64_t t_start, t_end;
	double t_comp;		       /* union of compute kernels, s */
	double t_comm[CT_CLASS_COUNT]; /* union of the class's operations, s */
	double t_comm_all;	       /* union of all operations, s */
	double overlap;		       /* comm ∩ compute, s */
	double r_comm;		       /* exposed comm / iteration */
	double bubble;		       /* neither compute nor comm, s */
};

/* Iterations of one process (pid): an iteration ends where the boundary
 * class's burst (DP, else the class with most bytes) ends; the first compute
 * kernel after it starts the next. Returns the count (≤ max). */
size_t gc_iterations(const struct gc_job *j, int32_t pid, struct gc_iter *it, size_t max);

/* Effective bandwidth utilisation of a class: joined wire bytes over the
 * operations' time, over the NIC rate. -1 when nothing was joined. */
double gc_bw_util(const struct gc_job *j, const struct gc_flows *f, int cls, double nic_gbps);

/* The commtap.gpu/v1 report: communicators, iterations, predicted vs
 * observed (error in %), clocks. pr may be NULL. */
int gc_write_report(const struct gc_job *j, const struct gc_flows *f, int32_t pid,
		    const struct ct_prediction *pr, double nic_gbps, FILE *out);

#endif
