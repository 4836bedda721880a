// SPDX-License-Identifier: MIT
/*
 * Verbs message assembly and PSN tracking (RoCE), message inference and
 * retransmissions (TCP).
 *
 * A RoCE flow can carry two PSN spaces: requests sent by the source QP
 * (SEND/WRITE/READ request/ATOMIC: req_*), and responses to requests the
 * destination QP sent (ACK/NAK, READ responses, ATOMIC ACK: resp_*).
 */
#include "engine_internal.h"
#include "message_inline.h"

#include <commtap/roce_opcode.h>
#include <string.h>

#define PSN_MASK     CT_PSN_MASK
#define PSN_HALF     0x800000u
#define READ_LEN_CUT UINT32_MAX /* the READ request's RETH was cut from the copy */

static inline void message_complete(struct ct_flow *f, uint64_t size)
{
	f->cold.messages++;
	f->cold.message_bytes += size;
	f->cold.msg_hist[ct_hist_bucket(size)]++;
}

/* A WRITE completed without the RETH that states its size (cut from the copy). */
static void size_inferred(struct ct_engine *e, struct ct_flow *f)
{
	e->c.messages_size_inferred++;
	if (f->cold.size_inferred != UINT16_MAX)
		f->cold.size_inferred++;
}

static void replay_end(struct ct_flow *f)
{
	if (f->cold.replay_len == 1)
		f->cold.duplicates++;
	else
		f->cold.go_back_n++;
	f->cold.replay_len = 0;
	f->state &= ~CT_FS_REPLAY;
}

/*
 * Check a request PSN against the expectation. Returns 0 when the packet is
 * new (in order or after a gap) and should be assembled, 1 when it repeats a
 * PSN already seen (a retransmission).
 */
static int request_psn(struct ct_flow *f, uint32_t psn)
{
	if (!(f->seen & CT_SEEN_REQ_PSN)) {
		f->seen |= CT_SEEN_REQ_PSN;
		f->cold.req_first_psn = psn;
	}
	if (f->state & CT_FS_REQ_PSN_OK) {
		uint32_t ahead = (psn - f->req_next_psn) & PSN_MASK;

		if (ahead >= PSN_HALF) { /* behind the expectation: a replay */
			f->cold.retransmits++;
			ct_flow_burst_count(&f->cold.burst_loss);
			if (!(f->state & CT_FS_REPLAY)) {
				f->state |= CT_FS_REPLAY;
				f->cold.replay_len = 0;
			}
			if (f->cold.replay_len < UINT8_MAX)
				f->cold.replay_len++;
			return 1;
		}
		if (ahead) {
			f->cold.psn_gaps++;
			ct_flow_burst_count(&f->cold.burst_loss);
			f->cold.psn_missing += ahead;
		}
	}
	if (f->state & CT_FS_REPLAY)
		replay_end(f);
	return 0;
}

static void read_request(struct ct_engine *e, struct ct_flow *f, const struct ct_pkt *p)
{
	const struct ct_roce *r = &p->roce;
	uint32_t h = (r->psn * 0x9e3779b1u) ^ ((uint32_t)f->key.src.b[15] << 8 | f->key.dst.b[15]);
	struct ct_read_entry *re = &e->reads[h & (CT_READ_TABLE_SLOTS - 1)];

	f->cold.read_requests++;
	f->cold.read_bytes_requested += r->reth_len;
	if (re->used)
		e->c.read_overwrites++;
	re->requester = f->key.src;
	re->responder = f->key.dst;
	re->psn = r->psn;
	re->len = (r->ext & CT_EXT_RETH) ? r->reth_len : READ_LEN_CUT;
	re->responder_qpn = r->dqpn;
	re->used = 1;
}

/* A READ response message completed on flow f: find and retire its request. */
static void read_response_done(struct ct_engine *e, struct ct_flow *f, uint32_t first_psn,
			       uint32_t bytes)
{
	uint32_t h =
		(first_psn * 0x9e3779b1u) ^ ((uint32_t)f->key.dst.b[15] << 8 | f->key.src.b[15]);
	struct ct_read_entry *re = &e->reads[h & (CT_READ_TABLE_SLOTS - 1)];

	message_complete(f, bytes);
	if (!re->used || re->psn != first_psn || memcmp(&re->requester, &f->key.dst, 16) ||
	    memcmp(&re->responder, &f->key.src, 16))
		return;
	if (re->len == bytes)
		f->cold.reads_matched++;
	else if (re->len != READ_LEN_CUT)
		f->cold.read_len_mismatch++;
	f->seen |= CT_SEEN_READ_PEER;
	f->cold.read_peer_qpn = re->responder_qpn;
	re->used = 0;
}

