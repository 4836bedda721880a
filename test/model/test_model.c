// SPDX-License-Identifier: MIT
/*
 * The analytic model on small profiles whose figures are worked out by hand
 * in the comments, plus the invariants the model must keep.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "profile.h"

/* Write a profile to a temporary file and load it. */
static int load_text(const char *json, struct ct_profile *p, char *err, size_t errlen)
{
	char path[] = "/tmp/commtap-profile-XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(json, f);
	fclose(f);
	rc = ct_profile_load(path, p, err, errlen);
	unlink(path);
	return rc;
}

/* A tiny GPT: l=4 h=64 s=32 V=1000, (p,t,d)=(2,2,2), b=2 m=2 gb=8, F=1e12, mu=0.5. */
static char *tiny_gpt(unsigned b, unsigned m, unsigned t, unsigned d)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"name\":\"tiny\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		 "\"seq_len\":32,\"vocab\":1000,\"global_batch\":%u,\"micro_batch\":%u,"
		 "\"micro_batches\":%u},"
		 "\"parallelism\":{\"p\":2,\"t\":%u,\"d\":%u},"
		 "\"placement\":{\"gpus\":%u,\"gpus_per_host\":%u,\"mapping\":\"deepspeed-default\"},"
		 "\"hardware\":{\"peak_flops\":1e12,\"mu\":0.5,\"nic_gbps\":100,"
		 "\"intra_host_GBps\":10}}",
		 b * m * d, b, m, t, d, 2 * t * d, t * d);
	return buf;
}

static void predict_text(const char *json, struct ct_profile *p, struct ct_prediction *pr)
{
	char err[512] = "";
	int rc = load_text(json, p, err, sizeof(err));

	if (rc)
		fail_msg("profile rejected: %s", err);
	assert_int_equal(ct_predict(p, pr), 0);
}

