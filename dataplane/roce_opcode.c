// SPDX-License-Identifier: MIT
/* The BTH opcode table: which extension headers each opcode carries. */
#include <commtap/roce_opcode.h>
#include <commtap/parse.h>

#include <pthread.h>
#include <stdio.h>

#define RETH_LEN	16
#define AETH_LEN	4
#define ATOMICACK_LEN	8
#define IMMDT_LEN	4
#define IETH_LEN	4
#define ATOMICETH_LEN	28
#define DETH_LEN	8
#define XRCETH_LEN	4
#define CNP_RSVD_LEN	16

#define ENTRY(code, k, p, resp, e, len)                                                            \
	[code] = {.valid = 1, .kind = (k), .pos = (p), .response = (resp), .ext = (e), .ext_len = (len)}

/* SEND and WRITE: shared by RC, UC and (with XRCETH, x) XRC. */
#define SEND_WRITE_OPS(tr, x, xl)                                                                  \
	ENTRY(tr | CT_OP_SEND_FIRST, CT_MSG_SEND, CT_POS_FIRST, 0, x, xl),                         \
	ENTRY(tr | CT_OP_SEND_MIDDLE, CT_MSG_SEND, CT_POS_MIDDLE, 0, x, xl),                       \
	ENTRY(tr | CT_OP_SEND_LAST, CT_MSG_SEND, CT_POS_LAST, 0, x, xl),                           \
	ENTRY(tr | CT_OP_SEND_LAST_IMM, CT_MSG_SEND, CT_POS_LAST, 0, (x) | CT_EXT_IMMDT,          \
	      (xl) + IMMDT_LEN),                                                                   \
	ENTRY(tr | CT_OP_SEND_ONLY, CT_MSG_SEND, CT_POS_ONLY, 0, x, xl),                           \
	ENTRY(tr | CT_OP_SEND_ONLY_IMM, CT_MSG_SEND, CT_POS_ONLY, 0, (x) | CT_EXT_IMMDT,          \
	      (xl) + IMMDT_LEN),                                                                   \
	ENTRY(tr | CT_OP_WRITE_FIRST, CT_MSG_WRITE, CT_POS_FIRST, 0, (x) | CT_EXT_RETH,           \
	      (xl) + RETH_LEN),                                                                    \
	ENTRY(tr | CT_OP_WRITE_MIDDLE, CT_MSG_WRITE, CT_POS_MIDDLE, 0, x, xl),                     \
	ENTRY(tr | CT_OP_WRITE_LAST, CT_MSG_WRITE, CT_POS_LAST, 0, x, xl),                         \
	ENTRY(tr | CT_OP_WRITE_LAST_IMM, CT_MSG_WRITE, CT_POS_LAST, 0, (x) | CT_EXT_IMMDT,        \
	      (xl) + IMMDT_LEN),                                                                   \
	ENTRY(tr | CT_OP_WRITE_ONLY, CT_MSG_WRITE, CT_POS_ONLY, 0, (x) | CT_EXT_RETH,             \
	      (xl) + RETH_LEN),                                                                    \
	ENTRY(tr | CT_OP_WRITE_ONLY_IMM, CT_MSG_WRITE, CT_POS_ONLY, 0,                            \
	      (x) | CT_EXT_RETH | CT_EXT_IMMDT, (xl) + RETH_LEN + IMMDT_LEN)

/* READ, ATOMIC, acknowledgements and SEND with invalidate: RC and XRC only. */
#define RELIABLE_OPS(tr, x, xl)                                                                    \
	ENTRY(tr | CT_OP_READ_REQUEST, CT_MSG_READ_REQ, CT_POS_NONE, 0, (x) | CT_EXT_RETH,        \
	      (xl) + RETH_LEN),                                                                    \
	ENTRY(tr | CT_OP_READ_RESP_FIRST, CT_MSG_READ_RESP, CT_POS_FIRST, 1, CT_EXT_AETH,         \
	      AETH_LEN),                                                                           \
	ENTRY(tr | CT_OP_READ_RESP_MIDDLE, CT_MSG_READ_RESP, CT_POS_MIDDLE, 1, 0, 0),             \
	ENTRY(tr | CT_OP_READ_RESP_LAST, CT_MSG_READ_RESP, CT_POS_LAST, 1, CT_EXT_AETH, AETH_LEN), \
	ENTRY(tr | CT_OP_READ_RESP_ONLY, CT_MSG_READ_RESP, CT_POS_ONLY, 1, CT_EXT_AETH, AETH_LEN), \
	ENTRY(tr | CT_OP_ACK, CT_MSG_ACK, CT_POS_NONE, 1, CT_EXT_AETH, AETH_LEN),                 \
	ENTRY(tr | CT_OP_ATOMIC_ACK, CT_MSG_ACK, CT_POS_NONE, 1,                                  \
	      CT_EXT_AETH | CT_EXT_ATOMICACKETH, AETH_LEN + ATOMICACK_LEN),                        \
	ENTRY(tr | CT_OP_CMP_SWAP, CT_MSG_ATOMIC, CT_POS_ONLY, 0, (x) | CT_EXT_ATOMICETH,         \
	      (xl) + ATOMICETH_LEN),                                                               \
	ENTRY(tr | CT_OP_FETCH_ADD, CT_MSG_ATOMIC, CT_POS_ONLY, 0, (x) | CT_EXT_ATOMICETH,        \
	      (xl) + ATOMICETH_LEN),                                                               \
	ENTRY(tr | CT_OP_SEND_LAST_INV, CT_MSG_SEND, CT_POS_LAST, 0, (x) | CT_EXT_IETH,           \
	      (xl) + IETH_LEN),                                                                    \
	ENTRY(tr | CT_OP_SEND_ONLY_INV, CT_MSG_SEND, CT_POS_ONLY, 0, (x) | CT_EXT_IETH,           \
	      (xl) + IETH_LEN)

