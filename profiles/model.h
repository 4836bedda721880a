/* SPDX-License-Identifier: MIT */
/*
 * The analytic traffic model: from a profile, what each rank sends per
 * iteration, to whom, in which class, and how long an iteration takes
 * (docs/profiles.md gives the formulas and where they come from).
 */
#ifndef COMMTAP_MODEL_H
#define COMMTAP_MODEL_H

#include "pair_bytes.h"
#include "profile.h"

/* Per rank and class, per iteration. */
struct ct_rank_traffic {
	double messages;  /* collective calls or send/recv operations the rank takes part in */
	double msg_bytes; /* size of one such message (the tensor, before ring splitting) */
	double bytes;	  /* bytes the rank sends */
};

/* One transfer: the bytes one collective or send/recv moves from one rank to another. */
enum ct_xfer_kind {
	CT_XFER_COLLECTIVE = 0, /* NCCL collective: steps of up to 512 KiB */
	CT_XFER_P2P = 1,	/* send/recv, all-to-all: chunks of up to 128 KiB */
};

struct ct_transfer {
	double start;	 /* seconds from the start of the iteration */
	double duration; /* seconds, at the class's effective bandwidth */
	uint64_t bytes;
	uint32_t src_rank, dst_rank;
	uint16_t src_host, dst_host;
	uint16_t src_nic, dst_nic; /* global NIC index (profile.h: rank_nic) */
	uint8_t cls;  /* enum ct_class */
	uint8_t kind; /* enum ct_xfer_kind */
	uint8_t op;   /* enum ct_op (traffic_class.h): the collective it belongs to */
};

struct ct_prediction {
	unsigned nranks, nhosts;
	/* parameters */
	double params;	      /* the model's parameters */
	double params_dense;  /* MoE: the dense model it is built on (= params otherwise) */
	double params_active; /* parameters a token passes through */
	unsigned vocab_padded;
	unsigned *stage_layers;	     /* p entries */
	double *stage_rank_params;   /* p entries: parameters one TP rank of the stage holds */
	double flops_per_iter;	     /* whole job */
	/* traffic */
	struct ct_rank_traffic *rank; /* nranks * CT_CLASS_COUNT */
	struct ct_pair_bytes rank_pairs; /* bytes per (class, rank, rank) */
	struct ct_pair_bytes host_pairs; /* bytes per (class, host, host) */
	bool crosses_nic[CT_CLASS_COUNT];
	double nic_bytes_per_iter; /* all classes, all hosts */
	/* time */
	double c[CT_CLASS_COUNT]; /* effective bandwidths used, bytes/s */
	double t_comp, t_class[CT_CLASS_COUNT], t_bubble, r_bubble, r_comm;
	double t_iter_formula; /* the published decomposition: T_comp + T_comm + T_bubble */
	double t_iter;	       /* the simulated schedule's iteration (what synth renders) */
	double t_fwd_mb, t_bwd_mb; /* per micro-batch compute of one stage */
	/* DDP */
	size_t n_buckets;
	uint64_t *bucket_bytes; /* in all-reduce order (reverse registration) */
	/* the iteration as transfers, in start order */
	struct ct_transfer *xfers;
	size_t n_xfers, cap_xfers;
	/* why ct_predict returned -E2BIG: the field to lower, and by how much it is over */
	char too_big[256];
};

/*
 * What one prediction may hold (docs/profiles.md, "Limits"): the transfers of
 * one iteration, the pipeline schedule's operations (stages x chunks x
 * micro-batches) and the sparse matrices' entries. With them a prediction
 * stays under about 600 MiB, so predict, synth and analyze --profile run in
 * 1 GiB of address space on any profile the loader accepts.
 */
#define CT_PREDICT_MAX_TRANSFERS (4u << 20)
#define CT_PREDICT_MAX_SCHEDULE_OPS (4u << 20)

/*
 * Predict. Returns 0, -ENOMEM, -ENOENT for an unknown DDP architecture, or
 * -E2BIG when the profile's iteration exceeds the limits above (out->too_big
 * then names the profile field that makes it so).
 */
int ct_predict(const struct ct_profile *p, struct ct_prediction *out);
void ct_prediction_free(struct ct_prediction *pred);
/* One line for an error of ct_predict (call before ct_prediction_free). */
const char *ct_predict_strerror(const struct ct_prediction *pr, int err);

static inline double ct_rank_bytes(const struct ct_prediction *pr, enum ct_class c, unsigned src,
				   unsigned dst)
{
	return ct_pair_bytes_get(&pr->rank_pairs, c, src, dst);
}

static inline double ct_host_bytes(const struct ct_prediction *pr, enum ct_class c, unsigned src,
				   unsigned dst)
{
	return ct_pair_bytes_get(&pr->host_pairs, c, src, dst);
}

static inline struct ct_rank_traffic *ct_rank_traffic(const struct ct_prediction *pr,
						      unsigned rank, enum ct_class c)
{
	return &pr->rank[(size_t)rank * CT_CLASS_COUNT + c];
}

#endif
