// SPDX-License-Identifier: MIT
/*
 * The parameter tensors of the DDP workloads, generated from each model's
 * layer structure in PyTorch's registration order (model.parameters()):
 *
 *  - torchvision ResNet-50/101/152: conv1/bn1, four stages of Bottleneck
 *    blocks (1x1, 3x3 carrying the stride, 1x1 expanding by 4; a 1x1
 *    conv + BN downsample on the first block of each stage), fc. Convolutions
 *    have no bias; BatchNorm's weight and bias are parameters, its running
 *    statistics are buffers and do not appear.
 *  - torchvision VGG16 without BN: 13 biased 3x3 convolutions in `features`
 *    (each followed by a ReLU, so the indices skip), adaptive average pooling
 *    to 7x7, three biased linear layers in `classifier` (ReLU and Dropout
 *    between them).
 *  - HuggingFace BertModel with its pooler: embeddings, L encoder layers,
 *    pooler.dense.
 *
 * Forward FLOPs per sample count a multiply-add as 2: a convolution
 * 2*k*k*Cin*Cout*Hout*Wout, a linear layer 2*in*out per token; attention's
 * scores (QK^T) and weighted sum of V add 2*2*s^2*H per layer and are not tied
 * to a tensor. Biases, normalisation, activations and pooling count nothing.
 */
#include "arch.h"

#include <commtap/grow.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))

/* Appends tensors to an architecture; the first error sticks and later calls do nothing. */
struct arch_builder {
	struct ct_arch *arch;
	size_t cap;
	int err;
};

__attribute__((format(printf, 4, 5))) static void
add_tensor(struct arch_builder *b, uint64_t numel, uint64_t fwd_flops, const char *fmt, ...)
{
	struct ct_arch *a = b->arch;
	struct ct_arch_tensor *t;
	va_list ap;
	int len;

	if (b->err)
		return;
	if (a->count == b->cap) {
		struct ct_arch_tensor *grown = ct_grow(a->tensors, &b->cap, sizeof(*grown), 64);

		if (!grown) {
			b->err = -ENOMEM;
			return;
		}
		a->tensors = grown;
	}
	t = &a->tensors[a->count];
	va_start(ap, fmt);
	len = vsnprintf(t->name, sizeof(t->name), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(t->name)) {
		b->err = -ENAMETOOLONG;
		return;
	}
	t->numel = numel;
	t->fwd_flops = fwd_flops;
	a->count++;
	a->params += numel;
	a->fwd_flops += fwd_flops;
}

/* FLOPs not tied to a parameter tensor (attention scores and their weighted sums). */
static void add_untied_flops(struct arch_builder *b, uint64_t flops)
{
	if (!b->err)
		b->arch->fwd_flops += flops;
}

/* ---- layers -------------------------------------------------------------- */

/* Output side of a square convolution or pooling window. */
static unsigned conv_out_side(unsigned in_side, unsigned kernel, unsigned stride, unsigned pad)
{
	return (in_side + 2 * pad - kernel) / stride + 1;
}

/* nn.Conv2d(cin, cout, k, groups=1) producing an out_side x out_side map. */
static void conv2d(struct arch_builder *b, const char *prefix, unsigned cin, unsigned cout,
		   unsigned kernel, unsigned out_side, int has_bias)
{
	uint64_t weight = (uint64_t)kernel * kernel * cin * cout;

	add_tensor(b, weight, 2 * weight * out_side * out_side, "%s.weight", prefix);
	if (has_bias)
		add_tensor(b, cout, 0, "%s.bias", prefix);
}

/* nn.BatchNorm2d: weight and bias are parameters, running_mean/var are buffers. */
static void batch_norm2d(struct arch_builder *b, const char *prefix, unsigned channels)
{
	add_tensor(b, channels, 0, "%s.weight", prefix);
	add_tensor(b, channels, 0, "%s.bias", prefix);
}

/* A bias-free convolution followed by its BatchNorm, as everywhere in ResNet. */
static void conv_bn(struct arch_builder *b, const char *conv_name, const char *bn_name,
		    unsigned cin, unsigned cout, unsigned kernel, unsigned out_side)
{
	conv2d(b, conv_name, cin, cout, kernel, out_side, 0);
	batch_norm2d(b, bn_name, cout);
}

