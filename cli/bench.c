// SPDX-License-Identifier: MIT
/*
 * commtap bench: the engine's cost per packet on a synthetic mirror stream.
 *
 * An in-memory stream of header-truncated RoCEv2 frames (what a SPAN
 * session copies: the first 128 bytes, the wire length intact) of NCCL-like
 * RDMA WRITE traffic at a 4 KiB path MTU over many QPs between 8 hosts,
 * with coalesced ACKs on the reverse flows, is fed to the engine (parse ->
 * flow table -> message assembly -> bursts) in bursts of 32, alternating
 * with a baseline loop that only reads the header fields the parser needs.
 *
 * The stream is replayed several times; before each pass its PSNs and
 * timestamps move on by what one pass used, so every pass continues the
 * previous one (no replayed PSNs, time never goes back) and the engine
 * does the same work in each. Medians of several runs in one process.
 */
#include "commands.h"

#include <commtap/byteorder.h>
#include <commtap/classify.h>
#include <commtap/dataplane.h>
#include <commtap/flow_set.h>
#include <commtap/frame_build.h>
#include <commtap/params.h>
#include <commtap/periodicity.h>
#include <commtap/roce_opcode.h>

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SNAP		 128  /* bytes a mirror session copies */
#define MTU		 4096 /* RoCE path MTU: payload bytes per full packet */
#define MSG_PACKETS	 32   /* a 128 KiB WRITE (NCCL's p2p chunk) */
#define SMALL_EVERY	 8    /* every 8th message is one WRITE_ONLY_WITH_IMM */
#define SMALL_BYTES	 2048
#define ACK_EVERY	 16 /* the receiver coalesces ACKs: one per 16 packets, and at the end */
#define HOSTS		 8
#define FEED_BURST	 32
#define LINE_RATE_PPS	 12000000ull /* 400 GbE of 4 KiB RoCE frames */
#define BASE_TS_NS	 (1700000000ull * 1000000000ull)
#define MAX_RUNS	 100
#define BURST_RING_SLOTS (1u << 18)
#define MAX_QPS		 1000000
#define MAX_PACKETS	 100000000ull
#define DEFAULT_PACKETS	 2000000
#define DEFAULT_QPS	 10000
#define DEFAULT_ACTIVE	 64
#define DEFAULT_RUNS	 5

/* --slow-path: 100,000 flows (--flows) between 1,000 hosts (one per 100
 * flows: a larger fabric, not more flows per host), 20 bursts each, 50 ms
 * apart */
#define SLOW_FLOWS     100000
#define SLOW_FLOWS_MAX 2000000 /* 40 M bursts: about 6 GB for one report */
#define SLOW_FLOWS_PER_HOST 100
/*
 * The slow path's anchor, timed in the same run: the engine bench's header
 * reads over 500,000 packets. Its fastest day on the project's VM was
 * 6.1 ns a packet (22.7 on a slow one): "1 s on a quiet run" is 164 M
 * header reads.
 */
#define SLOW_ANCHOR_PACKETS 500000
#define SLOW_ANCHOR_FAST_NS 6.1
#define SLOW_BURSTS    20
#define SLOW_PERIOD_NS 50000000ull

/* Where the fields sit in the synthetic frames (untagged Ethernet, IPv4, no options). */
#define IP_OFF	14
#define UDP_OFF 34
#define BTH_OFF 42
#define PSN_OFF (BTH_OFF + 9)

/* The goals the fast path is measured against. */
#define GOAL_NS		 25.0 /* per packet: 40 Mpps on one core */
#define GOAL_RATIO	 3.0
#define GOAL_HOT_BYTES	 128
#define GOAL_FLOW_BYTES	 512
#define GOAL_MILLION_MIB 512.0

#define MAX_PCAPS 8

struct bench_opts {
	size_t packets;
	unsigned qps;
	unsigned active; /* QPs sending at once */
	unsigned runs;
	int slow_path;
	unsigned flows; /* --slow-path's flows */
	int cpu_time;		     /* time with the thread's CPU clock */
	const char *pcap[MAX_PCAPS]; /* --pcap: write the stream here instead of timing */
	unsigned n_pcaps;
};

/* The frames, and what it takes to make the next pass continue this one. */
struct stream {
	uint8_t *frames; /* SNAP bytes each */
	struct ct_packet *pkts;
	uint32_t *pkt_qp;   /* per packet: the QP whose PSN space it is in */
	uint32_t *psn_step; /* per QP: PSNs one pass uses */
	size_t n, acks, small;
	uint64_t span_ns; /* packet time one pass covers */
};

/* A QP sending a message: the NIC round-robins packets between these. */
struct sender {
	unsigned qp;
	unsigned k;	  /* packets of the message sent */
	unsigned len;	  /* packets in the message */
	unsigned unacked; /* packets since the last ACK */
};

