/* SPDX-License-Identifier: MIT */
/*
 * Streams (internal to the classifier): the flows of one direction between
 * two hosts that carry the same bursts (NCCL's channels: several QPs or
 * sockets, one logical connection) are one stream; each has bytes and
 * messages per iteration, a byte-weighted histogram of where in the
 * iteration it sends, and a mode read against the stream the other way
 * (streams.c). The operation layer (classify_ops.c) reads collectives from
 * them, the groups (classify_groups.c) name their classes.
 */
#ifndef COMMTAP_STREAMS_H
#define COMMTAP_STREAMS_H

#include <commtap/classify.h>

#include "hosts.h"

#define PHASE_BINS 64 /* of a stream's histogram: ~1.5% of an iteration */
/*
 * A direction that carries less than this share of the other's bytes
 * carries its acknowledgements only (TCP ACKs, RoCE ACK/NAK: a few percent
 * of the data), not data of its own.
 */
#define BACK_DATA_SHARE 0.1
/*
 * The two directions of a pair are aligned when their cross-correlation at
 * lag 0 (±1 bin) reaches this share of its best lag. Measured on the
 * development corpus (matrix seeds 1-2, fresh real runs): every one of
 * 1,540 collective streams at 1.00; pipeline streams at 0.86 median, so
 * this alone does not tell them apart: the cool-down does (COOLDOWN_MIN),
 * and this decides only where no whole iteration shows the ends.
 */
#define ALIGNED_MIN 0.95
/*
 * Streams of one collective move the same bytes on every edge; different
 * collectives of one job differ by more than this ratio (real gloo PTD:
 * TP/DP 1.43; synthesized GPT: 27 and more), stages of one collective by
 * less (synthesized GPT's last stage holds the head: 1.01).
 */
#define FAMILY_GAP 1.25
/*
 * A pipeline's cool-down: its last gradients come back after its last
 * activation went out, at least one micro-batch's backward later, which
 * is at least this share of the iteration for up to ~32 micro-batches;
 * the two directions of a collective end together. Measured on the
 * development corpus: every collective stream within 0.03%; pipeline
 * streams 10.9% median, and at least 4.0% among those whose two
 * directions line up at lag 0 (195 of 916: Megatron-style 1F1B sends an
 * activation and receives a gradient at once in its steady state).
 */
#define COOLDOWN_MIN 0.02
/*
 * Where an exchange ends: when all but this share of a window's bytes have
 * gone. gloo sends a small message when a rank enters its next collective
 * (456 B in four frames, 0.2-0.7% of the real 2-2-2 DP and embedding
 * windows), and a rank that enters early sends it long after the exchange
 * ended (real 2-2-2 with rank 6 asleep: half an iteration later, every DP
 * pair read as a pipeline). A pipeline's message is an activation or a
 * gradient of one micro-batch: 12-18% of its window in the real pp4 and
 * 2-2-2 runs.
 */
#define END_TAIL_SHARE 0.01

enum stream_mode {
	MODE_ALIGNED = 0, /* both ways at once: a collective */
	MODE_SHIFTED,	  /* both ways, at other times: a pipeline */
	MODE_ONE_WAY,	  /* nothing back: a ring's step, if the ring closes */
};

struct stream {
	uint32_t src, dst; /* host ranks (hosts.h) */
	int job;
	size_t first, n;	/* its flows: members[first .. first + n) */
	int data;		/* 1: data directions (classified); 0: a socket's other direction */
	double bytes, msgs;	/* per iteration */
	float hist[PHASE_BINS]; /* float: 256 B a stream, for 100,000s of them */
	double lag0;		/* aligned share, 1 for one-way */
	double cooldown;	/* median lag of the partner's last byte of an iteration, share */
	int best_lag;		/* bins */
	uint8_t mode;		/* enum stream_mode */
	int family;		/* among the job's collective families, -1 none */
	int cls;		/* -1 undecided */
	uint8_t op;		/* enum ct_op */
	uint8_t star;		/* a push/pull stream of a star (parameter server) */
};

struct groups_ctx {
	const struct ct_flow_set *set;
	const struct ct_periodicity *per;
	size_t *members;
	struct stream *s;
	size_t n;
	int64_t *stream_of; /* per flow of the set: its stream, -1 none */
	const struct ct_hosts *hosts;
};

static inline int stream_job_of(const struct ct_periodicity *per, size_t i)
{
	return per->flows[i].job;
}

/* At most one stream per member flow: the steady flows and the sockets' ways back. */
size_t streams_bound(const struct ct_flow_set *set, const struct ct_periodicity *per,
		     const uint8_t *steady);
/* Streams of the data flows marked in steady, then of their sockets' other directions. */
void streams_build(struct groups_ctx *c, const uint8_t *steady);
/*
 * Partner and mode of every data stream (by_pair: room for c->n indices;
 * room, lags: for 2 (iterations + 1) and iterations + 1 values of the
 * longest job).
 */
void streams_pair(struct groups_ctx *c, size_t *by_pair, uint64_t *room, double *lags);
/* By job, then source and destination host. */
int stream_key_cmp(const struct stream *x, int job, uint32_t src, uint32_t dst);

#endif
