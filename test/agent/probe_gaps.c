// SPDX-License-Identifier: MIT
/*
 * The probe's burst edges against the sender's own clock. Run in the
 * probe's network namespace: the probe is opened on IFACE as the agent
 * opens it. Ingress (XDP), the default: a child in PEER_NETNS sends RoCE
 * frames (UDP 4791) to DST. Egress (TC), with --tcp: a child here sends TCP
 * segments (TCP_NODELAY, 1000 bytes a send) to a sink in PEER_NETNS at DST.
 * Either sends in bursts separated by known idle gaps, and notes
 * CLOCK_MONOTONIC before and after each send. Both sides read the same
 * clock (one kernel), and on a veth pair the probe runs inside the
 * sender's send() (TC egress on its way out; XDP in the softirq that runs
 * when the transmit path re-enables bottom halves), so each packet's true
 * time lies in its [before, after] window. Every gap the sender surely left (its shortest reading above the
 * burst gap) must be a burst edge of the probe, at the right packets; no
 * gap surely shorter may be one; and each edge's time must lie in its
 * packet's window. Prints the errors; exit 0 pass, 1 fail, 77 skip.
 *
 * usage: probe_gaps [--tcp] IFACE PEER_NETNS DST_ADDR PIN_ROOT
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <commtap/roce_opcode.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../ebpf/probe_abi.h"
#include "frames.h"
#include "probe.h"

#define BURST_GAP_NS 100000u /* the probe's default shortest burst gap */
#define BURSTS	     48
#define PER_BURST    16 /* fewer than a 64-packet refresh of a cached clock */
#define MAX_PKTS     (BURSTS * PER_BURST)
#define QPN	     0x51d /* the measured flow's destination QP */
#define WARM_QPN     0x51e /* a first packet that resolves ARP, another flow */
#define ETH_IP_UDP   (14 + 20 + 8)
#define TCP_PORT     5301 /* the sink's, in PEER_NETNS */
#define TCP_SEND     1448 /* bytes a send: one full segment at MTU 1500 (acked at once) */
/*
 * Slack on each side of a packet's window: the probe's clock read and
 * the sender's are a few hundred ns apart in the same call chain.
 */
#define SLACK_NS 2000u

/*
 * Idle gaps between bursts, cycled: just above the burst gap, a few
 * times it, and 1-3 ms, below the coarse clock's 4 ms tick (HZ=250), where
 * a clock that only the tick refreshes cannot see them.
 */
static const uint64_t gaps_ns[] = {150000, 300000, 1000000, 3000000, 600000, 2000000};

struct sent {
	uint64_t before, after;
};

struct burst {
	uint64_t start, end;
	uint32_t packets;
};

static struct burst bursts[MAX_PKTS + 1];
static unsigned nbursts;
static int tcp_mode;