static void request(struct ct_engine *e, struct ct_flow *f, const struct ct_pkt *p,
		    const struct ct_opcode_info *info)
{
	const struct ct_roce *r = &p->roce;

	if (request_psn(f, r->psn))
		return;

	switch (info->pos) {
	case CT_POS_FIRST:
		if (f->state & CT_FS_REQ_IN_MSG)
			f->cold.partial_messages++;
		f->state |= CT_FS_REQ_IN_MSG;
		f->state = (f->state & ~CT_FS_MSG_SEND) |
			   (info->kind == CT_MSG_SEND ? CT_FS_MSG_SEND : 0);
		f->req_msg_bytes = r->payload_len;
		f->req_msg_len = (r->ext & CT_EXT_RETH) ? r->reth_len : 0;
		ct_msg_learn_pmtu(f, r->payload_len);
		break;
	case CT_POS_MIDDLE:
	case CT_POS_LAST: {
		int same_kind = !(f->state & CT_FS_MSG_SEND) == (info->kind != CT_MSG_SEND);

		if (!(f->state & CT_FS_REQ_IN_MSG) || !same_kind) {
			/* a message of the other kind in progress lost its end */
			if (f->state & CT_FS_REQ_IN_MSG)
				f->cold.partial_messages++;
			/* started before the capture, or its FIRST was lost */
			if (info->pos == CT_POS_LAST)
				f->cold.partial_messages++;
			f->state &= ~CT_FS_REQ_IN_MSG;
			break;
		}
		f->req_msg_bytes += r->payload_len;
		if (info->pos == CT_POS_MIDDLE) {
			ct_msg_learn_pmtu(f, r->payload_len);
			break;
		}
		/*
		 * A WRITE's size is its RETH length, exact even if a packet was
		 * missed; without it (cut from the copy), the sum of its payloads.
		 */
		if (__builtin_expect(!f->req_msg_len && !(f->state & CT_FS_MSG_SEND), 0))
			size_inferred(e, f);
		message_complete(f, f->req_msg_len ? f->req_msg_len : f->req_msg_bytes);
		f->state &= ~CT_FS_REQ_IN_MSG;
		break;
	}
	case CT_POS_ONLY:
		if (f->state & CT_FS_REQ_IN_MSG) {
			f->cold.partial_messages++;
			f->state &= ~CT_FS_REQ_IN_MSG;
		}
		message_complete(f, info->kind == CT_MSG_ATOMIC ? 8 : r->payload_len);
		break;
	default: /* READ request */
		read_request(e, f, p);
		/*
		 * The responses use one PSN per packet of the path MTU, which the
		 * requester's side does not show reliably: re-synchronise on the
		 * next request rather than guess (no gap check across a READ).
		 */
		f->req_next_psn = (r->psn + 1) & PSN_MASK;
		f->state &= ~CT_FS_REQ_PSN_OK;
		return;
	}
	f->req_next_psn = (r->psn + 1) & PSN_MASK;
	f->state |= CT_FS_REQ_PSN_OK;
}

static void ack(struct ct_flow *f, const struct ct_roce *r)
{
	uint8_t kind = (r->aeth_syndrome >> 5) & 3;

	if (kind == 1) {
		if (f->cold.naks_rnr < UINT16_MAX)
			f->cold.naks_rnr++;
	} else if (kind == 3) {
		if ((r->aeth_syndrome & 0x1f) == 0)
			f->cold.naks_seq++;
		else if (f->cold.naks_other < UINT16_MAX)
			f->cold.naks_other++;
		ct_flow_burst_count(&f->cold.burst_loss);
	}
}

static void read_response(struct ct_engine *e, struct ct_flow *f, const struct ct_pkt *p,
			  const struct ct_opcode_info *info)
{
	const struct ct_roce *r = &p->roce;

	switch (info->pos) {
	case CT_POS_FIRST:
		if (f->state & CT_FS_RESP_IN_MSG)
			f->cold.partial_messages++;
		f->state |= CT_FS_RESP_IN_MSG;
		f->resp_msg_bytes = r->payload_len;
		f->cold.resp_msg_first_psn = r->psn;
		ct_msg_learn_pmtu(f, r->payload_len);
		break;
	case CT_POS_MIDDLE:
	case CT_POS_LAST:
		if (!(f->state & CT_FS_RESP_IN_MSG)) {
			if (info->pos == CT_POS_LAST)
				f->cold.partial_messages++;
			break;
		}
		if (r->psn != f->resp_next_psn) {
			uint32_t ahead = (r->psn - f->resp_next_psn) & PSN_MASK;

			if (ahead >= PSN_HALF) {
				f->cold.retransmits++;
				ct_flow_burst_count(&f->cold.burst_loss);
				return;
			}
			f->cold.psn_gaps++;
			ct_flow_burst_count(&f->cold.burst_loss);
			f->cold.psn_missing += ahead;
		}
		f->resp_msg_bytes += r->payload_len;
		if (info->pos == CT_POS_MIDDLE) {
			ct_msg_learn_pmtu(f, r->payload_len);
			break;
		}
		f->state &= ~CT_FS_RESP_IN_MSG;
		read_response_done(e, f, f->cold.resp_msg_first_psn, f->resp_msg_bytes);
		break;
	case CT_POS_ONLY:
		if (f->state & CT_FS_RESP_IN_MSG) {
			f->cold.partial_messages++;
			f->state &= ~CT_FS_RESP_IN_MSG;
		}
		read_response_done(e, f, r->psn, r->payload_len);
		break;
	default:
		break;
	}
	f->resp_next_psn = (r->psn + 1) & PSN_MASK;
}

