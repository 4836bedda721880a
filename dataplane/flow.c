// SPDX-License-Identifier: MIT
#include <commtap/flow.h>

void ct_flow_foreach_opcode(const struct ct_flow *f,
			    void (*fn)(uint8_t opcode, uint64_t count, void *ctx), void *ctx)
{
	for (unsigned i = 0; i < f->op_used && i < CT_OP_SLOTS; i++)
		fn(f->op_id[i], (uint64_t)f->cold.op_count_hi[i] << 32 | f->op_count[i], ctx);
	for (unsigned i = 0; i < CT_OP_EXTRA; i++)
		if (f->cold.op_extra_count[i])
			fn(f->cold.op_extra_id[i], f->cold.op_extra_count[i], ctx);
}