/* The measured flow: RoCE to QPN, or TCP to the sink's port. */
static int measured(uint32_t id, uint8_t transport)
{
	if (tcp_mode)
		return transport == CTP_TRANSPORT_TCP && (id & 0xffff) == TCP_PORT;
	return transport == CTP_TRANSPORT_ROCE && id == QPN;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int on_record(void *ctx, void *data, size_t len)
{
	const struct ctp_record *r = data;

	(void)ctx;
	if (len < sizeof(*r) || r->type != CTP_REC_BURST || !measured(r->key.id, r->key.transport) ||
	    nbursts >= MAX_PKTS)
		return 0;
	bursts[nbursts++] = (struct burst){r->start, r->end, r->packets};
	return 0;
}

static int send_frame(int s, uint32_t qpn, uint32_t psn)
{
	uint8_t frame[512];
	size_t len = ct_frame_roce(frame, sizeof(frame), CT_OP_WRITE_MIDDLE, qpn, psn, 256, 0);

	if (!len)
		return -EINVAL;
	return send(s, frame + ETH_IP_UDP, len - ETH_IP_UDP, 0) < 0 ? -errno : 0;
}

/* Into the peer namespace (the RoCE sender, the TCP sink). */
static int enter(const char *peer_ns)
{
	int ns = open(peer_ns, O_RDONLY);

	if (ns < 0 || setns(ns, CLONE_NEWNET)) {
		perror("probe_gaps: the peer namespace");
		return -1;
	}
	close(ns);
	return 0;
}

static int send_one(int s, uint32_t i)
{
	static const uint8_t data[TCP_SEND];

	if (!tcp_mode)
		return send_frame(s, QPN, i);
	return send(s, data, sizeof(data), 0) == (ssize_t)sizeof(data) ? 0 : -EIO;
}

/* The child: the bursts, each send's window into out. */
static int sender(const char *peer_ns, const char *dst, struct sent *out)
{
	struct sockaddr_in to = {.sin_family = AF_INET,
				 .sin_port = htons(tcp_mode ? TCP_PORT : 4791)};
	int s, rc = 0, one = 1;
	uint64_t next;

	if (!tcp_mode && enter(peer_ns))
		return 1;
	s = socket(AF_INET, tcp_mode ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (s < 0 || inet_pton(AF_INET, dst, &to.sin_addr) != 1 ||
	    (tcp_mode && setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) ||
	    connect(s, (struct sockaddr *)&to, sizeof(to))) {
		perror("probe_gaps: socket");
		return 1;
	}
	if (!tcp_mode)
		rc = send_frame(s, WARM_QPN, 0);
	usleep(100000); /* ARP (and the handshake) done: no measured packet waits */
	for (unsigned b = 0, i = 0; b < BURSTS && !rc; b++) {
		for (unsigned j = 0; j < PER_BURST && !rc; j++, i++) {
			out[i].before = mono_ns();
			rc = send_one(s, i);
			out[i].after = mono_ns();
		}
		/* a busy wait: a sleep overshoots by tens of microseconds */
		next = out[i - 1].after + gaps_ns[b % (sizeof(gaps_ns) / sizeof(gaps_ns[0]))];
		while (b + 1 < BURSTS && mono_ns() < next)
			;
	}
	if (rc)
		fprintf(stderr, "probe_gaps: send: %s\n", strerror(-rc));
	close(s);
	return rc != 0;
}

/* The TCP sink's child, in the peer namespace: reads until the sender closes. */
static int tcp_sink(const char *peer_ns, int ready)
{
	struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(TCP_PORT)};
	char buf[65536];
	int l, c, one = 1;

	if (enter(peer_ns))
		return 1;
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&at, sizeof(at)) || listen(l, 1)) {
		perror("probe_gaps: the sink");
		return 1;
	}
	if (write(ready, "", 1) != 1)
		return 1;
	c = accept(l, NULL, NULL);
	while (c >= 0 && read(c, buf, sizeof(buf)) > 0)
		;
	return 0;
}

/* The flow's open burst, still in its record in the flow map. */
static int open_burst(struct ct_probe *p)
{
	struct ctp_flow_key4 k, next;
	struct ctp_flow f;
	int fd = ct_probe_flows_fd(p), first = 1;

	while (!bpf_map_get_next_key(fd, first ? NULL : &k, &next)) {
		first = 0;
		k = next;
		if (!measured(k.id, k.transport) || bpf_map_lookup_elem(fd, &k, &f))
			continue;
		bursts[nbursts++] = (struct burst){f.burst_start_ts, f.last_ts,
						   (uint32_t)f.packets - f.burst_start_packets};
		return 0;
	}
	return -ENOENT;
}

static int in_window(uint64_t t, const struct sent *s)
{
	return t + SLACK_NS >= s->before && t <= s->after + SLACK_NS;
}

static double us(int64_t ns)
{
	return ns / 1000.0;
}

/*
 * The probe's bursts against the sender's windows. The wire gap between
 * packets i and i+1 lies between before[i+1] - after[i] (surely) and
 * after[i+1] - before[i] (at most).
 */