void ct_msg_roce(struct ct_engine *e, struct ct_flow *f, const struct ct_pkt *p)
{
	const struct ct_roce *r = &p->roce;
	const struct ct_opcode_info *info = &ct_opcode_table[r->opcode];

	if (info->response) {
		if (!(f->seen & CT_SEEN_RESP_PSN)) {
			f->seen |= CT_SEEN_RESP_PSN;
			f->cold.resp_first_psn = r->psn;
		}
		if (info->kind == CT_MSG_ACK) {
			ack(f, r);
			f->resp_next_psn = (r->psn + 1) & PSN_MASK;
		} else {
			read_response(e, f, p, info);
		}
		return;
	}
	if (info->kind == CT_MSG_CNP) {
		f->cold.cnp++;
		ct_flow_burst_count(&f->burst_marks);
		return;
	}
	request(e, f, p, info);
}

/*
 * A segment of nothing new that fills the hole the last new segment opened
 * (tcp_hole_start .. req_next_psn) was reordered before the capture point,
 * not resent: a sender resends a lost segment only after the segments past
 * it brought back duplicate acknowledgements, a round trip at least, and
 * new data goes out meanwhile, which closes the hole here. So is a repeat
 * of the fill (it ends where the hole now starts): the sender answering
 * the receiver's report of that same reordering, the original having been
 * seen here (or, rarely, a resend of the segment before the hole, lost
 * past the capture point). A mirror port swaps neighbours: on a clean real
 * run (ddp-5: gloo over veth behind a bridge) 18 of the 25 segments counted
 * resent on its busiest link were such a fill, seen microseconds after the
 * one past it, 3 more their repeats (37 -> 8 on the capture; Wireshark
 * reads 28 out of order and 10 resent, 1 of them spurious). The fill moves
 * the hole's start past it where it begins there. Counted apart, not as
 * loss. 1: a fill (its bytes are the message's), -1: a repeat, 0: neither.
 */
static int tcp_reordered(struct ct_flow *f, uint32_t seq, uint32_t end)
{
	if (f->tcp_hole_start == f->req_next_psn)
		return 0;
	if ((int32_t)(seq - f->tcp_hole_start) < 0) {
		if (end != f->tcp_hole_start)
			return 0;
		f->cold.tcp_reordered++;
		return -1;
	}
	if (seq == f->tcp_hole_start)
		f->tcp_hole_start = end;
	f->cold.tcp_reordered++;
	return 1;
}

void ct_msg_tcp(struct ct_engine *e, struct ct_flow *f, const struct ct_pkt *p, uint64_t now)
{
	const struct ct_tcp *t = &p->tcp;
	uint32_t len = t->payload_len;

	if (t->flags & 0x02) { /* SYN consumes one sequence number */
		f->req_next_psn = f->tcp_hole_start = t->seq + 1;
		f->state |= CT_FS_TCP_SEQ_OK;
	}
	if (t->flags & 0x05) /* FIN or RST */
		f->state |= CT_FS_TCP_CLOSED;
	if (!len)
		return;
	if (f->state & CT_FS_TCP_SEQ_OK) {
		uint32_t end = t->seq + len;

		if ((int32_t)(end - f->req_next_psn) > 0) {
			/* a jump ahead opens a hole; data in order closes the one before */
			f->tcp_hole_start =
				(int32_t)(t->seq - f->req_next_psn) > 0 ? f->req_next_psn : end;
			f->req_next_psn = end;
		} else {
			int reordered = tcp_reordered(f, t->seq, end);

			if (!reordered) { /* every byte seen before */
				f->cold.retransmits++;
				ct_flow_burst_count(&f->cold.burst_loss);
			}
			if (reordered <= 0)
				return;
		}
	} else {
		f->req_next_psn = f->tcp_hole_start = t->seq + len;
		f->state |= CT_FS_TCP_SEQ_OK;
	}
	if (f->req_msg_bytes && now - f->tcp_last_data_ts > e->tcp_msg_gap_ns) {
		message_complete(f, f->req_msg_bytes);
		f->req_msg_bytes = 0;
	}
	f->req_msg_bytes += len;
	f->tcp_last_data_ts = now;
}

void ct_msg_finish(struct ct_flow *f)
{
	if (f->key.transport == CT_TRANSPORT_TCP) {
		if (f->req_msg_bytes)
			message_complete(f, f->req_msg_bytes);
		f->req_msg_bytes = 0;
		return;
	}
	if (f->state & CT_FS_REQ_IN_MSG)
		f->cold.partial_messages++;
	if (f->state & CT_FS_RESP_IN_MSG)
		f->cold.partial_messages++;
	if (f->state & CT_FS_REPLAY)
		replay_end(f);
	f->state &= ~(CT_FS_REQ_IN_MSG | CT_FS_RESP_IN_MSG);
}
