// SPDX-License-Identifier: MIT
/*
 * The analytic model (docs/profiles.md): parameter counts as Megatron-
 * DeepSpeed lays a GPT out, the traffic each rank sends per iteration, and
 * the iteration's timeline as transfers (1F1B pipeline, DDP buckets
 * overlapped with backward, MoE all-to-all per MoE layer).
 */
#include "model.h"
#include "arch.h"

#include <commtap/grow.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CE_ALLREDUCES 3 /* vocab-parallel cross-entropy: max, target logit, sum of exp */

struct model {
	const struct ct_profile *p;
	struct ct_prediction *pr;
	double s_tp;  /* one TP all-reduce tensor: bytes·b·s·h */
	double s_pp;  /* one pipeline send */
	double s_emb; /* the word-embedding gradient one TP rank holds */
	double s_a2a; /* MoE: what one rank's all-to-all moves (before splitting) */
	unsigned n_moe_layers;
};

/* ---- recording traffic ---------------------------------------------------- */

/*
 * The iteration has more transfers than a prediction holds: name the field
 * that multiplies the class with the most of them, so the user knows what
 * to lower.
 */
static int too_many_transfers(struct model *M)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	size_t per_class[CT_CLASS_COUNT] = {0};
	int top = 0;
	const char *field, *why;

	for (size_t i = 0; i < pr->n_xfers; i++)
		per_class[pr->xfers[i].cls < CT_CLASS_COUNT ? pr->xfers[i].cls : 0]++;
	for (int c = 1; c < CT_CLASS_COUNT; c++)
		if (per_class[c] > per_class[top])
			top = c;
	switch (top) {
	case CT_CLASS_EP:
		field = "$.parallelism.ep";
		why = "an all-to-all among ep ranks per MoE layer and micro-batch: ep^2 transfers each";
		break;
	case CT_CLASS_TP:
	case CT_CLASS_PP:
		field = "$.model.micro_batches";
		why = "all-reduces per layer and sends per micro-batch on every rank: gpus x "
		      "micro_batches x layers / p of them, times a few";
		break;
	default:
		field = "$.placement.gpus";
		why = p->kind == CT_MODEL_DDP ? "one ring all-reduce over every rank per bucket"
					      : "one collective per group of ranks";
		break;
	}
	snprintf(pr->too_big, sizeof(pr->too_big),
		 "%s: the iteration has more than %u transfers (%s, most of them %s: %s); "
		 "lower it (docs/profiles.md, Limits)",
		 field, CT_PREDICT_MAX_TRANSFERS, p->name, ct_class_name(top), why);
	return -E2BIG;
}

static int xfer_add(struct model *M, enum ct_class cls, enum ct_xfer_kind kind,
		    enum ct_op op, unsigned src, unsigned dst, double bytes, double start,
		    double duration)
{
	struct ct_prediction *pr = M->pr;
	struct ct_transfer *x;

	if (bytes <= 0 || src == dst)
		return 0;
	if (pr->n_xfers == CT_PREDICT_MAX_TRANSFERS)
		return too_many_transfers(M);
	if (ct_pair_bytes_add(&pr->rank_pairs, cls, src, dst, bytes) ||
	    ct_pair_bytes_add(&pr->host_pairs, cls, M->p->rank_host[src], M->p->rank_host[dst],
			      bytes))
		return -ENOMEM;
	ct_rank_traffic(pr, src, cls)->bytes += bytes;
	if (pr->n_xfers == pr->cap_xfers) {
		struct ct_transfer *nx = ct_grow(pr->xfers, &pr->cap_xfers, sizeof(*nx), 1024);

		if (!nx)
			return -ENOMEM;
		pr->xfers = nx;
	}
	x = &pr->xfers[pr->n_xfers++];
	x->start = start;
	x->duration = duration;
	x->bytes = (uint64_t)llround(bytes);
	x->src_rank = src;
	x->dst_rank = dst;
	x->src_host = (uint16_t)M->p->rank_host[src];
	x->dst_host = (uint16_t)M->p->rank_host[dst];
	x->src_nic = (uint16_t)M->p->rank_nic[src];
	x->dst_nic = (uint16_t)M->p->rank_nic[dst];
	x->cls = (uint8_t)cls;
	x->kind = (uint8_t)kind;
	x->op = (uint8_t)op;
	return 0;
}

static void count_message(struct model *M, unsigned rank, enum ct_class cls, double tensor)
{
	struct ct_rank_traffic *t = ct_rank_traffic(M->pr, rank, cls);

	t->messages += 1;
	if (tensor > t->msg_bytes)
		t->msg_bytes = tensor;
}

/* Ring all-reduce of a tensor over n ranks: each sends 2(n-1)/n of it to its successor. */
static int ring_allreduce(struct model *M, enum ct_class cls, const unsigned *ranks, unsigned n,
			  double tensor, double start, double duration)
{
	int err = 0;

	if (n < 2)
		return 0;
	for (unsigned i = 0; i < n && !err; i++) {
		count_message(M, ranks[i], cls, tensor);
		err = xfer_add(M, cls, CT_XFER_COLLECTIVE, CT_OP_ALLREDUCE, ranks[i],
			       ranks[(i + 1) % n], tensor * 2.0 * (n - 1) / n, start, duration);
	}
	return err;
}

