// SPDX-License-Identifier: MIT
/*
 * RDMA connection manager (IBTA vol. 1, chapter 12) messages, read only to
 * pair the two flows of a connection: a REQ names the active side's QPN, the
 * REP the passive side's, and the REP echoes the REQ's communication ID.
 * They travel as MADs in UD SENDs to QP1.
 */
#include "engine_internal.h"

#include <commtap/byteorder.h>

#include <commtap/roce_opcode.h>

#define MAD_HDR_LEN	   24
#define MAD_CLASS_CM	   0x07
#define CM_ATTR_REQ	   0x0010
#define CM_ATTR_REP	   0x0013
#define CM_REQ_QPN_OFFSET  32 /* comm id, rsvd, service id, CA GUID, rsvd, Q_Key */
#define CM_REP_QPN_OFFSET  12 /* local comm id, remote comm id, Q_Key */

void ct_cm_inspect(struct ct_engine *e, const struct ct_pkt *p, uint64_t now)
{
	const struct ct_roce *r = &p->roce;
	const uint8_t *mad = r->payload;
	const uint8_t *cm = mad + MAD_HDR_LEN;
	struct ct_cm_event *ev;
	uint16_t attr;

	if (r->dqpn != 1 || r->payload_cap < MAD_HDR_LEN + CM_REQ_QPN_OFFSET + 3 ||
	    mad[1] != MAD_CLASS_CM)
		return;
	attr = (uint16_t)(mad[16] << 8 | mad[17]);
	if (attr != CM_ATTR_REQ && attr != CM_ATTR_REP)
		return;
	e->c.cm_messages++;
	if (e->cm_count == CT_CM_LOG_SLOTS) {
		e->c.cm_dropped++;
		return;
	}
	ev = &e->cm_log[e->cm_count++];
	ev->src = p->src;
	ev->dst = p->dst;
	ev->ts = now;
	ev->local_comm_id = ct_get32(cm);
	if (attr == CM_ATTR_REQ) {
		ev->type = CT_CM_REQ;
		ev->remote_comm_id = 0;
		ev->local_qpn = ct_get24(cm + CM_REQ_QPN_OFFSET);
	} else {
		ev->type = CT_CM_REP;
		ev->remote_comm_id = ct_get32(cm + 4);
		ev->local_qpn = ct_get24(cm + CM_REP_QPN_OFFSET);
	}
}
