// SPDX-License-Identifier: MIT
/*
 * commtap bench: the engine's cost per packet on a synthetic mirror stream.
 *
 * An in-memory stream of header-truncated RoCEv2 frames (what a SPAN
 * session copies: the first 128 bytes, the wire length intact) of NCCL-like
 * RDMA WRITE traffic at a 4 KiB path MTU over many QPs, with coalesced ACKs
 * on the reverse flows, is replayed through the engine (parse -> flow table
 * -> message assembly -> bursts) in bursts of 32, alternating with a
 * baseline loop that only reads the header fields the parser needs. Medians
 * of several runs, measured side by side in one process.
 */
#include "commands.h"

#include <commtap/byteorder.h>
#include <commtap/dataplane.h>
#include <commtap/flow_set.h>
#include <commtap/periodicity.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SNAP	      128
#define MTU	      4096
#define MSG_PACKETS   32 /* 128 KiB messages (NCCL's p2p chunk) */
#define ACK_EVERY     16
#define HOSTS	      16
#define FEED_BURST    32
#define LINE_RATE_PPS 12.0e6 /* 400 GbE of 4 KiB RoCE frames */

struct stream {
	uint8_t *frames; /* SNAP bytes each */
	struct ct_packet *pkts;
	size_t n;
};

struct bench_opts {
	size_t packets;
	unsigned qps;
	unsigned runs;
	int slow_path;
};

#define SLOW_FLOWS	100000
#define SLOW_HOSTS	1000
#define SLOW_BURSTS	20  /* per flow: 20 iterations */
#define SLOW_PERIOD_NS	50000000ull

/* One RoCEv2 frame's first SNAP bytes; returns its wire length. */
static uint32_t roce_frame(uint8_t *f, unsigned src, unsigned dst, uint32_t dqpn, uint8_t opcode,
			   uint32_t psn, uint32_t payload, uint32_t reth_len)
{
	unsigned ext = (opcode == 0x06 || opcode == 0x0a) ? 16 : opcode == 0x11 ? 4 : 0;
	uint32_t udp_len = 8 + 12 + ext + payload + 4;
	uint8_t *ip = f + 14, *udp = ip + 20, *bth = udp + 8;

	memset(f, 0, SNAP);
	f[0] = f[6] = 0x02;
	f[5] = (uint8_t)dst;
	f[11] = (uint8_t)src;
	ct_put16(f + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = 26 << 2 | 2; /* DSCP 26, ECT(0) */
	ct_put16(ip + 2, (uint16_t)(20 + udp_len));
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 198;
	ip[13] = 18;
	ip[15] = (uint8_t)(src + 1);
	ip[16] = 198;
	ip[17] = 18;
	ip[19] = (uint8_t)(dst + 1);
	ct_put16(udp, (uint16_t)(0xc000 | (dqpn & 0x3fff)));
	ct_put16(udp + 2, 4791);
	ct_put16(udp + 4, (uint16_t)udp_len);
	bth[0] = opcode;
	ct_put16(bth + 2, 0xffff);
	ct_put32(bth + 4, dqpn);
	ct_put32(bth + 8, psn & 0xffffff);
	if (opcode == 0x06 || opcode == 0x0a)
		ct_put32(bth + 12 + 12, reth_len);
	else if (opcode == 0x11)
		ct_put32(bth + 12, 0x1f000000u | (psn & 0xffffff));
	return 14 + 20 + udp_len;
}

/*
 * The stream: QPs take turns one message at a time, the way a NIC's
 * scheduler interleaves them; every ACK_EVERY data packets and at a
 * message's end the receiver's ACK goes back on the reverse flow.
 */
static int stream_build(struct stream *s, const struct bench_opts *o)
{
	uint32_t *psn = calloc(o->qps, sizeof(*psn));
	uint64_t ts = 1700000000ull * 1000000000ull;
	double ns_per_packet = 1e9 / LINE_RATE_PPS;
	size_t i = 0;

	s->frames = malloc(o->packets * SNAP);
	s->pkts = malloc(o->packets * sizeof(*s->pkts));
	if (!psn || !s->frames || !s->pkts) {
		free(psn);
		return -ENOMEM;
	}
	for (unsigned q = 0; i < o->packets; q = (q + 1) % o->qps) {
		unsigned src = q % HOSTS, dst = (q / HOSTS + 1 + src) % HOSTS;
		uint32_t data_qp = 0x1000 + q, ack_qp = 0x80000 + q;

		for (unsigned k = 0; k < MSG_PACKETS && i < o->packets; k++) {
			uint8_t op = k == 0 ? 0x06 : k + 1 < MSG_PACKETS ? 0x07 : 0x09;
			uint8_t *f = s->frames + i * SNAP;

			s->pkts[i].wire_len = roce_frame(f, src, dst, data_qp, op, psn[q]++, MTU,
							 MSG_PACKETS * MTU);
			s->pkts[i].data = f;
			s->pkts[i].cap_len = SNAP;
			s->pkts[i].ts_ns = ts + (uint64_t)((double)i * ns_per_packet);
			i++;
			if ((k + 1) % ACK_EVERY == 0 && i < o->packets) {
				f = s->frames + i * SNAP;
				s->pkts[i].wire_len =
					roce_frame(f, dst, src, ack_qp, 0x11, psn[q] - 1, 0, 0);
				s->pkts[i].data = f;
				s->pkts[i].cap_len = s->pkts[i].wire_len < SNAP ? s->pkts[i].wire_len
										 : SNAP;
				s->pkts[i].ts_ns = ts + (uint64_t)((double)i * ns_per_packet);
				i++;
			}
		}
	}
	s->n = i;
	free(psn);
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The baseline: read what the parser reads (EtherType, IP length, UDP port, BTH). */
static __attribute__((noinline)) uint64_t read_headers(const struct stream *s)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < s->n; i++) {
		const uint8_t *f = s->pkts[i].data;

		sum += (uint64_t)(f[12] << 8 | f[13]) + (uint64_t)(f[16] << 8 | f[17]) +
		       (uint64_t)(f[36] << 8 | f[37]) + f[42] + ((uint64_t)f[47] << 16 | f[48] << 8 | f[49]) +
		       ((uint64_t)f[51] << 16 | f[52] << 8 | f[53]) + s->pkts[i].wire_len;
	}
	return sum;
}

