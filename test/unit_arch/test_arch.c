// SPDX-License-Identifier: MIT
/*
 * profiles/arch.c against PyTorch: parameter totals and tensor counts as
 * sum(p.numel() for p in model.parameters()) and len(list(model.parameters()))
 * give them for torchvision resnet50/101/152 and vgg16 and HuggingFace
 * BertModel, registration order, forward FLOPs, the published 2^20 figures.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "arch.h"

#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))
#define MIB	      1048576.0

struct expected_arch {
	const char *name;
	uint64_t params;	  /* PyTorch's total */
	size_t tensors;		  /* parameter tensors */
	const char *first, *last; /* registration order */
	double gflops;		  /* forward GFLOPs per sample (224x224 image, 128 tokens) */
	double published_mib;	  /* REFERENCE.md, units of 2^20; 0: not in the table */
};

/*
 * Tensor counts from the definitions:
 *  resnet: conv1 + bn1 (3), 9 per Bottleneck (3 convs, 3 BNs with weight and bias), 3 more
 *          for the downsample of each stage's first block (4 stages), fc weight + bias:
 *          3 + 9 * blocks + 12 + 2, with 16/33/50 blocks -> 161/314/467.
 *  vgg16:  13 convs and 3 linears, each weight + bias -> 32.
 *  bert:   5 embedding tensors, 16 per layer (q, k, v, attention output dense: 8; two
 *          LayerNorms: 4; intermediate and output dense: 4), pooler 2 -> 5 + 16 L + 2:
 *          199 (L = 12) and 391 (L = 24).
 * FLOPs targets: torchvision's published 4.09 / 7.80 / 11.51 GMACs and VGG16's 15.47 GMACs,
 * doubled; BERT from 2 s L (4 H^2 + 2 H I) + 4 L s^2 H.
 */
static const struct expected_arch expected[] = {
	{"resnet50", 25557032, 161, "conv1.weight", "fc.bias", 8.2, 24.37},
	{"resnet101", 44549160, 314, "conv1.weight", "fc.bias", 15.6, 42.49},
	{"resnet152", 60192808, 467, "conv1.weight", "fc.bias", 23.0, 0},
	{"vgg16", 138357544, 32, "features.0.weight", "classifier.6.bias", 31.0, 131.95},
	{"bert-base", 109482240, 199, "embeddings.word_embeddings.weight", "pooler.dense.bias",
	 22.0, 104.44},
	{"bert-large", 335141888, 391, "embeddings.word_embeddings.weight", "pooler.dense.bias",
	 78.9, 319.64},
};

static const struct ct_arch_tensor *find_tensor(const struct ct_arch *a, const char *name)
{
	for (size_t i = 0; i < a->count; i++)
		if (!strcmp(a->tensors[i].name, name))
			return &a->tensors[i];
	fail_msg("%s has no tensor %s", a->name, name);
	return NULL;
}

static size_t tensor_index(const struct ct_arch *a, const char *name)
{
	return (size_t)(find_tensor(a, name) - a->tensors);
}

static void build_or_fail(const char *name, unsigned seq_len, struct ct_arch *a)
{
	int err = ct_arch_build(name, seq_len, a);

	if (err)
		fail_msg("ct_arch_build(%s, %u): %d", name, seq_len, err);
}

static void test_totals_and_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		const struct expected_arch *e = &expected[i];
		uint64_t numel_sum = 0, tensor_flops = 0;
		struct ct_arch a;

		build_or_fail(e->name, 0, &a);
		printf("  %-10s %9llu parameters, %3zu tensors, %7.3f GFLOPs/sample\n", e->name,
		       (unsigned long long)a.params, a.count, a.fwd_flops / 1e9);
		assert_string_equal(a.name, e->name);
		for (size_t k = 0; k < a.count; k++) {
			numel_sum += a.tensors[k].numel;
			tensor_flops += a.tensors[k].fwd_flops;
			assert_true(a.tensors[k].numel > 0);
		}
		assert_int_equal(numel_sum, a.params);
		assert_int_equal(a.params, e->params);
		assert_int_equal(a.count, e->tensors);
		assert_true(tensor_flops <= a.fwd_flops);
		assert_string_equal(a.tensors[0].name, e->first);
		assert_string_equal(a.tensors[a.count - 1].name, e->last);
		ct_arch_free(&a);
	}
}

