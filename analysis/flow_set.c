// SPDX-License-Identifier: MIT
#include <commtap/flow_set.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PSN_MASK 0xffffffu

void ct_flow_set_init(struct ct_flow_set *s)
{
	memset(s, 0, sizeof(*s));
}

void ct_flow_set_free(struct ct_flow_set *s)
{
	free(s->flows);
	free(s->index);
	memset(s, 0, sizeof(*s));
}

/* Re-enter every flow into the index (after growth or reordering). */
static void index_fill(struct ct_flow_set *s)
{
	int64_t *index = s->index;

	for (size_t i = 0; i <= s->index_mask; i++)
		index[i] = -1;
	for (size_t i = 0; i < s->count; i++) {
		size_t j = ct_flow_key_hash(&s->flows[i].key) & s->index_mask;

		while (index[j] >= 0)
			j = (j + 1) & s->index_mask;
		index[j] = (int64_t)i;
	}
}

static int index_rebuild(struct ct_flow_set *s, size_t slots)
{
	int64_t *index = malloc(slots * sizeof(*index));

	if (!index)
		return -ENOMEM;
	free(s->index);
	s->index = index;
	s->index_mask = slots - 1;
	index_fill(s);
	return 0;
}

int64_t ct_flow_set_find(const struct ct_flow_set *s, const struct ct_flow_key *key)
{
	if (!s->index)
		return -1;
	for (size_t j = ct_flow_key_hash(key) & s->index_mask;; j = (j + 1) & s->index_mask) {
		int64_t i = s->index[j];

		if (i < 0)
			return -1;
		if (!memcmp(&s->flows[i].key, key, sizeof(*key)))
			return i;
	}
}

static void add_opcode(struct ct_flow_summary *sum, uint8_t opcode, uint64_t count)
{
	unsigned i;

	for (i = 0; i < sum->n_ops; i++) {
		if (sum->op_id[i] == opcode) {
			sum->op_count[i] += count;
			return;
		}
	}
	if (sum->n_ops == CT_SUMMARY_OPS) {
		sum->op_other += count;
		return;
	}
	sum->op_id[sum->n_ops] = opcode;
	sum->op_count[sum->n_ops++] = count;
}

static void add_opcode_cb(uint8_t opcode, uint64_t count, void *ctx)
{
	add_opcode(ctx, opcode, count);
}

static void summary_from_flow(struct ct_flow_summary *sum, const struct ct_flow *f)
{
	const struct ct_flow_cold *c = &f->cold;

	memset(sum, 0, sizeof(*sum));
	sum->key = f->key;
	sum->packets = f->packets;
	sum->bytes = f->bytes;
	sum->first_ts = c->first_ts;
	sum->last_ts = f->last_ts;
	sum->messages = c->messages;
	sum->message_bytes = c->message_bytes;
	memcpy(sum->msg_hist, c->msg_hist, sizeof(sum->msg_hist));
	ct_flow_foreach_opcode(f, add_opcode_cb, sum);
	sum->op_other = c->op_other;
	sum->cnp = c->cnp;
	sum->ecn_ce = ct_flow_ecn_ce(f);
	sum->retransmits = c->retransmits;
	sum->psn_gaps = c->psn_gaps;
	sum->psn_missing = c->psn_missing;
	sum->duplicates = c->duplicates;
	sum->go_back_n = c->go_back_n;
	sum->naks_seq = c->naks_seq;
	sum->naks_rnr = c->naks_rnr;
	sum->naks_other = c->naks_other;
	sum->partial_messages = c->partial_messages;
	sum->size_inferred = c->size_inferred;
	sum->read_requests = c->read_requests;
	sum->read_bytes_requested = c->read_bytes_requested;
	sum->reads_matched = c->reads_matched;
	if (f->key.transport == CT_TRANSPORT_TCP) {
		sum->reordered = c->tcp_reordered;
		sum->closed = !!(f->state & CT_FS_TCP_CLOSED);
	} else
		sum->read_len_mismatch = c->read_len_mismatch;
	sum->seen = f->seen;
	if (f->key.transport == CT_TRANSPORT_ROCE) {
		sum->req_first_psn = c->req_first_psn;
		sum->req_last_psn = (f->req_next_psn - 1) & PSN_MASK;
		sum->resp_first_psn = c->resp_first_psn;
		sum->resp_last_psn = (f->resp_next_psn - 1) & PSN_MASK;
		sum->read_peer_qpn = c->read_peer_qpn;
	}
	sum->pmtu = c->pmtu;
	sum->dscp = f->dscp;
	sum->pcp = f->pcp;
	sum->ecn_seen = ct_flow_ecn_seen(f);
	sum->records = 1;
	sum->reverse = -1;
}