static void test_gpt_hand_computed(void **state)
{
	struct ct_profile p;
	struct ct_prediction pr;

	(void)state;
	predict_text(tiny_gpt(2, 2, 2, 2), &p, &pr);
	/* N = 12lh² + 13lh + (V+s)h = 196608 + 3328 + 66048 */
	assert_float_equal(pr.params, 265984, 1e-6);
	/* vocabulary padded to a multiple of 128·t = 256 */
	assert_int_equal(pr.vocab_padded, 1024);
	assert_int_equal(pr.stage_layers[0], 2);
	assert_int_equal(pr.stage_layers[1], 2);
	/* per TP rank: 2·(12h²/t + 7h/t + 6h) + Vpad·h/t + s·h = 50368 + 32768 + 2048 */
	assert_float_equal(pr.stage_rank_params[0], 85184, 1e-6);
	/* last stage: layers + final layer norm 2h + the tied output embedding */
	assert_float_equal(pr.stage_rank_params[1], 50368 + 128 + 32768, 1e-6);

	/* rank 0 = stage 0, dp 0, tp 0. TP all-reduces per micro-batch: forward 2/layer +
	 * the embedding's, backward 4/layer (recompute on) = 5 + 8 = 13; m = 2 -> 26 */
	struct ct_rank_traffic *tp = ct_rank_traffic(&pr, 0, CT_CLASS_TP);
	assert_float_equal(tp->messages, 26, 1e-9);
	assert_float_equal(tp->msg_bytes, 2.0 * 2 * 32 * 64, 1e-9); /* 2bsh = 8192 */
	assert_float_equal(tp->bytes, 26 * 8192.0 * 2 * (2 - 1) / 2, 1e-6);
	/* last stage (rank 4): forward 4 + 3 cross-entropy, backward 8 + output layer 1 */
	assert_float_equal(ct_rank_traffic(&pr, 4, CT_CLASS_TP)->messages, 2 * 16, 1e-9);
	/* PP: stage 0 sends one activation per micro-batch, stage 1 one gradient */
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_PP)->bytes, 2 * 8192.0, 1e-6);
	assert_float_equal(ct_rank_traffic(&pr, 4, CT_CLASS_PP)->bytes, 2 * 8192.0, 1e-6);
	assert_int_equal(ct_rank_bytes(&pr, CT_CLASS_PP, 0, 4), 2 * 8192);
	assert_int_equal(ct_rank_bytes(&pr, CT_CLASS_PP, 4, 0), 2 * 8192);
	/* DP ring of d = 2: 2(d-1)/d of the stage's fp16 gradients */
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->bytes, 2 * 85184.0, 1e-6);
	/* embedding sync with the last stage: its word-embedding shard, 2·1024·64/2 bytes */
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_EMB)->bytes, 65536, 1e-6);
	assert_int_equal(ct_rank_bytes(&pr, CT_CLASS_EMB, 0, 4), 65536);
	/* T_comp = 8·m·N·b·s / (p·t·mu·F) = 8·2·265984·2·32 / (4·0.5e12) */
	assert_float_equal(pr.t_comp, 8.0 * 2 * 265984 * 2 * 32 / 2e12, 1e-15);
	/* FLOPs per iteration for the job: 8 per parameter per token, gb·s tokens */
	assert_float_equal(pr.flops_per_iter, 8.0 * 265984 * 8 * 32, 1e-3);
	/* R_bubble = (p-1)/(p-1+m) */
	assert_float_equal(pr.r_bubble, 1.0 / 3, 1e-12);
	/*
	 * Bandwidths: DP and TP stay inside a host (10 GB/s); PP leaves it, the
	 * 4 ranks of a host sharing 0.9 x 12.5 GB/s.
	 * T_PP = m·2·2bsh / C_PP = 2·2·8192 / 2.8125e9
	 * T_DP = (stage 0's gradients)·2(d-1)/d / C_DP = 2·85184 / 1e10
	 * T_TP = m·(busiest stage's TP bytes per micro-batch)/C_TP: the last stage,
	 *        (4 + 9)·8192 + 3 cross-entropy all-reduces of 4bs = 107264 bytes
	 */
	assert_float_equal(pr.c[CT_CLASS_PP], 0.9 * 12.5e9 / 4, 1);
	assert_float_equal(pr.c[CT_CLASS_DP], 10e9, 1);
	assert_float_equal(pr.t_class[CT_CLASS_PP], 2 * 2 * 8192 / 2.8125e9, 1e-15);
	assert_float_equal(pr.t_class[CT_CLASS_DP], 2 * 85184 / 1e10, 1e-15);
	assert_float_equal(pr.t_class[CT_CLASS_TP], 2 * 107264 / 1e10, 1e-15);
	/* T_bubble = (p-1)(T_comp + T_PP + T_TP)/m */
	assert_float_equal(pr.t_bubble,
			   (pr.t_comp + pr.t_class[CT_CLASS_PP] + pr.t_class[CT_CLASS_TP]) / 2, 1e-15);
	/* 4 GPUs per host: stages on different hosts, so PP and EmbTableSyn cross the NIC */
	assert_true(pr.crosses_nic[CT_CLASS_PP]);
	assert_true(pr.crosses_nic[CT_CLASS_EMB]);
	assert_false(pr.crosses_nic[CT_CLASS_TP]);
	assert_false(pr.crosses_nic[CT_CLASS_DP]);
	ct_prediction_free(&pr);
	ct_profile_free(&p);
}

static void test_gpt_invariants(void **state)
{
	struct ct_profile p1, p2;
	struct ct_prediction a, b;

	(void)state;
	/* TP and PP volumes scale with b·s·h: doubling b doubles them */
	predict_text(tiny_gpt(2, 2, 2, 2), &p1, &a);
	predict_text(tiny_gpt(4, 2, 2, 2), &p2, &b);
	assert_float_equal(ct_rank_traffic(&b, 0, CT_CLASS_TP)->bytes,
			   2 * ct_rank_traffic(&a, 0, CT_CLASS_TP)->bytes, 1e-6);
	assert_float_equal(ct_rank_traffic(&b, 0, CT_CLASS_PP)->bytes,
			   2 * ct_rank_traffic(&a, 0, CT_CLASS_PP)->bytes, 1e-6);
	ct_prediction_free(&a);
	ct_prediction_free(&b);
	ct_profile_free(&p1);
	ct_profile_free(&p2);

	/* the TP-split part of a rank's parameters (hence of its DP volume) halves when t doubles */
	predict_text(tiny_gpt(2, 2, 1, 2), &p1, &a);
	predict_text(tiny_gpt(2, 2, 2, 2), &p2, &b);
	double split_t1 = 2 * (12.0 * 64 * 64 + 7 * 64) + 1024 * 64; /* vocab padded to 128 */
	double repl = 2 * 6.0 * 64 + 32 * 64;
	assert_float_equal(a.stage_rank_params[0] - repl, split_t1, 1e-6);
	assert_float_equal(b.stage_rank_params[0] - repl, split_t1 / 2, 1e-6);
	ct_prediction_free(&a);
	ct_prediction_free(&b);
	ct_profile_free(&p1);
	ct_profile_free(&p2);

	/* R_bubble -> 0 as m grows */
	double last = 1;

	for (unsigned m = 1; m <= 256; m *= 4) {
		predict_text(tiny_gpt(2, m, 2, 2), &p1, &a);
		assert_true(a.r_bubble < last);
		last = a.r_bubble;
		ct_prediction_free(&a);
		ct_profile_free(&p1);
	}
	assert_true(last < 0.01);
}

