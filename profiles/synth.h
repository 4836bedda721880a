/* SPDX-License-Identifier: MIT */
/*
 * The traffic synthesizer: renders a prediction's schedule into the packets
 * a mirror port would capture while the job trains, with the ground truth.
 */
#ifndef COMMTAP_SYNTH_H
#define COMMTAP_SYNTH_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

enum ct_synth_transport {
	CT_SYNTH_ROCE = 0, /* NCCL over IB verbs on RoCEv2 */
	CT_SYNTH_TCP = 1,  /* NCCL's socket transport */
};

/*
 * Anomalies injected into a synthesized job (docs/anomalies.md), each from
 * an iteration on; hosts are the profile's host indices, -1: none.
 */
struct ct_synth_inject {
	int straggler;	      /* its sends start this late, and the iteration waits for it */
	double straggler_s;
	unsigned straggler_from;
	int slow_a, slow_b; /* the link between two hosts serializes this many times slower */
	double slow_factor;
	unsigned slow_from;
	int lossy_a, lossy_b; /* packets on the link between two hosts lost with this chance */
	double loss_rate;
	unsigned lossy_from;
	int congest; /* packets toward a host CE-marked with this chance (RoCE: each with a CNP) */
	double congest_fraction;
	unsigned congest_from;
	int pfc_priority; /* PFC XOFF frames on a priority, this many a second */
	double pfc_per_s;
	unsigned pfc_from;
	int pause_at; /* the whole job stalls this long once, after this iteration's work */
	double pause_s;
};

struct ct_synth_config {
	unsigned iterations;
	enum ct_synth_transport transport;
	double size_scale; /* multiply every transfer's bytes */
	double time_scale; /* multiply every time of the schedule (compute and comm) */
	double jitter;	   /* each iteration's length varies uniformly by +-jitter */
	unsigned snaplen;  /* bytes of each frame kept; 0 = whole frames */
	unsigned vlan_tags; /* 802.1Q tags on each frame (0..CT_SYNTH_MAX_VLAN), before the cut */
	unsigned mtu;	   /* RoCE path MTU (256..4096) or TCP MSS + 52 */
	unsigned channels; /* NCCL channels (QPs or sockets) per peer; 0: the profile's
			    * nccl.channels, else 2 */
	int noise;	   /* add storage TCP, CNPs/ECN marks and a retransmission */
	uint64_t seed;
	uint64_t start_ns; /* capture time of the first iteration */
	/* the truth names each flow's collective operation and the layout (with
	 * "sharded"); off, the truth is what it was before (test/accuracy/frozen) */
	int truth_operations;
	struct ct_synth_inject inject;
};

#define CT_SYNTH_MAX_VLAN 2 /* with two, the outer tag is an 802.1ad S-tag */

void ct_synth_config_default(struct ct_synth_config *cfg);

/* Receives each frame in time order; returns 0 or a negative errno to stop. */
typedef int (*ct_synth_emit_fn)(void *ctx, uint64_t ts_ns, const uint8_t *frame,
				uint32_t cap_len, uint32_t wire_len);

/*
 * Packets one synthesized iteration may hold before they are written (160
 * MiB of packet records): synth renders an iteration whole, so a profile
 * whose iteration, after --scale, needs more is refused before it runs.
 */
#define CT_SYNTH_MAX_ITERATION_PACKETS (4u << 20)

/*
 * Whether an iteration fits CT_SYNTH_MAX_ITERATION_PACKETS: 0, or -E2BIG
 * with why saying by how much and what to lower. Call before creating the
 * outputs; ct_synth_run checks it again.
 */
int ct_synth_check(const struct ct_profile *p, const struct ct_prediction *pr,
		   const struct ct_synth_config *cfg, char *why, size_t why_len);

/*
 * Render. Writes the ground truth (commtap.truth/v1 JSON) to truth when it is
 * not NULL. Returns 0, -ENOMEM, -EINVAL (bad config), -E2BIG (see
 * ct_synth_check) or the emit error.
 */
int ct_synth_run(const struct ct_profile *p, const struct ct_prediction *pr,
		 const struct ct_synth_config *cfg, ct_synth_emit_fn emit, void *ctx,
		 FILE *truth);

#endif