/* nn.Linear(in, out) with bias, applied to `tokens` positions per sample. */
static void linear(struct arch_builder *b, const char *prefix, unsigned in, unsigned out,
		   unsigned tokens)
{
	uint64_t weight = (uint64_t)in * out;

	add_tensor(b, weight, 2 * weight * tokens, "%s.weight", prefix);
	add_tensor(b, out, 0, "%s.bias", prefix);
}

static void layer_norm(struct arch_builder *b, const char *prefix, unsigned hidden)
{
	add_tensor(b, hidden, 0, "%s.weight", prefix);
	add_tensor(b, hidden, 0, "%s.bias", prefix);
}

/* ---- torchvision ResNet (Bottleneck) --------------------------------------- */

#define RESNET_INPUT_SIDE    224
#define RESNET_STEM_PLANES   64
#define BOTTLENECK_EXPANSION 4

struct resnet_config {
	unsigned blocks[4]; /* Bottleneck blocks in layer1..layer4 */
};

/*
 * One torchvision Bottleneck (groups 1, base width 64, so width == planes):
 * conv1 1x1, conv2 3x3 with the stride, conv3 1x1 to planes * 4, then the
 * downsample (conv 1x1 with the stride, BN) when the shape changes. Returns
 * the output side.
 */
static unsigned bottleneck_block(struct arch_builder *b, unsigned stage, unsigned block,
				 unsigned inplanes, unsigned planes, unsigned in_side,
				 unsigned stride)
{
	unsigned out_planes = planes * BOTTLENECK_EXPANSION;
	unsigned out_side = conv_out_side(in_side, 3, stride, 1);
	char conv[64], bn[64];

	snprintf(conv, sizeof(conv), "layer%u.%u.conv1", stage, block);
	snprintf(bn, sizeof(bn), "layer%u.%u.bn1", stage, block);
	conv_bn(b, conv, bn, inplanes, planes, 1, in_side);
	snprintf(conv, sizeof(conv), "layer%u.%u.conv2", stage, block);
	snprintf(bn, sizeof(bn), "layer%u.%u.bn2", stage, block);
	conv_bn(b, conv, bn, planes, planes, 3, out_side);
	snprintf(conv, sizeof(conv), "layer%u.%u.conv3", stage, block);
	snprintf(bn, sizeof(bn), "layer%u.%u.bn3", stage, block);
	conv_bn(b, conv, bn, planes, out_planes, 1, out_side);
	if (stride != 1 || inplanes != out_planes) {
		snprintf(conv, sizeof(conv), "layer%u.%u.downsample.0", stage, block);
		snprintf(bn, sizeof(bn), "layer%u.%u.downsample.1", stage, block);
		conv_bn(b, conv, bn, inplanes, out_planes, 1, conv_out_side(in_side, 1, stride, 0));
	}
	return out_side;
}

/* ResNet._make_layer: the first block carries the stage's stride. */
static unsigned resnet_stage(struct arch_builder *b, unsigned stage, unsigned blocks,
			     unsigned *inplanes, unsigned planes, unsigned side, unsigned stride)
{
	for (unsigned i = 0; i < blocks; i++) {
		side = bottleneck_block(b, stage, i, *inplanes, planes, side, i ? 1 : stride);
		*inplanes = planes * BOTTLENECK_EXPANSION;
	}
	return side;
}

static void build_resnet(struct arch_builder *b, const void *config, unsigned seq_len)
{
	const struct resnet_config *cfg = config;
	unsigned inplanes = RESNET_STEM_PLANES, side = RESNET_INPUT_SIDE;

	(void)seq_len;
	b->arch->input_size = RESNET_INPUT_SIDE;
	side = conv_out_side(side, 7, 2, 3); /* conv1: 7x7, stride 2, pad 3 */
	conv_bn(b, "conv1", "bn1", 3, RESNET_STEM_PLANES, 7, side);
	side = conv_out_side(side, 3, 2, 1); /* maxpool: 3x3, stride 2, pad 1 */
	for (unsigned stage = 0; stage < ARRAY_SIZE(cfg->blocks); stage++)
		side = resnet_stage(b, stage + 1, cfg->blocks[stage], &inplanes,
				    RESNET_STEM_PLANES << stage, side, stage ? 2 : 1);
	/* adaptive average pooling to 1x1, then fc to the 1000 ImageNet classes */
	linear(b, "fc", inplanes, 1000, 1);
}

