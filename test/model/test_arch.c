// SPDX-License-Identifier: MIT
/* DDP architectures: totals as PyTorch counts them, registration order, FLOPs. */
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

struct expected {
	const char *name;
	uint64_t params;   /* sum(p.numel() for p in model.parameters()) */
	size_t tensors;	   /* len(list(model.parameters())) */
	double published;  /* REFERENCE.md, units of 2^20 (0: not published) */
	double gflops;	   /* forward, per sample */
	const char *first, *last;
};

static const struct expected models[] = {
	{"resnet50", 25557032, 161, 24.37, 8.2, "conv1.weight", "fc.bias"},
	{"resnet101", 44549160, 314, 42.49, 15.6, "conv1.weight", "fc.bias"},
	{"resnet152", 60192808, 467, 0, 23.0, "conv1.weight", "fc.bias"},
	{"vgg16", 138357544, 32, 131.95, 31.0, "features.0.weight", "classifier.6.bias"},
	{"bert-base", 109482240, 199, 104.44, 22.3, "embeddings.word_embeddings.weight",
	 "pooler.dense.bias"},
	{"bert-large", 335141888, 391, 319.64, 78.9, "embeddings.word_embeddings.weight",
	 "pooler.dense.bias"},
};

static uint64_t tensor(const struct ct_arch *a, const char *name)
{
	for (size_t i = 0; i < a->count; i++)
		if (!strcmp(a->tensors[i].name, name))
			return a->tensors[i].numel;
	fail_msg("%s has no tensor %s", a->name, name);
	return 0;
}

static void test_totals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		const struct expected *e = &models[i];
		struct ct_arch a;
		uint64_t sum = 0;

		assert_int_equal(ct_arch_build(e->name, 128, &a), 0);
		for (size_t k = 0; k < a.count; k++)
			sum += a.tensors[k].numel;
		assert_int_equal(sum, a.params);
		assert_int_equal(a.params, e->params);
		assert_int_equal(a.count, e->tensors);
		assert_string_equal(a.tensors[0].name, e->first);
		assert_string_equal(a.tensors[a.count - 1].name, e->last);
		if (fabs(a.fwd_flops / 1e9 - e->gflops) / e->gflops > 0.03)
			fail_msg("%s: %.3f GFLOPs, expected about %.1f", e->name, a.fwd_flops / 1e9,
				 e->gflops);
		if (e->published) {
			double m = (double)a.params / 1048576.0;

			printf("  %-10s %llu parameters = %.3fM (2^20), published %.2fM: %+.3f%%\n",
			       e->name, (unsigned long long)a.params, m, e->published,
			       100 * (m - e->published) / e->published);
			assert_true(fabs(m - e->published) < 0.05);
		}
		ct_arch_free(&a);
	}
}

static void test_tensors_and_errors(void **state)
{
	struct ct_arch a;

	(void)state;
	assert_int_equal(ct_arch_build("resnet50", 0, &a), 0);
	assert_int_equal(tensor(&a, "layer1.0.downsample.0.weight"), 64 * 256);
	assert_int_equal(tensor(&a, "fc.weight"), 2048000);
	assert_int_equal(tensor(&a, "layer4.2.bn3.bias"), 2048);
	ct_arch_free(&a);
	assert_int_equal(ct_arch_build("bert-base", 0, &a), 0);
	assert_int_equal(tensor(&a, "encoder.layer.11.output.dense.weight"), 3072 * 768);
	assert_int_equal(a.input_size, 128);
	ct_arch_free(&a);
	assert_int_equal(ct_arch_build("alexnet", 0, &a), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_tensors_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