/*
 * Ring reduce-scatter or all-gather (op) of a tensor over n ranks: each sends
 * (n-1)/n of it to its successor (n-1 steps of a 1/n shard).
 */
static int ring_half(struct model *M, enum ct_class cls, enum ct_op op, const unsigned *ranks,
		     unsigned n, double tensor, double start, double duration)
{
	int err = 0;

	if (n < 2)
		return 0;
	for (unsigned i = 0; i < n && !err; i++) {
		count_message(M, ranks[i], cls, tensor);
		err = xfer_add(M, cls, CT_XFER_COLLECTIVE, op, ranks[i], ranks[(i + 1) % n],
			       tensor * (n - 1) / n, start, duration);
	}
	return err;
}

/* All-to-all: each rank sends 1/n of its tensor to every other member. */
static int all_to_all(struct model *M, enum ct_class cls, const unsigned *ranks, unsigned n,
		      double tensor, double start, double duration)
{
	int err = 0;

	if (n < 2)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		count_message(M, ranks[i], cls, tensor);
		for (unsigned j = 0; j < n && !err; j++)
			if (i != j)
				err = xfer_add(M, cls, CT_XFER_P2P, CT_OP_ALLTOALL, ranks[i],
					       ranks[j], tensor / n, start, duration);
	}
	return err;
}

static int send_recv(struct model *M, enum ct_class cls, unsigned src, unsigned dst,
		     double bytes, double start, double duration)
{
	count_message(M, src, cls, bytes);
	return xfer_add(M, cls, CT_XFER_P2P, CT_OP_SENDRECV, src, dst, bytes, start, duration);
}

/* ---- effective bandwidths -------------------------------------------------- */

/*
 * The most ranks of one NIC that send a class off the host at once: they
 * share it (one NIC per host: all of the host's). classes_off[c][r] marks
 * ranks with an off-host peer.
 */
static double derived_bandwidth(const struct ct_profile *p, const bool *off_host)
{
	unsigned *per_nic = calloc(p->nics, sizeof(*per_nic));
	unsigned k = 0;
	double nic = p->hw.nic_gbps * 1e9 / 8 * p->hw.nic_efficiency;

	if (!per_nic)
		return nic;
	for (unsigned r = 0; r < p->gpus; r++)
		if (off_host[r] && ++per_nic[p->rank_nic[r]] > k)
			k = per_nic[p->rank_nic[r]];
	free(per_nic);
	return k ? nic / k : p->hw.intra_host_Bps;
}

/* ---- GPT (and the dense part of MoE) --------------------------------------- */

static double layer_rank_params(const struct ct_profile *p)
{
	double h = p->hidden, t = p->t;

	/* QKV, projection, fc1, fc2 weights and QKV/fc1 biases split by TP;
	 * projection/fc2 biases and both layer norms replicated. */
	return 12 * h * h / t + 7 * h / t + 6 * h;
}

static void gpt_params(struct model *M)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	double h = p->hidden, l = p->layers, V = p->vocab, s = p->seq_len;
	unsigned pad = 128 * p->t;

	pr->vocab_padded = (p->vocab + pad - 1) / pad * pad;
	/* N = 12lh²(1 + 13/(12h) + (V+s)/(12lh)), the published approximation */
	pr->params_dense = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
	pr->params = pr->params_dense;
	pr->params_active = pr->params_dense;
	for (unsigned st = 0; st < p->p; st++) {
		double n;

		pr->stage_layers[st] = p->layers / p->p + (st < p->layers % p->p ? 1 : 0);
		n = pr->stage_layers[st] * layer_rank_params(p);
		if (st == 0)
			n += (double)pr->vocab_padded * h / p->t + s * h;
		if (st == p->p - 1) {
			n += 2 * h; /* final layer norm */
			if (p->p > 1)
				n += (double)pr->vocab_padded * h / p->t; /* tied output copy */
		}
		pr->stage_rank_params[st] = n;
	}
	if (p->kind == CT_MODEL_MOE) {
		double expert = 8 * h * h + 5 * h;

		M->n_moe_layers = p->layers / p->moe_interval;
		pr->params = pr->params_dense +
			     M->n_moe_layers * ((p->experts - 1) * expert + h * p->experts);
		pr->params_active = pr->params_dense + M->n_moe_layers * (p->top_k - 1) * expert;
	}
}

/* TP all-reduces per micro-batch in a stage's forward and backward passes. */
static void tp_counts(const struct model *M, unsigned st, double *fwd, double *bwd,
		      double *ce_fwd)
{
	const struct ct_profile *p = M->p;
	double layers = M->pr->stage_layers[st];

	*fwd = 2 * layers + (st == 0 ? 1 : 0); /* + the vocab-parallel embedding */
	*bwd = (p->recompute ? 4 : 2) * layers + (st == p->p - 1 ? 1 : 0); /* + output layer */
	*ce_fwd = st == p->p - 1 ? CE_ALLREDUCES : 0;
}

/* The same for virtual stage q (a model chunk; q = the stage without interleaving). */
static void tp_counts_chunk(const struct model *M, unsigned q, double *fwd, double *bwd,
			    double *ce_fwd)
{
	const struct ct_profile *p = M->p;
	unsigned v = p->virtual_stages, Q = p->p * v;
	double layers = M->pr->stage_layers[q % p->p] / v;

	*fwd = 2 * layers + (q == 0 ? 1 : 0);
	*bwd = (p->recompute ? 4 : 2) * layers + (q == Q - 1 ? 1 : 0);
	*ce_fwd = q == Q - 1 ? CE_ALLREDUCES : 0;
}

