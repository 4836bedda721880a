// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: one frame through the parser and the engine.
 * The input's first byte chooses how much of the frame was "captured" (a
 * mirror truncation); the rest is the frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <commtap/dataplane.h>
#include <commtap/roce_opcode.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ct_engine *engine;
static uint64_t ts = 1;

static void check(const uint8_t *frame, uint32_t cap, const struct ct_pkt *p)
{
	if ((unsigned)p->kind > CT_PKT_OTHER_IP || (unsigned)p->malformed >= CT_MAL_COUNT)
		abort();
	if ((p->kind == CT_PKT_MALFORMED) != (p->malformed != CT_MAL_NONE))
		abort();
	if (p->kind == CT_PKT_ROCE) {
		if (!ct_opcode_table[p->roce.opcode].valid)
			abort();
		if (p->roce.payload_cap > p->roce.payload_len)
			abort();
		if (p->roce.payload < frame || p->roce.payload + p->roce.payload_cap > frame + cap)
			abort();
	}
}

static void ignore_flow(const struct ct_flow *f, void *ctx)
{
	(void)f;
	(void)ctx;
}

static void ignore_burst(const struct ct_flow_burst *b, void *ctx)
{
	(void)b;
	(void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ct_packet pkt;
	struct ct_pkt p;
	uint8_t *frame;
	uint32_t cap;

	if (!engine) {
		struct ct_engine_config cfg = {.memory_budget = 64 * 1024,
					       .idle_timeout_ns = 1000000,
					       .tcp_msg_gap_ns = 1000,
					       .evict_ring_slots = 16,
					       .burst_ring_slots = 16};

		if (ct_engine_create(&cfg, &engine))
			abort();
	}
	if (!size)
		return 0;
	cap = (uint32_t)(size - 1);
	if (data[0] && data[0] < cap)
		cap = data[0];
	/* an exactly sized copy, so that any read past the capture is caught */
	frame = malloc(cap ? cap : 1);
	if (!frame)
		return 0;
	memcpy(frame, data + 1, cap);
	ct_parse(frame, cap, (uint32_t)(size - 1), &p);
	check(frame, cap, &p);
	pkt = (struct ct_packet){frame, cap, (uint32_t)(size - 1), ts += 997};
	ct_engine_feed(engine, &pkt, 1);
	ct_engine_drain_evicted(engine, ignore_flow, NULL);
	ct_engine_drain_bursts(engine, ignore_burst, NULL);
	free(frame);
	return 0;
}
