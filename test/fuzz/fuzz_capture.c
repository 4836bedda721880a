// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the input as a capture file (pcap or pcapng) through
 * the reader and the engine, as `commtap analyze` runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	struct ct_engine_config cfg = {.memory_budget = 64 * 1024,
				       .tcp_msg_gap_ns = 1000,
				       .evict_ring_slots = 64,
				       .burst_ring_slots = 64};
	struct ct_capture *cap;
	struct ct_engine *engine;
	struct ct_packet pkt;
	char err[512];
	FILE *fp = fmemopen((void *)data, size, "rb");
	unsigned n = 0;

	if (!fp)
		return 0;
	if (ct_capture_open_stream(fp, "fuzz", &cap, err, sizeof(err)))
		return 0; /* the stream is closed on failure */
	if (ct_engine_create(&cfg, &engine)) {
		ct_capture_close(cap);
		return 0;
	}
	while (n++ < 100000 && ct_capture_next(cap, &pkt) == 1)
		ct_engine_feed(engine, &pkt, 1);
	ct_engine_finish(engine, ignore_flow, NULL);
	ct_engine_drain_bursts(engine, ignore_burst, NULL);
	ct_engine_destroy(engine);
	ct_capture_close(cap);
	return 0;
}