struct qp_state {
	uint32_t psn;  /* next PSN */
	uint32_t msgs; /* messages started */
	uint8_t busy;  /* a sender holds it */
};

/* One packet's headers, as roce_frame() writes them. */
struct roce_hdr {
	unsigned src, dst; /* hosts */
	uint32_t dqpn;
	uint16_t sport;
	uint8_t opcode;
	uint8_t ackreq;
	uint32_t psn;
	uint32_t payload;
	uint32_t dma_len; /* RETH */
	uint32_t msn;	  /* AETH */
};

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

/* Host h's address: 198.18.0.(h + 1), from the benchmarking range 198.18.0.0/15. */
static void put_host_ip(uint8_t *p, unsigned h)
{
	p[0] = 198;
	p[1] = 18;
	p[2] = 0;
	p[3] = (uint8_t)(h + 1);
}

/*
 * Distinct QPNs spread over the 24-bit space: an odd multiplier is a
 * bijection modulo 2^23, and the offset keeps clear of QP0 and QP1.
 */
static uint32_t qpn_of(uint32_t x)
{
	return 0x100 + (x * 0x9e3779u & 0x7fffff);
}

/* QP q runs from one host to another, never to itself. */
static unsigned qp_src(unsigned q)
{
	return q % HOSTS;
}

static unsigned qp_dst(unsigned q)
{
	return (qp_src(q) + 1 + (q / HOSTS) % (HOSTS - 1)) % HOSTS;
}

/*
 * Write the first SNAP bytes of a RoCEv2 frame (Ethernet, IPv4, UDP, BTH
 * and the extension headers the opcode carries) with lengths that count
 * the whole payload and the ICRC; returns the frame's wire length.
 */
static uint32_t roce_frame(uint8_t *f, const struct roce_hdr *h)
{
	struct ct_roce_frame r = {
		.ip = {.tos = 26 << 2 | 2}, /* DSCP 26, ECT(0) */
		.sport = h->sport,
		.bth = {
			.opcode = h->opcode,
			/* SE with immediate data */
			.se = (ct_opcode_table[h->opcode].ext & CT_EXT_IMMDT) != 0,
			.ackreq = h->ackreq,
			.dqpn = h->dqpn,
			.psn = h->psn,
			.va = 0x7f00ull << 32 | (uint32_t)(h->psn << 12),
			.rkey = 0x1234,
			.dma_len = h->dma_len,
			.imm = h->dma_len, /* NCCL puts the size in the immediate */
			.syndrome = 0x1f,  /* ACK, credits not limited */
			.msn = h->msn,
		},
		.payload = h->payload,
	};

	/* locally administered MACs naming the hosts */
	r.ip.dst_mac[0] = r.ip.src_mac[0] = 0x02;
	r.ip.dst_mac[5] = (uint8_t)h->dst;
	r.ip.src_mac[5] = (uint8_t)h->src;
	put_host_ip(r.ip.src, h->src);
	put_host_ip(r.ip.dst, h->dst);
	memset(f, 0, SNAP);
	return (uint32_t)ct_roce_frame_write(f, SNAP, &r, NULL);
}

/* Store a frame at s->pkts[i] as a mirror copies it: at most SNAP bytes. */
static void stream_put(struct stream *s, size_t i, unsigned qp, const struct roce_hdr *h)
{
	uint8_t *f = s->frames + i * SNAP;
	uint32_t wire = roce_frame(f, h);

	s->pkts[i].data = f;
	s->pkts[i].wire_len = wire;
	s->pkts[i].cap_len = wire < SNAP ? wire : SNAP;
	s->pkts[i].ts_ns = BASE_TS_NS + i * 1000000000ull / LINE_RATE_PPS;
	s->pkt_qp[i] = qp;
}

/* The opcode of a sender's next packet. */
static uint8_t sender_opcode(const struct sender *snd)
{
	if (snd->len == 1)
		return CT_TR_RC | CT_OP_WRITE_ONLY_IMM;
	if (snd->k == 0)
		return CT_TR_RC | CT_OP_WRITE_FIRST;
	if (snd->k + 1 < snd->len)
		return CT_TR_RC | CT_OP_WRITE_MIDDLE;
	return CT_TR_RC | CT_OP_WRITE_LAST_IMM;
}

/*
 * The next packet of a sender's message at s->pkts[i], and the receiver's
 * ACK after it when one is due. Returns the packets written (1 or 2).
 */