static const struct resnet_config resnet50_config = {{3, 4, 6, 3}};
static const struct resnet_config resnet101_config = {{3, 4, 23, 3}};
static const struct resnet_config resnet152_config = {{3, 8, 36, 3}};

/* ---- torchvision VGG16 (no BN) --------------------------------------------- */

#define VGG_INPUT_SIDE 224
#define VGG_POOL_SIDE  7 /* AdaptiveAvgPool2d((7, 7)) before the classifier */
#define VGG_MAXPOOL    0 /* "M" in torchvision's cfgs */

struct vgg_config {
	unsigned features[18]; /* conv output channels, VGG_MAXPOOL for a 2x2 max pool */
	size_t n_features;
	unsigned hidden; /* classifier width */
	unsigned classes;
};

static const struct vgg_config vgg16_config = {
	.features = {64, 64, VGG_MAXPOOL, 128, 128, VGG_MAXPOOL, 256, 256, 256, VGG_MAXPOOL, 512,
		     512, 512, VGG_MAXPOOL, 512, 512, 512, VGG_MAXPOOL},
	.n_features = 18,
	.hidden = 4096,
	.classes = 1000,
};

/* features: Conv2d(3x3, pad 1) + ReLU per entry, MaxPool2d(2, 2) per "M". Returns channels. */
static unsigned vgg_features(struct arch_builder *b, const struct vgg_config *cfg, unsigned side)
{
	unsigned channels = 3, index = 0;
	char name[64];

	for (size_t i = 0; i < cfg->n_features; i++) {
		if (cfg->features[i] == VGG_MAXPOOL) {
			side = conv_out_side(side, 2, 2, 0);
			index++;
			continue;
		}
		snprintf(name, sizeof(name), "features.%u", index);
		conv2d(b, name, channels, cfg->features[i], 3, conv_out_side(side, 3, 1, 1), 1);
		channels = cfg->features[i];
		index += 2; /* the conv and its ReLU */
	}
	return channels;
}

static void build_vgg(struct arch_builder *b, const void *config, unsigned seq_len)
{
	const struct vgg_config *cfg = config;
	unsigned channels;

	(void)seq_len;
	b->arch->input_size = VGG_INPUT_SIDE;
	channels = vgg_features(b, cfg, VGG_INPUT_SIDE);
	/* classifier: Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear */
	linear(b, "classifier.0", channels * VGG_POOL_SIDE * VGG_POOL_SIDE, cfg->hidden, 1);
	linear(b, "classifier.3", cfg->hidden, cfg->hidden, 1);
	linear(b, "classifier.6", cfg->hidden, cfg->classes, 1);
}

/* ---- HuggingFace BertModel --------------------------------------------------- */

#define BERT_DEFAULT_SEQ_LEN 128

struct bert_config {
	unsigned layers, hidden, heads, intermediate;
	unsigned vocab, max_positions, type_vocab;
};

static const struct bert_config bert_base_config = {
	.layers = 12,
	.hidden = 768,
	.heads = 12,
	.intermediate = 3072,
	.vocab = 30522,
	.max_positions = 512,
	.type_vocab = 2,
};

static const struct bert_config bert_large_config = {
	.layers = 24,
	.hidden = 1024,
	.heads = 16,
	.intermediate = 4096,
	.vocab = 30522,
	.max_positions = 512,
	.type_vocab = 2,
};

/* BertEmbeddings: lookups only, no FLOPs. */
static void bert_embeddings(struct arch_builder *b, const struct bert_config *cfg)
{
	add_tensor(b, (uint64_t)cfg->vocab * cfg->hidden, 0, "embeddings.word_embeddings.weight");
	add_tensor(b, (uint64_t)cfg->max_positions * cfg->hidden, 0,
		   "embeddings.position_embeddings.weight");
	add_tensor(b, (uint64_t)cfg->type_vocab * cfg->hidden, 0,
		   "embeddings.token_type_embeddings.weight");
	layer_norm(b, "embeddings.LayerNorm", cfg->hidden);
}

