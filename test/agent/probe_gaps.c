// SPDX-License-Identifier: MIT
/*
 * The probe's burst edges against the sender's own clock. Run in the
 * probe's network namespace: the probe is opened on IFACE as the agent
 * opens it. A child sends RoCE frames (UDP 4791) to DST, into IFACE (XDP)
 * from PEER_NETNS by default, out of IFACE (TC egress) from here with
 * --egress, in bursts separated by known idle gaps, and notes
 * CLOCK_MONOTONIC before and after each send. Both sides read the same
 * clock (one kernel), and on a veth pair the probe runs inside the
 * sender's send() (TC egress on its way out; XDP in the softirq that runs
 * when the transmit path re-enables bottom halves), so each packet's true
 * time lies in its [before, after] window. (A TCP sender's send() windows
 * are not its segments' times: the stack paces, holds segments for the
 * congestion window, probes tails inside idle gaps; so the egress test
 * sends UDP too.) Every gap that is surely a burst edge by the probe's own
 * rule (check()) must be one of its edges, at the right packets, with both
 * times in their windows; no gap surely shorter than the burst gap may be
 * one. Prints the errors; exit 0 pass, 1 fail, 77 skip (too loaded).
 *
 * usage: probe_gaps [--egress] IFACE PEER_NETNS DST_ADDR PIN_ROOT
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <commtap/roce_opcode.h>
#include <errno.h>
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
#define WARM_QPN     0x51e /* another flow's packet first: ARP, where not static */
#define ETH_IP_UDP   (14 + 20 + 8)
/*
 * Slack on each side of a packet's window: the probe's clock read and
 * the sender's are a few hundred ns apart in the same call chain.
 */
#define SLACK_NS 2000u
/*
 * Ingress only: under load the kernel defers the receive softirq to
 * ksoftirqd, and XDP runs after send() has returned (38 us seen on a
 * loaded 2-core VM). A clock that misses an edge is off by the whole gap,
 * 150 us or more, so this leaves such a clock failing. Egress (TC) runs
 * inside send() always.
 */
#define LATE_NS	 100000u
#define MIN_SURE (BURSTS / 2) /* gaps surely edges, of BURSTS - 1, to judge a run */

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
};

static struct burst bursts[MAX_PKTS + 1];
static unsigned nbursts;
static int egress;

static int measured(uint32_t id, uint8_t transport)
{
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
	if (len < sizeof(*r) || r->type != CTP_REC_BURST ||
	    !measured(r->key.id, r->key.transport) || nbursts >= MAX_PKTS)
		return 0;
	bursts[nbursts++] = (struct burst){r->start, r->end};
	return 0;
}

static int send_frame(int s, const struct sockaddr_in *to, uint32_t qpn, uint32_t psn)
{
	uint8_t frame[512];
	size_t len = ct_frame_roce(frame, sizeof(frame), CT_OP_WRITE_MIDDLE, qpn, psn, 256, 0);

	if (!len)
		return -EINVAL;
	return sendto(s, frame + ETH_IP_UDP, len - ETH_IP_UDP, 0, (const struct sockaddr *)to,
		      sizeof(*to)) < 0
		       ? -errno
		       : 0;
}

/* The child: the bursts, each send's window into out. */
static int sender(const char *peer_ns, const char *dst, struct sent *out)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(4791)};
	int ns, s, rc;
	uint64_t next;

	if (!egress) {
		ns = open(peer_ns, O_RDONLY);
		if (ns < 0 || setns(ns, CLONE_NEWNET)) {
			perror("probe_gaps: the peer namespace");
			return 1;
		}
		close(ns);
	}
	/*
	 * Not connected: egress has no receiver, and the peer's ICMP port
	 * unreachable would fail a connected socket's next send.
	 */
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || inet_pton(AF_INET, dst, &to.sin_addr) != 1) {
		perror("probe_gaps: socket");
		return 1;
	}
	rc = send_frame(s, &to, WARM_QPN, 0);
	usleep(100000); /* ARP answered: no measured packet waits for it */
	for (unsigned b = 0, i = 0; b < BURSTS && !rc; b++) {
		for (unsigned j = 0; j < PER_BURST && !rc; j++, i++) {
			out[i].before = mono_ns();
			rc = send_frame(s, &to, QPN, i);
			out[i].after = mono_ns();
		}
		/* a busy wait: a sleep overshoots by tens of microseconds */
		next = out[i - 1].after + gaps_ns[b % (sizeof(gaps_ns) / sizeof(gaps_ns[0]))];
		while (b + 1 < BURSTS && mono_ns() < next)
			;
	}
	if (rc)
		fprintf(stderr, "probe_gaps: send: %s\n", strerror(-rc));
	return rc != 0;
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
		bursts[nbursts++] = (struct burst){f.burst_start_ts, f.last_ts};
		return 0;
	}
	return -ENOENT;
}