static void test_ddp_buckets(void **state)
{
	struct ct_profile p;
	struct ct_prediction pr;

	(void)state;
	/* fp32 tensors in registration order; buckets fill in reverse: the first closes
	 * past 1 MiB, the rest past 25 MiB. Reverse: 100000 (0.4 MB) + 400000 (1.6 MB)
	 * -> bucket 0 = 2,000,000 B; then 5M (20 MB) + 2M (8 MB) -> bucket 1 = 28,000,000 B;
	 * then 3M (12 MB) alone (the last) -> bucket 2 = 12,000,000 B. */
	predict_text("{\"name\":\"ddp\",\"model\":{\"kind\":\"ddp\",\"layer_params\":"
		     "[3000000,2000000,5000000,400000,100000],\"batch_per_gpu\":8},"
		     "\"placement\":{\"gpus\":8,\"gpus_per_host\":4},"
		     "\"hardware\":{\"platform\":\"V100-PCIe\"}}",
		     &p, &pr);
	assert_float_equal(pr.params, 10500000, 1e-6);
	assert_int_equal(pr.n_buckets, 3);
	assert_int_equal(pr.bucket_bytes[0], 2000000);
	assert_int_equal(pr.bucket_bytes[1], 28000000);
	assert_int_equal(pr.bucket_bytes[2], 12000000);
	/* ring of 8: every rank sends 2·7/8 of each bucket to its successor */
	assert_float_equal(ct_rank_traffic(&pr, 3, CT_CLASS_DP)->bytes, 42000000 * 14.0 / 8, 1e-3);
	assert_float_equal(ct_rank_traffic(&pr, 3, CT_CLASS_DP)->messages, 3, 1e-9);
	assert_true(ct_host_bytes(&pr, CT_CLASS_DP, 0, 1) > 0); /* rank 3 -> 4 crosses */
	assert_true(pr.crosses_nic[CT_CLASS_DP]);
	assert_true(pr.t_iter >= pr.t_comp);
	ct_prediction_free(&pr);
	ct_profile_free(&p);
}

static void test_moe_one_host_has_no_nic_traffic(void **state)
{
	struct ct_profile p;
	struct ct_prediction pr;
	const char *json =
		"{\"name\":\"moe\",\"model\":{\"kind\":\"moe\",\"layers\":4,\"hidden\":64,"
		"\"seq_len\":32,\"vocab\":1000,\"global_batch\":16,\"micro_batch\":2,"
		"\"micro_batches\":1,\"experts\":8,\"top_k\":2},"
		"\"parallelism\":{\"p\":1,\"t\":1,\"d\":8,\"ep\":8,\"recompute\":false},"
		"\"placement\":{\"gpus\":8,\"gpus_per_host\":%u,\"mapping\":\"deepspeed-default\"},"
		"\"hardware\":{\"platform\":\"RTX3090-PCIe\"}}";
	char buf[1024];

	(void)state;
	snprintf(buf, sizeof(buf), json, 8);
	predict_text(buf, &p, &pr);
	assert_float_equal(pr.nic_bytes_per_iter, 0, 0);
	/* 2 MoE layers (every other of 4), 2 forward + 2 backward all-to-alls each, m = 1 */
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_EP)->messages, 8, 1e-9);
	/* each sends 7/8 of b·s·top_k·h·2 bytes per all-to-all */
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_EP)->bytes,
			   8 * 2.0 * 32 * 2 * 64 * 2 * 7 / 8, 1e-6);
	/* experts add (E-1)(8h²+5h) + h·E per MoE layer to the dense count */
	assert_float_equal(pr.params - pr.params_dense, 2 * (7 * (8.0 * 64 * 64 + 5 * 64) + 64 * 8),
			   1e-6);
	ct_prediction_free(&pr);
	ct_profile_free(&p);

	snprintf(buf, sizeof(buf), json, 4);
	predict_text(buf, &p, &pr);
	assert_true(pr.crosses_nic[CT_CLASS_EP]);
	assert_true(pr.nic_bytes_per_iter > 0);
	ct_prediction_free(&pr);
	ct_profile_free(&p);
}