/*
 * One BertLayer over seq_len tokens: self-attention (query, key, value),
 * its output projection and LayerNorm, the feed-forward intermediate and
 * output with their LayerNorm. Per head, QK^T and the weighted sum of V are
 * s*s*head_dim multiply-adds each.
 */
static void transformer_layer(struct arch_builder *b, const struct bert_config *cfg, unsigned layer,
			      unsigned seq_len)
{
	static const char *const projections[] = {"query", "key", "value"};
	unsigned h = cfg->hidden, head_dim = cfg->hidden / cfg->heads;
	char name[64];

	for (size_t i = 0; i < ARRAY_SIZE(projections); i++) {
		snprintf(name, sizeof(name), "encoder.layer.%u.attention.self.%s", layer,
			 projections[i]);
		linear(b, name, h, h, seq_len);
	}
	add_untied_flops(b, (uint64_t)cfg->heads * 2 * (2ull * seq_len * seq_len * head_dim));
	snprintf(name, sizeof(name), "encoder.layer.%u.attention.output.dense", layer);
	linear(b, name, h, h, seq_len);
	snprintf(name, sizeof(name), "encoder.layer.%u.attention.output.LayerNorm", layer);
	layer_norm(b, name, h);
	snprintf(name, sizeof(name), "encoder.layer.%u.intermediate.dense", layer);
	linear(b, name, h, cfg->intermediate, seq_len);
	snprintf(name, sizeof(name), "encoder.layer.%u.output.dense", layer);
	linear(b, name, cfg->intermediate, h, seq_len);
	snprintf(name, sizeof(name), "encoder.layer.%u.output.LayerNorm", layer);
	layer_norm(b, name, h);
}

static void build_bert(struct arch_builder *b, const void *config, unsigned seq_len)
{
	const struct bert_config *cfg = config;

	if (seq_len > cfg->max_positions || cfg->hidden % cfg->heads) {
		b->err = -EINVAL;
		return;
	}
	b->arch->input_size = seq_len;
	bert_embeddings(b, cfg);
	for (unsigned layer = 0; layer < cfg->layers; layer++)
		transformer_layer(b, cfg, layer, seq_len);
	/* BertPooler: dense + tanh on the first token only */
	linear(b, "pooler.dense", cfg->hidden, cfg->hidden, 1);
}

/* ---- registry ----------------------------------------------------------------- */

struct arch_def {
	const char *name;
	void (*build)(struct arch_builder *b, const void *config, unsigned seq_len);
	const void *config;
};

static const struct arch_def arch_defs[] = {
	{"resnet50", build_resnet, &resnet50_config},
	{"resnet101", build_resnet, &resnet101_config},
	{"resnet152", build_resnet, &resnet152_config},
	{"vgg16", build_vgg, &vgg16_config},
	{"bert-base", build_bert, &bert_base_config},
	{"bert-large", build_bert, &bert_large_config},
};

static const char *const arch_names[] = {"resnet50",  "resnet101",  "resnet152", "vgg16",
					 "bert-base", "bert-large", NULL};

_Static_assert(ARRAY_SIZE(arch_names) == ARRAY_SIZE(arch_defs) + 1,
	       "arch_names must list every arch_defs entry, then NULL");

const char *const *ct_arch_names(void)
{
	return arch_names;
}

int ct_arch_build(const char *name, unsigned seq_len, struct ct_arch *out)
{
	struct arch_builder b = {.arch = out};
	const struct arch_def *def = NULL;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(arch_defs); i++)
		if (!strcmp(name, arch_defs[i].name))
			def = &arch_defs[i];
	if (!def)
		return -ENOENT;
	snprintf(out->name, sizeof(out->name), "%s", def->name);
	def->build(&b, def->config, seq_len ? seq_len : BERT_DEFAULT_SEQ_LEN);
	if (b.err)
		ct_arch_free(out);
	return b.err;
}

void ct_arch_free(struct ct_arch *a)
{
	if (!a)
		return;
	free(a->tensors);
	memset(a, 0, sizeof(*a));
}