static void test_flops(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		const struct expected_arch *e = &expected[i];
		struct ct_arch a;
		double gflops, rel;

		build_or_fail(e->name, 0, &a);
		gflops = a.fwd_flops / 1e9;
		rel = (gflops - e->gflops) / e->gflops;
		printf("  %-10s %7.3f GFLOPs (%.3f GMACs), target %.1f: %+.2f%%\n", e->name, gflops,
		       gflops / 2, e->gflops, 100 * rel);
		if (fabs(rel) > 0.03)
			fail_msg("%s: %.3f GFLOPs, expected %.1f +-3%%", e->name, gflops,
				 e->gflops);
		ct_arch_free(&a);
	}
}

/* BERT: the per-tensor sum equals the closed form, at any sequence length. */
static void test_bert_flops_closed_form(void **state)
{
	static const struct {
		const char *name;
		uint64_t layers, hidden, intermediate;
	} berts[] = {{"bert-base", 12, 768, 3072}, {"bert-large", 24, 1024, 4096}};
	static const unsigned seq_lens[] = {1, 64, 128, 384, 512};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(berts); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(seq_lens); k++) {
			uint64_t s = seq_lens[k], l = berts[i].layers, h = berts[i].hidden;
			uint64_t in = berts[i].intermediate;
			uint64_t linear = 2 * s * l * (4 * h * h + 2 * h * in);
			uint64_t attention = 2 * 2 * s * s * h * l;
			uint64_t pooler = 2 * h * h;
			struct ct_arch a;

			build_or_fail(berts[i].name, seq_lens[k], &a);
			assert_int_equal(a.input_size, seq_lens[k]);
			assert_int_equal(a.fwd_flops, linear + attention + pooler);
			ct_arch_free(&a);
		}
	}
}

static void test_published_mib(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		const struct expected_arch *e = &expected[i];
		struct ct_arch a;
		double mib;

		if (!e->published_mib)
			continue;
		build_or_fail(e->name, 0, &a);
		mib = a.params / MIB;
		printf("  %-10s %9llu / 2^20 = %8.3fM, published %.2fM: %+.4f (%+.3f%%)\n", e->name,
		       (unsigned long long)a.params, mib, e->published_mib, mib - e->published_mib,
		       100 * (mib - e->published_mib) / e->published_mib);
		if (fabs(mib - e->published_mib) >= 0.05)
			fail_msg("%s: %.3fM vs published %.2fM", e->name, mib, e->published_mib);
		ct_arch_free(&a);
	}
}

static void test_resnet50_tensors(void **state)
{
	struct ct_arch a;
	size_t downsamples = 0;

	(void)state;
	build_or_fail("resnet50", 0, &a);
	assert_int_equal(a.input_size, 224);
	assert_int_equal(find_tensor(&a, "layer1.0.downsample.0.weight")->numel, 64 * 256);
	assert_int_equal(find_tensor(&a, "fc.weight")->numel, 2048000);
	assert_int_equal(find_tensor(&a, "fc.bias")->numel, 1000);
	assert_int_equal(find_tensor(&a, "layer2.0.conv2.weight")->numel, 128 * 128 * 9);
	assert_int_equal(find_tensor(&a, "layer4.2.bn3.bias")->numel, 2048);
	/* stem: 7x7 stride 2 onto 112x112; layer2's 3x3 carries the stride onto 28x28 */
	assert_int_equal(find_tensor(&a, "conv1.weight")->fwd_flops,
			 2ull * 7 * 7 * 3 * 64 * 112 * 112);
	assert_int_equal(find_tensor(&a, "layer2.0.conv1.weight")->fwd_flops,
			 2ull * 256 * 128 * 56 * 56);
	assert_int_equal(find_tensor(&a, "layer2.0.conv2.weight")->fwd_flops,
			 2ull * 9 * 128 * 128 * 28 * 28);
	assert_int_equal(find_tensor(&a, "layer2.0.downsample.0.weight")->fwd_flops,
			 2ull * 256 * 512 * 28 * 28);
	assert_int_equal(find_tensor(&a, "fc.weight")->fwd_flops, 2ull * 2048 * 1000);
	assert_int_equal(find_tensor(&a, "bn1.weight")->fwd_flops, 0);
	/* order: stem, then conv/bn pairs, the downsample after bn3 */
	assert_string_equal(a.tensors[1].name, "bn1.weight");
	assert_string_equal(a.tensors[2].name, "bn1.bias");
	assert_string_equal(a.tensors[3].name, "layer1.0.conv1.weight");
	assert_int_equal(tensor_index(&a, "layer1.0.downsample.0.weight"),
			 tensor_index(&a, "layer1.0.bn3.bias") + 1);
	assert_int_equal(tensor_index(&a, "layer1.1.conv1.weight"),
			 tensor_index(&a, "layer1.0.downsample.1.bias") + 1);
	assert_int_equal(tensor_index(&a, "fc.weight"), tensor_index(&a, "layer4.2.bn3.bias") + 1);
	/* only the first block of each stage has a downsample; no conv bias, no BN buffers */
	for (size_t i = 0; i < a.count; i++) {
		if (strstr(a.tensors[i].name, "downsample")) {
			assert_non_null(strstr(a.tensors[i].name, ".0.downsample."));
			downsamples++;
		}
		assert_null(strstr(a.tensors[i].name, "running"));
		assert_null(strstr(a.tensors[i].name, "num_batches_tracked"));
		if (strstr(a.tensors[i].name, "conv"))
			assert_non_null(strstr(a.tensors[i].name, ".weight"));
	}
	assert_int_equal(downsamples, 4 * 3);
	ct_arch_free(&a);
}

