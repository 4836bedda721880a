/* SPDX-License-Identifier: MIT */
/*
 * DDP model architectures: their parameter tensors exactly as PyTorch
 * registers them (torchvision ResNet/VGG, HuggingFace BertModel), built
 * from the layer structure, with forward FLOPs per sample.
 */
#ifndef COMMTAP_ARCH_H
#define COMMTAP_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct ct_arch_tensor {
	char name[64];	    /* PyTorch parameter name */
	uint64_t numel;	    /* elements */
	uint64_t fwd_flops; /* forward FLOPs per sample attributed to it (multiply-add = 2) */
};

struct ct_arch {
	char name[32];
	struct ct_arch_tensor *tensors; /* registration order */
	size_t count, cap;
	uint64_t params;    /* sum of numel */
	uint64_t fwd_flops; /* per sample, including FLOPs not tied to a tensor (attention) */
	unsigned input_size; /* image side or sequence length */
};

/*
 * Build "resnet50", "resnet101", "resnet152", "vgg16", "bert-base" or
 * "bert-large". seq_len applies to BERT (0: 128). Returns 0, -ENOENT for an
 * unknown name or -ENOMEM.
 */
int ct_arch_build(const char *name, unsigned seq_len, struct ct_arch *out);
void ct_arch_free(struct ct_arch *a);
const char *const *ct_arch_names(void);

#endif
