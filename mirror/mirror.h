/* SPDX-License-Identifier: MIT */
/*
 * commtap-mirror: a DPDK port's traffic (a switch's mirror session) through
 * one commtap engine per worker core, reported like `commtap analyze`.
 */
#ifndef COMMTAP_MIRROR_H
#define COMMTAP_MIRROR_H

#include <stdint.h>

#include <rte_ring.h>
#include <rte_seqlock.h>

#include "hang_watch.h"
#include "mirror_clock.h"
#include "producer_options.h"

#include <commtap/dataplane.h>
#include <commtap/snapshot.h>

#define MIRROR_WORKERS_DIST 64
#define MIRROR_BURST	    64
#define MIRROR_BENCH_QUEUES 8 /* --bench-ring's captures, a queue each */

struct mirror_opts {
	uint32_t port;
	const char *json_path; /* the final report also here */
	/* --memory is per engine; --interval 0: only a final report */
	struct ct_producer_options common;
	double exit_on_idle_s;	  /* stop after this long without a packet; 0 never */
	double duration_s;	  /* stop after this long; 0 never */
	uint64_t dedup_window_ns; /* 0: no de-duplication */
	int bare;		  /* receive and free, no engine (benchmark baseline) */
	int bench;		  /* print rates and engine cost at the end */
	int no_rss;		  /* force the software distribution mode */
	int no_hw_timestamp;	  /* TSC even where the NIC timestamps RX */
	int wait_on_full;	  /* the distributor waits for room in a full ring (replays) */
	uint32_t mbufs;		  /* mbufs in the pool; 0: POOL_MBUFS */
	uint32_t mbuf_data;	  /* frame bytes an mbuf holds; 0: a jumbo frame */
	const char *bench_ring;	  /* captures fed through a ring PMD (mirror_bench_ring.c) */
};

/* How a worker gets its packets. */
enum mirror_role {
	ROLE_QUEUE,	  /* polls an RX queue and feeds its engine */
	ROLE_DISTRIBUTOR, /* polls the single RX queue, hashes flows to the workers' rings */
	ROLE_RING,	  /* feeds its engine from its ring */
};

#define DEDUP_SLOTS 65536

struct mirror_worker {
	unsigned lcore;
	enum mirror_role role;
	uint16_t queue;
	struct rte_ring *ring;	  /* ROLE_RING: filled by the distributor */
	struct ct_engine *engine; /* NULL for the distributor and in bare mode */
	/* written by this worker only */
	volatile uint64_t rx_packets, rx_bytes;
	volatile uint64_t ring_drops; /* distributor: packets a full ring refused */
	volatile uint64_t duplicates;
	volatile uint64_t last_rx_tsc;
	volatile uint64_t last_poll_tsc;    /* idle is judged by the worker's own polls */
	volatile uint64_t last_starved_tsc; /* an empty poll with no mbuf free: not idle */
	uint64_t feed_cycles, fed;	    /* --bench: cycles inside ct_engine_feed */
	uint64_t first_rx_tsc;
	uint64_t cpu_ns; /* the lcore's thread CPU time in its polling loop */
	/* snapshot handshake: the main lcore bumps snap_req, the worker answers */
	volatile uint32_t snap_req, snap_done;
	volatile int finish; /* with a request: end the engine's input (final report) */
	struct ct_snapshot snap;
	uint64_t *dedup; /* DEDUP_SLOTS of (hash << 32 | coarse time), or NULL */
	size_t engine_bytes;
} __attribute__((aligned(64)));

int mirror_parse_opts(int argc, char **argv, struct mirror_opts *o);

/*
 * --bench-ring (mirror_bench_ring.c): the captures in FILES (comma
 * separated, one queue each) as mbufs built once, a port of rings that
 * carries them (*port) and a generator to run on an lcore of its own
 * until *quit. Errors are reported on stderr; negative errno.
 */
struct mirror_bench_ring;
int mirror_bench_ring_create(const char *files, unsigned mbuf_data, int socket,
			     volatile const int *quit, uint16_t *port,
			     struct mirror_bench_ring **out);
unsigned mirror_bench_ring_queues(const struct mirror_bench_ring *b);
int mirror_bench_ring_run(void *arg); /* the generator's lcore function */
uint64_t mirror_bench_ring_sent(const struct mirror_bench_ring *b);
void mirror_bench_ring_free(struct mirror_bench_ring *b);

/* Symmetric hash of the analysed (inner) frame's IP address pair (0 for non-IP frames). */
uint32_t mirror_flow_hash(const uint8_t *data, uint32_t len);
/* 64-bit digest of the analysed (inner) IP header and what follows, TTL/checksum left out. */
uint64_t mirror_dedup_digest(const uint8_t *data, uint32_t len);

struct ct_knowledge;
struct ct_report_sink;

/* The running app, shared by its files. */
struct mirror {
	struct mirror_opts o;
	uint16_t port;
	char driver[64];
	/* "rss", "queue per worker" (net_pcap), "software distribution", "single queue" */
	const char *mode;
	unsigned n_workers;
	uint16_t n_queues;
	int started; /* the port: stop it at the end */
	struct mirror_worker *workers;
	struct rte_mempool *pool;
	int ts_dynfield; /* offset of the RX timestamp, or -1 */
	uint64_t ts_dynflag;
	uint64_t ts_mult; /* dynfield units to ns (net_pcap) */
	/* a NIC's RX timestamps: ticks of its clock, converted by nic_line */
	int nic_clock;
	struct mirror_clock_sample nic_first; /* the slope's start */
	rte_seqlock_t nic_lock;		      /* the main lcore rewrites nic_line */
	struct mirror_clock_line nic_line;
	uint64_t nic_next_tsc; /* the next recalibration */
	uint64_t nic_clock_errors;
	char clock_note[160];
	uint64_t tsc_hz, tsc_base, ns_base;
	const char *clock;
	/* report state */
	struct ct_knowledge *know;
	struct ct_report_sink *sink;
	uint64_t prev_packets, prev_bytes, prev_tsc, start_tsc;
	struct hang_watch watch; /* set by each report's analysis */
};

/*
 * mirror_report.c: merge the workers' snapshots (already taken) and hand a
 * report to the sink. stopping: SIGINT/SIGTERM asked the mirror to stop (the
 * final report then meets a deadline); mirror_main.c owns that flag.
 */
int mirror_put_report(struct mirror *m, int final, int stopping);
void mirror_telemetry_register(struct mirror *m);

#endif