static void test_vgg16_tensors(void **state)
{
	static const unsigned conv_indices[] = {0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28};
	struct ct_arch a;
	char name[64];

	(void)state;
	build_or_fail("vgg16", 0, &a);
	for (size_t i = 0; i < ARRAY_SIZE(conv_indices); i++) {
		snprintf(name, sizeof(name), "features.%u.weight", conv_indices[i]);
		assert_string_equal(a.tensors[2 * i].name, name);
		snprintf(name, sizeof(name), "features.%u.bias", conv_indices[i]);
		assert_string_equal(a.tensors[2 * i + 1].name, name);
	}
	assert_string_equal(a.tensors[26].name, "classifier.0.weight");
	assert_int_equal(a.tensors[26].numel, 25088ull * 4096);
	assert_string_equal(a.tensors[28].name, "classifier.3.weight");
	assert_string_equal(a.tensors[30].name, "classifier.6.weight");
	assert_int_equal(a.tensors[30].numel, 4096ull * 1000);
	assert_int_equal(find_tensor(&a, "features.0.weight")->fwd_flops,
			 2ull * 9 * 3 * 64 * 224 * 224);
	assert_int_equal(find_tensor(&a, "features.28.weight")->fwd_flops,
			 2ull * 9 * 512 * 512 * 14 * 14);
	ct_arch_free(&a);
}

static void test_bert_tensors(void **state)
{
	static const char *const layer_order[] = {
		"attention.self.query.weight",
		"attention.self.query.bias",
		"attention.self.key.weight",
		"attention.self.key.bias",
		"attention.self.value.weight",
		"attention.self.value.bias",
		"attention.output.dense.weight",
		"attention.output.dense.bias",
		"attention.output.LayerNorm.weight",
		"attention.output.LayerNorm.bias",
		"intermediate.dense.weight",
		"intermediate.dense.bias",
		"output.dense.weight",
		"output.dense.bias",
		"output.LayerNorm.weight",
		"output.LayerNorm.bias",
	};
	static const char *const embeddings[] = {
		"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
		"embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
		"embeddings.LayerNorm.bias"};
	struct ct_arch a;
	char name[64];

	(void)state;
	build_or_fail("bert-base", 0, &a);
	assert_int_equal(a.input_size, 128);
	for (size_t i = 0; i < ARRAY_SIZE(embeddings); i++)
		assert_string_equal(a.tensors[i].name, embeddings[i]);
	for (unsigned layer = 0; layer < 12; layer++)
		for (size_t i = 0; i < ARRAY_SIZE(layer_order); i++) {
			snprintf(name, sizeof(name), "encoder.layer.%u.%s", layer, layer_order[i]);
			assert_string_equal(a.tensors[5 + 16 * layer + i].name, name);
		}
	assert_string_equal(a.tensors[197].name, "pooler.dense.weight");
	assert_int_equal(find_tensor(&a, "embeddings.word_embeddings.weight")->numel, 30522 * 768);
	assert_int_equal(find_tensor(&a, "embeddings.position_embeddings.weight")->numel,
			 512 * 768);
	assert_int_equal(find_tensor(&a, "embeddings.token_type_embeddings.weight")->numel,
			 2 * 768);
	assert_int_equal(find_tensor(&a, "encoder.layer.11.output.dense.weight")->numel,
			 3072 * 768);
	assert_int_equal(find_tensor(&a, "encoder.layer.3.attention.self.query.bias")->numel, 768);
	assert_int_equal(find_tensor(&a, "encoder.layer.0.intermediate.dense.weight")->fwd_flops,
			 2ull * 768 * 3072 * 128);
	assert_int_equal(find_tensor(&a, "pooler.dense.weight")->fwd_flops, 2ull * 768 * 768);
	ct_arch_free(&a);

	build_or_fail("bert-large", 0, &a);
	assert_int_equal(find_tensor(&a, "encoder.layer.23.intermediate.dense.weight")->numel,
			 1024 * 4096);
	ct_arch_free(&a);
}