static int in_window(uint64_t t, const struct sent *s)
{
	return t + SLACK_NS >= s->before && t <= s->after + (egress ? SLACK_NS : LATE_NS);
}

static double us(int64_t ns)
{
	return ns / 1000.0;
}

/* The probe's moving average of a flow's gaps (probe.bpf.c's burst_track). */
static uint64_t ewma_step(uint64_t ewma, uint64_t gap)
{
	return gap >= ewma ? ewma + (gap - ewma) / 8 : ewma - (ewma - gap) / 8;
}

/*
 * The probe's bursts against the sender's windows. The gap the probe can
 * have timed between packets i and i+1 lies between before[i+1] -
 * (after[i] + late) and after[i+1] - before[i]. A burst ends at a gap over
 * max(burst gap, 8 x the flow's usual gap): a gap is surely an edge when
 * its shortest reading is over that limit with the usual gap taken at its
 * largest (every other gap at its longest reading), surely none when its
 * longest reading is under the burst gap.
 */
static int check(const struct sent *pk, unsigned n)
{
	uint64_t late = egress ? SLACK_NS : LATE_NS, ewma_hi = 0, err_max = 0, win_max = 0;
	unsigned sure = 0, unsure = 0, found = 0, bad = 0, k = 0;

	for (unsigned i = 0; i + 1 < n; i++) {
		uint64_t lo = pk[i + 1].before - pk[i].after, hi = pk[i + 1].after - pk[i].before;
		uint64_t limit = 8 * ewma_hi > BURST_GAP_NS ? 8 * ewma_hi : BURST_GAP_NS;

		lo = lo > late ? lo - late : 0;
		if (lo <= limit) {
			/* the probe may have taken it as an edge and left its average */
			uint64_t next = ewma_step(ewma_hi, hi + SLACK_NS);

			if (hi > BURST_GAP_NS)
				unsure++;
			ewma_hi = hi > BURST_GAP_NS && next < ewma_hi ? ewma_hi : next;
			continue;
		}
		sure++;
		/* the burst the probe ended at packet i, and the next one from i+1 */
		while (k + 1 < nbursts && bursts[k + 1].start < pk[i + 1].before - SLACK_NS)
			k++;
		if (k + 1 >= nbursts || !in_window(bursts[k].end, &pk[i]) ||
		    !in_window(bursts[k + 1].start, &pk[i + 1])) {
			if (bad++ < 5)
				fprintf(stderr,
					"probe_gaps: the gap after packet %u (%.1f-%.1f us) is no "
					"burst edge of the probe (its burst ends %.1f us after the "
					"packet's send)\n",
					i, us((int64_t)lo), us((int64_t)hi),
					us((int64_t)(bursts[k].end - pk[i].after)));
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
	printf("probe_gaps: %u packets in %u bursts; gaps surely burst edges: %u, found as "
	       "the probe's burst edges: %u; unsure gaps: %u; the probe's bursts: %u\n",
	       n, BURSTS, sure, found, unsure, nbursts);
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
	/* a sender slowed this much (other load) leaves too little to judge */
	if (sure < MIN_SURE) {
		printf("SKIP: only %u of %u gaps are surely edges (the machine is too loaded)\n",
		       sure, BURSTS - 1);
		return 77;
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
		.transports = CTP_EN_ROCE,
	};
	struct sockaddr_in sink_addr = {.sin_family = AF_INET, .sin_port = htons(4791)};
	struct ring_buffer *rb;
	struct ct_probe *p;
	struct sent *pk;
	char err[256];
	int rc, status, sink;
	pid_t child;

	if (argc > 1 && !strcmp(argv[1], "--egress")) {
		egress = 1;
		argc--;
		argv++;
	}
	if (argc != 5) {
		fprintf(stderr,
			"usage: probe_gaps [--egress] IFACE PEER_NETNS DST_ADDR PIN_ROOT\n");
		return 2;
	}
	cfg.pin_root = argv[4];
	rc = ct_probe_open(argv[1], &cfg, &p, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "probe_gaps: %s\n", err);
		return rc == -EPERM ? 77 : 1;
	}
	/* ingress: a bound socket takes the frames, no ICMP unreachable per packet */
	sink = socket(AF_INET, SOCK_DGRAM, 0);
	if (sink < 0 || bind(sink, (struct sockaddr *)&sink_addr, sizeof(sink_addr))) {
		perror("probe_gaps: the receiving socket");
		return 1;
	}
	pk = mmap(NULL, MAX_PKTS * sizeof(*pk), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (pk == MAP_FAILED)
		return 1;
	child = fork();
	if (child == 0)
		_exit(sender(argv[2], argv[3], pk));
	rc = child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	     WEXITSTATUS(status);
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
