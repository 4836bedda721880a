/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand BTH opcodes as carried by RoCEv2 (IBTA vol. 1, 9.2; annex A17).
 * The opcode's top three bits name the transport (RC, UC, RD, UD, CNP, XRC),
 * the low five the operation.
 */
#ifndef COMMTAP_ROCE_OPCODE_H
#define COMMTAP_ROCE_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

enum ct_roce_transport {
	CT_TR_RC = 0x00,
	CT_TR_UC = 0x20,
	CT_TR_RD = 0x40,
	CT_TR_UD = 0x60,
	CT_TR_CNP = 0x80,
	CT_TR_XRC = 0xa0,
};

/* Operations (low five bits). */
enum ct_roce_op {
	CT_OP_SEND_FIRST = 0x00,
	CT_OP_SEND_MIDDLE = 0x01,
	CT_OP_SEND_LAST = 0x02,
	CT_OP_SEND_LAST_IMM = 0x03,
	CT_OP_SEND_ONLY = 0x04,
	CT_OP_SEND_ONLY_IMM = 0x05,
	CT_OP_WRITE_FIRST = 0x06,
	CT_OP_WRITE_MIDDLE = 0x07,
	CT_OP_WRITE_LAST = 0x08,
	CT_OP_WRITE_LAST_IMM = 0x09,
	CT_OP_WRITE_ONLY = 0x0a,
	CT_OP_WRITE_ONLY_IMM = 0x0b,
	CT_OP_READ_REQUEST = 0x0c,
	CT_OP_READ_RESP_FIRST = 0x0d,
	CT_OP_READ_RESP_MIDDLE = 0x0e,
	CT_OP_READ_RESP_LAST = 0x0f,
	CT_OP_READ_RESP_ONLY = 0x10,
	CT_OP_ACK = 0x11,
	CT_OP_ATOMIC_ACK = 0x12,
	CT_OP_CMP_SWAP = 0x13,
	CT_OP_FETCH_ADD = 0x14,
	CT_OP_SEND_LAST_INV = 0x16,
	CT_OP_SEND_ONLY_INV = 0x17,
};

#define CT_OPCODE_CNP 0x81

/* Where a packet sits in a multi-packet message. */
enum ct_msg_pos {
	CT_POS_NONE = 0, /* not part of a data message (ACK, CNP, READ request) */
	CT_POS_FIRST,
	CT_POS_MIDDLE,
	CT_POS_LAST,
	CT_POS_ONLY,
};

/* What kind of verbs message a packet belongs to. */
enum ct_msg_kind {
	CT_MSG_NONE = 0,
	CT_MSG_SEND,
	CT_MSG_WRITE,
	CT_MSG_READ_REQ,
	CT_MSG_READ_RESP,
	CT_MSG_ATOMIC,
	CT_MSG_ACK, /* ACK/NAK and ATOMIC ACKNOWLEDGE */
	CT_MSG_CNP,
};

struct ct_opcode_info {
	uint8_t valid;
	uint8_t kind;	  /* enum ct_msg_kind */
	uint8_t pos;	  /* enum ct_msg_pos */
	uint8_t response; /* travels responder -> requester (ACK, READ response) */
	uint16_t ext;	  /* enum ct_roce_ext bits the opcode carries, in wire order */
	uint8_t ext_len;  /* total bytes of those extension headers */
};

/* Indexed by the full 8-bit opcode; .valid is 0 for reserved opcodes. */
extern const struct ct_opcode_info ct_opcode_table[256];

/* Short stable name ("RC_WRITE_FIRST", "UD_SEND_ONLY", "CNP"), NULL if reserved. */
const char *ct_opcode_name(uint8_t opcode);

#endif