struct op {
	double start, end;
};

/*
 * Place op (is_fwd, micro-batch j) of (virtual) stage q of Q on its stage's
 * timeline (free_at, dur): F needs F(q - 1, j) and its send, B needs
 * B(q + 1, j) and its send, and its own F. false when what it needs has not
 * run yet. fwd/bwd: [Q][m].
 */
static bool place_op(struct op *fwd, struct op *bwd, unsigned m, unsigned q, unsigned Q, unsigned j,
		     bool is_fwd, double pp_time, double dur, double *free_at)
{
	struct op *o = is_fwd ? &fwd[q * m + j] : &bwd[q * m + j];
	double ready;

	if (is_fwd) {
		if (q > 0 && fwd[(q - 1) * m + j].end < 0)
			return false;
		ready = q > 0 ? fwd[(q - 1) * m + j].end + pp_time : 0;
	} else {
		if (q < Q - 1 && bwd[(q + 1) * m + j].end < 0)
			return false;
		if (fwd[q * m + j].end < 0)
			return false;
		ready = q < Q - 1 ? bwd[(q + 1) * m + j].end + pp_time : fwd[q * m + j].end;
	}
	o->start = ready > *free_at ? ready : *free_at;
	o->end = o->start + dur;
	*free_at = o->end;
	return true;
}

/*
 * 1F1B on every stage: warm-up forwards, then one forward and one backward
 * alternately, then cool-down backwards. F(s,j) needs F(s-1,j) and its send;
 * B(s,j) needs B(s+1,j) and its send. fwd/bwd: [p][m] times out.
 */
static int pipeline_1f1b(struct model *M, const double *f_dur, const double *b_dur,
			 double pp_time, struct op *fwd, struct op *bwd)
{
	const struct ct_profile *p = M->p;
	unsigned P = p->p, m = p->micro_batches;
	unsigned *next = calloc(P, sizeof(*next)); /* index into the stage's op order */
	double *free_at = calloc(P, sizeof(*free_at));
	bool progress = true;
	int err = 0;

	if (!next || !free_at) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < (size_t)P * m; i++)
		fwd[i].end = bwd[i].end = -1;
	while (progress) {
		progress = false;
		for (unsigned s = 0; s < P; s++) {
			unsigned warm = P - s - 1 < m ? P - s - 1 : m;

			while (next[s] < 2 * m) {
				unsigned k = next[s], j;
				bool is_fwd;

				/* op k of stage s: warm-up F, then F/B pairs, then B */
				if (k < warm) {
					is_fwd = true;
					j = k;
				} else if (k < warm + 2 * (m - warm)) {
					unsigned q = k - warm;

					is_fwd = !(q & 1);
					j = is_fwd ? warm + q / 2 : q / 2;
				} else {
					is_fwd = false;
					j = m - warm + (k - warm - 2 * (m - warm));
				}
				if (!place_op(fwd, bwd, m, s, P, j, is_fwd, pp_time,
					      is_fwd ? f_dur[s] : b_dur[s], &free_at[s]))
					break;
				next[s]++;
				progress = true;
			}
		}
	}
	for (unsigned s = 0; s < P; s++)
		if (next[s] < 2 * m)
			err = -EDEADLK; /* cannot happen for 1F1B; guards a broken schedule */
out:
	free(next);
	free(free_at);
	return err;
}

/*
 * Interleaved 1F1B (Megatron's virtual pipeline): stage s holds v model
 * chunks, virtual stages q = c·P + s, so a micro-batch goes round the
 * stages v times, from the last back to the first. Each stage runs
 * (P - s - 1)·2 + (v - 1)·P warm-up forwards, then one forward and one
 * backward alternately, then the rest of the backwards; its i-th forward
 * is chunk (i / P) mod v of micro-batch (i / (P·v))·P + i mod P, its i-th
 * backward the same micro-batch's chunk v - 1 - (i / P) mod v. fwd/bwd:
 * [P·v][m] times out; f_dur/b_dur per chunk.
 */
static int pipeline_interleaved(struct model *M, const double *f_dur, const double *b_dur,
				double pp_time, struct op *fwd, struct op *bwd)
{
	const struct ct_profile *p = M->p;
	unsigned P = p->p, v = p->virtual_stages, m = p->micro_batches, Q = P * v, n = m * v;
	unsigned *next = calloc(P, sizeof(*next));
	double *free_at = calloc(P, sizeof(*free_at));
	bool progress = true;
	int err = 0;

	if (!next || !free_at) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < (size_t)Q * m; i++)
		fwd[i].end = bwd[i].end = -1;
	while (progress) {
		progress = false;
		for (unsigned s = 0; s < P; s++) {
			unsigned warm = (P - s - 1) * 2 + (v - 1) * P;

			if (warm > n)
				warm = n;
			while (next[s] < 2 * n) {
				unsigned k = next[s], i, q, j;
				bool is_fwd;

				if (k < warm) {
					is_fwd = true;
					i = k;
				} else if (k < warm + 2 * (n - warm)) {
					is_fwd = !((k - warm) & 1);
					i = is_fwd ? warm + (k - warm) / 2 : (k - warm) / 2;
				} else {
					is_fwd = false;
					i = n - warm + (k - warm - 2 * (n - warm));
				}
				j = i / (P * v) * P + i % P;
				q = (is_fwd ? (i / P) % v : v - 1 - (i / P) % v) * P + s;
				if (!place_op(fwd, bwd, m, q, Q, j, is_fwd, pp_time,
					      is_fwd ? f_dur[s] : b_dur[s], &free_at[s]))
					break;
				next[s]++;
				progress = true;
			}
		}
	}
	for (unsigned s = 0; s < P; s++)
		if (next[s] < 2 * n)
			err = -EDEADLK; /* guards a broken schedule */