/* Merge b into a: same key, b may be earlier or later than a. */
static void summary_merge(struct ct_flow_summary *a, const struct ct_flow_summary *b)
{
	int b_later = b->last_ts >= a->last_ts;

	a->packets += b->packets;
	a->bytes += b->bytes;
	a->messages += b->messages;
	a->message_bytes += b->message_bytes;
	for (unsigned i = 0; i < CT_HIST_BUCKETS; i++)
		a->msg_hist[i] += b->msg_hist[i];
	for (unsigned i = 0; i < b->n_ops; i++)
		add_opcode(a, b->op_id[i], b->op_count[i]);
	a->op_other += b->op_other;
	a->cnp += b->cnp;
	a->ecn_ce += b->ecn_ce;
	a->retransmits += b->retransmits;
	a->reordered += b->reordered;
	a->closed |= b->closed;
	a->psn_gaps += b->psn_gaps;
	a->psn_missing += b->psn_missing;
	a->duplicates += b->duplicates;
	a->go_back_n += b->go_back_n;
	a->naks_seq += b->naks_seq;
	a->naks_rnr += b->naks_rnr;
	a->naks_other += b->naks_other;
	a->partial_messages += b->partial_messages;
	a->size_inferred += b->size_inferred;
	a->read_requests += b->read_requests;
	a->read_bytes_requested += b->read_bytes_requested;
	a->reads_matched += b->reads_matched;
	a->read_len_mismatch += b->read_len_mismatch;
	if (b->first_ts < a->first_ts) {
		a->first_ts = b->first_ts;
		if (b->seen & CT_SEEN_REQ_PSN)
			a->req_first_psn = b->req_first_psn;
		if (b->seen & CT_SEEN_RESP_PSN)
			a->resp_first_psn = b->resp_first_psn;
	}
	if (b_later) {
		a->last_ts = b->last_ts;
		if (b->seen & CT_SEEN_REQ_PSN)
			a->req_last_psn = b->req_last_psn;
		if (b->seen & CT_SEEN_RESP_PSN)
			a->resp_last_psn = b->resp_last_psn;
		a->dscp = b->dscp;
		a->pcp = b->pcp;
	}
	if (!(a->seen & CT_SEEN_REQ_PSN) && (b->seen & CT_SEEN_REQ_PSN)) {
		a->req_first_psn = b->req_first_psn;
		a->req_last_psn = b->req_last_psn;
	}
	if (!(a->seen & CT_SEEN_RESP_PSN) && (b->seen & CT_SEEN_RESP_PSN)) {
		a->resp_first_psn = b->resp_first_psn;
		a->resp_last_psn = b->resp_last_psn;
	}
	if (!(a->seen & CT_SEEN_READ_PEER) && (b->seen & CT_SEEN_READ_PEER))
		a->read_peer_qpn = b->read_peer_qpn;
	if (b->pmtu > a->pmtu)
		a->pmtu = b->pmtu;
	a->seen |= b->seen;
	a->ecn_seen |= b->ecn_seen;
	a->records += b->records;
}

void ct_flow_set_limit(struct ct_flow_set *s, size_t limit)
{
	s->limit = limit && limit < CT_FLOW_SET_MIN_LIMIT ? CT_FLOW_SET_MIN_LIMIT : limit;
}

static int key_cmp(const struct ct_flow_key *a, const struct ct_flow_key *b);

