// SPDX-License-Identifier: MIT
/*
 * Pairing the two directions of a connection (slow path).
 *
 * TCP: the swapped 5-tuple. RoCE: the BTH names only the destination QP, so
 * the QPN of the way back must come from evidence, strongest first:
 *  1. RDMA CM: a REQ (X->Y) carries X's QPN, the REP (Y->X) that answers it
 *     (same communication ID) carries Y's: flows X->Y/qpnY and Y->X/qpnX.
 *  2. READ: a response message on Y->X matched a READ request sent on
 *     X->Y/qpn (the engine remembers that QPN).
 *  3. PSNs: the ACK/response PSNs on Y->X fall inside the request PSN range
 *     of X->Y (both directions checked), and the two overlap in time. Only
 *     flows that are each other's unique best candidate are paired; ties
 *     stay unpaired, seen from either side.
 */
#include <commtap/flow_set.h>

#include <stdlib.h>
#include <string.h>

#define PSN_MASK 0xffffffu

static void link(struct ct_flow_set *s, int64_t a, int64_t b, enum ct_pair_evidence why)
{
	if (a < 0 || b < 0 || a == b || s->flows[a].reverse >= 0 || s->flows[b].reverse >= 0)
		return;
	s->flows[a].reverse = b;
	s->flows[b].reverse = a;
	s->flows[a].reverse_evidence = (uint8_t)why;
	s->flows[b].reverse_evidence = (uint8_t)why;
}

static int64_t find(const struct ct_flow_set *s, const struct ct_addr *src,
		    const struct ct_addr *dst, uint32_t id, uint8_t transport)
{
	struct ct_flow_key k;

	memset(&k, 0, sizeof(k));
	k.src = *src;
	k.dst = *dst;
	k.id = id;
	k.transport = transport;
	return ct_flow_set_find(s, &k);
}

static void pair_tcp(struct ct_flow_set *s)
{
	for (size_t i = 0; i < s->count; i++) {
		const struct ct_flow_key *k = &s->flows[i].key;

		if (k->transport != CT_TRANSPORT_TCP || s->flows[i].reverse >= 0)
			continue;
		uint32_t swapped = (k->id << 16) | (k->id >> 16);

		link(s, (int64_t)i, find(s, &k->dst, &k->src, swapped, CT_TRANSPORT_TCP),
		     CT_PAIR_TCP);
	}
}

static void pair_cm(struct ct_flow_set *s, const struct ct_cm_event *cm, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct ct_cm_event *req = &cm[i];

		if (req->type != CT_CM_REQ)
			continue;
		for (unsigned j = 0; j < n; j++) {
			const struct ct_cm_event *rep = &cm[j];

			if (rep->type != CT_CM_REP || rep->remote_comm_id != req->local_comm_id ||
			    memcmp(&rep->src, &req->dst, sizeof(rep->src)) ||
			    memcmp(&rep->dst, &req->src, sizeof(rep->dst)))
				continue;
			link(s, find(s, &req->src, &req->dst, rep->local_qpn, CT_TRANSPORT_ROCE),
			     find(s, &rep->src, &rep->dst, req->local_qpn, CT_TRANSPORT_ROCE),
			     CT_PAIR_CM);
			break;
		}
	}
}

static void pair_read(struct ct_flow_set *s)
{
	for (size_t i = 0; i < s->count; i++) {
		const struct ct_flow_summary *f = &s->flows[i];

		if (f->key.transport != CT_TRANSPORT_ROCE || !(f->seen & CT_SEEN_READ_PEER))
			continue;
		link(s, (int64_t)i,
		     find(s, &f->key.dst, &f->key.src, f->read_peer_qpn, CT_TRANSPORT_ROCE),
		     CT_PAIR_READ);
	}
}

static int psn_in(uint32_t psn, uint32_t lo, uint32_t hi)
{
	return ((psn - lo) & PSN_MASK) <= ((hi - lo) & PSN_MASK);
}

