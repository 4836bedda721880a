/* SPDX-License-Identifier: MIT */
/*
 * DDP model architectures: their parameter tensors exactly as PyTorch
 * registers them (torchvision ResNet/VGG, HuggingFace BertModel), generated
 * from the layer structure, with forward FLOPs per sample.
 *
 * PyTorch DDP fills its gradient buckets from these tensors in reverse
 * registration order, so the order and the element counts are what a
 * traffic prediction needs; the FLOPs give the compute time between buckets.
 */
#ifndef COMMTAP_ARCH_H
#define COMMTAP_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct ct_arch_tensor {
	char name[64];	    /* PyTorch parameter name, e.g. "layer1.0.conv1.weight" */
	uint64_t numel;	    /* elements */
	uint64_t fwd_flops; /* forward FLOPs per sample attributed to it (multiply-add = 2) */
};

struct ct_arch {
	char name[32];
	struct ct_arch_tensor *tensors; /* registration order (model.parameters() order) */
	size_t count;
	uint64_t params;     /* sum of numel */
	uint64_t fwd_flops;  /* per sample: the tensors' FLOPs plus attention scores/sums */
	unsigned input_size; /* image side (224) or sequence length used for the FLOPs */
};

/*
 * Build "resnet50", "resnet101", "resnet152", "vgg16", "bert-base" or
 * "bert-large". seq_len applies to BERT (0: 128, at most its 512 positions)
 * and is ignored for the CNNs (224x224x3 inputs). Returns 0, -ENOENT for an
 * unknown name, -EINVAL for a BERT seq_len over 512 or a NULL argument, or
 * -ENOMEM. On failure *out is left empty (safe to ct_arch_free()).
 */
int ct_arch_build(const char *name, unsigned seq_len, struct ct_arch *out);

/* Release the tensors and reset *a to empty; safe on an empty or zeroed struct. */
void ct_arch_free(struct ct_arch *a);

/* The names ct_arch_build() knows, NULL-terminated. */
const char *const *ct_arch_names(void);

#endif