/* Heaviest first; a total order, so that which flows are summed is deterministic. */
static int weight_cmp(const void *pa, const void *pb)
{
	const struct ct_flow_summary *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->packets != b->packets)
		return a->packets < b->packets ? 1 : -1;
	if (a->first_ts != b->first_ts)
		return a->first_ts < b->first_ts ? -1 : 1;
	return key_cmp(&a->key, &b->key);
}

/*
 * The set is full: sum its lightest quarter into s->rest. A quarter, not
 * one flow, so that a sort is paid once per limit/4 new keys.
 */
static void sum_lightest(struct ct_flow_set *s)
{
	size_t keep = s->limit - s->limit / 4;

	qsort(s->flows, s->count, sizeof(*s->flows), weight_cmp);
	for (size_t i = keep; i < s->count; i++) {
		const struct ct_flow_summary *f = &s->flows[i];

		if (s->on_summed)
			s->on_summed(f, s->on_summed_ctx);
		s->rest.flows++;
		s->rest.records += f->records;
		s->rest.packets += f->packets;
		s->rest.bytes += f->bytes;
		s->rest.messages += f->messages;
		s->rest.message_bytes += f->message_bytes;
	}
	s->count = keep;
	index_fill(s);
}

/* Room for one more flow: the array grown (never past the limit) or the lightest summed. */
static int make_room(struct ct_flow_set *s)
{
	struct ct_flow_summary *flows;
	size_t cap = s->cap ? 2 * s->cap : 256;

	if (s->limit && s->count >= s->limit) {
		sum_lightest(s);
		return 0;
	}
	if (s->count < s->cap)
		return 0;
	if (s->limit && cap > s->limit)
		cap = s->limit;
	if (cap < s->cap || cap > SIZE_MAX / sizeof(*flows))
		return -ENOMEM;
	flows = realloc(s->flows, cap * sizeof(*flows));
	if (!flows)
		return -ENOMEM;
	s->flows = flows;
	s->cap = cap;
	return 0;
}

int ct_flow_set_add_summary(struct ct_flow_set *s, const struct ct_flow_summary *sum)
{
	int64_t i = ct_flow_set_find(s, &sum->key);
	size_t j;
	int err;

	if (i >= 0) {
		summary_merge(&s->flows[i], sum);
		return 0;
	}
	err = make_room(s);
	/* Keep the index at most half full. */
	if (!err && (!s->index || 2 * (s->count + 1) > s->index_mask + 1))
		err = index_rebuild(s, s->index ? 2 * (s->index_mask + 1) : 512);
	if (err)
		return err;
	s->flows[s->count] = *sum;
	s->flows[s->count].reverse = -1;
	for (j = ct_flow_key_hash(&sum->key) & s->index_mask; s->index[j] >= 0;
	     j = (j + 1) & s->index_mask)
		;
	s->index[j] = (int64_t)s->count++;
	return 0;
}

int ct_flow_set_add(struct ct_flow_set *s, const struct ct_flow *f)
{
	struct ct_flow_summary sum;

	summary_from_flow(&sum, f);
	return ct_flow_set_add_summary(s, &sum);
}

static int key_cmp(const struct ct_flow_key *a, const struct ct_flow_key *b)
{
	int r;

	if (a->transport != b->transport)
		return a->transport < b->transport ? -1 : 1;
	r = memcmp(&a->src, &b->src, sizeof(a->src));
	if (r)
		return r;
	r = memcmp(&a->dst, &b->dst, sizeof(a->dst));
	if (r)
		return r;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static int summary_cmp(const void *pa, const void *pb)
{
	const struct ct_flow_summary *a = pa, *b = pb;

	if (a->first_ts != b->first_ts)
		return a->first_ts < b->first_ts ? -1 : 1;
	return key_cmp(&a->key, &b->key);
}

void ct_flow_set_sort(struct ct_flow_set *s)
{
	if (!s->count)
		return;
	qsort(s->flows, s->count, sizeof(*s->flows), summary_cmp);
	for (size_t i = 0; i < s->count; i++)
		s->flows[i].reverse = -1;
	index_fill(s);
}