static void test_seq_len(void **state)
{
	struct ct_arch a, b;

	(void)state;
	/* 0 means 128 */
	build_or_fail("bert-base", 0, &a);
	build_or_fail("bert-base", 128, &b);
	assert_int_equal(a.fwd_flops, b.fwd_flops);
	ct_arch_free(&b);
	/* the parameters do not depend on it, the FLOPs do */
	build_or_fail("bert-base", 512, &b);
	assert_int_equal(b.input_size, 512);
	assert_int_equal(a.params, b.params);
	assert_true(b.fwd_flops > 4 * a.fwd_flops);
	ct_arch_free(&a);
	ct_arch_free(&b);
	/* past BERT's 512 positions */
	assert_int_equal(ct_arch_build("bert-large", 513, &a), -EINVAL);
	assert_null(a.tensors);
	assert_int_equal(a.count, 0);
	/* ignored by the CNNs */
	build_or_fail("resnet50", 0, &a);
	build_or_fail("resnet50", 1024, &b);
	assert_int_equal(b.input_size, 224);
	assert_int_equal(a.fwd_flops, b.fwd_flops);
	ct_arch_free(&a);
	ct_arch_free(&b);
}

static void test_names_and_errors(void **state)
{
	const char *const *names = ct_arch_names();
	struct ct_arch a;
	size_t n = 0;

	(void)state;
	for (; names[n]; n++) {
		build_or_fail(names[n], 0, &a);
		assert_string_equal(a.name, names[n]);
		ct_arch_free(&a);
	}
	assert_int_equal(n, ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		size_t k = 0;

		while (names[k] && strcmp(names[k], expected[i].name))
			k++;
		assert_non_null(names[k]);
	}
	memset(&a, 0xa5, sizeof(a));
	assert_int_equal(ct_arch_build("alexnet", 0, &a), -ENOENT);
	assert_null(a.tensors);
	assert_int_equal(a.count, 0);
	assert_int_equal(ct_arch_build("ResNet50", 0, &a), -ENOENT);
	assert_int_equal(ct_arch_build("", 0, &a), -ENOENT);
	assert_int_equal(ct_arch_build(NULL, 0, &a), -EINVAL);
	assert_int_equal(ct_arch_build("vgg16", 0, NULL), -EINVAL);
	/* freeing twice, or an empty struct, is harmless */
	build_or_fail("vgg16", 0, &a);
	ct_arch_free(&a);
	ct_arch_free(&a);
	assert_null(a.tensors);
	assert_int_equal(a.params, 0);
	ct_arch_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_totals_and_order),       cmocka_unit_test(test_flops),
		cmocka_unit_test(test_bert_flops_closed_form), cmocka_unit_test(test_published_mib),
		cmocka_unit_test(test_resnet50_tensors),       cmocka_unit_test(test_vgg16_tensors),
		cmocka_unit_test(test_bert_tensors),	       cmocka_unit_test(test_seq_len),
		cmocka_unit_test(test_names_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