out:
	free(next);
	free(free_at);
	return err;
}

/* Ranks of a TP group, DP group or pipeline, into buf. */
static unsigned tp_group(const struct ct_profile *p, unsigned st, unsigned dp, unsigned *buf)
{
	for (unsigned tp = 0; tp < p->t; tp++)
		buf[tp] = ct_rank_of(p, st, dp, tp);
	return p->t;
}

static unsigned dp_group(const struct ct_profile *p, unsigned st, unsigned tp, unsigned *buf)
{
	for (unsigned dp = 0; dp < p->d; dp++)
		buf[dp] = ct_rank_of(p, st, dp, tp);
	return p->d;
}

/* Mark ranks whose class traffic leaves their host, to derive bandwidths. */
#define OFF(c, r) off[(size_t)(c) * p->gpus + (r)]

static void mark_off_host(const struct ct_profile *p, bool *off)
{
	for (unsigned st = 0; st < p->p; st++)
		for (unsigned dp = 0; dp < p->d; dp++)
			for (unsigned tp = 0; tp < p->t; tp++) {
				unsigned r = ct_rank_of(p, st, dp, tp), h = p->rank_host[r];

				if (p->t > 1 && p->rank_host[ct_rank_of(p, st, dp, (tp + 1) % p->t)] != h)
					OFF(CT_CLASS_TP, r) = true;
				if (p->d > 1 && p->rank_host[ct_rank_of(p, st, (dp + 1) % p->d, tp)] != h)
					OFF(CT_CLASS_DP, r) = true;
				if (st + 1 < p->p && p->rank_host[ct_rank_of(p, st + 1, dp, tp)] != h)
					OFF(CT_CLASS_PP, r) = true;
				if (st > 0 && p->rank_host[ct_rank_of(p, st - 1, dp, tp)] != h)
					OFF(CT_CLASS_PP, r) = true;
				/* interleaved: the last stage sends on to the first */
				if (p->virtual_stages > 1 && (st == 0 || st == p->p - 1) &&
				    p->rank_host[ct_rank_of(p, st ? 0 : p->p - 1, dp, tp)] != h)
					OFF(CT_CLASS_PP, r) = true;
				if (p->p > 1 && (st == 0 || st == p->p - 1) &&
				    p->rank_host[ct_rank_of(p, st == 0 ? p->p - 1 : 0, dp, tp)] != h)
					OFF(CT_CLASS_EMB, r) = true;
				if (p->kind == CT_MODEL_MOE)
					for (unsigned e = 0; e < p->ep; e++) {
						unsigned base = dp / p->ep * p->ep;

						if (p->rank_host[ct_rank_of(p, st, base + e, tp)] != h)
							OFF(CT_CLASS_EP, r) = true;
					}
			}
}

static void set_bandwidths(struct model *M)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	bool *off = calloc((size_t)CT_CLASS_COUNT * p->gpus, sizeof(*off));
	const double given[CT_CLASS_COUNT] = {p->hw.c_tp, p->hw.c_pp, p->hw.c_dp, p->hw.c_ep,
					      p->hw.c_dp};

	if (off)
		mark_off_host(p, off);
	for (int c = 0; c < CT_CLASS_COUNT; c++)
		pr->c[c] = given[c] ? given[c]
				    : off ? derived_bandwidth(p, &OFF(c, 0)) : p->hw.intra_host_Bps;
	free(off);
}

/*
 * ZeRO-3 / FSDP (p = 1), per micro-batch and TP rank, among the d replicas:
 * forward, an all-gather of each layer's parameters before the layer (the
 * embeddings and final norm with the first); backward, the same all-gathers
 * in reverse order, each followed by a reduce-scatter of the layer's
 * gradients (DeepSpeed reduces every micro-batch). No all-reduce at the end.
 */
static int zero3_traffic(struct model *M, const struct op *F, const struct op *B, unsigned *group)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	unsigned L = pr->stage_layers[0];
	double e = p->bytes_per_elem, layer = layer_rank_params(p) * e;
	double rest = pr->stage_rank_params[0] * e - L * layer; /* embeddings, final norm */
	double dur = layer * (p->d - 1) / p->d / pr->c[CT_CLASS_DP];
	int err = 0;

	for (unsigned tp = 0; tp < p->t && !err; tp++) {
		unsigned n = dp_group(p, 0, tp, group);
		double fl = (F->end - F->start) / L, bl = (B->end - B->start) / L;

		for (unsigned k = 0; k < L && !err; k++)
			err = ring_half(M, CT_CLASS_DP, CT_OP_ALLGATHER, group, n,
					layer + (k ? 0 : rest), F->start + k * fl, dur);
		for (unsigned k = 0; k < L && !err; k++) {
			double t = B->start + k * bl, tensor = layer + (k + 1 < L ? 0 : rest);

			err = ring_half(M, CT_CLASS_DP, CT_OP_ALLGATHER, group, n, tensor, t, dur);
			err = err ?: ring_half(M, CT_CLASS_DP, CT_OP_REDUCESCATTER, group, n, tensor,
					       t + bl - dur, dur);
		}
	}
	return err;
}

