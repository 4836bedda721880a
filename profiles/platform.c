// SPDX-License-Identifier: MIT
/*
 * Named hardware platforms: defaults a profile can override.
 *
 * peak_flops is the dense FP16 tensor-core rate with FP32 accumulate (what
 * mixed-precision training uses) from the vendors' data sheets. The
 * intra-host figure is an effective NCCL all-reduce bus bandwidth for the
 * GPUs of one host over that link; measured values (nccl-tests) should
 * replace it in a profile where known.
 */
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct platform {
	const char *name;
	unsigned gpus_per_host;
	double peak_flops;
	const char *flops_kind;
	double mu;
	double nic_gbps;
	const char *intra_host;
	double intra_host_GBps;
};

static const struct platform platforms[] = {
	{"RTX3090-PCIe", 8, 71e12, "fp16 tensor dense, fp32 accumulate", 0.3, 100, "PCIe 3.0 x16",
	 10},
	{"V100-PCIe", 4, 112e12, "fp16 tensor dense, fp32 accumulate", 0.4, 100, "PCIe 3.0 x16",
	 10},
	{"V100-NVLink", 4, 125e12, "fp16 tensor dense, fp32 accumulate", 0.4, 100, "NVLink 2",
	 130},
	{"A100", 8, 312e12, "fp16 tensor dense, fp32 accumulate", 0.45, 200, "NVLink 3 (NVSwitch)",
	 230},
	{"H100", 8, 989e12, "fp16 tensor dense, fp32 accumulate", 0.45, 400, "NVLink 4 (NVSwitch)",
	 360},
};

#define N_PLATFORMS (sizeof(platforms) / sizeof(platforms[0]))

const char *const *ct_platform_names(void)
{
	static const char *names[N_PLATFORMS + 1];

	for (size_t i = 0; i < N_PLATFORMS; i++)
		names[i] = platforms[i].name;
	names[N_PLATFORMS] = NULL;
	return names;
}

int ct_platform_defaults(const char *name, struct ct_hardware *hw, unsigned *gpus_per_host)
{
	for (size_t i = 0; i < N_PLATFORMS; i++) {
		const struct platform *pl = &platforms[i];

		if (strcmp(pl->name, name))
			continue;
		snprintf(hw->platform, sizeof(hw->platform), "%s", pl->name);
		hw->peak_flops = pl->peak_flops;
		snprintf(hw->flops_kind, sizeof(hw->flops_kind), "%s", pl->flops_kind);
		hw->mu = pl->mu;
		hw->nic_gbps = pl->nic_gbps;
		snprintf(hw->intra_host, sizeof(hw->intra_host), "%s", pl->intra_host);
		hw->intra_host_Bps = pl->intra_host_GBps * 1e9;
		hw->nic_efficiency = 0.9;
		if (gpus_per_host && !*gpus_per_host)
			*gpus_per_host = pl->gpus_per_host;
		return 0;
	}
	return -ENOENT;
}