/* One case per validation error class: the message names the JSON path. */
static void expect_error(const char *json, const char *path_in_message)
{
	struct ct_profile p;
	char err[512] = "";

	assert_int_not_equal(load_text(json, &p, err, sizeof(err)), 0);
	if (!strstr(err, path_in_message))
		fail_msg("error \"%s\" does not mention \"%s\"", err, path_in_message);
}

/*
 * A tiny GPT without a pipeline for the ZeRO tests: l=4 h=64 s=32 V=1000,
 * (p,t,d)=(1,1,2), b=2 m=2, fp16, one GPU per host.
 */
static char *tiny_zero(unsigned zero, bool overlap)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"name\":\"tiny-zero\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		 "\"seq_len\":32,\"vocab\":1000,\"global_batch\":8,\"micro_batch\":2,"
		 "\"micro_batches\":2},"
		 "\"parallelism\":{\"p\":1,\"t\":1,\"d\":2,\"zero\":%u%s},"
		 "\"placement\":{\"gpus\":2,\"gpus_per_host\":1,\"mapping\":\"custom\"},"
		 "\"hardware\":{\"peak_flops\":1e12,\"mu\":0.5,\"nic_gbps\":100,"
		 "\"intra_host_GBps\":10}}",
		 zero, overlap ? ",\"zero_overlap\":true" : "");
	return buf;
}

/*
 * The parameters one rank of tiny_zero holds (t = 1, one stage):
 *   a layer: 12h² + 7h + 6h = 49152 + 448 + 384 = 49984
 *   4 layers 199936, word embedding Vpad·h = 1024·64 = 65536 (V padded to a
 *   multiple of 128), positions s·h = 2048, final layer norm 2h = 128:
 *   267648 parameters, 535296 bytes in fp16.
 */
#define ZERO_RANK_PARAMS 267648.0
#define ZERO_GRAD_BYTES	 535296.0

/* The DP transfers from rank 0 to rank 1, in start order. */
static size_t dp_xfers(const struct ct_prediction *pr, const struct ct_transfer **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < pr->n_xfers; i++)
		if (pr->xfers[i].cls == CT_CLASS_DP && pr->xfers[i].src_rank == 0 && n < max)
			out[n++] = &pr->xfers[i];
	return n;
}

