/* SPDX-License-Identifier: MIT */
/*
 * Slow path: flow summaries gathered from one or more engines.
 *
 * A summary is the report-time view of a flow. Records with the same key (a
 * flow evicted idle and seen again, or the same flow from two engines) are
 * merged into one. The set grows as needed: it runs per report, never per
 * packet, up to its limit (ct_flow_set_limit): then the lightest flows are
 * summed into one record of what was summed (struct ct_flow_rest), so that
 * the slow path and the report stay within a stated memory whatever the
 * number of distinct flows, and the flows' totals stay exact.
 */
#ifndef COMMTAP_FLOW_SET_H
#define COMMTAP_FLOW_SET_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/dataplane.h>

#define CT_SUMMARY_OPS 24 /* distinct opcodes kept per summary */

enum ct_pair_evidence {
	CT_PAIR_NONE = 0,
	CT_PAIR_TCP,  /* the swapped 5-tuple */
	CT_PAIR_CM,   /* RDMA CM REQ/REP named both QPNs */
	CT_PAIR_READ, /* a READ request on one was answered on the other */
	CT_PAIR_PSN,  /* ACK/response PSNs of one fall in the request PSNs of the other */
};

struct ct_flow_summary {
	struct ct_flow_key key;
	uint64_t packets, bytes;
	uint64_t first_ts, last_ts;
	uint64_t messages, message_bytes;
	uint64_t msg_hist[CT_HIST_BUCKETS];
	uint64_t op_count[CT_SUMMARY_OPS];
	uint8_t op_id[CT_SUMMARY_OPS];
	uint8_t n_ops;
	uint64_t op_other;
	uint64_t cnp, ecn_ce, retransmits;
	uint64_t reordered; /* TCP: segments that filled the hole the one before opened */
	uint8_t closed;	    /* TCP: a FIN or RST seen this way */
	uint64_t psn_gaps, psn_missing, duplicates, go_back_n;
	uint64_t naks_seq, naks_rnr, naks_other;
	uint64_t partial_messages;
	uint64_t size_inferred; /* messages sized by their payloads: the RETH was cut */
	uint64_t read_requests, read_bytes_requested, reads_matched, read_len_mismatch;
	uint32_t req_first_psn, req_last_psn; /* valid with CT_SEEN_REQ_PSN */
	uint32_t resp_first_psn, resp_last_psn; /* valid with CT_SEEN_RESP_PSN */
	uint32_t read_peer_qpn;		      /* valid with CT_SEEN_READ_PEER */
	uint32_t pmtu;
	uint8_t seen; /* CT_SEEN_* */
	uint8_t dscp, pcp, ecn_seen;
	uint32_t records; /* engine records merged into this summary */
	/* filled by ct_flow_set_pair() */
	int64_t reverse; /* index of the reverse flow in the set, -1 if none */
	uint8_t reverse_evidence; /* enum ct_pair_evidence */
};

/* What the limit summed: no longer a flow of its own in the report. */
struct ct_flow_rest {
	uint64_t flows;	  /* summaries summed (a key seen again later counts again) */
	uint64_t records; /* engine records in them */
	uint64_t packets, bytes, messages, message_bytes;
	uint64_t bursts; /* theirs, dropped from the burst log (the producer counts them) */
};

struct ct_flow_set {
	struct ct_flow_summary *flows;
	size_t count, cap;
	int64_t *index; /* open addressing, index_mask + 1 slots, -1 empty */
	size_t index_mask;
	size_t limit; /* flows kept in detail; 0: no limit */
	struct ct_flow_rest rest;
	/* told of each flow summed, before it is (the producer drops its bursts) */
	void (*on_summed)(const struct ct_flow_summary *f, void *ctx);
	void *on_summed_ctx;
};

void ct_flow_set_init(struct ct_flow_set *s);
void ct_flow_set_free(struct ct_flow_set *s);

/*
 * Keep at most limit flows (0: no limit, at least CT_FLOW_SET_MIN_LIMIT
 * otherwise). A new key that finds the set full first sums the lightest
 * quarter (fewest bytes; then packets, later first packet, key) into
 * s->rest: the heaviest flows keep their detail.
 */
#define CT_FLOW_SET_MIN_LIMIT 16
void ct_flow_set_limit(struct ct_flow_set *s, size_t limit);

/* Add an engine flow (merging by key). Returns 0 or -ENOMEM. */
int ct_flow_set_add(struct ct_flow_set *s, const struct ct_flow *f);
/* Add a summary (merging by key). Returns 0 or -ENOMEM. */
int ct_flow_set_add_summary(struct ct_flow_set *s, const struct ct_flow_summary *sum);

/* Index of the flow with this key, or -1. */
int64_t ct_flow_set_find(const struct ct_flow_set *s, const struct ct_flow_key *key);

/* Order flows by first packet time, then key: reports are deterministic. */
void ct_flow_set_sort(struct ct_flow_set *s);

/* Pair the two directions of each connection (see pairing.c). Call after sorting. */
void ct_flow_set_pair(struct ct_flow_set *s, const struct ct_cm_event *cm, unsigned n_cm);

const char *ct_pair_evidence_name(enum ct_pair_evidence e);

#endif