static unsigned sender_emit(struct stream *s, size_t i, struct sender *snd, struct qp_state *qp)
{
	struct qp_state *st = &qp[snd->qp];
	int last = snd->k + 1 == snd->len;
	struct roce_hdr h = {
		.src = qp_src(snd->qp),
		.dst = qp_dst(snd->qp),
		.dqpn = qpn_of(2 * snd->qp),
		.sport = (uint16_t)(0xc000 | (qpn_of(2 * snd->qp + 1) & 0x3fff)),
		.opcode = sender_opcode(snd),
		.ackreq = (uint8_t)(last || snd->unacked + 1 == ACK_EVERY),
		.psn = st->psn & 0xffffff,
		.payload = snd->len == 1 ? SMALL_BYTES : MTU,
		.dma_len = snd->len == 1 ? SMALL_BYTES : snd->len * MTU,
	};

	stream_put(s, i, snd->qp, &h);
	st->psn++;
	snd->k++;
	snd->unacked++;
	if (!h.ackreq || i + 1 == s->n)
		return 1;
	/* the ACK travels back to the sender's QP */
	h.src = qp_dst(snd->qp);
	h.dst = qp_src(snd->qp);
	h.dqpn = qpn_of(2 * snd->qp + 1);
	h.sport = (uint16_t)(0xc000 | (qpn_of(2 * snd->qp) & 0x3fff));
	h.opcode = CT_TR_RC | CT_OP_ACK;
	h.ackreq = 0;
	h.payload = 0;
	h.msn = st->msgs & 0xffffff;
	stream_put(s, i + 1, snd->qp, &h);
	s->acks++;
	snd->unacked = 0;
	return 2;
}

/*
 * Give a sender the next idle QP after *next (cyclically) and start a
 * message: every SMALL_EVERY-th message started is a small one.
 */
static void sender_start(struct sender *snd, struct qp_state *qp, unsigned qps, unsigned *next,
			 size_t *started)
{
	while (qp[*next].busy)
		*next = (*next + 1) % qps;
	snd->qp = *next;
	*next = (*next + 1) % qps;
	qp[snd->qp].busy = 1;
	qp[snd->qp].msgs++;
	snd->len = (*started)++ % SMALL_EVERY == SMALL_EVERY - 1 ? 1 : MSG_PACKETS;
	snd->k = 0;
	snd->unacked = 0;
}

/*
 * The stream: `active` QPs send at once and the NIC takes one packet from
 * each in turn; a QP whose message is done makes way for the next idle one,
 * so over the stream every QP sends.
 */
static int stream_fill(struct stream *s, const struct bench_opts *o)
{
	unsigned active = o->active < o->qps ? o->active : o->qps;
	struct sender *snd = calloc(active, sizeof(*snd));
	struct qp_state *qp = calloc(o->qps, sizeof(*qp));
	unsigned next = 0;
	size_t i = 0, started = 0;

	if (!snd || !qp) {
		free(snd);
		free(qp);
		return -ENOMEM;
	}
	for (unsigned j = 0; j < active; j++)
		sender_start(&snd[j], qp, o->qps, &next, &started);
	while (i < s->n) {
		for (unsigned j = 0; j < active && i < s->n; j++) {
			s->small += snd[j].len == 1;
			i += sender_emit(s, i, &snd[j], qp);
			if (snd[j].k < snd[j].len)
				continue;
			qp[snd[j].qp].busy = 0;
			sender_start(&snd[j], qp, o->qps, &next, &started);
		}
	}
	for (unsigned q = 0; q < o->qps; q++)
		s->psn_step[q] = qp[q].psn;
	s->span_ns = s->n * 1000000000ull / LINE_RATE_PPS;
	free(snd);
	free(qp);
	return 0;
}

static void stream_free(struct stream *s)
{
	free(s->frames);
	free(s->pkts);
	free(s->pkt_qp);
	free(s->psn_step);
}

static int stream_build(struct stream *s, const struct bench_opts *o)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->n = o->packets;
	s->frames = malloc(s->n * SNAP);
	s->pkts = malloc(s->n * sizeof(*s->pkts));
	s->pkt_qp = malloc(s->n * sizeof(*s->pkt_qp));
	s->psn_step = malloc(o->qps * sizeof(*s->psn_step));
	if (!s->frames || !s->pkts || !s->pkt_qp || !s->psn_step) {
		stream_free(s);
		return -ENOMEM;
	}
	err = stream_fill(s, o);
	if (err)
		stream_free(s);
	return err;
}

/* Move every PSN and timestamp on by one pass, so the next pass continues this one. */
static void stream_next_pass(struct stream *s)
{
	for (size_t i = 0; i < s->n; i++) {
		uint8_t *psn = s->frames + i * SNAP + PSN_OFF;

		put24(psn, (ct_get24(psn) + s->psn_step[s->pkt_qp[i]]) & 0xffffff);
		s->pkts[i].ts_ns += s->span_ns;
	}
}

