/* SPDX-License-Identifier: MIT */
/* Internal to the classifier: the profile and signature passes. */
#ifndef COMMTAP_CLASSIFY_INTERNAL_H
#define COMMTAP_CLASSIFY_INTERNAL_H

#include <commtap/classify.h>

#include "hosts.h"

__attribute__((format(printf, 5, 6))) void ct_class_set(struct ct_flow_class *fc, enum ct_class cls,
							enum ct_class_source src, double confidence,
							const char *fmt, ...);

/* dst says what src says: class, source, confidence, evidence and operation. */
void ct_class_copy(struct ct_flow_class *dst, const struct ct_flow_class *src);

int ct_class_is_data_direction(const struct ct_flow_set *set, size_t i);

/*
 * A burst that carries data, not only the acknowledgements of the other
 * direction's (a socket used both ways acknowledges in its data's gaps):
 * a message ended in it, or its frames average more than a bare TCP ACK
 * with options or a RoCE ACK (66-90 bytes), or its frames are not known.
 */
#define DATA_FRAME_MIN 128

static inline int ct_burst_carries_data(const struct ct_burst *b)
{
	/* packets unknown: nothing tells it apart, so it counts */
	return b->messages || !b->packets || b->bytes > (uint64_t)DATA_FRAME_MIN * b->packets;
}

/*
 * Classify the flows marked in to_classify (data directions without a label).
 * per may be NULL. Return 0 or -ENOMEM.
 */
int ct_classify_by_profile(const struct ct_flow_set *set, const struct ct_periodicity *per,
			   const struct ct_class_expect *expect, const uint8_t *to_classify,
			   struct ct_classification *out);
int ct_classify_by_signature(const struct ct_flow_set *set, const struct ct_periodicity *per,
			     const uint8_t *to_classify, struct ct_classification *out);

/*
 * The flows marked in steady (periodic, at a steady phase, sizes that
 * repeat) named by the structure of their groups: pipelines, collectives
 * and their families (classify_groups.c). hosts: set's addresses ranked.
 * Returns 0 or -ENOMEM.
 */
int ct_classify_groups(const struct ct_flow_set *set, const struct ct_periodicity *per,
		       const struct ct_hosts *hosts, const uint8_t *steady,
		       struct ct_classification *out);

/*
 * The groups the classes give (data directions marked in to_classify): hosts
 * joined by flows of one class, per class; p, t, d and ep the largest of
 * them, and the hosts each class has (hosts, pp_stages, dp_ring, ep_group).
 * Jobs share no hosts, so their groups stay apart. hosts: set's addresses
 * ranked. Returns 0 or -ENOMEM.
 */
int ct_layout_groups(const struct ct_flow_set *set, const struct ct_hosts *hosts,
		     const uint8_t *to_classify, struct ct_classification *out);

/* A profile's hosts by address, for looking an address up (classify_profile.c). */
struct ct_profile_host {
	struct ct_addr addr;
	unsigned host; /* its index in ct_class_expect.host_addr */
};

/*
 * Every address of the profile's hosts (each host's, and each NIC's where
 * the profile has several per host: rail-optimized hosts), sorted, n of
 * them (free()), or NULL: out of memory.
 */
struct ct_profile_host *ct_profile_hosts(const struct ct_class_expect *expect, unsigned *n);
/* The host of address a among h's n, or -1: not one of the profile's. */
long ct_profile_host_of(const struct ct_profile_host *h, unsigned n, const struct ct_addr *a);

/* The profile's groups per class against the wire's (layout_check.c). Returns 0 or -ENOMEM. */
int ct_layout_check(const struct ct_class_expect *e, const struct ct_layout *wire,
		    struct ct_layout_check *out);

#endif
