// SPDX-License-Identifier: MIT
/*
 * Rings for the agent's GPU test, written by the real NCCL profiler plugin
 * (driven as NCCL drives it): a data-parallel communicator across two nodes
 * and a tensor-parallel one inside this node, six all-reduces each. The
 * plugin writes its ring into $COMMTAP_GPU_RING_DIR, where it stays for the
 * agent to read.
 *
 *   gpu_rings PLUGIN.so
 */
#include <stdio.h>

#include "nccl_driver.h"

int main(int argc, char **argv)
{
	struct drv_coll all_reduce = {
		.func = "AllReduce",
		.datatype = "ncclFloat32",
		.algo = "Ring",
		.proto = "Simple",
		.count = 1 << 20,
		.n_channels = 2,
		.n_steps = 4,
		.chunk = 1 << 19,
		.peer = 1,
	};
	struct drv_comm dp, tp;
	struct drv_lib lib;

	if (argc != 2) {
		fprintf(stderr, "usage: gpu_rings PLUGIN.so\n");
		return 2;
	}
	if (drv_open(&lib, argv[1])) {
		fprintf(stderr, "gpu_rings: cannot load %s\n", argv[1]);
		return 1;
	}
	if (drv_init(&dp, &lib, 5, 0xd0d0, "dp", 2, 16, 0) ||
	    drv_init(&tp, &lib, 5, 0x7070, "tp", 1, 8, 0)) {
		fprintf(stderr, "gpu_rings: the plugin refused a communicator\n");
		drv_close(&lib);
		return 1;
	}
	for (uint64_t i = 0; i < 6; i++) {
		all_reduce.seq = i;
		drv_collective(&tp, &all_reduce);
		drv_collective(&dp, &all_reduce);
	}
	drv_finalize(&tp);
	drv_finalize(&dp);
	drv_close(&lib);
	return 0;
}