/* --cpu-time: the thread's CPU clock, which leaves out time the scheduler gave to others */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(bench_clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * The baseline: read what the parser must read of every frame (EtherType,
 * IP version, TOS, length and addresses, UDP port and length, BTH opcode,
 * QPN and PSN) and nothing more. The sum keeps the loads alive.
 */
static __attribute__((noinline)) uint64_t read_headers(const struct stream *s)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < s->n; i++) {
		const uint8_t *f = s->pkts[i].data;

		sum += ct_get16(f + 12) + ct_get16(f + IP_OFF) + ct_get16(f + IP_OFF + 2) +
		       ct_get32(f + IP_OFF + 12) + ct_get32(f + IP_OFF + 16) +
		       ct_get16(f + UDP_OFF + 2) + ct_get16(f + UDP_OFF + 4) + f[BTH_OFF] +
		       (ct_get32(f + BTH_OFF + 4) & 0xffffff) +
		       (ct_get32(f + BTH_OFF + 8) & 0xffffff) + s->pkts[i].wire_len;
	}
	return sum;
}

/* The parser alone: what of the engine's cost is taking the headers apart. */
static __attribute__((noinline)) uint64_t parse_all(const struct stream *s)
{
	uint64_t sum = 0;
	struct ct_pkt p;

	for (size_t i = 0; i < s->n; i++) {
		const struct ct_packet *in = &s->pkts[i];

		sum += ct_parse(in->data, in->cap_len, in->wire_len, &p) + p.wire_len;
	}
	return sum;
}

static __attribute__((noinline)) void feed_all(struct ct_engine *e, const struct stream *s)
{
	for (size_t i = 0; i < s->n; i += FEED_BURST)
		ct_engine_feed(e, &s->pkts[i],
			       (unsigned)(s->n - i < FEED_BURST ? s->n - i : FEED_BURST));
}

static void count_burst(const struct ct_flow_burst *b, void *ctx)
{
	(void)b;
	++*(uint64_t *)ctx;
}

static void count_flow(const struct ct_flow *f, void *ctx)
{
	(void)f;
	++*(uint64_t *)ctx;
}

/* What the engine made of the stream: proof that it did the work being timed. */
struct engine_tally {
	uint64_t messages, partial, retransmits, psn_gaps;
};

static void tally_flow(struct ct_flow *f, void *ctx)
{
	struct engine_tally *t = ctx;

	t->messages += f->cold.messages;
	t->partial += f->cold.partial_messages;
	t->retransmits += f->cold.retransmits;
	t->psn_gaps += f->cold.psn_gaps;
}

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v. */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), double_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The smallest budget whose table holds n flows (the capacity grows with the budget). */
static size_t budget_for_flows(uint32_t n)
{
	size_t lo = 0, hi = (size_t)n * 2 * ct_flow_table_bytes_per_flow() + (1 << 20);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ct_flow_table_capacity_for(mid) >= n)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Timings of each run, ns per packet. */
struct bench_times {
	double base[MAX_RUNS], parse[MAX_RUNS], eng[MAX_RUNS];
};

/*
 * One engine, warmed by a first pass (its flows exist, as in a steady
 * state); then per run: the stream moves on a pass, the baseline reads it,
 * the parser alone parses it, the engine is fed it. Finished bursts are
 * drained between passes, as the slow path would.
 */
static int measure(struct stream *s, const struct ct_engine_config *cfg, unsigned runs,
		   struct bench_times *t, struct ct_engine_counters *c, struct engine_tally *tally,
		   uint64_t *sink)
{
	struct ct_engine *e;
	uint64_t bursts = 0, evicted = 0;
	int err = ct_engine_create(cfg, &e);

	if (err)
		return err;
	feed_all(e, s);
	ct_engine_drain_bursts(e, count_burst, &bursts);
	for (unsigned r = 0; r < runs; r++) {
		double t0, t1, t2, t3;

		stream_next_pass(s);
		t0 = now_s();
		*sink += read_headers(s);
		t1 = now_s();
		*sink += parse_all(s);
		t2 = now_s();
		feed_all(e, s);
		t3 = now_s();
		t->base[r] = (t1 - t0) / (double)s->n * 1e9;
		t->parse[r] = (t2 - t1) / (double)s->n * 1e9;
		t->eng[r] = (t3 - t2) / (double)s->n * 1e9;
		ct_engine_drain_bursts(e, count_burst, &bursts);
		ct_engine_drain_evicted(e, count_flow, &evicted);
	}
	ct_engine_get_counters(e, c);
	memset(tally, 0, sizeof(*tally));
	ct_engine_foreach_flow(e, tally_flow, tally);
	ct_engine_destroy(e);
	return 0;
}

/*
 * --pcap: one pass of the stream as nanosecond captures. With several files
 * each QP goes whole (requests and ACKs) to the file with the fewest
 * packets so far, QPs in turn: what symmetric RSS would give each queue,
 * evened out (commtap-mirror's bench-mirror.sh replays them with net_pcap,
 * one rx_pcap per worker).
 */