static void test_zero1_hand_computed(void **state)
{
	struct ct_profile p;
	struct ct_prediction pr;
	const struct ct_transfer *x[16];

	(void)state;
	predict_text(tiny_zero(1, false), &p, &pr);
	assert_float_equal(pr.stage_rank_params[0], ZERO_RANK_PARAMS, 1e-6);
	/*
	 * Distributed optimizer, d = 2: a reduce-scatter of the 535296 gradient
	 * bytes (each rank sends the half it does not own, 267648 bytes), then an
	 * all-gather of the updated parameters (the half it owns, 267648 bytes):
	 * 2 collectives, 535296 bytes, what one all-reduce would send, in two
	 * transfers one after the other (C_DP = 0.9·12.5 GB/s, one GPU per host:
	 * each takes 267648 / 11.25e9 s).
	 */
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->messages, 2, 1e-9);
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->msg_bytes, ZERO_GRAD_BYTES, 1e-6);
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->bytes, ZERO_GRAD_BYTES, 1e-6);
	assert_int_equal(dp_xfers(&pr, x, 16), 2);
	assert_int_equal(x[0]->bytes, 267648);
	assert_int_equal(x[1]->bytes, 267648);
	assert_int_equal(x[0]->dst_rank, 1);
	assert_float_equal(x[0]->duration, 267648 / 11.25e9, 1e-15);
	assert_float_equal(x[1]->start, x[0]->start + x[0]->duration, 1e-12);
	/* the iteration ends with the all-gather */
	assert_float_equal(pr.t_iter, x[1]->start + x[1]->duration, 1e-12);
	ct_prediction_free(&pr);
	ct_profile_free(&p);

	/*
	 * Overlapped: one bucket per layer (4): each reduce-scatter moves a
	 * quarter, 535296/4 = 133824 bytes of tensor, 66912 sent; the same for
	 * each all-gather: 8 collectives, 8·66912 = 535296 bytes.
	 */
	predict_text(tiny_zero(1, true), &p, &pr);
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->messages, 8, 1e-9);
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->bytes, ZERO_GRAD_BYTES, 1e-6);
	assert_int_equal(dp_xfers(&pr, x, 16), 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(x[i]->bytes, 66912);
	/* the first all-gather runs during the first forward, before any backward */
	assert_true(x[0]->start < pr.t_fwd_mb);
	ct_prediction_free(&pr);
	ct_profile_free(&p);
}

static void test_zero3_hand_computed(void **state)
{
	struct ct_profile p;
	struct ct_prediction pr;
	const struct ct_transfer *x[64];

	(void)state;
	predict_text(tiny_zero(3, false), &p, &pr);
	/*
	 * ZeRO-3, d = 2, per micro-batch: forward, an all-gather per layer (4);
	 * backward, an all-gather and a reduce-scatter per layer (8): 12
	 * collectives, m = 2: 24. Each moves (d-1)/d of its tensor: the layers'
	 * 2·49984 = 99968 bytes (49984 sent), and the first layer's gathers and
	 * its reduce-scatter also carry the embeddings and the final norm,
	 * 2·(49984 + 67712) = 235392 bytes (117696 sent).
	 * Per micro-batch 3 · 535296 / 2 = 802944 bytes; m = 2: 1605888.
	 */
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->messages, 24, 1e-9);
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->msg_bytes, 235392, 1e-6);
	assert_float_equal(ct_rank_traffic(&pr, 0, CT_CLASS_DP)->bytes, 1605888, 1e-6);
	assert_int_equal(dp_xfers(&pr, x, 64), 24);
	assert_int_equal(x[0]->bytes, 117696); /* forward: the first layer with the embeddings */
	assert_int_equal(x[1]->bytes, 49984);
	/* T_DP = 3·m·(d-1)/d·(the rank's parameter bytes)/C_DP = 1605888 / 11.25e9 */
	assert_float_equal(pr.t_class[CT_CLASS_DP], 1605888 / 11.25e9, 1e-15);
	/* nothing after the last backward: no all-reduce at the iteration's end */
	for (size_t i = 0; i < pr.n_xfers; i++)
		assert_true(pr.xfers[i].start < pr.t_iter);
	ct_prediction_free(&pr);
	ct_profile_free(&p);
}

/*
 * A rail-optimized cluster: 2 hosts of 8 GPUs with 8 NICs of 100 Gb/s each,
 * the tiny GPT with (p,t,d) = (1,8,2), custom mapping: host = dp, GPU = tp,
 * so TP stays inside a host and each DP ring (one per tp) crosses between
 * the two hosts' NICs of rail tp.
 */
static char *tiny_rail(unsigned nics)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"name\":\"tiny-rail\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		 "\"seq_len\":32,\"vocab\":1000,\"global_batch\":8,\"micro_batch\":2,"
		 "\"micro_batches\":2},"
		 "\"parallelism\":{\"p\":1,\"t\":8,\"d\":2},"
		 "\"placement\":{\"gpus\":16,\"gpus_per_host\":8,\"mapping\":\"custom\","
		 "\"nics_per_host\":%u},"
		 "\"hardware\":{\"peak_flops\":1e12,\"mu\":0.5,\"nic_gbps\":100,"
		 "\"intra_host_GBps\":10}}",
		 nics);
	return buf;
}