static int check(const struct sent *pk, unsigned n)
{
	unsigned sure = 0, unsure = 0, found = 0, bad = 0, k = 0, kept = 0;
	uint64_t err_max = 0, win_max = 0;

	/* bursts over before the first measured packet: TCP's handshake */
	for (unsigned b = 0; b < nbursts; b++)
		if (bursts[b].end + SLACK_NS >= pk[0].before)
			bursts[kept++] = bursts[b];
	nbursts = kept;

	for (unsigned i = 0; i + 1 < n; i++) {
		uint64_t lo = pk[i + 1].before - pk[i].after, hi = pk[i + 1].after - pk[i].before;

		if (lo <= BURST_GAP_NS && hi > BURST_GAP_NS)
			unsure++;
		if (lo <= BURST_GAP_NS)
			continue;
		sure++;
		/* the burst the probe ended at packet i, and the next one from i+1 */
		while (k + 1 < nbursts && bursts[k + 1].start < pk[i + 1].before - SLACK_NS)
			k++;
		if (k + 1 >= nbursts || !in_window(bursts[k].end, &pk[i]) ||
		    !in_window(bursts[k + 1].start, &pk[i + 1])) {
			if (bad++ < 5)
				fprintf(stderr,
					"probe_gaps: the gap after packet %u (%.1f-%.1f us) is no "
					"burst edge of the probe (nearest: a burst ends %.1f us "
					"after the packet's send, the next starts %.1f us after the "
					"next send)\n",
					i, us((int64_t)lo), us((int64_t)hi),
					us((int64_t)(bursts[k].end - pk[i].after)),
					k + 1 < nbursts ? us((int64_t)(bursts[k + 1].start -
								       pk[i + 1].after))
							: 0.0);
			continue;
		}
		found++;
		for (int e = 0; e < 2; e++) {
			const struct sent *s = &pk[i + e];
			uint64_t t = e ? bursts[k + 1].start : bursts[k].end;
			uint64_t mid = s->before / 2 + s->after / 2;
			uint64_t d = t > mid ? t - mid : mid - t;

			if (d > err_max)
				err_max = d;
			if (s->after - s->before > win_max)
				win_max = s->after - s->before;
		}
	}
	printf("probe_gaps: %u packets in %u bursts; gaps surely over %u us: %u, found as "
	       "burst edges: %u; unsure gaps: %u; the probe's bursts: %u\n",
	       n, BURSTS, BURST_GAP_NS / 1000, sure, found, unsure, nbursts);
	printf("probe_gaps: edge times off the middle of their send: at most %.1f us "
	       "(widest send window %.1f us)\n",
	       us((int64_t)err_max), us((int64_t)win_max));
	if (found != sure)
		return 1;
	/* every other burst of the probe must come from an unsure gap */
	if (nbursts < sure + 1 || nbursts > sure + unsure + 1) {
		fprintf(stderr, "probe_gaps: %u bursts, expected %u to %u\n", nbursts, sure + 1,
			sure + unsure + 1);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ct_probe_config cfg = {
		.flow_entries = 1024,
		.ring_bytes = 1 << 20,
		.burst_gap_ns = BURST_GAP_NS,
		.tcp_msg_gap_ns = 1000000,
		.sample_every = 1,
		.transports = CTP_EN_ROCE | CTP_EN_TCP,
	};
	struct sockaddr_in sink_addr = {.sin_family = AF_INET, .sin_port = htons(4791)};
	struct ring_buffer *rb;
	struct ct_probe *p;
	struct sent *pk;
	char err[256], c;
	int rc, status, sink, ready[2];
	pid_t child, sink_pid = -1;

	if (argc > 1 && !strcmp(argv[1], "--tcp")) {
		tcp_mode = 1;
		argc--;
		argv++;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: probe_gaps [--tcp] IFACE PEER_NETNS DST_ADDR PIN_ROOT\n");
		return 2;
	}
	cfg.pin_root = argv[4];
	rc = ct_probe_open(argv[1], &cfg, &p, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "probe_gaps: %s\n", err);
		return rc == -EPERM ? 77 : 1;
	}
	/* a bound socket takes the RoCE frames: no ICMP unreachable per packet */
	sink = socket(AF_INET, SOCK_DGRAM, 0);
	if (sink < 0 || bind(sink, (struct sockaddr *)&sink_addr, sizeof(sink_addr))) {
		perror("probe_gaps: the receiving socket");
		return 1;
	}
	pk = mmap(NULL, MAX_PKTS * sizeof(*pk), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (pk == MAP_FAILED || pipe(ready))
		return 1;
	if (tcp_mode) {
		sink_pid = fork();
		if (sink_pid == 0)
			_exit(tcp_sink(argv[2], ready[1]));
		if (sink_pid < 0 || read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "probe_gaps: the sink failed\n");
			ct_probe_close(p, 0);
			return 1;
		}
	}
	child = fork();
	if (child == 0)
		_exit(sender(argv[2], argv[3], pk));
	rc = child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	     WEXITSTATUS(status);
	if (sink_pid > 0 && (waitpid(sink_pid, &status, 0) != sink_pid || !WIFEXITED(status) ||
			     WEXITSTATUS(status)))
		rc = 1;
	if (rc) {
		fprintf(stderr, "probe_gaps: the sender failed\n");
		ct_probe_close(p, 0);
		return 1;
	}
	rb = ring_buffer__new(ct_probe_events_fd(p), on_record, NULL, NULL);
	if (!rb || ring_buffer__consume(rb) < 0 || open_burst(p)) {
		fprintf(stderr, "probe_gaps: no records of the flow\n");
		ct_probe_close(p, 0);
		return 1;
	}
	rc = check(pk, MAX_PKTS);
	ring_buffer__free(rb);
	ct_probe_close(p, 0);
	close(sink);
	return rc;
}
