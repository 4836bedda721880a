// SPDX-License-Identifier: MIT
/*
 * Baselines for commtap-bench-bpf beside empty.bpf.c's ct_empty_frags:
 * what the environment costs before the probe does anything. ct_clock_*
 * read the monotonic clock once, as the probe does per packet, so the
 * bench can tell the clock read (a virtualised TSC on a VM) from the
 * probe's own work; ct_empty_tc is the TC test-run harness by itself.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

#define TC_ACT_UNSPEC (-1)

SEC("xdp.frags")
int ct_clock_frags(struct xdp_md *ctx)
{
	/* the result decides the verdict, so the read cannot be left out */
	return bpf_ktime_get_ns() ? XDP_PASS : XDP_ABORTED;
}

SEC("tc")
int ct_empty_tc(struct __sk_buff *skb)
{
	return TC_ACT_UNSPEC;
}

SEC("tc")
int ct_clock_tc(struct __sk_buff *skb)
{
	return bpf_ktime_get_ns() ? TC_ACT_UNSPEC : 2 /* TC_ACT_SHOT */;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
