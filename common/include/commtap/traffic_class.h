/* SPDX-License-Identifier: MIT */
/* The traffic classes commtap tells apart, shared by the model and the classifier. */
#ifndef COMMTAP_TRAFFIC_CLASS_H
#define COMMTAP_TRAFFIC_CLASS_H

#include <string.h>

enum ct_class {
	CT_CLASS_TP = 0, /* tensor parallel */
	CT_CLASS_PP,	 /* pipeline parallel */
	CT_CLASS_DP,	 /* data parallel */
	CT_CLASS_EP,	 /* expert parallel (MoE all-to-all) */
	CT_CLASS_EMB,	 /* EmbTableSyn: first and last stage's embedding sync */
	CT_CLASS_COUNT,
	CT_CLASS_OTHER = CT_CLASS_COUNT,
};

static inline const char *ct_class_name(enum ct_class c)
{
	static const char *const names[] = {"TP", "PP", "DP", "EP", "EmbTableSyn", "Other"};

	return (unsigned)c <= CT_CLASS_OTHER ? names[c] : "Other";
}

/* The class named (as ct_class_name writes it), or -1. */
static inline int ct_class_from_name(const char *name)
{
	for (int c = 0; c <= CT_CLASS_OTHER; c++)
		if (!strcmp(name, ct_class_name((enum ct_class)c)))
			return c;
	return -1;
}

/*
 * The collective operation a flow carries, as the wire shows it (the
 * operation layer of the classifier, classify_ops.c): its shape among the
 * hosts (a ring, a mesh, a chain, a star) and its schedule, before any
 * parallelism is named. CT_OP_OTHER: no collective of a job (storage,
 * control); CT_OP_UNKNOWN: a collective the evidence does not name.
 */
enum ct_op {
	CT_OP_UNKNOWN = 0,
	CT_OP_ALLREDUCE,
	CT_OP_ALLGATHER,
	CT_OP_REDUCESCATTER,
	CT_OP_ALLTOALL,
	CT_OP_BROADCAST,
	CT_OP_REDUCE,
	CT_OP_SENDRECV,
	CT_OP_PUSHPULL, /* a star: many hosts push to a few and pull back (parameter server) */
	CT_OP_OTHER,
	CT_OP_COUNT,
};

static inline const char *ct_op_name(enum ct_op op)
{
	static const char *const names[] = {
		"Unknown", "AllReduce", "AllGather", "ReduceScatter", "AllToAll",
		"Broadcast", "Reduce", "SendRecv", "PushPull", "Other",
	};

	return (unsigned)op < CT_OP_COUNT ? names[op] : "Unknown";
}

/* The operation named (as ct_op_name writes it), or -1. */
static inline int ct_op_from_name(const char *name)
{
	for (int op = 0; op < CT_OP_COUNT; op++)
		if (!strcmp(name, ct_op_name((enum ct_op)op)))
			return op;
	return -1;
}

#endif