static __attribute__((noinline)) void feed_all(struct ct_engine *e, const struct stream *s)
{
	for (size_t i = 0; i < s->n; i += FEED_BURST)
		ct_engine_feed(e, &s->pkts[i], (unsigned)(s->n - i < FEED_BURST ? s->n - i : FEED_BURST));
}

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), double_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{"packets", required_argument, NULL, 'p'},
		{"qps", required_argument, NULL, 'q'},
		{"runs", required_argument, NULL, 'r'},
		{"slow-path", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	o->packets = 2000000;
	o->qps = 10000;
	o->runs = 5;
	o->slow_path = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		char *end;
		unsigned long long v;

		if (c == 'h') {
			printf("usage: commtap bench [--packets N] [--qps N] [--runs N] [--slow-path]\n"
			       "  Engine cost per packet on synthetic RoCEv2 mirror traffic\n"
			       "  (defaults: 2000000 packets, 10000 QPs, 5 runs).\n"
			       "  --slow-path: the per-report work (sort, pairing, periodicity)\n"
			       "  for 100,000 flows of 20 bursts each.\n");
			exit(CT_EXIT_OK);
		}
		if (c == 's') {
			o->slow_path = 1;
			continue;
		}
		if (c == '?' || !optarg) {
			fprintf(stderr, "commtap bench: unknown or incomplete option '%s'\n",
				argv[optind - 1]);
			return -EINVAL;
		}
		errno = 0;
		v = strtoull(optarg, &end, 10);
		if (errno || *end || !v || v > 100000000ull) {
			fprintf(stderr, "commtap bench: '%s' is not a count in [1, 1e8]\n", optarg);
			return -EINVAL;
		}
		if (c == 'p')
			o->packets = v;
		else if (c == 'q')
			o->qps = (unsigned)v;
		else
			o->runs = (unsigned)(v > 100 ? 100 : v);
	}
	return 0;
}

