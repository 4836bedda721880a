/* SPDX-License-Identifier: MIT */
/*
 * One interface's probe: the BPF object loaded, XDP attached on ingress
 * through libxdp's dispatcher, TC egress through clsact, maps pinned under
 * /sys/fs/bpf/commtap/ns<netns inode>/<ifindex>/, a directory one agent at
 * a time holds (flock).
 */
#ifndef COMMTAP_AGENT_PROBE_H
#define COMMTAP_AGENT_PROBE_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#define CT_PROBE_PIN_ROOT "/sys/fs/bpf/commtap"

struct ct_probe_config {
	uint32_t flow_entries;	 /* LRU hash size, IPv4 flows */
	uint32_t flow_entries6;	 /* LRU hash size, IPv6 flows; 0: flow_entries / 8 */
	uint32_t ring_bytes;	 /* ring buffer size, a power of 2 and of the page size */
	uint64_t burst_gap_ns;	 /* the shortest idle gap that ends a burst */
	uint64_t tcp_msg_gap_ns; /* an idle gap this long ends a TCP message */
	uint32_t sample_every;	 /* flows see 1 packet in N */
	uint32_t transports;	 /* CTP_EN_* */
	int skb_mode;		 /* attach XDP in generic (skb) mode only */
	const char *pin_root;	 /* NULL: CT_PROBE_PIN_ROOT */
	int persist;		 /* --persist: pins whose probe is detached are continued */
};

struct ct_probe;

/*
 * Load and attach on ifname. When an earlier agent left the probe attached
 * and its maps pinned (--persist), they are taken over and the counters go
 * on. Pins of a network namespace that is gone (its cookie differs), or
 * whose probe is no longer attached (unless cfg->persist), are removed,
 * never continued. An agent already running on the interface (same namespace) is refused
 * with -EBUSY. On failure returns a negative errno with a one-line reason in
 * err.
 */
int ct_probe_open(const char *ifname, const struct ct_probe_config *cfg, struct ct_probe **out,
		  char *err, size_t errlen);

/* Detach and unpin, or with persist leave programs attached and maps pinned. */
void ct_probe_close(struct ct_probe *p, int persist);

/*
 * In a process forked after ct_probe_open (the agent's unprivileged
 * reader): its copy reads the maps and the ring but leaves the lock on the
 * pins, the programs and the pins to the process that opened them, which
 * detaches them; ct_probe_close on this copy only closes its descriptors.
 */
void ct_probe_forked_copy(struct ct_probe *p);

const char *ct_probe_ifname(const struct ct_probe *p);
/* The flow maps: IPv4 flows (struct ctp_flow_key4 keys) and IPv6 flows (ctp_flow_key). */
int ct_probe_flows_fd(const struct ct_probe *p);
int ct_probe_flows6_fd(const struct ct_probe *p);
int ct_probe_totals_fd(const struct ct_probe *p);
int ct_probe_events_fd(const struct ct_probe *p);
uint32_t ct_probe_flow_entries(const struct ct_probe *p);  /* IPv4 map */
uint32_t ct_probe_flow_entries6(const struct ct_probe *p); /* IPv6 map */
/* "native" or "skb" (generic), and whether the programs were taken over. */
const char *ct_probe_xdp_mode(const struct ct_probe *p);
int ct_probe_resumed(const struct ct_probe *p);
/* 1 when XDP runs in libxdp's dispatcher, 0 when attached alone (no dispatcher here). */
int ct_probe_dispatcher(const struct ct_probe *p);
/* Why libxdp attached XDP without its dispatcher (its message), or NULL. */
const char *ct_probe_dispatcher_note(const struct ct_probe *p);

/* The engine's opcode table as the programs read it (their ctp_opcode_info setting). */
void ct_probe_fill_opcodes(volatile uint32_t *out);

#endif
