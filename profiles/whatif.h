/* SPDX-License-Identifier: MIT */
/*
 * What-if of mapping, scale and transport: a profile changed in one
 * setting, predicted by the same model (model.c), and the figures an
 * operator compares across them: NIC bytes per host and the communication
 * time per iteration (docs/advice.md, "What-if").
 */
#ifndef COMMTAP_WHATIF_H
#define COMMTAP_WHATIF_H

#include <stddef.h>

#include <commtap/flow.h> /* enum ct_transport */

#include "model.h"
#include "profile.h"

/*
 * RoCEv2 (DCQCN) against TCP (Cubic) on the same hosts: about 1.8 times the
 * all-reduce throughput for messages over 10 MB (the reference study,
 * /shared REFERENCE.md, "Network transport matters"). The model's NIC
 * efficiency is the profile's transport's; the other transport's is this
 * ratio away. Traffic inside a host does not change with the transport.
 */
#define CT_ROCE_OVER_TCP 1.8

/* One change to a profile; a field left 0 keeps the profile's. */
struct ct_whatif {
	enum ct_mapping mapping; /* CT_MAP_DEEPSPEED_DEFAULT or CT_MAP_CUSTOM */
	unsigned d;		 /* data-parallel size: b and m kept, so gb = b·m·d */
	int transport_set;	 /* change the transport from `from` to `to` */
	enum ct_transport from, to;
};

/*
 * The profile with one change, a deep copy (free with ct_profile_free).
 * Returns 0, -ENOMEM, or -EINVAL with why saying what cannot be changed
 * (an explicit mapping has no other; d that leaves hosts half-filled; MoE's
 * ep not dividing d).
 */
int ct_whatif_profile(const struct ct_profile *base, const struct ct_whatif *w,
		      struct ct_profile *out, char *why, size_t why_len);

/* Bytes each host sends to other hosts per iteration (all classes): hosts entries. */
void ct_nic_bytes_per_host(const struct ct_profile *p, const struct ct_prediction *pr, double *out);

/* The model's communication time per iteration: T_TP + T_PP + T_DP + T_EP + T_Emb. */
double ct_prediction_comm_s(const struct ct_prediction *pr);
/* The part of it spent by classes that cross a NIC. */
double ct_prediction_nic_comm_s(const struct ct_prediction *pr);

#endif