/*
 * RD (reliable datagram) is left out on purpose: no RoCE NIC implements it,
 * so its opcodes are reported as bth_bad_opcode like the reserved ones.
 */
const struct ct_opcode_info ct_opcode_table[256] = {
	SEND_WRITE_OPS(CT_TR_RC, 0, 0),
	RELIABLE_OPS(CT_TR_RC, 0, 0),
	SEND_WRITE_OPS(CT_TR_UC, 0, 0),
	ENTRY(CT_TR_UD | CT_OP_SEND_ONLY, CT_MSG_SEND, CT_POS_ONLY, 0, CT_EXT_DETH, DETH_LEN),
	ENTRY(CT_TR_UD | CT_OP_SEND_ONLY_IMM, CT_MSG_SEND, CT_POS_ONLY, 0,
	      CT_EXT_DETH | CT_EXT_IMMDT, DETH_LEN + IMMDT_LEN),
	ENTRY(CT_OPCODE_CNP, CT_MSG_CNP, CT_POS_NONE, 0, CT_EXT_CNP, CNP_RSVD_LEN),
	SEND_WRITE_OPS(CT_TR_XRC, CT_EXT_XRCETH, XRCETH_LEN),
	RELIABLE_OPS(CT_TR_XRC, CT_EXT_XRCETH, XRCETH_LEN),
};

static const char *const op_names[32] = {
	[CT_OP_SEND_FIRST] = "SEND_FIRST",
	[CT_OP_SEND_MIDDLE] = "SEND_MIDDLE",
	[CT_OP_SEND_LAST] = "SEND_LAST",
	[CT_OP_SEND_LAST_IMM] = "SEND_LAST_IMM",
	[CT_OP_SEND_ONLY] = "SEND_ONLY",
	[CT_OP_SEND_ONLY_IMM] = "SEND_ONLY_IMM",
	[CT_OP_WRITE_FIRST] = "WRITE_FIRST",
	[CT_OP_WRITE_MIDDLE] = "WRITE_MIDDLE",
	[CT_OP_WRITE_LAST] = "WRITE_LAST",
	[CT_OP_WRITE_LAST_IMM] = "WRITE_LAST_IMM",
	[CT_OP_WRITE_ONLY] = "WRITE_ONLY",
	[CT_OP_WRITE_ONLY_IMM] = "WRITE_ONLY_IMM",
	[CT_OP_READ_REQUEST] = "READ_REQUEST",
	[CT_OP_READ_RESP_FIRST] = "READ_RESP_FIRST",
	[CT_OP_READ_RESP_MIDDLE] = "READ_RESP_MIDDLE",
	[CT_OP_READ_RESP_LAST] = "READ_RESP_LAST",
	[CT_OP_READ_RESP_ONLY] = "READ_RESP_ONLY",
	[CT_OP_ACK] = "ACK",
	[CT_OP_ATOMIC_ACK] = "ATOMIC_ACK",
	[CT_OP_CMP_SWAP] = "CMP_SWAP",
	[CT_OP_FETCH_ADD] = "FETCH_ADD",
	[CT_OP_SEND_LAST_INV] = "SEND_LAST_INV",
	[CT_OP_SEND_ONLY_INV] = "SEND_ONLY_INV",
};

/* Names are "<transport>_<operation>", built once into a static table. */
static char names[256][24];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_build(void)
{
	static const char *const tr_names[8] = {"RC", "UC", "RD", "UD", "CNP", "XRC", "", ""};

	for (unsigned opcode = 0; opcode < 256; opcode++) {
		if (!ct_opcode_table[opcode].valid)
			continue;
		if (opcode == CT_OPCODE_CNP)
			snprintf(names[opcode], sizeof(names[opcode]), "CNP");
		else
			snprintf(names[opcode], sizeof(names[opcode]), "%s_%s", tr_names[opcode >> 5],
				 op_names[opcode & 0x1f]);
	}
}

const char *ct_opcode_name(uint8_t opcode)
{
	if (!ct_opcode_table[opcode].valid)
		return NULL;
	pthread_once(&names_once, names_build);
	return names[opcode];
}
