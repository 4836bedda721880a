// SPDX-License-Identifier: MIT
/*
 * The parameter tensors of the DDP workloads, generated from each model's
 * structure in PyTorch's registration order (model.parameters()):
 * torchvision ResNet (Bottleneck) and VGG16, HuggingFace BertModel with its
 * pooler. Convolutions have no bias in ResNet; BatchNorm's weight and bias
 * are parameters, its running statistics are buffers.
 */
#include "arch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 4, 5))) static int add(struct ct_arch *a, uint64_t numel,
						      uint64_t flops, const char *fmt, ...)
{
	struct ct_arch_tensor *t;
	va_list ap;

	if (a->count == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct ct_arch_tensor *nt = realloc(a->tensors, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		a->tensors = nt;
		a->cap = cap;
	}
	t = &a->tensors[a->count++];
	va_start(ap, fmt);
	vsnprintf(t->name, sizeof(t->name), fmt, ap);
	va_end(ap);
	t->numel = numel;
	t->fwd_flops = flops;
	a->params += numel;
	a->fwd_flops += flops;
	return 0;
}

/* A k x k convolution without bias producing an out_hw x out_hw map. */
static int conv(struct ct_arch *a, const char *name, unsigned cin, unsigned cout, unsigned k,
		unsigned out_hw)
{
	uint64_t w = (uint64_t)cin * cout * k * k;

	return add(a, w, 2 * w * out_hw * out_hw, "%s.weight", name);
}

static int batchnorm(struct ct_arch *a, const char *name, unsigned c)
{
	return add(a, c, 0, "%s.weight", name) ?: add(a, c, 0, "%s.bias", name);
}

/* torchvision Bottleneck: 1x1, 3x3 (carries the stride), 1x1 expanding by 4. */
static int bottleneck(struct ct_arch *a, unsigned layer, unsigned block, unsigned in,
		      unsigned planes, unsigned in_hw, unsigned stride)
{
	unsigned out_hw = in_hw / stride;
	char p[48], n[64];
	int err;

	snprintf(p, sizeof(p), "layer%u.%u", layer, block);
	snprintf(n, sizeof(n), "%s.conv1", p);
	err = conv(a, n, in, planes, 1, in_hw);
	snprintf(n, sizeof(n), "%s.bn1", p);
	err = err ?: batchnorm(a, n, planes);
	snprintf(n, sizeof(n), "%s.conv2", p);
	err = err ?: conv(a, n, planes, planes, 3, out_hw);
	snprintf(n, sizeof(n), "%s.bn2", p);
	err = err ?: batchnorm(a, n, planes);
	snprintf(n, sizeof(n), "%s.conv3", p);
	err = err ?: conv(a, n, planes, planes * 4, 1, out_hw);
	snprintf(n, sizeof(n), "%s.bn3", p);
	err = err ?: batchnorm(a, n, planes * 4);
	if (!err && (stride != 1 || in != planes * 4)) {
		snprintf(n, sizeof(n), "%s.downsample.0", p);
		err = conv(a, n, in, planes * 4, 1, out_hw);
		snprintf(n, sizeof(n), "%s.downsample.1", p);
		err = err ?: batchnorm(a, n, planes * 4);
	}
	return err;
}

static int resnet(struct ct_arch *a, const unsigned blocks[4])
{
	static const unsigned planes[4] = {64, 128, 256, 512};
	unsigned in = 64, hw = 56;
	int err;

	a->input_size = 224;
	err = conv(a, "conv1", 3, 64, 7, 112);
	err = err ?: batchnorm(a, "bn1", 64);
	for (unsigned l = 0; l < 4 && !err; l++) {
		unsigned stride = l ? 2 : 1;

		for (unsigned b = 0; b < blocks[l] && !err; b++) {
			err = bottleneck(a, l + 1, b, in, planes[l], hw, b ? 1 : stride);
			if (!b)
				hw /= stride;
			in = planes[l] * 4;
		}
	}
	err = err ?: add(a, 2048ull * 1000, 2ull * 2048 * 1000, "fc.weight");
	return err ?: add(a, 1000, 0, "fc.bias");
}

static int vgg16(struct ct_arch *a)
{
	/* channels, 0 = max pool; each convolution is followed by a ReLU in `features` */
	static const unsigned cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
				       512, 512, 512, 0, 512, 512, 512, 0};
	static const unsigned fc[][3] = {{0, 25088, 4096}, {3, 4096, 4096}, {6, 4096, 1000}};
	unsigned in = 3, hw = 224, idx = 0;
	int err = 0;

	a->input_size = 224;
	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]) && !err; i++) {
		if (!cfg[i]) {
			hw /= 2;
			idx++;
			continue;
		}
		uint64_t w = (uint64_t)in * cfg[i] * 9;

		err = add(a, w, 2 * w * hw * hw, "features.%u.weight", idx);
		err = err ?: add(a, cfg[i], 0, "features.%u.bias", idx);
		in = cfg[i];
		idx += 2;
	}
	for (size_t i = 0; i < 3 && !err; i++) {
		uint64_t w = (uint64_t)fc[i][1] * fc[i][2];

		err = add(a, w, 2 * w, "classifier.%u.weight", fc[i][0]);
		err = err ?: add(a, fc[i][2], 0, "classifier.%u.bias", fc[i][0]);
	}
	return err;
}

