// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the input as a capture file (pcap or pcapng) through
 * the reader and the engine, as `commtap analyze` runs it; and the mapped
 * reader of classic pcap files checked against libpcap on the same bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/*
 * The mapped reader (classic pcap) against libpcap on the same bytes: every
 * packet the same (time, lengths, data), and the same end (rc). A file the
 * mapped reader does not take is libpcap's alone.
 */
static void differential(const uint8_t *data, size_t size)
{
	struct ct_capture *lib = NULL, *mapped = NULL;
	struct ct_packet a, b;
	char err[512], path[64];
	int fd = memfd_create("fuzz-capture", 0), ra, rb;
	FILE *fp;

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size)
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fp = fmemopen((void *)data, size, "rb");
	if (!fp || ct_capture_open_stream(fp, "fuzz", &lib, err, sizeof(err)))
		goto out;
	if (ct_capture_open(path, &mapped, err, sizeof(err)))
		goto out;
	for (unsigned n = 0; n < 100000; n++) {
		ra = ct_capture_next(lib, &a);
		rb = ct_capture_next(mapped, &b);
		if (ra != rb)
			abort();
		if (ra != 1)
			break;
		if (a.ts_ns != b.ts_ns || a.cap_len != b.cap_len || a.wire_len != b.wire_len ||
		    memcmp(a.data, b.data, a.cap_len))
			abort();
	}
out:
	ct_capture_close(lib);
	ct_capture_close(mapped);
	close(fd);
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
	differential(data, size);
	return 0;
}