static int write_pcaps(const struct stream *s, const struct bench_opts *o)
{
	pcap_dumper_t *out[MAX_PCAPS] = {0};
	pcap_t *dead =
		pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	size_t *qp_packets = calloc(o->qps, sizeof(*qp_packets)), file_packets[MAX_PCAPS] = {0};
	uint8_t *qp_file = calloc(o->qps, 1);
	int err = 0;

	if (!dead || !qp_packets || !qp_file) {
		free(qp_packets);
		free(qp_file);
		if (dead)
			pcap_close(dead);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		qp_packets[s->pkt_qp[i]]++;
	for (unsigned q = 0; q < o->qps; q++) {
		unsigned best = 0;

		for (unsigned f = 1; f < o->n_pcaps; f++)
			if (file_packets[f] < file_packets[best])
				best = f;
		qp_file[q] = (uint8_t)best;
		file_packets[best] += qp_packets[q];
	}
	free(qp_packets);
	for (unsigned f = 0; f < o->n_pcaps && !err; f++) {
		out[f] = pcap_dump_open(dead, o->pcap[f]);
		if (!out[f]) {
			fprintf(stderr, "commtap bench: %s\n", pcap_geterr(dead));
			err = -EIO;
		}
	}
	for (size_t i = 0; i < s->n && !err; i++) {
		const struct ct_packet *p = &s->pkts[i];
		struct pcap_pkthdr hdr;

		/* a nanosecond-precision dumper takes nanoseconds in tv_usec */
		hdr.ts.tv_sec = (time_t)(p->ts_ns / 1000000000ull);
		hdr.ts.tv_usec = (suseconds_t)(p->ts_ns % 1000000000ull);
		hdr.caplen = p->cap_len;
		hdr.len = p->wire_len;
		pcap_dump((u_char *)out[qp_file[s->pkt_qp[i]]], &hdr, p->data);
	}
	for (unsigned f = 0; f < o->n_pcaps; f++) {
		if (out[f] && pcap_dump_flush(out[f]) && !err) {
			fprintf(stderr, "commtap bench: %s: write failed\n", o->pcap[f]);
			err = -EIO;
		}
		if (out[f])
			pcap_dump_close(out[f]);
	}
	pcap_close(dead);
	free(qp_file);
	return err;
}

static int add_pcap(const char *text, void *value, char *err, size_t errlen)
{
	struct bench_opts *o =
		(struct bench_opts *)((char *)value - offsetof(struct bench_opts, pcap));

	if (o->n_pcaps == MAX_PCAPS) {
		snprintf(err, errlen, "--pcap: at most %d files", MAX_PCAPS);
		return -EINVAL;
	}
	o->pcap[o->n_pcaps++] = text;
	return 0;
}

static const struct ct_param bench_params[] = {
	{.name = "packets",
	 .type = CT_PARAM_SIZE,
	 .arg = "N",
	 .offset = offsetof(struct bench_opts, packets),
	 .help = "packets per run",
	 .min = 1,
	 .max = MAX_PACKETS,
	 .show_default = 1},
	{.name = "qps",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct bench_opts, qps),
	 .help = "queue pairs in the stream",
	 .min = 1,
	 .max = MAX_QPS,
	 .show_default = 1},
	{.name = "active",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct bench_opts, active),
	 .help = "QPs sending at once",
	 .min = 1,
	 .max = MAX_QPS,
	 .show_default = 1},
	{.name = "runs",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct bench_opts, runs),
	 .help = "timed runs (the median is reported)",
	 .min = 1,
	 .max = MAX_RUNS,
	 .show_default = 1},
	{.name = "slow-path",
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct bench_opts, slow_path),
	 .help = "the per-report work (sort, pairing, periodicity)\n"
		 "for 100,000 flows of 20 bursts each"},
	{.name = "flows",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct bench_opts, flows),
	 .help = "--slow-path's flows (one host per 100)",
	 .min = 1000,
	 .max = SLOW_FLOWS_MAX,
	 .show_default = 1},
	{.name = "cpu-time",
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct bench_opts, cpu_time),
	 .help = "time with the thread's CPU clock instead of the\n"
		 "monotonic clock (leaves out the time other processes\n"
		 "ran: for a loaded machine)"},
	{.name = "pcap",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "FILE",
	 .offset = offsetof(struct bench_opts, pcap),
	 .parse = add_pcap,
	 .help = "write one pass of the stream as a capture instead\n"
		 "of timing; given up to 8 times, each QP (its requests\n"
		 "and ACKs) goes to one file, the files about even"},
	CT_PARAM_TABLE_END,
};

const struct ct_app_args bench_app_args = {
	.prog = "commtap bench",
	.usage = "usage: commtap bench [options]\n"
		 "  The engine's cost per packet on synthetic RoCEv2 mirror traffic, against a\n"
		 "  loop that only reads the headers.\n",
};