/*
 * ZeRO-1 / distributed optimizer, per stage and TP rank: the gradients
 * reduce-scattered over the d replicas, the optimizer steps on its shard,
 * the parameters all-gathered back. Not overlapped: both after the stage's
 * last backward (and the embedding sync). Overlapped: the reduce-scatter in
 * one bucket per layer during the last micro-batch's backward, the
 * all-gather (of the previous step) per layer during the first forward.
 * Returns when the stage is done in *end.
 */
static int zero1_traffic(struct model *M, unsigned s, const struct op *first_fwd,
			 const struct op *last_bwd, double stage_end, unsigned *group, double *end)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	double tensor = pr->stage_rank_params[s] * p->bytes_per_elem;
	double dur = tensor * (p->d - 1) / p->d / pr->c[CT_CLASS_DP];
	unsigned L = pr->stage_layers[s];
	int err = 0;

	*end = stage_end + 2 * dur;
	if (p->zero_overlap)
		*end = fmax(stage_end, last_bwd->end + dur / L);
	for (unsigned tp = 0; tp < p->t && !err; tp++) {
		unsigned n = dp_group(p, s, tp, group);

		if (!p->zero_overlap) {
			err = ring_half(M, CT_CLASS_DP, CT_OP_REDUCESCATTER, group, n, tensor,
					stage_end, dur);
			err = err
				      ?: ring_half(M, CT_CLASS_DP, CT_OP_ALLGATHER, group, n, tensor,
						   stage_end + dur, dur);
			continue;
		}
		for (unsigned k = 0; k < L && !err; k++) {
			double bl = (last_bwd->end - last_bwd->start) / L;
			double fl = (first_fwd->end - first_fwd->start) / L;

			err = ring_half(M, CT_CLASS_DP, CT_OP_REDUCESCATTER, group, n, tensor / L,
					last_bwd->start + (k + 1) * bl, dur / L);
			err = err
				      ?: ring_half(M, CT_CLASS_DP, CT_OP_ALLGATHER, group, n,
						   tensor / L, first_fwd->start + k * fl, dur / L);
		}
	}
	return err;
}

