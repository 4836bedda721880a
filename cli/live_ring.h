/* SPDX-License-Identifier: MIT */
/*
 * A packet socket on one interface for `commtap analyze --live`: AF_PACKET
 * with a TPACKET_V3 block ring mapped into the process, a classic BPF
 * capture filter (compiled by libpcap) and a place in the interface's
 * PACKET_FANOUT group, so that each worker thread holds one socket per
 * interface and the kernel spreads the flows over the workers.
 */
#ifndef COMMTAP_CLI_LIVE_RING_H
#define COMMTAP_CLI_LIVE_RING_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/dataplane.h>

/* What libpcap's filter compiles to, shared by every socket. */
struct live_filter;

/*
 * Compile expr (tcpdump's syntax) for Ethernet with the given snap length.
 * Returns 0, or a negative errno with a one-line reason naming --filter.
 */
int live_filter_compile(const char *expr, unsigned snaplen, struct live_filter **out, char *err,
			size_t errlen);
void live_filter_free(struct live_filter *f);

struct live_ring_config {
	const char *iface;
	const struct live_filter *filter;
	size_t ring_bytes;  /* the ring's size; rounded to whole blocks */
	unsigned retire_ms; /* a block the kernel has begun goes to the reader after this */
	int fanout_id;	    /* -1: start a group (its id is then live_ring_fanout_id) */
};

struct live_ring;

/*
 * Open the socket: filter, ring, bind to the interface, join (or start)
 * its fanout group. Returns 0, or a negative errno with a one-line reason
 * naming the interface: -ENODEV (no such interface), -ENETDOWN (it is
 * down), -EPERM (no CAP_NET_RAW).
 */
int live_ring_open(const struct live_ring_config *cfg, struct live_ring **out, char *err,
		   size_t errlen);
int live_ring_fd(const struct live_ring *r);
int live_ring_fanout_id(const struct live_ring *r);
const char *live_ring_iface(const struct live_ring *r);

/*
 * The packets of the oldest block the kernel has handed over, as
 * ct_packets with the ring header's nanosecond timestamps: calls fn with
 * up to CT_LIVE_BATCH packets at a time (their data valid during the call)
 * and gives the block back. Returns the packets read (0: none ready).
 * VLAN tags the kernel took off the frame are put back (scratch is the
 * caller's, at least 64 KiB + 4).
 */
#define CT_LIVE_BATCH 64
typedef void (*live_batch_fn)(const struct ct_packet *pkts, unsigned n, void *ctx);
unsigned live_ring_read_block(struct live_ring *r, uint8_t *scratch, live_batch_fn fn, void *ctx);
#define CT_LIVE_SCRATCH (65536 + 4)

/*
 * The kernel's counters since the socket opened (PACKET_STATISTICS, summed
 * across reads: each read resets the kernel's): packets that passed the
 * filter, and those dropped for want of room in the ring. Returns 0 or a
 * negative errno.
 */
int live_ring_stats(struct live_ring *r, uint64_t *packets, uint64_t *drops);

void live_ring_close(struct live_ring *r);

#endif