const struct ct_param *const bench_options[] = {bench_params, NULL};

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	const struct ct_param_set set = {bench_params, o};
	int first, rc;

	*o = (struct bench_opts){.packets = DEFAULT_PACKETS,
				 .qps = DEFAULT_QPS,
				 .active = DEFAULT_ACTIVE,
				 .runs = DEFAULT_RUNS,
				 .flows = SLOW_FLOWS};
	rc = ct_app_parse(&bench_app_args, &set, 1, argc, argv, &first);
	if (rc == 1)
		exit(CT_EXIT_OK);
	if (rc)
		return rc;
	if (o->cpu_time)
		bench_clock = CLOCK_THREAD_CPUTIME_ID;
	return 0;
}

static const char *met(int ok)
{
	return ok ? "met" : "NOT met";
}

static void print_timing(const char *what, double *v, unsigned runs)
{
	double mid = median(v, runs); /* sorts v */

	printf("  %-26s %8.2f ns/packet %8.1f Mpps   (min %.2f, max %.2f ns; %.1f-%.1f Mpps)\n",
	       what, mid, 1e3 / mid, v[0], v[runs - 1], 1e3 / v[runs - 1], 1e3 / v[0]);
}

static void print_report(const struct bench_opts *o, const struct stream *s,
			 const struct ct_engine_config *cfg, struct bench_times *t,
			 const struct ct_engine_counters *c, const struct engine_tally *tally)
{
	double base = median(t->base, o->runs), eng = median(t->eng, o->runs);
	double million_mib = (double)budget_for_flows(1000000) / (1 << 20);
	size_t hot = offsetof(struct ct_flow, cold);
	unsigned active = o->active < o->qps ? o->active : o->qps;

	printf("commtap bench: %zu packets per pass (%zu ACKs, %zu WRITE_ONLY_WITH_IMM), %u QPs "
	       "between %d hosts, %u sending at once, packet by packet\n",
	       s->n, s->acks, s->small, o->qps, HOSTS, active);
	printf("  %d-byte copies of 4 KiB-MTU RDMA WRITEs of %d KiB, an ACK per %d packets, "
	       "%.0f Mpps packet time; bursts of %d, %u runs\n",
	       SNAP, MSG_PACKETS * MTU / 1024, ACK_EVERY, LINE_RATE_PPS / 1e6, FEED_BURST, o->runs);
	print_timing("baseline (read headers):", t->base, o->runs);
	print_timing("parser alone (ct_parse):", t->parse, o->runs);
	print_timing("engine (parse+flow+msg):", t->eng, o->runs);
	printf("  engine / baseline: %.2fx (medians)\n", eng / base);
	printf("  table: %.1f MiB budget, %u flows capacity, %u flows live at the end; "
	       "%llu evicted; idle timeout %.0f s\n",
	       (double)cfg->memory_budget / (1 << 20), c->table.capacity, c->table.live,
	       (unsigned long long)(c->table.evicted_idle + c->table.evicted_full),
	       (double)cfg->idle_timeout_ns / 1e9);
	printf("  work done: %llu packets, %llu messages, %llu partial, %llu retransmits, "
	       "%llu PSN gaps, %llu bursts (%llu dropped), %llu malformed\n",
	       (unsigned long long)c->packets, (unsigned long long)tally->messages,
	       (unsigned long long)tally->partial, (unsigned long long)tally->retransmits,
	       (unsigned long long)tally->psn_gaps, (unsigned long long)c->bursts,
	       (unsigned long long)c->bursts_dropped, (unsigned long long)c->malformed);
	printf("  flow record: sizeof(struct ct_flow) %zu B, per-packet part %zu B "
	       "(offsetof cold), %zu B per flow charged by the table\n",
	       sizeof(struct ct_flow), hot, ct_flow_table_bytes_per_flow());
	printf("  1,000,000 flows: %.1f MiB budget\n", million_mib);
	printf("goals:\n");
	printf("  <= %.0f ns/packet (%.0f Mpps) on one core: %5.1f ns  %s\n", GOAL_NS,
	       1e3 / GOAL_NS, eng, met(eng <= GOAL_NS));
	printf("  engine <= %.0fx baseline:            %5.2fx      %s\n", GOAL_RATIO, eng / base,
	       met(eng / base <= GOAL_RATIO));
	printf("  <= %d B of flow state per packet:  %5zu B     %s\n", GOAL_HOT_BYTES, hot,
	       met(hot <= GOAL_HOT_BYTES));
	printf("  <= %d B per flow record:           %5zu B     %s (%zu B with its index share)\n",
	       GOAL_FLOW_BYTES, sizeof(struct ct_flow),
	       met(sizeof(struct ct_flow) <= GOAL_FLOW_BYTES), ct_flow_table_bytes_per_flow());
	printf("  1M flows < %.0f MiB:                %5.1f MiB  %s\n", GOAL_MILLION_MIB,
	       million_mib, met(million_mib < GOAL_MILLION_MIB));
}