static void test_rail_hand_computed(void **state)
{
	struct ct_profile p;
	struct ct_prediction pr;
	char text[64];

	(void)state;
	predict_text(tiny_rail(8), &p, &pr);
	/*
	 * One TP rank's parameters, t = 8: a layer 12h²/t + 7h/t + 6h = 6144 + 56 +
	 * 384 = 6584, 4 layers 26336; the word embedding Vpad·h/t with V padded
	 * to a multiple of 128·t = 1024: 1024·64/8 = 8192; positions s·h = 2048;
	 * final norm 2h = 128: 36704, 73408 bytes in fp16.
	 */
	assert_float_equal(pr.stage_rank_params[0], 36704, 1e-6);
	assert_int_equal(p.nics, 16);
	/* rank 11 = dp 1, tp 3: host 1, its GPU 3, NIC 3 of host 1 = global NIC 11 */
	assert_int_equal(p.rank_host[11], 1);
	assert_int_equal(p.rank_nic[11], 11);
	assert_string_equal(ct_addr_format(&p.nic_addr[11], text, sizeof(text)), "198.19.3.2");
	/* DP ring of d = 2: rank 3 sends 2(d-1)/d · 73408 = 73408 bytes to rank 11,
	 * NIC 3 of host 0 to NIC 3 of host 1, and nothing to other rails */
	assert_float_equal(ct_rank_bytes(&pr, CT_CLASS_DP, 3, 11), 73408, 1e-6);
	for (size_t i = 0; i < pr.n_xfers; i++) {
		const struct ct_transfer *x = &pr.xfers[i];

		if (x->src_host != x->dst_host) {
			assert_int_equal(x->cls, CT_CLASS_DP);
			assert_int_equal(x->src_nic % 8, x->dst_nic % 8);
			assert_int_equal(x->src_nic, p.rank_nic[x->src_rank]);
			assert_int_equal(x->bytes, 73408);
		}
	}
	/* the host pair carries 8 rails' worth: 8 · 73408 = 587264 bytes each way */
	assert_float_equal(ct_host_bytes(&pr, CT_CLASS_DP, 0, 1), 587264, 1e-6);
	/*
	 * Each NIC carries one rank's DP: C_DP = 0.9 · 12.5 GB/s = 11.25 GB/s, and
	 * T_DP = 73408 / 11.25e9. With one NIC per host its 8 ranks share it:
	 * 11.25e9 / 8 = 1.40625e9.
	 */
	assert_float_equal(pr.c[CT_CLASS_DP], 11.25e9, 1);
	assert_float_equal(pr.t_class[CT_CLASS_DP], 73408 / 11.25e9, 1e-15);
	ct_prediction_free(&pr);
	ct_profile_free(&p);

	predict_text(tiny_rail(1), &p, &pr);
	assert_float_equal(pr.c[CT_CLASS_DP], 1.40625e9, 1);
	assert_int_equal(p.rank_nic[11], 1);
	ct_prediction_free(&pr);
	ct_profile_free(&p);
}

/*
 * Interleaved 1F1B on the tiny GPT, (p,t,d) = (2,1,1), v = 2 chunks per
 * stage (layers 0 and 2 on stage 0, 1 and 3 on stage 1: virtual stages
 * q = 0..3), m = 2. One activation or gradient is 2bsh = 8192 bytes.
 */
static void test_interleaved_hand_computed(void **state)
{
	const char *json =
		"{\"name\":\"tiny-vpp\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		"\"seq_len\":32,\"vocab\":1000,\"global_batch\":4,\"micro_batch\":2,"
		"\"micro_batches\":2},"
		"\"parallelism\":{\"p\":2,\"t\":1,\"d\":1,\"schedule\":\"interleaved-1f1b\","
		"\"virtual_stages\":2},"
		"\"placement\":{\"gpus\":2,\"gpus_per_host\":1,\"mapping\":\"deepspeed-default\"},"
		"\"hardware\":{\"peak_flops\":1e12,\"mu\":0.5,\"nic_gbps\":100,"
		"\"intra_host_GBps\":10}}";
	struct ct_profile p;
	struct ct_prediction pr;

	(void)state;
	predict_text(json, &p, &pr);
	/*
	 * Per micro-batch, stage 0 sends forward q0->q1 and q2->q3 and backward
	 * q2->q1: 3 sends to stage 1; stage 1 sends forward q1->q2 (the wrap from
	 * the last stage to the first) and backward q3->q2 and q1->q0: 3 to stage
	 * 0. m = 2: 6 sends of 8192 bytes each way (plain 1F1B: 2).
	 */
	assert_float_equal(ct_rank_bytes(&pr, CT_CLASS_PP, 0, 1), 6 * 8192.0, 1e-6);
	assert_float_equal(ct_rank_bytes(&pr, CT_CLASS_PP, 1, 0), 6 * 8192.0, 1e-6);
	assert_float_equal(ct_rank_traffic(&pr, 1, CT_CLASS_PP)->messages, 6, 1e-9);
	/* the bubble shrinks by v: R_bubble = (p-1)/(p-1 + v·m) = 1/5 */
	assert_float_equal(pr.r_bubble, 1.0 / 5, 1e-12);
	/* every op was scheduled: the iteration ends after the last backward */
	assert_true(pr.t_iter > 0);
	ct_prediction_free(&pr);
	ct_profile_free(&p);
}