static int gpt_timeline(struct model *M)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	unsigned *group, P = p->p, m = p->micro_batches, v = p->virtual_stages, Q = P * v;

	if ((uint64_t)Q * m > CT_PREDICT_MAX_SCHEDULE_OPS) {
		snprintf(pr->too_big, sizeof(pr->too_big),
			 "$.model.micro_batches: the pipeline schedule has p x chunks x m = %u x %u "
			 "x %u operations, above %u; lower it (docs/profiles.md, Limits)",
			 P, v, m, CT_PREDICT_MAX_SCHEDULE_OPS);
		return -E2BIG;
	}
	group = malloc(sizeof(unsigned) * p->gpus);
	double *f_dur = calloc(Q, sizeof(double)), *b_dur = calloc(Q, sizeof(double));
	struct op *fwd = calloc((size_t)Q * m, sizeof(*fwd));
	struct op *bwd = calloc((size_t)Q * m, sizeof(*bwd));
	double comp_mb = pr->t_comp / m, ring = 2.0 * (p->t - 1) / p->t;
	double f_share = p->recompute ? 2.0 / 8 : 2.0 / 6;
	double pp_time = M->s_pp / pr->c[CT_CLASS_PP], ar_time = M->s_tp * ring / pr->c[CT_CLASS_TP];
	double ce_time = 4.0 * p->micro_batch * p->seq_len * ring / pr->c[CT_CLASS_TP];
	double *stage_end = calloc(P, sizeof(double)), emb_end = 0, end = 0;
	int err = 0;

	if (!group || !f_dur || !b_dur || !fwd || !bwd || !stage_end) {
		err = -ENOMEM;
		goto out;
	}
	/* per model chunk (the whole stage without interleaving) */
	for (unsigned q = 0; q < Q; q++) {
		double nf, nb, nce;

		tp_counts_chunk(M, q, &nf, &nb, &nce);
		f_dur[q] = comp_mb * f_share / v + (p->t > 1 ? nf * ar_time + nce * ce_time : 0);
		b_dur[q] = comp_mb * (1 - f_share) / v + (p->t > 1 ? nb * ar_time : 0);
	}
	err = v > 1 ? pipeline_interleaved(M, f_dur, b_dur, pp_time, fwd, bwd)
		    : pipeline_1f1b(M, f_dur, b_dur, pp_time, fwd, bwd);
	if (err)
		goto out;
	pr->t_fwd_mb = pr->t_bwd_mb = 0;
	for (unsigned c = 0; c < v; c++) {
		pr->t_fwd_mb += f_dur[c * P];
		pr->t_bwd_mb += b_dur[c * P];
	}

	for (unsigned q = 0; q < Q && !err; q++) {
		unsigned s = q % P;
		double nf, nb, nce;

		tp_counts_chunk(M, q, &nf, &nb, &nce);
		for (unsigned j = 0; j < m && !err; j++) {
			const struct op *F = &fwd[q * m + j], *B = &bwd[q * m + j];

			for (unsigned dp = 0; dp < p->d && !err; dp++) {
				unsigned n = tp_group(p, s, dp, group);

				/* TP all-reduces spread evenly through the pass */
				for (unsigned k = 0; k < nf + nce && !err; k++) {
					double len = (F->end - F->start) / (nf + nce);

					err = ring_allreduce(M, CT_CLASS_TP, group, n,
							     k < nf ? M->s_tp : 4.0 * p->micro_batch *
										p->seq_len,
							     F->start + k * len,
							     k < nf ? ar_time : ce_time);
				}
				for (unsigned k = 0; k < nb && !err; k++)
					err = ring_allreduce(M, CT_CLASS_TP, group, n, M->s_tp,
							     B->start + k * (B->end - B->start) / nb,
							     ar_time);
				/* PP: on to the next virtual stage, back to the previous; with
				 * interleaving the last stage's sends wrap round to the first */
				for (unsigned tp = 0; tp < p->t && !err; tp++) {
					unsigned r = ct_rank_of(p, s, dp, tp);

					if (q + 1 < Q)
						err = send_recv(M, CT_CLASS_PP, r,
								ct_rank_of(p, (q + 1) % P, dp, tp),
								M->s_pp, F->end, pp_time);
					if (!err && q > 0)
						err = send_recv(M, CT_CLASS_PP, r,
								ct_rank_of(p, (q - 1) % P, dp, tp),
								M->s_pp, B->end, pp_time);
				}
			}
			if (!err && p->zero == 3)
				err = zero3_traffic(M, F, B, group);
			if (B->end > stage_end[s])
				stage_end[s] = B->end;
		}
	}
	/* Embedding sync between the first and last stage, then DP per stage. */
	if (P > 1 && !err) {
		double start = stage_end[0] > stage_end[P - 1] ? stage_end[0] : stage_end[P - 1];
		double dur = M->s_emb / pr->c[CT_CLASS_EMB];

		for (unsigned dp = 0; dp < p->d && !err; dp++)
			for (unsigned tp = 0; tp < p->t && !err; tp++) {
				unsigned pair[2] = {ct_rank_of(p, 0, dp, tp), ct_rank_of(p, P - 1, dp, tp)};

				err = ring_allreduce(M, CT_CLASS_EMB, pair, 2, M->s_emb, start, dur);
			}
		emb_end = start + dur;
		stage_end[0] = stage_end[P - 1] = emb_end;
	}
	for (unsigned s = 0; s < P && !err; s++) {
		double tensor = pr->stage_rank_params[s] * p->bytes_per_elem;
		double dur = tensor * 2.0 * (p->d - 1) / p->d / pr->c[CT_CLASS_DP];

		if (p->zero) {
			double zend = stage_end[s];

			if (p->zero == 1) {
				size_t last = s * m; /* the stage's last backward */

				for (unsigned q = s; q < Q; q += P)
					for (unsigned j = 0; j < m; j++)
						if (bwd[q * m + j].end > bwd[last].end)
							last = q * m + j;
				err = zero1_traffic(M, s, &fwd[s * m], &bwd[last], stage_end[s],
						    group, &zend);
			}
			if (zend > end)
				end = zend;
			continue;
		}
		for (unsigned tp = 0; tp < p->t && !err; tp++) {
			unsigned n = dp_group(p, s, tp, group);

			err = ring_allreduce(M, CT_CLASS_DP, group, n, tensor, stage_end[s], dur);
		}
		if (p->d > 1 && stage_end[s] + dur > end)
			end = stage_end[s] + dur;
		else if (stage_end[s] > end)
			end = stage_end[s];
	}
	pr->t_iter = end;
out:
	free(group);
	free(f_dur);
	free(b_dur);
	free(fwd);
	free(bwd);
	free(stage_end);
	return err;
}

/* MoE with p = t = 1: per micro-batch, all-to-alls at every MoE layer. */
static int moe_timeline(struct model *M)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	unsigned *group = malloc(sizeof(unsigned) * p->ep), m = p->micro_batches;
	double comp_mb = pr->t_comp / m, f_share = p->recompute ? 2.0 / 8 : 2.0 / 6;
	double a2a = M->s_a2a * (p->ep - 1) / p->ep / pr->c[CT_CLASS_EP];
	double layer_f = comp_mb * f_share / p->layers, layer_b = comp_mb * (1 - f_share) / p->layers;
	unsigned per_pass_b = p->recompute ? 4 : 2;
	double t = 0, end;
	int err = 0;

	if (!group)
		return -ENOMEM;
	for (unsigned j = 0; j < m && !err; j++) {
		/* forward: dispatch and combine at each MoE layer */
		for (unsigned l = 0; l < p->layers && !err; l++) {
			t += layer_f;
			if ((l + 1) % p->moe_interval)
				continue;
			for (unsigned g = 0; g < p->d / p->ep && !err; g++) {
				for (unsigned e = 0; e < p->ep; e++)
					group[e] = g * p->ep + e;
				for (unsigned k = 0; k < 2 && !err; k++)
					err = all_to_all(M, CT_CLASS_EP, group, p->ep, M->s_a2a,
							 t + k * a2a, a2a);
			}
			t += 2 * a2a;
		}
		for (unsigned l = p->layers; l-- > 0 && !err;) {
			t += layer_b;
			if ((l + 1) % p->moe_interval)
				continue;
			for (unsigned g = 0; g < p->d / p->ep && !err; g++) {
				for (unsigned e = 0; e < p->ep; e++)
					group[e] = g * p->ep + e;
				for (unsigned k = 0; k < per_pass_b && !err; k++)
					err = all_to_all(M, CT_CLASS_EP, group, p->ep, M->s_a2a,
							 t + k * a2a, a2a);
			}
			t += per_pass_b * a2a;
		}
	}
	free(group);
	if (err)
		return err;
	/* then the dense gradients' all-reduce, as in gpt_timeline */
	{
		unsigned *ring = malloc(sizeof(unsigned) * p->d);
		double tensor = (pr->params_dense - M->n_moe_layers * (8.0 * p->hidden * p->hidden +
								     5.0 * p->hidden)) *
				p->bytes_per_elem;
		double dur = tensor * 2.0 * (p->d - 1) / p->d / pr->c[CT_CLASS_DP];

		if (!ring)
			return -ENOMEM;
		for (unsigned r = 0; r < p->d; r++)
			ring[r] = r;
		err = ring_allreduce(M, CT_CLASS_DP, ring, p->d, tensor, t, dur);
		free(ring);
		end = t + (p->d > 1 ? dur : 0);
	}
	pr->t_iter = end;
	return err;
}

