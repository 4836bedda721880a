/* SPDX-License-Identifier: MIT */
/*
 * The two cases of RoCE message assembly that most packets take, inlined
 * into the engine's feed loop: a request MIDDLE packet at the expected PSN
 * of the message it continues, and a positive ACK on a flow whose first
 * response PSN is known. Each does exactly what ct_msg_roce (message.c)
 * does for it; every other packet returns 0 and goes to ct_msg_roce.
 */
#ifndef COMMTAP_MESSAGE_INLINE_H
#define COMMTAP_MESSAGE_INLINE_H

#include <commtap/flow.h>
#include <commtap/roce_opcode.h>

#define CT_PSN_MASK 0xffffffu

static inline void ct_msg_learn_pmtu(struct ct_flow *f, uint32_t payload)
{
	if (payload > f->cold.pmtu && payload <= 0xffff)
		f->cold.pmtu = (uint16_t)payload;
}

static inline int ct_msg_roce_in_order(struct ct_flow *f, const struct ct_roce *r)
{
	const struct ct_opcode_info *info = &ct_opcode_table[r->opcode];
	const uint8_t req_mask =
		CT_FS_REQ_IN_MSG | CT_FS_REQ_PSN_OK | CT_FS_REPLAY | CT_FS_MSG_SEND;

	if (info->pos == CT_POS_MIDDLE && !info->response) {
		uint8_t want = (uint8_t)(CT_FS_REQ_IN_MSG | CT_FS_REQ_PSN_OK |
					 (info->kind == CT_MSG_SEND) * CT_FS_MSG_SEND);

		/*
		 * In a message of the same kind, no replay open, the PSN expected
		 * (CT_FS_REQ_PSN_OK is set only once CT_SEEN_REQ_PSN is).
		 */
		if ((f->state & req_mask) != want || r->psn != f->req_next_psn)
			return 0;
		f->req_msg_bytes += r->payload_len;
		ct_msg_learn_pmtu(f, r->payload_len);
		f->req_next_psn = (r->psn + 1) & CT_PSN_MASK;
		return 1;
	}
	/* AETH syndrome 0xx: an ACK, neither RNR NAK nor NAK */
	if (info->kind == CT_MSG_ACK && (f->seen & CT_SEEN_RESP_PSN) &&
	    !(r->aeth_syndrome & 0x60)) {
		f->resp_next_psn = (r->psn + 1) & CT_PSN_MASK;
		return 1;
	}
	return 0;
}

#endif