static void test_validation_errors(void **state)
{
	(void)state;
	const char *hw = "\"hardware\":{\"platform\":\"A100\"}";
	char buf[1024];

	/* syntax */
	expect_error("{\"name\": \"x\",\n \"model\": {", "line 2 (byte 25): not valid JSON");
	/* unknown key */
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		 "\"batch_per_gpu\":1,\"layerz\":1},\"placement\":{\"gpus\":8},%s}", hw);
	expect_error(buf, "$.model: unknown key \"layerz\"");
	/* missing field */
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\"},"
		 "\"placement\":{\"gpus\":8},%s}", hw);
	expect_error(buf, "$.model.batch_per_gpu: missing");
	/* wrong type */
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":\"many\"}}");
	expect_error(buf, "$.model.layers: expected an integer");
	/* unknown enumeration value */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"cnn\"}}", "$.model.kind: expected one of");
	/* p·t·d != GPUs */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		     "\"seq_len\":8,\"global_batch\":4,\"micro_batch\":1,\"micro_batches\":2},"
		     "\"parallelism\":{\"p\":2,\"t\":2,\"d\":2},\"placement\":{\"gpus\":16,"
		     "\"mapping\":\"custom\"},\"hardware\":{\"platform\":\"A100\"}}",
		     "$.parallelism: p·t·d = 2·2·2 = 8 but the job has 16 GPUs");
	/* gb != b·m·d */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		     "\"seq_len\":8,\"global_batch\":5,\"micro_batch\":1,\"micro_batches\":2},"
		     "\"parallelism\":{\"p\":2,\"t\":2,\"d\":2},\"placement\":{\"gpus\":8,"
		     "\"mapping\":\"custom\"},\"hardware\":{\"platform\":\"A100\"}}",
		     "$.model.global_batch: gb = 5 but b·m·d");
	/* fewer layers than stages */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":1,\"hidden\":64,"
		     "\"seq_len\":8,\"global_batch\":4,\"micro_batch\":1,\"micro_batches\":2},"
		     "\"parallelism\":{\"p\":2,\"t\":2,\"d\":2},\"placement\":{\"gpus\":8,"
		     "\"mapping\":\"custom\"},\"hardware\":{\"platform\":\"A100\"}}",
		     "$.model.layers: 1 layers cannot fill 2 pipeline stages");
	/* explicit mapping without its list */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		     "\"seq_len\":8,\"global_batch\":4,\"micro_batch\":1,\"micro_batches\":2},"
		     "\"parallelism\":{\"p\":2,\"t\":2,\"d\":2},\"placement\":{\"gpus\":8,"
		     "\"mapping\":\"explicit\"},\"hardware\":{\"platform\":\"A100\"}}",
		     "$.placement.rank_hosts: missing");
	/* bad address */
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		 "\"batch_per_gpu\":1},\"placement\":{\"gpus\":8,\"hosts\":[\"198.18.0.300\"]},%s}",
		 hw);
	expect_error(buf, "$.placement.hosts[0]: expected an IPv4 or IPv6 address");
	/* unknown platform */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		     "\"batch_per_gpu\":1},\"placement\":{\"gpus\":8},"
		     "\"hardware\":{\"platform\":\"TPUv9\"}}",
		     "$.hardware.platform: expected one of");
	/* a number out of range */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		     "\"batch_per_gpu\":1},\"placement\":{\"gpus\":8},"
		     "\"hardware\":{\"platform\":\"A100\",\"mu\":3}}",
		     "$.hardware.mu: expected a number in [0.001, 1]");
	/* ZeRO-3 with a pipeline */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		     "\"seq_len\":8,\"global_batch\":4,\"micro_batch\":1,\"micro_batches\":2},"
		     "\"parallelism\":{\"p\":2,\"t\":2,\"d\":2,\"zero\":3},\"placement\":{\"gpus\":"
		     "8,\"mapping\":\"custom\"},"
		     "\"hardware\":{\"platform\":\"A100\"}}",
		     "$.parallelism.zero: ZeRO-3 gathers every layer from the DP replicas and runs "
		     "without a pipeline: needs p = 1, got p = 2");
	/* overlap without ZeRO-1 */
	expect_error("{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":4,\"hidden\":64,"
		     "\"seq_len\":8,\"global_batch\":4,\"micro_batch\":1,\"micro_batches\":2},"
		     "\"parallelism\":{\"p\":2,\"t\":2,\"d\":2,\"zero_overlap\":true},"
		     "\"placement\":{\"gpus\":8,\"mapping\":\"custom\"},\"hardware\":{\"platform\":"
		     "\"A100\"}}",
		     "$.parallelism.zero_overlap: needs \"zero\": 1, got zero = 0");
	/* an NCCL buffer that is not 8 steps of whole 128-byte lines */
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		 "\"batch_per_gpu\":1},\"placement\":{\"gpus\":8},%s,"
		 "\"nccl\":{\"buffsize\":1000000}}",
		 hw);
	expect_error(buf,
		     "$.nccl.buffsize: 1000000 bytes is not 8 steps of a multiple of 128 bytes");
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		 "\"batch_per_gpu\":1},\"placement\":{\"gpus\":8},%s,"
		 "\"nccl\":{\"protocol\":\"LL64\"}}",
		 hw);
	expect_error(buf, "$.nccl.protocol: expected one of Simple, LL, LL128, got \"LL64\"");
	/* NICs that do not divide the GPUs, and a NIC list of the wrong length */
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		 "\"batch_per_gpu\":1},\"placement\":{\"gpus\":16,\"gpus_per_host\":8,"
		 "\"nics_per_host\":3},%s}",
		 hw);
	expect_error(buf, "$.placement.nics_per_host: 8 GPUs per host cannot share 3 NICs evenly");
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"x\",\"model\":{\"kind\":\"ddp\",\"architecture\":\"vgg16\","
		 "\"batch_per_gpu\":1},\"placement\":{\"gpus\":16,\"gpus_per_host\":8,"
		 "\"nics_per_host\":2,\"nics\":[\"198.18.0.1\"]},%s}",
		 hw);
	expect_error(buf, "$.placement.nics: expected an array of 4 addresses (2 hosts × 2 NICs");
	/* interleaving with m not a multiple of p */
	expect_error(
		"{\"name\":\"x\",\"model\":{\"kind\":\"gpt\",\"layers\":8,\"hidden\":64,"
		"\"seq_len\":8,\"global_batch\":6,\"micro_batch\":1,\"micro_batches\":3},"
		"\"parallelism\":{\"p\":2,\"t\":2,\"d\":2,\"schedule\":\"interleaved-1f1b\","
		"\"virtual_stages\":2},\"placement\":{\"gpus\":8,\"mapping\":\"custom\"},"
		"\"hardware\":{\"platform\":\"A100\"}}",
		"$.parallelism.virtual_stages: interleaving needs the micro-batches (m = 3) to "
		"be a multiple of p = 2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpt_hand_computed),
		cmocka_unit_test(test_gpt_invariants),
		cmocka_unit_test(test_ddp_buckets),
		cmocka_unit_test(test_moe_one_host_has_no_nic_traffic),
		cmocka_unit_test(test_zero1_hand_computed),
		cmocka_unit_test(test_zero3_hand_computed),
		cmocka_unit_test(test_rail_hand_computed),
		cmocka_unit_test(test_interleaved_hand_computed),
		cmocka_unit_test(test_validation_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