/* 100,000 flows between 1,000 hosts, each on once per 50 ms iteration (2% jitter). */
static int slow_path_bench(unsigned runs)
{
	double t[100];
	int err = 0;

	for (unsigned r = 0; r < runs && !err; r++) {
		struct ct_flow_set set;
		struct ct_burst_log log = {0};
		struct ct_periodicity per;
		uint64_t seed = 12345;
		double t0, t1;

		ct_flow_set_init(&set);
		for (uint32_t f = 0; f < SLOW_FLOWS && !err; f++) {
			struct ct_flow_summary sum;
			unsigned src = f % SLOW_HOSTS, dst = (src + 1 + f / SLOW_HOSTS) % SLOW_HOSTS;

			memset(&sum, 0, sizeof(sum));
			sum.key.src.b[10] = sum.key.src.b[11] = sum.key.dst.b[10] = sum.key.dst.b[11] = 0xff;
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
				b.start = k * SLOW_PERIOD_NS + (f % 64) * 100000 + (seed >> 44) % 1000000;
				b.end = b.start + 10000;
				b.bytes = 32 * 4200;
				b.messages = 1;
				b.packets = 32;
				err = ct_burst_log_add(&log, &b);
			}
		}
		t0 = now_s();
		ct_flow_set_sort(&set);
		ct_flow_set_pair(&set, NULL, 0);
		err = err ?: ct_periodicity_compute(&set, &log, 0.001, &per);
		t1 = now_s();
		t[r] = t1 - t0;
		if (!err) {
			if (!r)
				printf("commtap bench --slow-path: %d flows, %zu bursts, %d hosts: job period "
				       "%.6f s (%s)\n",
				       SLOW_FLOWS, log.n, SLOW_HOSTS, per.job.period_s,
				       per.job.periodic ? "periodic" : per.job.reason);
			ct_periodicity_free(&per);
		}
		ct_burst_log_free(&log);
		ct_flow_set_free(&set);
	}
	if (err) {
		fprintf(stderr, "commtap bench: slow path: %s\n", strerror(-err));
		return CT_EXIT_ERROR;
	}
	double mid = median(t, runs); /* sorts t */

	printf("  sort + pairing + periodicity: %.3f s median of %u (min %.3f, max %.3f); goal < 1 s\n",
	       mid, runs, t[0], t[runs - 1]);
	return CT_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
	struct ct_engine_config cfg = {0};
	struct bench_opts o;
	struct stream s = {0};
	double base[100], eng[100];
	size_t million_budget = 0;
	volatile uint64_t sink = 0;
	int rc, status = CT_EXIT_ERROR;

	if (parse_opts(argc, argv, &o))
		return CT_EXIT_ERROR;
	if (o.slow_path)
		return slow_path_bench(o.runs);
	if (stream_build(&s, &o)) {
		fprintf(stderr, "commtap bench: out of memory for %zu packets\n", o.packets);
		goto out;
	}
	/* room for every flow (2 per QP) so the table does not evict */
	cfg.memory_budget = (size_t)(2.5 * o.qps) * ct_flow_table_bytes_per_flow() + (1 << 20);
	for (unsigned r = 0; r < o.runs; r++) {
		struct ct_engine *e;
		double t0, t1, t2;

		rc = ct_engine_create(&cfg, &e);
		if (rc) {
			fprintf(stderr, "commtap bench: cannot create the engine: %s\n", strerror(-rc));
			goto out;
		}
		feed_all(e, &s); /* warm: the flows exist, the table is in cache as it can be */
		t0 = now_s();
		sink += read_headers(&s);
		t1 = now_s();
		feed_all(e, &s);
		t2 = now_s();
		base[r] = (t1 - t0) / (double)s.n * 1e9;
		eng[r] = (t2 - t1) / (double)s.n * 1e9;
		ct_engine_destroy(e);
	}
	while (ct_flow_table_capacity_for(million_budget) < 1000000)
		million_budget += 1 << 16;

	double b = median(base, o.runs), en = median(eng, o.runs); /* both sorted now */

	printf("commtap bench: %zu packets (128-byte copies of 4 KiB-MTU RDMA WRITEs, ACK every %d),"
	       " %u QPs, %u runs, bursts of %d\n",
	       s.n, ACK_EVERY, o.qps, o.runs, FEED_BURST);
	printf("  baseline (read headers): %7.2f ns/packet  %7.1f Mpps  (min %.2f, max %.2f)\n", b,
	       1e3 / b, base[0], base[o.runs - 1]);
	printf("  engine (parse+flow+msg): %7.2f ns/packet  %7.1f Mpps  (min %.2f, max %.2f)\n", en,
	       1e3 / en, eng[0], eng[o.runs - 1]);
	printf("  engine / baseline: %.2fx (goal <= 3x); engine Mpps goal >= 25 on one core\n",
	       en / b);
	printf("  flow state: %zu B per flow (goal <= 512), per-packet state in the first %zu B "
	       "(goal <= 128), %zu B per flow charged by the table\n",
	       sizeof(struct ct_flow), offsetof(struct ct_flow, cold),
	       ct_flow_table_bytes_per_flow());
	printf("  1,000,000 flows: %.1f MiB (goal < 512 MiB)\n",
	       (double)million_budget / (1 << 20));
	(void)sink;
	status = CT_EXIT_OK;
out:
	free(s.frames);
	free(s.pkts);
	return status;
}