static int transformer_model(struct model *M)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	double b = p->micro_batch, s = p->seq_len, h = p->hidden, m = p->micro_batches;
	double flops_factor = p->recompute ? 8 : 6, ring_t = 2.0 * (p->t - 1) / p->t;
	double tp_mb_max = 0, dp_max = 0;

	gpt_params(M);
	M->s_tp = p->bytes_per_elem * b * s * h;
	M->s_pp = M->s_tp / (p->partition_pipeline_sends ? p->t : 1);
	M->s_emb = (double)p->bytes_per_elem * pr->vocab_padded * h / p->t;
	M->s_a2a = p->bytes_per_elem * b * s * h * p->top_k;
	set_bandwidths(M);

	pr->flops_per_iter = flops_factor * pr->params_active * p->global_batch * s;
	pr->t_comp = flops_factor * m * pr->params_active * b * s /
		     (p->p * p->t * p->hw.mu * p->hw.peak_flops);
	for (unsigned st = 0; st < p->p; st++) {
		double nf, nb, nce;

		tp_counts(M, st, &nf, &nb, &nce);
		tp_mb_max = fmax(tp_mb_max, ((nf + nb) * M->s_tp + nce * 4 * b * s) * ring_t);
		dp_max = fmax(dp_max, pr->stage_rank_params[st] * p->bytes_per_elem);
	}
	pr->t_class[CT_CLASS_TP] = m * tp_mb_max / pr->c[CT_CLASS_TP];
	pr->t_class[CT_CLASS_PP] =
		p->p > 1 ? m * 2 * M->s_pp * p->virtual_stages / pr->c[CT_CLASS_PP] : 0;
	/* ZeRO-1: reduce-scatter + all-gather, the all-reduce's bytes; ZeRO-3: two
	 * all-gathers and a reduce-scatter of the parameters per micro-batch */
	pr->t_class[CT_CLASS_DP] =
		(p->zero == 3 ? 3 * m : 2) * dp_max * (p->d - 1) / p->d / pr->c[CT_CLASS_DP];
	pr->t_class[CT_CLASS_EMB] = p->p > 1 ? M->s_emb / pr->c[CT_CLASS_EMB] : 0;
	if (p->kind == CT_MODEL_MOE)
		pr->t_class[CT_CLASS_EP] = m * M->n_moe_layers * (p->recompute ? 6 : 4) * M->s_a2a *
					   (p->ep - 1) / p->ep / pr->c[CT_CLASS_EP];
	/* interleaving divides the bubble by the chunks per stage (Megatron's (p-1)/(v·m)) */
	pr->t_bubble = (p->p - 1) *
		       (pr->t_comp + pr->t_class[CT_CLASS_PP] + pr->t_class[CT_CLASS_TP]) / m /
		       p->virtual_stages;
	pr->r_bubble = (p->p - 1) / (p->p - 1 + m * p->virtual_stages);
	return p->kind == CT_MODEL_MOE ? moe_timeline(M) : gpt_timeline(M);
}

/* ---- DDP ------------------------------------------------------------------- */

