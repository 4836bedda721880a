// SPDX-License-Identifier: MIT
/*
 * An XDP program that does nothing: the benchmark's baseline (what a
 * BPF_PROG_TEST_RUN costs by itself), and a foreign program for the tests.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

SEC("xdp")
int ct_empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* The same for multi-buffer frames, the baseline beside the probe's xdp.frags program. */
SEC("xdp.frags")
int ct_empty_frags(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