/* How strongly b's responses answer a's requests (and the other way round). */
static int psn_score(const struct ct_flow_summary *a, const struct ct_flow_summary *b)
{
	int score = 0;

	if ((a->seen & CT_SEEN_REQ_PSN) && (b->seen & CT_SEEN_RESP_PSN)) {
		score += psn_in(b->resp_first_psn, a->req_first_psn, a->req_last_psn);
		score += psn_in(b->resp_last_psn, a->req_first_psn, a->req_last_psn);
	}
	if ((b->seen & CT_SEEN_REQ_PSN) && (a->seen & CT_SEEN_RESP_PSN)) {
		score += psn_in(a->resp_first_psn, b->req_first_psn, b->req_last_psn);
		score += psn_in(a->resp_last_psn, b->req_first_psn, b->req_last_psn);
	}
	/* Responses cannot precede requests by much, nor outlive them. */
	if (score && (a->last_ts < b->first_ts || b->last_ts < a->first_ts))
		score = 0;
	return score;
}

/* Order of flow indices by (src, dst) so the reverse address pair is found by search. */
static int by_addr(const void *pa, const void *pb, void *arg)
{
	const struct ct_flow_set *s = arg;
	const struct ct_flow_key *a = &s->flows[*(const size_t *)pa].key;
	const struct ct_flow_key *b = &s->flows[*(const size_t *)pb].key;
	int r = memcmp(&a->src, &b->src, 32); /* src then dst */

	if (r)
		return r;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

static size_t lower_bound(const struct ct_flow_set *s, const size_t *order, size_t n,
			  const struct ct_addr *src, const struct ct_addr *dst)
{
	uint8_t want[32];
	size_t lo = 0, hi = n;

	memcpy(want, src, 16);
	memcpy(want + 16, dst, 16);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memcmp(&s->flows[order[mid]].key.src, want, 32) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The unpaired RoCE flow of the reverse address pair whose PSNs answer flow
 * i's best, or -1 when none does or two do equally well.
 */
static int64_t best_reverse(const struct ct_flow_set *s, const size_t *order, size_t i)
{
	const struct ct_flow_summary *a = &s->flows[i];
	int64_t best = -1;
	int best_score = 0, tie = 0;

	for (size_t j = lower_bound(s, order, s->count, &a->key.dst, &a->key.src); j < s->count;
	     j++) {
		const struct ct_flow_summary *b = &s->flows[order[j]];

		if (memcmp(&b->key.src, &a->key.dst, 16) || memcmp(&b->key.dst, &a->key.src, 16))
			break;
		if (b->key.transport != CT_TRANSPORT_ROCE || b->reverse >= 0)
			continue;
		int score = psn_score(a, b);

		if (score > best_score) {
			best_score = score;
			best = (int64_t)order[j];
			tie = 0;
		} else if (score && score == best_score) {
			tie = 1;
		}
	}
	return tie ? -1 : best;
}

static void pair_psn(struct ct_flow_set *s)
{
	size_t *order = malloc(s->count * sizeof(*order));

	if (!order)
		return; /* pairing is best effort: flows stay unpaired */
	for (size_t i = 0; i < s->count; i++)
		order[i] = i;
	qsort_r(order, s->count, sizeof(*order), by_addr, s);

	for (size_t i = 0; i < s->count; i++) {
		int64_t best;

		if (s->flows[i].key.transport != CT_TRANSPORT_ROCE || s->flows[i].reverse >= 0)
			continue;
		best = best_reverse(s, order, i);
		/*
		 * Each must be the other's one best: two responders equally good
		 * for one requester are a tie from either side, whichever comes
		 * first in the set.
		 */
		if (best >= 0 && best_reverse(s, order, (size_t)best) == (int64_t)i)
			link(s, (int64_t)i, best, CT_PAIR_PSN);
	}
	free(order);
}

void ct_flow_set_pair(struct ct_flow_set *s, const struct ct_cm_event *cm, unsigned n_cm)
{
	pair_tcp(s);
	pair_cm(s, cm, n_cm);
	pair_read(s);
	pair_psn(s);
}

const char *ct_pair_evidence_name(enum ct_pair_evidence e)
{
	switch (e) {
	case CT_PAIR_TCP:
		return "tcp";
	case CT_PAIR_CM:
		return "cm";
	case CT_PAIR_READ:
		return "read";
	case CT_PAIR_PSN:
		return "psn";
	default:
		return "none";
	}
}