static int ddp_model(struct model *M)
{
	const struct ct_profile *p = M->p;
	struct ct_prediction *pr = M->pr;
	struct ct_arch arch = {0};
	const uint64_t *numel;
	uint64_t *owned = NULL, cur = 0;
	size_t n;
	double fwd_flops, t_fwd, t_bwd, done = 0, free_at, cum = 0;
	unsigned *ring;
	int err;

	if (p->arch[0]) {
		err = ct_arch_build(p->arch, p->seq_len, &arch);
		if (err)
			return err;
		n = arch.count;
		owned = malloc(n * sizeof(*owned));
		if (!owned) {
			ct_arch_free(&arch);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			owned[i] = arch.tensors[i].numel;
		numel = owned;
		fwd_flops = (double)arch.fwd_flops;
	} else {
		numel = p->layer_params;
		n = p->n_layer_params;
		fwd_flops = -1;
	}
	for (size_t i = 0; i < n; i++)
		pr->params += (double)numel[i];
	pr->params_dense = pr->params_active = pr->params;
	if (fwd_flops < 0) /* explicit tensors only: 2 FLOPs per parameter per sample */
		fwd_flops = 2 * pr->params;
	set_bandwidths(M);

	/* Buckets in reverse registration order: 1 MiB first, then bucket_mb. */
	pr->bucket_bytes = calloc(n, sizeof(*pr->bucket_bytes));
	if (!pr->bucket_bytes) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = n; i-- > 0;) {
		uint64_t cap = pr->n_buckets ? p->bucket_bytes : p->first_bucket_bytes;

		cur += numel[i] * p->bytes_per_elem;
		if (cur >= cap || i == 0) {
			pr->bucket_bytes[pr->n_buckets++] = cur;
			cur = 0;
		}
	}

	pr->flops_per_iter = 3 * fwd_flops * p->batch_per_gpu * p->gpus;
	t_fwd = fwd_flops * p->batch_per_gpu / (p->hw.mu * p->hw.peak_flops);
	t_bwd = 2 * t_fwd;
	pr->t_comp = t_fwd + t_bwd;
	pr->t_fwd_mb = t_fwd;
	pr->t_bwd_mb = t_bwd;

	ring = malloc(sizeof(unsigned) * p->d);
	if (!ring) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned r = 0; r < p->d; r++)
		ring[r] = r;
	/* A bucket is ready when backward has produced its gradients; all-reduces queue. */
	free_at = t_fwd;
	err = 0;
	for (size_t k = 0; k < pr->n_buckets && !err; k++) {
		double ready, start, dur;

		cum += (double)pr->bucket_bytes[k];
		ready = t_fwd + t_bwd * cum / (pr->params * p->bytes_per_elem);
		start = ready > free_at ? ready : free_at;
		dur = pr->bucket_bytes[k] * 2.0 * (p->d - 1) / p->d / pr->c[CT_CLASS_DP];
		err = ring_allreduce(M, CT_CLASS_DP, ring, p->d, (double)pr->bucket_bytes[k], start,
				     dur);
		free_at = start + (p->d > 1 ? dur : 0);
		done += dur;
	}
	free(ring);
	pr->t_class[CT_CLASS_DP] = p->d > 1 ? done : 0;
	pr->t_iter = fmax(t_fwd + t_bwd, free_at);
out:
	free(owned);
	ct_arch_free(&arch);
	return err;
}

/* ---- entry points ----------------------------------------------------------- */

static int xfer_cmp(const void *a, const void *b)
{
	const struct ct_transfer *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->src_rank != y->src_rank)
		return x->src_rank < y->src_rank ? -1 : 1;
	return x->dst_rank < y->dst_rank ? -1 : x->dst_rank > y->dst_rank;
}

int ct_predict(const struct ct_profile *p, struct ct_prediction *pr)
{
	struct model M = {.p = p, .pr = pr};
	size_t nr = p->gpus;
	int err;

	memset(pr, 0, sizeof(*pr));
	pr->nranks = p->gpus;
	pr->nhosts = p->hosts;
	pr->stage_layers = calloc(p->p, sizeof(*pr->stage_layers));
	pr->stage_rank_params = calloc(p->p, sizeof(*pr->stage_rank_params));
	pr->rank = calloc(nr * CT_CLASS_COUNT, sizeof(*pr->rank));
	if (!pr->stage_layers || !pr->stage_rank_params || !pr->rank) {
		ct_prediction_free(pr);
		return -ENOMEM;
	}
	err = p->kind == CT_MODEL_DDP ? ddp_model(&M) : transformer_model(&M);
	if (err) {
		char why[sizeof(pr->too_big)];

		memcpy(why, pr->too_big, sizeof(why));
		ct_prediction_free(pr);
		memcpy(pr->too_big, why, sizeof(why));
		return err;
	}
	qsort(pr->xfers, pr->n_xfers, sizeof(*pr->xfers), xfer_cmp);

	double comm = 0;

	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		comm += pr->t_class[c];
	}
	for (size_t i = 0; pr->host_pairs.keys && i <= pr->host_pairs.mask; i++) {
		unsigned c, a, b;
		double bytes;

		if (ct_pair_bytes_at(&pr->host_pairs, i, &c, &a, &b, &bytes) && a != b &&
		    bytes > 0) {
			pr->crosses_nic[c] = true;
			pr->nic_bytes_per_iter += bytes;
		}
	}
	if (p->kind != CT_MODEL_DDP) {
		/* the published decomposition: T_iter = T_comp + T_comm + T_bubble */
		double formula = pr->t_comp + comm + pr->t_bubble;

		pr->r_comm = comm / formula;
		pr->t_iter_formula = formula;
	} else {
		pr->r_comm = comm / pr->t_iter;
		pr->t_iter_formula = pr->t_iter;
	}
	return 0;
}

void ct_prediction_free(struct ct_prediction *pr)
{
	free(pr->stage_layers);
	free(pr->stage_rank_params);
	free(pr->rank);
	ct_pair_bytes_free(&pr->rank_pairs);
	ct_pair_bytes_free(&pr->host_pairs);
	free(pr->bucket_bytes);
	free(pr->xfers);
	memset(pr, 0, sizeof(*pr));
}

const char *ct_predict_strerror(const struct ct_prediction *pr, int err)
{
	if (err == -E2BIG && pr->too_big[0])
		return pr->too_big;
	if (err == -ENOENT)
		return "unknown model architecture";
	return strerror(-err);
}