static size_t count_class(const struct ct_classification *c, enum ct_class cls)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		n += c->flows[i].cls == cls;
	return n;
}

/*
 * Every flow labelled (as an agent would), then classified by the labels:
 * the time it takes. With per, the operations are read from the wire too
 * (as analyze does); without, the label lookup alone: the anchor the
 * signatures' time is given against.
 */
static int classify_by_labels(const struct ct_flow_set *set, const struct ct_periodicity *per,
			      double *seconds)
{
	struct ct_labels labels = {calloc(set->count + 1, sizeof(struct ct_label)), set->count};
	struct ct_classification cls;
	double t0;
	int err;

	if (!labels.l)
		return -ENOMEM;
	for (size_t i = 0; i < set->count; i++) {
		labels.l[i].key = set->flows[i].key;
		labels.l[i].cls = (uint8_t)(i % CT_CLASS_COUNT);
	}
	t0 = now_s();
	ct_labels_sort(&labels);
	err = ct_classify(set, per, &labels, NULL, &cls);
	*seconds = now_s() - t0;
	if (!err)
		ct_classification_free(&cls);
	free(labels.l);
	return err;
}

/* `flows` flows between flows / 100 hosts, each on once per 50 ms iteration (2% jitter). */
static int slow_path_bench(unsigned runs, uint32_t flows)
{
	const uint32_t hosts = flows / SLOW_FLOWS_PER_HOST;
	const struct bench_opts anchor_opts = {
		.packets = SLOW_ANCHOR_PACKETS, .qps = DEFAULT_QPS, .active = DEFAULT_ACTIVE};
	double t[100], tc[100], tl[100], tk[100], tc_run[100], ta[100], t_reads[100];
	struct stream anchor;
	volatile uint64_t sink = 0;
	int err = stream_build(&anchor, &anchor_opts);

	for (unsigned r = 0; r < runs && !err; r++) {
		struct ct_flow_set set;
		struct ct_burst_log log = {0};
		struct ct_periodicity per;
		uint64_t seed = 12345;
		double t0, t1;

		ct_flow_set_init(&set);
		for (uint32_t f = 0; f < flows && !err; f++) {
			struct ct_flow_summary sum;
			unsigned src = f % hosts, dst = (src + 1 + f / hosts) % hosts;

			memset(&sum, 0, sizeof(sum));
			sum.key.src.b[10] = sum.key.src.b[11] = sum.key.dst.b[10] =
				sum.key.dst.b[11] = 0xff;
			sum.key.src.b[12] = sum.key.dst.b[12] = 198;
			sum.key.src.b[13] = sum.key.dst.b[13] = 18;
			sum.key.src.b[14] = (uint8_t)(src >> 8);
			sum.key.src.b[15] = (uint8_t)src;
			sum.key.dst.b[14] = (uint8_t)(dst >> 8);
			sum.key.dst.b[15] = (uint8_t)dst;
			sum.key.id = 0x100 + f;
			sum.key.transport = CT_TRANSPORT_ROCE;
			sum.packets = SLOW_BURSTS * 32;
			sum.bytes = sum.packets * 4200;
			sum.first_ts = 1;
			sum.last_ts = SLOW_BURSTS * SLOW_PERIOD_NS;
			err = ct_flow_set_add_summary(&set, &sum);
			for (unsigned k = 0; k < SLOW_BURSTS && !err; k++) {
				struct ct_flow_burst b = {.key = sum.key};

				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				b.start = k * SLOW_PERIOD_NS + (f % 64) * 100000 +
					  (seed >> 44) % 1000000;
				b.end = b.start + 10000;
				b.bytes = 32 * 4200;
				b.messages = 1;
				b.packets = 32;
				err = ct_burst_log_add(&log, &b);
			}
		}
		/* the anchor in the same run: the engine bench's header reads */
		stream_next_pass(&anchor);
		t0 = now_s();
		sink += read_headers(&anchor);
		ta[r] = (now_s() - t0) / (double)anchor.n * 1e9;
		t0 = now_s();
		ct_flow_set_sort(&set);
		ct_flow_set_pair(&set, NULL, 0);
		err = err ?: ct_periodicity_compute(&set, &log, 0.001, &per);
		t1 = now_s();
		t[r] = t1 - t0;
		t_reads[r] = t[r] / (ta[r] * 1e-9) / 1e6;
		if (!err) {
			struct ct_classification cls;

			if (!r)
				printf("commtap bench --slow-path: %u flows, %zu bursts, %u hosts: "
				       "job period "
				       "%.6f s (%s)\n",
				       flows, log.n, hosts, per.job.period_s,
				       per.job.periodic ? "periodic" : per.job.reason);
			t0 = now_s();
			err = ct_classify(&set, &per, NULL, NULL, &cls);
			tc[r] = now_s() - t0;
			if (!err) {
				if (!r)
					printf("  signatures: %zu flows DP, layout %u hosts\n",
					       count_class(&cls, CT_CLASS_DP), cls.layout.hosts);
				ct_classification_free(&cls);
			}
			err = err ?: classify_by_labels(&set, &per, &tl[r]);
			err = err ?: classify_by_labels(&set, NULL, &tk[r]);
			ct_periodicity_free(&per);
		}
		ct_burst_log_free(&log);
		ct_flow_set_free(&set);
	}
	stream_free(&anchor);
	if (err) {
		fprintf(stderr, "commtap bench: slow path: %s\n", strerror(-err));
		return CT_EXIT_ERROR;
	}
	double mid = median(t, runs); /* sorts t */

	printf("  sort + pairing + periodicity: %.3f s median of %u (min %.3f, max %.3f); goal < 1 "
	       "s\n",
	       mid, runs, t[0], t[runs - 1]);
	mid = median(ta, runs);
	printf("  anchor, header reads:         %.2f ns/packet median (min %.2f, max %.2f), "
	       "%zu packets a run, sum %llu\n",
	       mid, ta[0], ta[runs - 1], anchor.n, (unsigned long long)sink);
	printf("  sort + pairing + periodicity: %.0f M header reads, median of the runs' ratios;\n"
	       "    goal <= %.0f M (1 s at the anchor's fastest day, %.1f ns)\n",
	       median(t_reads, runs), 1e3 / SLOW_ANCHOR_FAST_NS, SLOW_ANCHOR_FAST_NS);
	memcpy(tc_run, tc, runs * sizeof(*tc));
	mid = median(tc, runs);
	printf("  classification by signatures: %.3f s median (min %.3f, max %.3f); goal < 1 s\n",
	       mid, tc[0], tc[runs - 1]);
	mid = median(tl, runs);
	printf("  classification by labels:     %.3f s median (min %.3f, max %.3f); goal < 1 s\n",
	       mid, tl[0], tl[runs - 1]);
	printf("    (labels, then the operations read from the wire)\n");
	/* the ratio per run (both in the same run), then its median */
	for (unsigned r = 0; r < runs; r++)
		tl[r] = tc_run[r] / fmax(tk[r], 1e-9);
	mid = median(tk, runs);
	printf("  label lookup alone:           %.3f s median (min %.3f, max %.3f)\n", mid, tk[0],
	       tk[runs - 1]);
	printf("  signatures / label lookup:    %.1fx median of the runs' ratios; goal <= 5x\n",
	       median(tl, runs));
	return CT_EXIT_OK;
}