static int linear(struct ct_arch *a, const char *name, unsigned in, unsigned out, unsigned tokens)
{
	uint64_t w = (uint64_t)in * out;

	return add(a, w, 2 * w * tokens, "%s.weight", name) ?: add(a, out, 0, "%s.bias", name);
}

static int layernorm(struct ct_arch *a, const char *name, unsigned h)
{
	return add(a, h, 0, "%s.weight", name) ?: add(a, h, 0, "%s.bias", name);
}

/* HuggingFace BertModel (with pooler): vocabulary 30522, 512 positions, 2 token types. */
static int bert(struct ct_arch *a, unsigned layers, unsigned h, unsigned inter, unsigned s)
{
	char n[64];
	int err;

	a->input_size = s;
	err = add(a, 30522ull * h, 0, "embeddings.word_embeddings.weight");
	err = err ?: add(a, 512ull * h, 0, "embeddings.position_embeddings.weight");
	err = err ?: add(a, 2ull * h, 0, "embeddings.token_type_embeddings.weight");
	err = err ?: layernorm(a, "embeddings.LayerNorm", h);
	for (unsigned l = 0; l < layers && !err; l++) {
		static const char *const qkv[] = {"query", "key", "value"};

		for (int i = 0; i < 3 && !err; i++) {
			snprintf(n, sizeof(n), "encoder.layer.%u.attention.self.%s", l, qkv[i]);
			err = linear(a, n, h, h, s);
		}
		snprintf(n, sizeof(n), "encoder.layer.%u.attention.output.dense", l);
		err = err ?: linear(a, n, h, h, s);
		snprintf(n, sizeof(n), "encoder.layer.%u.attention.output.LayerNorm", l);
		err = err ?: layernorm(a, n, h);
		snprintf(n, sizeof(n), "encoder.layer.%u.intermediate.dense", l);
		err = err ?: linear(a, n, h, inter, s);
		snprintf(n, sizeof(n), "encoder.layer.%u.output.dense", l);
		err = err ?: linear(a, n, inter, h, s);
		snprintf(n, sizeof(n), "encoder.layer.%u.output.LayerNorm", l);
		err = err ?: layernorm(a, n, h);
		/* scores Q·K^T and their weighted sum of V: 2·s²·h multiply-adds */
		a->fwd_flops += 2ull * 2 * s * s * h;
	}
	return err ?: linear(a, "pooler.dense", h, h, 1);
}

static const char *const names[] = {"resnet50", "resnet101", "resnet152", "vgg16",
				    "bert-base", "bert-large", NULL};

const char *const *ct_arch_names(void)
{
	return names;
}

int ct_arch_build(const char *name, unsigned seq_len, struct ct_arch *out)
{
	static const unsigned r50[4] = {3, 4, 6, 3}, r101[4] = {3, 4, 23, 3},
			      r152[4] = {3, 8, 36, 3};
	int err;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	if (!seq_len)
		seq_len = 128;
	if (!strcmp(name, "resnet50"))
		err = resnet(out, r50);
	else if (!strcmp(name, "resnet101"))
		err = resnet(out, r101);
	else if (!strcmp(name, "resnet152"))
		err = resnet(out, r152);
	else if (!strcmp(name, "vgg16"))
		err = vgg16(out);
	else if (!strcmp(name, "bert-base"))
		err = bert(out, 12, 768, 3072, seq_len);
	else if (!strcmp(name, "bert-large"))
		err = bert(out, 24, 1024, 4096, seq_len);
	else
		err = -ENOENT;
	if (err)
		ct_arch_free(out);
	return err;
}

void ct_arch_free(struct ct_arch *a)
{
	free(a->tensors);
	a->tensors = NULL;
	a->count = a->cap = 0;
}