/*
 * The engine as deployed (default budget, idle timeout and burst gap), its
 * table grown if the stream's flows (two per QP) would not fit, its burst
 * ring large enough for the bursts of a pass (drained between passes).
 */
static void engine_config(const struct bench_opts *o, struct ct_engine_config *cfg)
{
	size_t need = budget_for_flows(2 * o->qps + o->qps / 4);

	memset(cfg, 0, sizeof(*cfg));
	cfg->memory_budget = need > CT_DEFAULT_MEMORY_BUDGET ? need : CT_DEFAULT_MEMORY_BUDGET;
	cfg->idle_timeout_ns = CT_DEFAULT_IDLE_TIMEOUT_NS;
	cfg->tcp_msg_gap_ns = CT_DEFAULT_TCP_MSG_GAP_NS;
	cfg->burst_gap_ns = CT_DEFAULT_BURST_GAP_NS;
	cfg->burst_ring_slots = BURST_RING_SLOTS;
}

int cmd_bench(int argc, char **argv)
{
	struct ct_engine_config cfg;
	struct ct_engine_counters c;
	struct engine_tally tally;
	struct bench_times t;
	struct bench_opts o;
	struct stream s;
	volatile uint64_t sink = 0;
	uint64_t sum = 0;
	int err;

	if (parse_opts(argc, argv, &o))
		return CT_EXIT_ERROR;
	if (o.slow_path)
		return slow_path_bench(o.runs, o.flows);
	err = stream_build(&s, &o);
	if (err) {
		fprintf(stderr, "commtap bench: no memory for %zu packets\n", o.packets);
		return CT_EXIT_ERROR;
	}
	if (o.n_pcaps) {
		err = write_pcaps(&s, &o);
		stream_free(&s);
		return err ? CT_EXIT_ERROR : CT_EXIT_OK;
	}
	engine_config(&o, &cfg);
	err = measure(&s, &cfg, o.runs, &t, &c, &tally, &sum);
	sink = sum;
	(void)sink;
	if (err) {
		fprintf(stderr, "commtap bench: cannot create the engine: %s\n", strerror(-err));
		stream_free(&s);
		return CT_EXIT_ERROR;
	}
	print_report(&o, &s, &cfg, &t, &c, &tally);
	stream_free(&s);
	return CT_EXIT_OK;
}
