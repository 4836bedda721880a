// SPDX-License-Identifier: MIT
/*
 * The synthesizer. For each iteration, every transfer of the schedule that
 * leaves a host becomes NCCL messages (collective steps of up to 512 KiB,
 * send/recv and all-to-all chunks of up to 128 KiB), spread over the
 * connection's channels; each message becomes packets serialized at the
 * sending host's NIC rate. RoCE: RDMA WRITE ... WRITE_LAST_WITH_IMM with a
 * RETH on the first packet, a clear-to-send WRITE back from the receiver
 * before each message, ACKs (coalesced, and on every message's last
 * packet). TCP: segments of one MSS on several sockets, ACKs every second
 * segment.
 *
 * Packets are described compactly, sorted by time, and turned into frames
 * only when emitted.
 */
#include "synth.h"

#include <commtap/byteorder.h>
#include <commtap/frame_build.h>

#include <arpa/inet.h>
#include <commtap/grow.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLLECTIVE_STEP	 (512u * 1024) /* without a profile "nccl" object */
#define P2P_CHUNK	 (128u * 1024)
#define NCCL_STEPS	 8
#define CTRL_CHANNEL	 128 /* + channel: NCCL's socket transport's control connection */
#define ACK_EVERY	 16   /* RoCE: an ACK per this many packets (and per message) */
#define CTS_BYTES	 64   /* NCCL's clear-to-send write */
#define CTS_LEAD_NS	 1000 /* the CTS precedes the data it clears */
#define ACK_DELAY_NS	 1500
#define ETH_MIN		 60
#define MAX_FRAME	 9216
#define STORAGE_PORT	 2049
#define CNP_EVERY	 64 /* noise: one CE mark (and CNP) per this many packets into host 0 */
#define RTX_NS		 (10 * ACK_DELAY_NS) /* a lost packet sent again (TCP: fast retransmit) */
#define AETH_NAK_SEQ	 0x60		     /* AETH syndrome: NAK, PSN sequence error */
#define PFC_QUANTA	 0xffff

enum { DIR_FWD = 0, DIR_REV = 1 };

enum pkt_type {
	PKT_DATA, /* RoCE WRITE packet or TCP segment, forward */
	PKT_CTS,  /* RoCE clear-to-send WRITE_ONLY, reverse */
	PKT_ACK,  /* RoCE ACK or TCP pure ACK, the direction in pkt.dir */
	PKT_CNP,  /* RoCE CNP, reverse */
	PKT_NAK,  /* RoCE NAK (PSN sequence error), reverse */
	PKT_PFC,  /* PFC XOFF (inject.pfc_priority); no connection's */
};

/* One channel of a connection: a QP pair (RoCE) or a socket (TCP). */
struct conn {
	uint32_t src_rank, dst_rank; /* ranks, or UINT32_MAX for noise */
	uint16_t src_nic, dst_nic;   /* NIC index (profile.h); UINT16_MAX: the storage server */
	uint8_t cls;
	uint8_t channel;
	uint32_t qp_src, qp_dst;     /* RoCE QPs on the sending and receiving host */
	uint32_t psn_fwd, psn_rev;   /* request PSNs of each side's QP */
	uint16_t port_src, port_dst; /* TCP ports / RoCE UDP source ports */
	uint32_t seq_fwd, seq_rev;
	uint64_t packets[2], bytes[2]; /* truth, per direction */
	uint64_t op_bytes[2][CT_OP_COUNT]; /* truth: bytes[dir] by collective operation */
	uint64_t segs_unacked;
};

struct pkt {
	uint64_t ts;
	uint64_t order; /* tie-break: creation order */
	uint32_t conn;
	uint8_t type : 4, dir : 1, ecn : 2; /* bit fields: the record stays 40 bytes with op */
	uint8_t opcode;
	uint8_t op; /* enum ct_op of the message it belongs to, for the truth */
	uint32_t psn;	  /* PSN or TCP sequence number */
	uint32_t payload; /* payload bytes */
	uint32_t reth_len;
	uint32_t aux; /* AETH MSN, TCP ack number */
};

/* A message waiting to be packetized. */
struct msg {
	uint64_t desired;
	uint32_t conn;
	uint32_t bytes;
	uint64_t order;
	uint8_t op; /* enum ct_op */
};

struct synth {
	const struct ct_profile *p;
	const struct ct_prediction *pr;
	const struct ct_synth_config *cfg;
	struct conn *conns;
	size_t n_conns, cap_conns;
	uint32_t *conn_index; /* open addressing over conn keys, UINT32_MAX empty */
	size_t index_mask;
	struct pkt *pkts;
	size_t n_pkts, cap_pkts;
	struct msg *msgs;
	size_t n_msgs, cap_msgs;
	uint64_t order;
	uint64_t *nic_free; /* per host: when its NIC can send again */
	uint32_t *next_qp;  /* per host */
	double nic_ns_per_byte;
	uint64_t rng;
	unsigned payload_max; /* RoCE path MTU / TCP MSS */
	unsigned channels;    /* connections per peer */
	double class_bytes[CT_CLASS_COUNT + 1];
	unsigned it;	    /* the iteration being rendered */
	uint8_t message_op; /* the operation of the message being packetized */
	uint64_t data_pkts_to_host0;
	int retransmitted;
	uint8_t frame[MAX_FRAME];
};

static uint64_t rng_next(struct synth *S)
{
	/* splitmix64 */
	uint64_t z = (S->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_uniform(struct synth *S)
{
	return (double)(rng_next(S) >> 11) / (double)(1ull << 53);
}

/* ---- injected anomalies ----------------------------------------------------- */

static unsigned host_of(const struct synth *S, uint16_t nic)
{
	return nic == UINT16_MAX ? UINT32_MAX : nic / S->p->nics_per_host;
}

/*
 * The connection runs over the link between hosts a and b (either way),
 * from iteration `from` on: between their first NICs (rail 0) when they
 * have several, as a cable joins two ports.
 */
static int on_link(const struct synth *S, const struct conn *c, int a, int b, unsigned from)
{
	unsigned s = host_of(S, c->src_nic), d = host_of(S, c->dst_nic);

	if (a < 0 || S->it < from || c->src_nic % S->p->nics_per_host ||
	    c->dst_nic % S->p->nics_per_host)
		return 0;
	return (s == (unsigned)a && d == (unsigned)b) || (s == (unsigned)b && d == (unsigned)a);
}

/* Nanoseconds per byte on the connection's link (a slow link serializes slower). */
static double ns_per_byte(const struct synth *S, const struct conn *c)
{
	const struct ct_synth_inject *in = &S->cfg->inject;

	if (on_link(S, c, in->slow_a, in->slow_b, in->slow_from))
		return S->nic_ns_per_byte * in->slow_factor;
	return S->nic_ns_per_byte;
}

/* Whether this packet of the connection is lost (the random draw only on a lossy link). */
static int lost(struct synth *S, const struct conn *c)
{
	const struct ct_synth_inject *in = &S->cfg->inject;

	return on_link(S, c, in->lossy_a, in->lossy_b, in->lossy_from) &&
	       rng_uniform(S) < in->loss_rate;
}

/* Whether this packet toward the congested host is CE-marked. */
static int congested(struct synth *S, const struct conn *c)
{
	const struct ct_synth_inject *in = &S->cfg->inject;

	return in->congest >= 0 && S->it >= in->congest_from &&
	       host_of(S, c->dst_nic) == (unsigned)in->congest &&
	       rng_uniform(S) < in->congest_fraction;
}

void ct_synth_config_default(struct ct_synth_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->inject.straggler = cfg->inject.slow_a = cfg->inject.slow_b = -1;
	cfg->inject.lossy_a = cfg->inject.lossy_b = cfg->inject.congest = -1;
	cfg->inject.pfc_priority = cfg->inject.pause_at = -1;
	cfg->iterations = 5;
	cfg->transport = CT_SYNTH_ROCE;
	cfg->size_scale = 1;
	cfg->time_scale = 1;
	cfg->channels = 0; /* the profile's nccl.channels, else 2 */
	cfg->seed = 1;
	cfg->start_ns = 1700000000ull * 1000000000ull;
}

/* ---- connections ----------------------------------------------------------- */

static uint64_t conn_key(uint32_t src, uint32_t dst, unsigned cls, unsigned ch)
{
	return (uint64_t)src << 40 ^ (uint64_t)dst << 16 ^ (uint64_t)cls << 8 ^ ch;
}

static int index_grow(struct synth *S)
{
	size_t slots = S->conn_index ? 2 * (S->index_mask + 1) : 1024;
	uint32_t *idx = malloc(slots * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	memset(idx, 0xff, slots * sizeof(*idx));
	for (size_t i = 0; i < S->n_conns; i++) {
		const struct conn *c = &S->conns[i];
		size_t j = conn_key(c->src_rank, c->dst_rank, c->cls, c->channel) * 0x9e3779b97f4a7c15ull >> 20;

		for (j &= slots - 1; idx[j] != UINT32_MAX; j = (j + 1) & (slots - 1))
			;
		idx[j] = (uint32_t)i;
	}
	free(S->conn_index);
	S->conn_index = idx;
	S->index_mask = slots - 1;
	return 0;
}

/* The connection (channel) from src to dst for a class, made on first use. */
static int conn_get(struct synth *S, uint32_t src, uint32_t dst, uint16_t src_nic, uint16_t dst_nic,
		    unsigned cls, unsigned ch, uint32_t *out)
{
	uint64_t key = conn_key(src, dst, cls, ch);
	struct conn *c;
	size_t j;

	if (!S->conn_index || 2 * (S->n_conns + 1) > S->index_mask + 1) {
		int err = index_grow(S);

		if (err)
			return err;
	}
	for (j = (key * 0x9e3779b97f4a7c15ull >> 20) & S->index_mask;
	     S->conn_index[j] != UINT32_MAX; j = (j + 1) & S->index_mask) {
		c = &S->conns[S->conn_index[j]];
		if (c->src_rank == src && c->dst_rank == dst && c->cls == cls && c->channel == ch) {
			*out = S->conn_index[j];
			return 0;
		}
	}
	if (S->n_conns == S->cap_conns) {
		struct conn *nc = ct_grow(S->conns, &S->cap_conns, sizeof(*nc), 256);

		if (!nc)
			return -ENOMEM;
		S->conns = nc;
	}
	c = &S->conns[S->n_conns];
	memset(c, 0, sizeof(*c));
	c->src_rank = src;
	c->dst_rank = dst;
	c->src_nic = src_nic;
	c->dst_nic = dst_nic;
	c->cls = (uint8_t)cls;
	c->channel = (uint8_t)ch;
	c->qp_src = S->next_qp[src_nic == UINT16_MAX ? S->p->nics : src_nic]++;
	c->qp_dst = S->next_qp[dst_nic == UINT16_MAX ? S->p->nics : dst_nic]++;
	c->psn_fwd = (uint32_t)(rng_next(S) & 0xffffff);
	c->psn_rev = (uint32_t)(rng_next(S) & 0xffffff);
	c->seq_fwd = (uint32_t)rng_next(S);
	c->seq_rev = (uint32_t)rng_next(S);
	if (S->cfg->transport == CT_SYNTH_TCP || cls == CT_CLASS_OTHER) {
		c->port_src = (uint16_t)(32768 + (rng_next(S) % 28000));
		c->port_dst = cls == CT_CLASS_OTHER ? STORAGE_PORT
						    : (uint16_t)(40000 + (rng_next(S) % 20000));
	} else {
		c->port_src = (uint16_t)(0xc000 | (c->qp_src & 0x3fff));
		c->port_dst = (uint16_t)(0xc000 | (c->qp_dst & 0x3fff));
	}
	S->conn_index[j] = (uint32_t)S->n_conns;
	*out = (uint32_t)S->n_conns++;
	return 0;
}

/* ---- packets ---------------------------------------------------------------- */

static int pkt_add(struct synth *S, uint64_t ts, uint32_t conn, enum pkt_type type, int dir,
		   uint8_t opcode, uint32_t psn, uint32_t payload, uint32_t reth_len, uint32_t aux,
		   uint8_t ecn)
{
	struct pkt *k;

	if (S->n_pkts == S->cap_pkts) {
		struct pkt *np = ct_grow(S->pkts, &S->cap_pkts, sizeof(*np), 65536);

		if (!np)
			return -ENOMEM;
		S->pkts = np;
	}
	k = &S->pkts[S->n_pkts++];
	k->ts = ts;
	k->order = S->order++;
	k->conn = conn;
	k->type = (uint8_t)type;
	k->dir = (uint8_t)dir;
	k->opcode = opcode;
	k->psn = psn;
	k->payload = payload;
	k->reth_len = reth_len;
	k->aux = aux;
	k->ecn = ecn & 3;
	k->op = S->message_op;
	return 0;
}

/* L2..L4 header bytes the frame will have, for NIC serialization. */
static unsigned header_bytes(const struct synth *S, int roce, unsigned ext)
{
	unsigned ip = ct_addr_is_v4(&S->p->host_addr[0]) ? 20 : 40;

	return 14 + ip + (roce ? 8 + 12 + ext + 4 : 20) + 24 /* preamble, IFG, FCS */;
}

/* RoCE: one message as WRITE packets at the sender's NIC rate, with CTS and ACKs. */
static int roce_message(struct synth *S, uint32_t ci, uint64_t desired, uint32_t bytes)
{
	struct conn *c = &S->conns[ci];
	uint64_t t, cts_t = desired > CTS_LEAD_NS ? desired - CTS_LEAD_NS : desired;
	unsigned n = (bytes + S->payload_max - 1) / S->payload_max;
	int ce_host0 = S->cfg->noise && c->dst_nic == 0;
	double nspb = ns_per_byte(S, c);
	uint32_t psn0 = c->psn_fwd;
	uint64_t t_lost = 0;
	long gone = -1; /* the packet lost before the mirror: the rest is sent again */
	int err;

	if (!n)
		n = 1;
	/* clear-to-send from the receiver, and the sender's ACK of it */
	err = pkt_add(S, cts_t, ci, PKT_CTS, DIR_REV, 0x0a, c->psn_rev, CTS_BYTES, CTS_BYTES, 0, 2);
	err = err ?: pkt_add(S, cts_t + ACK_DELAY_NS, ci, PKT_ACK, DIR_FWD, 0x11, c->psn_rev, 0, 0,
			     c->psn_rev, 2);
	c->psn_rev = (c->psn_rev + 1) & 0xffffff;

	t = desired;
	if (S->nic_free[c->src_nic] > t)
		t = S->nic_free[c->src_nic];
	for (unsigned k = 0; k < n && !err; k++) {
		uint32_t len = k + 1 < n ? S->payload_max : bytes - (n - 1) * S->payload_max;
		uint8_t op = n == 1 ? 0x0b : k == 0 ? 0x06 : k + 1 < n ? 0x07 : 0x09;
		uint8_t ecn = 2;

		if (ce_host0 && ++S->data_pkts_to_host0 % CNP_EVERY == 0)
			ecn = 3;
		else if (congested(S, c))
			ecn = 3;
		if (gone < 0 && lost(S, c)) {
			/*
			 * Inside a message: lost before the mirror, the receiver sees the
			 * next one out of order (NAK, go-back-N below). A message's last
			 * packet: lost past the mirror, sent again when the requester's
			 * timer runs out (the mirror sees it twice).
			 */
			if (k + 1 < n) {
				gone = (long)k;
				c->psn_fwd = (c->psn_fwd + 1) & 0xffffff;
				t += (uint64_t)llround((len + header_bytes(S, 1, k == 0 ? 16 : 4)) *
						       nspb);
				continue;
			}
			err = pkt_add(S, t + RTX_NS, ci, PKT_DATA, DIR_FWD, op, c->psn_fwd, len,
				      k == 0 ? bytes : 0, 0, 2);
		}
		if (gone >= 0 && k == (unsigned)gone + 1) { /* NAK: PSN sequence error */
			uint32_t want = (psn0 + (uint32_t)gone) & 0xffffff;

			err = pkt_add(S, t + ACK_DELAY_NS, ci, PKT_NAK, DIR_REV, 0x11, want, 0, 0,
				      want, 2);
			t_lost = t + 2 * ACK_DELAY_NS;
		}
		err = err
			      ?: pkt_add(S, t, ci, PKT_DATA, DIR_FWD, op, c->psn_fwd, len,
					 k == 0 ? bytes : 0, 0, ecn);
		if (!err && ecn == 3) /* the receiver's NIC answers a CE mark with a CNP */
			err = pkt_add(S, t + ACK_DELAY_NS, ci, PKT_CNP, DIR_REV, 0x81, 0, 0, 0, 0,
				      2);
		if (!err && gone < 0 && (k + 1 == n || (k + 1) % ACK_EVERY == 0))
			err = pkt_add(S, t + ACK_DELAY_NS, ci, PKT_ACK, DIR_REV, 0x11, c->psn_fwd,
				      0, 0, c->psn_fwd, 2);
		/* noise: one packet is sent again later (a retransmission) */
		if (!err && S->cfg->noise && !S->retransmitted && n > 2 && k == 1) {
			S->retransmitted = 1;
			err = pkt_add(S, t + 20 * ACK_DELAY_NS, ci, PKT_DATA, DIR_FWD, op,
				      c->psn_fwd, len, 0, 0, 2);
		}
		c->psn_fwd = (c->psn_fwd + 1) & 0xffffff;
		t += (uint64_t)llround((len + header_bytes(S, 1, k == 0 ? 16 : 4)) * nspb);
	}
	/* go-back-N: from the lost packet to the message's end, once the NAK is in */
	if (gone >= 0 && t < t_lost)
		t = t_lost;
	for (unsigned k = gone < 0 ? n : (unsigned)gone; k < n && !err; k++) {
		uint32_t len = k + 1 < n ? S->payload_max : bytes - (n - 1) * S->payload_max;
		uint8_t op = n == 1 ? 0x0b : k == 0 ? 0x06 : k + 1 < n ? 0x07 : 0x09;
		uint32_t psn = (psn0 + k) & 0xffffff;

		err = pkt_add(S, t, ci, PKT_DATA, DIR_FWD, op, psn, len, k == 0 ? bytes : 0, 0, 2);
		if (!err && (k + 1 == n || (k + 1) % ACK_EVERY == 0))
			err = pkt_add(S, t + ACK_DELAY_NS, ci, PKT_ACK, DIR_REV, 0x11, psn, 0, 0,
				      psn, 2);
		t += (uint64_t)llround((len + header_bytes(S, 1, k == 0 ? 16 : 4)) * nspb);
	}
	S->nic_free[c->src_nic] = t;
	return err;
}

/* TCP: one message as MSS segments, a pure ACK every second segment. */
static int tcp_message(struct synth *S, uint32_t ci, uint64_t desired, uint32_t bytes)
{
	struct conn *c = &S->conns[ci];
	uint64_t t = desired;
	unsigned n = (bytes + S->payload_max - 1) / S->payload_max;
	int err = 0;
	unsigned host = c->src_nic == UINT16_MAX ? S->p->nics : c->src_nic;
	double nspb = ns_per_byte(S, c);

	if (S->nic_free[host] > t)
		t = S->nic_free[host];
	for (unsigned k = 0; k < n && !err; k++) {
		uint32_t len = k + 1 < n ? S->payload_max : bytes - (n - 1) * S->payload_max;

		err = pkt_add(S, t, ci, PKT_DATA, DIR_FWD, 0x18, c->seq_fwd, len, 0, c->seq_rev, 0);
		/* lost past the mirror: the mirror sees it again, retransmitted */
		if (!err && lost(S, c))
			err = pkt_add(S, t + RTX_NS, ci, PKT_DATA, DIR_FWD, 0x18, c->seq_fwd, len,
				      0, c->seq_rev, 0);
		c->seq_fwd += len;
		if (!err && (++c->segs_unacked % 2 == 0 || k + 1 == n))
			err = pkt_add(S, t + ACK_DELAY_NS, ci, PKT_ACK, DIR_REV, 0x10, c->seq_rev, 0,
				      0, c->seq_fwd, 0);
		t += (uint64_t)llround((len + header_bytes(S, 0, 0)) * nspb);
	}
	S->nic_free[host] = t;
	return err;
}

/* ---- frames ----------------------------------------------------------------- */

static const struct ct_addr *nic_addr(const struct synth *S, uint16_t nic, struct ct_addr *storage)
{
	if (nic != UINT16_MAX)
		return &S->p->nic_addr[nic];
	/* the storage server of the noise: 198.19.200.1 (or 2001:db8:ffff::1) */
	memset(storage, 0, sizeof(*storage));
	if (ct_addr_is_v4(&S->p->host_addr[0])) {
		storage->b[10] = storage->b[11] = 0xff;
		storage->b[12] = 198;
		storage->b[13] = 19;
		storage->b[14] = 200;
		storage->b[15] = 1;
	} else {
		storage->b[0] = 0x20;
		storage->b[1] = 0x01;
		storage->b[2] = 0x0d;
		storage->b[3] = 0xb8;
		storage->b[4] = storage->b[5] = 0xff;
		storage->b[15] = 1;
	}
	return storage;
}

/* A PFC XOFF frame (MAC control, untagged) pausing one priority for the longest time. */
static uint32_t pfc_frame(struct synth *S, uint32_t *wire_len, uint32_t *truth_len)
{
	static const uint8_t dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
	unsigned prio = (unsigned)S->cfg->inject.pfc_priority;
	uint8_t *f = S->frame;

	memset(f, 0, ETH_MIN);
	memcpy(f, dst, 6);
	f[6] = 0x02;
	ct_put16(f + 12, 0x8808);
	ct_put16(f + 14, 0x0101);
	ct_put16(f + 16, (uint16_t)(1u << prio));
	ct_put16(f + 18 + 2 * prio, PFC_QUANTA);
	*truth_len = *wire_len = ETH_MIN;
	return ETH_MIN;
}

/* Ethernet, tags and IP of a packet's frame (src, dst: the sending and receiving NICs). */
static void frame_ip(const struct synth *S, const struct pkt *k, uint16_t sh, uint16_t dh,
		     struct ct_frame_ip *h)
{
	struct ct_addr st1, st2;
	const struct ct_addr *src = nic_addr(S, sh, &st1), *dst = nic_addr(S, dh, &st2);

	memset(h, 0, sizeof(*h));
	/* locally administered MACs naming the host */
	h->dst_mac[0] = h->src_mac[0] = 0x02;
	ct_put16(h->dst_mac + 4, dh);
	ct_put16(h->src_mac + 4, sh);
	/* tags: an S-tag outside a C-tag when there are two; VLAN 100 + depth, PCP 3 */
	h->n_vlan = S->cfg->vlan_tags;
	for (unsigned t = 0; t < h->n_vlan; t++) {
		h->vlan[t].tpid = t == 0 && h->n_vlan > 1 ? 0x88a8 : 0x8100;
		h->vlan[t].pcp = 3;
		h->vlan[t].vid = (uint16_t)(100 + t);
	}
	h->ipv6 = !ct_addr_is_v4(src);
	memcpy(h->src, h->ipv6 ? src->b : src->b + 12, h->ipv6 ? 16 : 4);
	memcpy(h->dst, h->ipv6 ? dst->b : dst->b + 12, h->ipv6 ? 16 : 4);
	/* DSCP 26 for data, 48 for CNPs (NCCL's and the NICs' defaults), then ECN */
	h->tos = (uint8_t)((k->type == PKT_CNP ? 48 << 2 : 26 << 2) | k->ecn);
}

/* A RoCEv2 packet's BTH and extension headers (the opcode's, ct_opcode_table). */
static void frame_bth(const struct synth *S, const struct pkt *k, struct ct_roce_hdr *b)
{
	const struct conn *c = &S->conns[k->conn];

	memset(b, 0, sizeof(*b));
	b->opcode = k->opcode;
	b->dqpn = k->dir == DIR_FWD ? c->qp_dst : c->qp_src;
	b->psn = k->psn & 0xffffff;
	if (k->type == PKT_DATA || k->type == PKT_CTS) {
		/* AckReq on a message's end */
		b->ackreq = k->opcode == 0x09 || k->opcode == 0x0b || k->opcode == 0x0a;
		b->rkey = 0x1000 + k->conn; /* RETH */
		b->dma_len = k->reth_len;
		b->imm = k->conn; /* ImmDt */
	} else if (k->type == PKT_ACK) {
		b->syndrome = 0x1f; /* AETH: ACK */
		b->msn = k->aux & 0xffffff;
	} else if (k->type == PKT_NAK) {
		b->syndrome = AETH_NAK_SEQ;
		b->msn = k->aux & 0xffffff;
	}
}

/*
 * Build a packet's frame: its headers (the payload's bytes are written by
 * emit_until). Returns the headers' length.
 */
static uint32_t build_frame(struct synth *S, const struct pkt *k, uint32_t *wire_len,
			    uint32_t *truth_len)
{
	const struct conn *c = &S->conns[k->conn];
	uint16_t sh = k->dir == DIR_FWD ? c->src_nic : c->dst_nic;
	uint16_t dh = k->dir == DIR_FWD ? c->dst_nic : c->src_nic;
	uint16_t sp = k->dir == DIR_FWD ? c->port_src : c->port_dst;
	int tcp = S->cfg->transport == CT_SYNTH_TCP || c->cls == CT_CLASS_OTHER;
	uint8_t *f = S->frame;
	size_t hdr;

	if (k->type == PKT_PFC)
		return pfc_frame(S, wire_len, truth_len);
	if (tcp) {
		struct ct_frame_ip ip;
		uint8_t *l4;

		frame_ip(S, k, sh, dh, &ip);
		l4 = f + ct_frame_ip_write(f, &ip, 6, 20 + k->payload);
		memset(l4, 0, 20);
		ct_put16(l4, sp);
		ct_put16(l4 + 2, k->dir == DIR_FWD ? c->port_dst : c->port_src);
		ct_put32(l4 + 4, k->psn);
		ct_put32(l4 + 8, k->aux);
		l4[12] = 5 << 4;
		l4[13] = k->opcode;
		ct_put16(l4 + 14, 65535);
		hdr = (size_t)(l4 + 20 - f);
		*truth_len = (uint32_t)hdr + k->payload;
	} else {
		struct ct_roce_frame r = {.sport = sp, .payload = k->payload};

		frame_ip(S, k, sh, dh, &r.ip);
		frame_bth(S, k, &r.bth);
		*truth_len = (uint32_t)ct_roce_frame_write(f, MAX_FRAME, &r, &hdr);
	}
	*wire_len = *truth_len < ETH_MIN ? ETH_MIN : *truth_len;
	return (uint32_t)hdr;
}

static int emit_until(struct synth *S, uint64_t limit, ct_synth_emit_fn emit, void *ctx);

static int pkt_cmp(const void *a, const void *b)
{
	const struct pkt *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

static int emit_until(struct synth *S, uint64_t limit, ct_synth_emit_fn emit, void *ctx)
{
	size_t i;
	int err = 0;

	qsort(S->pkts, S->n_pkts, sizeof(*S->pkts), pkt_cmp);
	for (i = 0; i < S->n_pkts && S->pkts[i].ts < limit && !err; i++) {
		const struct pkt *k = &S->pkts[i];
		struct conn *c = &S->conns[k->conn];
		uint32_t wire, truth, hdr = build_frame(S, k, &wire, &truth);
		uint32_t cap = wire;

		if (S->cfg->snaplen && cap > S->cfg->snaplen)
			cap = S->cfg->snaplen;
		if (cap > hdr) /* payload bytes present in the copy are zeros */
			memset(S->frame + hdr, 0, (cap < MAX_FRAME ? cap : MAX_FRAME) - hdr);
		if (k->type != PKT_PFC) {
			c->packets[k->dir]++;
			c->bytes[k->dir] += truth;
			c->op_bytes[k->dir][k->op] += truth;
		}
		err = emit(ctx, k->ts, S->frame, cap, wire);
	}
	memmove(S->pkts, S->pkts + i, (S->n_pkts - i) * sizeof(*S->pkts));
	S->n_pkts -= i;
	return err;
}

/* ---- the schedule, iteration by iteration ---------------------------------- */

static int msg_add(struct synth *S, uint64_t desired, uint32_t conn, uint32_t bytes,
		   enum ct_op op)
{
	if (S->n_msgs == S->cap_msgs) {
		struct msg *nm = ct_grow(S->msgs, &S->cap_msgs, sizeof(*nm), 4096);

		if (!nm)
			return -ENOMEM;
		S->msgs = nm;
	}
	S->msgs[S->n_msgs++] = (struct msg){desired, conn, bytes, S->order++, (uint8_t)op};
	return 0;
}

static int msg_cmp(const void *a, const void *b)
{
	const struct msg *x = a, *y = b;

	if (x->desired != y->desired)
		return x->desired < y->desired ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

/* MoE: each pair's all-to-all share varies between iterations, less as training goes on. */
static double ep_factor(struct synth *S, unsigned iteration)
{
	double spread = 0.6 / (1.0 + iteration / 8.0);

	return 1.0 + spread * (2 * rng_uniform(S) - 1);
}

/*
 * The data one network message of a transfer carries, and the bytes on the
 * wire per data byte. With the profile's "nccl": p2p chunks of
 * NCCL_P2P_NET_CHUNKSIZE; collectives a step (buffer / 8) per message, a
 * slice of 2 steps for Simple ring; LL lines carry 8 data bytes in 16, LL128
 * 120 in 128.
 */
static uint64_t message_data(const struct synth *S, const struct ct_transfer *x, double *wire)
{
	const struct ct_nccl *n = &S->p->nccl;
	uint64_t step = n->buffsize / NCCL_STEPS;

	*wire = 1;
	if (!n->given)
		return x->kind == CT_XFER_P2P ? P2P_CHUNK : COLLECTIVE_STEP;
	if (x->kind == CT_XFER_P2P)
		return n->p2p_chunk;
	switch (n->protocol) {
	case CT_NCCL_LL:
		*wire = 2;
		return step / 2;
	case CT_NCCL_LL128:
		*wire = 128.0 / 120;
		return step / 128 * 120;
	default:
		return n->algorithm == CT_NCCL_RING ? 2 * step : step;
	}
}

static int render_iteration(struct synth *S, unsigned it, uint64_t t0, double stretch,
			    double *iter_bytes)
{
	const struct ct_prediction *pr = S->pr;
	const struct ct_synth_config *cfg = S->cfg;
	double ts = cfg->time_scale * stretch * 1e9; /* schedule seconds -> ns */
	const struct ct_synth_inject *in = &cfg->inject;
	int err = 0;

	S->it = it;
	S->n_msgs = 0;
	for (size_t i = 0; i < pr->n_xfers && !err; i++) {
		const struct ct_transfer *x = &pr->xfers[i];
		double scaled = (double)x->bytes * cfg->size_scale;
		uint64_t bytes, step, nmsg, start;
		double wire;

		if (x->src_host == x->dst_host) /* inside a host: NVLink/PCIe, not the NIC */
			continue;
		if (x->cls == CT_CLASS_EP)
			scaled *= ep_factor(S, it);
		bytes = scaled < 1 ? 1 : (uint64_t)llround(scaled);
		step = message_data(S, x, &wire);
		nmsg = (bytes + step - 1) / step;
		start = t0 + (uint64_t)llround(x->start * ts);
		if (in->straggler >= 0 && it >= in->straggler_from && x->src_host == in->straggler)
			start += (uint64_t)llround(in->straggler_s * 1e9);
		for (uint64_t k = 0; k < nmsg && !err; k++) {
			uint32_t ci;
			uint64_t len = k + 1 < nmsg ? step : bytes - (nmsg - 1) * step;
			uint64_t when = start + (uint64_t)llround(k * x->duration * ts / nmsg);
			unsigned ch = (unsigned)(k % S->channels);

			len = wire == 1 ? len : (uint64_t)llround(len * wire);
			iter_bytes[x->cls] += (double)len;
			/* NCCL's socket transport: the size (4 bytes) on the control connection */
			if (S->p->nccl.given && cfg->transport == CT_SYNTH_TCP) {
				err = conn_get(S, x->src_rank, x->dst_rank, x->src_nic, x->dst_nic,
					       x->cls, CTRL_CHANNEL + ch, &ci);
				err = err ?: msg_add(S, when, ci, 4, x->op);
				iter_bytes[x->cls] += err ? 0 : 4;
			}
			err = err
				      ?: conn_get(S, x->src_rank, x->dst_rank, x->src_nic,
						  x->dst_nic, x->cls, ch, &ci);
			err = err ?: msg_add(S, when, ci, (uint32_t)len, x->op);
		}
	}
	/* noise: storage reads and writes of each host, at random times */
	if (cfg->noise)
		for (unsigned h = 0; h < S->p->hosts && !err; h++) {
			uint32_t ci;
			uint64_t when = t0 + (uint64_t)(rng_uniform(S) * S->pr->t_iter * ts);
			uint32_t bytes = (uint32_t)(16384 + rng_next(S) % 262144);

			/* from the host's first NIC */
			err = conn_get(S, UINT32_MAX - h, UINT32_MAX,
				       (uint16_t)(h * S->p->nics_per_host), UINT16_MAX,
				       CT_CLASS_OTHER, 0, &ci);
			err = err ?: msg_add(S, when, ci, bytes, CT_OP_OTHER);
			iter_bytes[CT_CLASS_OTHER] += bytes;
		}
	/* a PFC storm: XOFF frames all through the iteration */
	if (in->pfc_priority >= 0 && it >= in->pfc_from && S->n_conns) {
		double len = S->pr->t_iter * ts;
		unsigned n = (unsigned)llround(in->pfc_per_s * len / 1e9);

		for (unsigned k = 0; k < n && !err; k++)
			err = pkt_add(S, t0 + (uint64_t)llround(len * k / n), 0, PKT_PFC, DIR_FWD,
				      0, 0, 0, 0, 0, 0);
	}
	qsort(S->msgs, S->n_msgs, sizeof(*S->msgs), msg_cmp);
	for (size_t i = 0; i < S->n_msgs && !err; i++) {
		const struct msg *m = &S->msgs[i];
		const struct conn *c = &S->conns[m->conn];

		S->message_op = m->op;
		if (cfg->transport == CT_SYNTH_TCP || c->cls == CT_CLASS_OTHER)
			err = tcp_message(S, m->conn, m->desired, m->bytes);
		else
			err = roce_message(S, m->conn, m->desired, m->bytes);
	}
	return err;
}

/* ---- truth ------------------------------------------------------------------ */

/*
 * A flow's operations: "operation_bytes" ({op: bytes}, the operations its
 * packets belong to, acknowledgements with their message's) and "operation",
 * the one carrying most of its bytes (the first in enum order on a tie).
 */
static void truth_operation(json_object *o, const uint64_t *op_bytes)
{
	json_object *per = json_object_new_object();
	unsigned top = CT_OP_OTHER;
	uint64_t most = 0;

	for (unsigned k = 0; k < CT_OP_COUNT; k++) {
		if (!op_bytes[k])
			continue;
		json_object_object_add(per, ct_op_name(k), json_object_new_uint64(op_bytes[k]));
		if (op_bytes[k] > most) {
			most = op_bytes[k];
			top = k;
		}
	}
	json_object_object_add(o, "operation", json_object_new_string(ct_op_name(top)));
	json_object_object_add(o, "operation_bytes", per);
}

/* The layout the profile trains with, and whether data parallelism is sharded (ZeRO). */
static json_object *truth_layout(const struct ct_profile *p)
{
	json_object *l = json_object_new_object();

	json_object_object_add(l, "p", json_object_new_int((int)p->p));
	json_object_object_add(l, "t", json_object_new_int((int)p->t));
	json_object_object_add(l, "d", json_object_new_int((int)p->d));
	json_object_object_add(l, "ep", json_object_new_int((int)p->ep));
	json_object_object_add(l, "sharded", json_object_new_boolean(p->zero > 0));
	return l;
}

static void truth_flow(json_object *flows, const struct synth *S, const struct conn *c, int dir)
{
	json_object *o = json_object_new_object();
	int tcp = S->cfg->transport == CT_SYNTH_TCP || c->cls == CT_CLASS_OTHER;
	struct ct_addr st1, st2;
	uint16_t sh = dir == DIR_FWD ? c->src_nic : c->dst_nic;
	uint16_t dh = dir == DIR_FWD ? c->dst_nic : c->src_nic;
	char a[64], b[64];

	if (!c->packets[dir])
		return;
	json_object_object_add(o, "transport", json_object_new_string(tcp ? "tcp" : "roce"));
	json_object_object_add(
		o, "src", json_object_new_string(ct_addr_format(nic_addr(S, sh, &st1), a, 64)));
	json_object_object_add(
		o, "dst", json_object_new_string(ct_addr_format(nic_addr(S, dh, &st2), b, 64)));
	if (tcp) {
		json_object_object_add(o, "sport", json_object_new_int(dir == DIR_FWD ? c->port_src
										     : c->port_dst));
		json_object_object_add(o, "dport", json_object_new_int(dir == DIR_FWD ? c->port_dst
										     : c->port_src));
	} else {
		json_object_object_add(o, "qpn", json_object_new_int64(dir == DIR_FWD ? c->qp_dst
										      : c->qp_src));
	}
	json_object_object_add(o, "class", json_object_new_string(ct_class_name(c->cls)));
	json_object_object_add(o, "direction", json_object_new_string(dir == DIR_FWD ? "data"
										  : "reverse"));
	if (c->src_rank != UINT32_MAX && c->dst_rank != UINT32_MAX) {
		json_object_object_add(o, "src_rank", json_object_new_int64(c->src_rank));
		json_object_object_add(o, "dst_rank", json_object_new_int64(c->dst_rank));
	}
	json_object_object_add(o, "packets", json_object_new_uint64(c->packets[dir]));
	json_object_object_add(o, "bytes", json_object_new_uint64(c->bytes[dir]));
	if (S->cfg->truth_operations)
		truth_operation(o, c->op_bytes[dir]);
	json_object_array_add(flows, o);
}

/* A host's NIC addresses, as the truth names it. */
static json_object *host_addrs(const struct synth *S, int h)
{
	json_object *a = json_object_new_array();
	char buf[64];

	for (unsigned k = 0; k < S->p->nics_per_host; k++)
		json_object_array_add(
			a,
			json_object_new_string(ct_addr_format(
				&S->p->nic_addr[(unsigned)h * S->p->nics_per_host + k], buf, 64)));
	return a;
}

static void truth_inject(json_object *list, const struct synth *S, const char *kind, int a, int b,
			 unsigned from, const char *what, double v)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "kind", json_object_new_string(kind));
	if (a >= 0) {
		json_object_object_add(o, "host", json_object_new_int(a));
		json_object_object_add(o, "host_addrs", host_addrs(S, a));
	}
	if (b >= 0) {
		json_object_object_add(o, "peer", json_object_new_int(b));
		json_object_object_add(o, "peer_addrs", host_addrs(S, b));
	}
	json_object_object_add(o, "from_iteration", json_object_new_int((int)from));
	json_object_object_add(o, what, json_object_new_double(v));
	json_object_array_add(list, o);
}

static int injecting(const struct ct_synth_inject *in)
{
	return in->straggler >= 0 || in->slow_a >= 0 || in->lossy_a >= 0 || in->congest >= 0 ||
	       in->pfc_priority >= 0 || in->pause_at >= 0;
}

/* The injected anomalies, for the corpus runner to score against. */
static json_object *truth_injected(const struct synth *S)
{
	const struct ct_synth_inject *in = &S->cfg->inject;
	json_object *l = json_object_new_array();

	if (in->straggler >= 0)
		truth_inject(l, S, "straggler", in->straggler, -1, in->straggler_from, "delay_s",
			     in->straggler_s);
	if (in->slow_a >= 0)
		truth_inject(l, S, "slow_link", in->slow_a, in->slow_b, in->slow_from, "factor",
			     in->slow_factor);
	if (in->lossy_a >= 0)
		truth_inject(l, S, "loss", in->lossy_a, in->lossy_b, in->lossy_from, "loss_rate",
			     in->loss_rate);
	if (in->congest >= 0)
		truth_inject(l, S, "congestion", in->congest, -1, in->congest_from,
			     "marked_fraction", in->congest_fraction);
	if (in->pfc_priority >= 0) {
		truth_inject(l, S, "congestion", -1, -1, in->pfc_from, "pfc_per_s", in->pfc_per_s);
		json_object_object_add(
			json_object_array_get_idx(l, json_object_array_length(l) - 1), "priority",
			json_object_new_int(in->pfc_priority));
	}
	if (in->pause_at >= 0)
		truth_inject(l, S, "rhythm", -1, -1, (unsigned)in->pause_at, "excess_s",
			     in->pause_s);
	return l;
}

static int write_truth(const struct synth *S, FILE *out, const uint64_t *starts, unsigned n,
		       const double *per_iter)
{
	json_object *root = json_object_new_object(), *st = json_object_new_array();
	json_object *flows = json_object_new_array(), *cls = json_object_new_object();
	double mean = n ? (double)(starts[n] - starts[0]) / n / 1e9 : 0; /* starts[n]: the end */
	int err = 0;

	json_object_object_add(root, "schema", json_object_new_string("commtap.truth/v1"));
	json_object_object_add(root, "profile", json_object_new_string(S->p->name));
	json_object_object_add(root, "transport",
			       json_object_new_string(S->cfg->transport == CT_SYNTH_TCP ? "tcp"
											 : "roce"));
	json_object_object_add(root, "iterations", json_object_new_int((int)n));
	for (unsigned i = 0; i < n; i++)
		json_object_array_add(st, json_object_new_uint64(starts[i]));
	json_object_object_add(root, "iteration_starts_ns", st);
	json_object_object_add(root, "mean_period_s", json_object_new_double(mean));
	json_object_object_add(root, "size_scale", json_object_new_double(S->cfg->size_scale));
	json_object_object_add(root, "time_scale", json_object_new_double(S->cfg->time_scale));
	for (int c = 0; c <= CT_CLASS_COUNT; c++) {
		json_object *list = json_object_new_array();
		bool any = false;

		for (unsigned i = 0; i < n; i++) {
			double v = per_iter[i * (CT_CLASS_COUNT + 1) + c];

			any |= v > 0;
			json_object_array_add(list, json_object_new_double(v));
		}
		if (any)
			json_object_object_add(cls, ct_class_name(c), list);
		else
			json_object_put(list);
	}
	json_object_object_add(root, "bytes_per_class_per_iteration", cls);
	for (size_t i = 0; i < S->n_conns; i++) {
		truth_flow(flows, S, &S->conns[i], DIR_FWD);
		truth_flow(flows, S, &S->conns[i], DIR_REV);
	}
	json_object_object_add(root, "flows", flows);
	/* only when asked for: a truth without them stays as it was (test/accuracy/frozen) */
	if (S->cfg->truth_operations)
		json_object_object_add(root, "layout", truth_layout(S->p));
	/* only with an injection: a clean truth stays as it was (test/accuracy/frozen) */
	if (injecting(&S->cfg->inject)) {
		json_object *hosts = json_object_new_array();

		json_object_object_add(root, "injected", truth_injected(S));
		for (unsigned h = 0; h < S->p->hosts; h++)
			json_object_array_add(hosts, host_addrs(S, (int)h));
		json_object_object_add(root, "host_addrs", hosts);
	}
	if (fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY), out) < 0 ||
	    fputc('\n', out) < 0)
		err = -EIO;
	json_object_put(root);
	return err;
}

/* RoCE path MTU, or TCP MSS (the frame less IP and TCP headers). */
static unsigned payload_max_of(const struct ct_profile *p, const struct ct_synth_config *cfg)
{
	if (cfg->transport == CT_SYNTH_TCP)
		return (cfg->mtu ? cfg->mtu : 9000) - 40 - (ct_addr_is_v4(&p->host_addr[0]) ? 0 : 20);
	return cfg->mtu ? cfg->mtu : 4096;
}

/*
 * An upper bound on the packets one iteration renders: per network message
 * its data packets (payload-sized, EP's routing spread at its widest), a
 * CTS and its ACK, and at most one ACK per data packet; noise adds a few.
 */
int ct_synth_check(const struct ct_profile *p, const struct ct_prediction *pr,
		   const struct ct_synth_config *cfg, char *why, size_t why_len)
{
	const struct synth S = {.p = p, .pr = pr, .cfg = cfg, .payload_max = payload_max_of(p, cfg)};
	double n = 4.0 * p->hosts;

	for (size_t i = 0; i < pr->n_xfers; i++) {
		const struct ct_transfer *x = &pr->xfers[i];
		double wire, bytes = (double)x->bytes * cfg->size_scale, msgs, data;
		uint64_t step;

		if (x->src_host == x->dst_host)
			continue;
		if (x->cls == CT_CLASS_EP)
			bytes *= 1.6; /* ep_factor's widest spread */
		step = message_data(&S, x, &wire);
		msgs = ceil((bytes < 1 ? 1 : bytes) / (double)step);
		data = bytes * wire / S.payload_max + msgs;
		n += 2 * data + 3 * msgs;
	}
	if (n <= CT_SYNTH_MAX_ITERATION_PACKETS)
		return 0;
	if (why)
		snprintf(why, why_len,
			 "--scale %g: one iteration of %s would be up to %.3g packets, above the "
			 "%u synth renders at once; lower --scale (docs/profiles.md, Limits)",
			 cfg->size_scale, p->name, n, CT_SYNTH_MAX_ITERATION_PACKETS);
	return -E2BIG;
}

int ct_synth_run(const struct ct_profile *p, const struct ct_prediction *pr,
		 const struct ct_synth_config *cfg, ct_synth_emit_fn emit, void *ctx, FILE *truth)
{
	struct synth *S;
	uint64_t *starts = NULL, t0 = cfg->start_ns;
	double *per_iter = NULL;
	int err = 0;

	if (!cfg->iterations || cfg->size_scale <= 0 || cfg->time_scale <= 0 || cfg->jitter < 0 ||
	    cfg->jitter >= 1 || cfg->channels > 64)
		return -EINVAL;
	if ((cfg->inject.straggler >= (int)p->hosts) || cfg->inject.slow_a >= (int)p->hosts ||
	    cfg->inject.slow_b >= (int)p->hosts || cfg->inject.lossy_a >= (int)p->hosts ||
	    cfg->inject.lossy_b >= (int)p->hosts || cfg->inject.congest >= (int)p->hosts ||
	    cfg->inject.pfc_priority > 7 || cfg->inject.pause_at >= (int)cfg->iterations)
		return -EINVAL;
	err = ct_synth_check(p, pr, cfg, NULL, 0);
	if (err)
		return err;
	S = calloc(1, sizeof(*S));
	if (!S)
		return -ENOMEM;
	S->p = p;
	S->pr = pr;
	S->cfg = cfg;
	S->channels = cfg->channels ? cfg->channels : p->nccl.channels ? p->nccl.channels : 2;
	S->rng = cfg->seed;
	S->nic_ns_per_byte = 8.0 / p->hw.nic_gbps;
	S->payload_max = payload_max_of(p, cfg);
	S->nic_free = calloc(p->nics + 1, sizeof(*S->nic_free));
	S->next_qp = calloc(p->nics + 1, sizeof(*S->next_qp));
	starts = calloc(cfg->iterations + 1, sizeof(*starts));
	per_iter = calloc((size_t)cfg->iterations * (CT_CLASS_COUNT + 1), sizeof(*per_iter));
	if (!S->nic_free || !S->next_qp || !starts || !per_iter) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned h = 0; h <= p->nics; h++)
		S->next_qp[h] = 0x100 + (uint32_t)(rng_next(S) % 0x1000) * 16;
	for (unsigned it = 0; it < cfg->iterations && !err; it++) {
		double stretch = 1 + cfg->jitter * (2 * rng_uniform(S) - 1);

		starts[it] = t0;
		err = render_iteration(S, it, t0, stretch,
				       &per_iter[(size_t)it * (CT_CLASS_COUNT + 1)]);
		t0 += (uint64_t)llround(pr->t_iter * cfg->time_scale * stretch * 1e9);
		/* the others wait for a straggler: the iteration grows by its delay */
		if (cfg->inject.straggler >= 0 && it >= cfg->inject.straggler_from)
			t0 += (uint64_t)llround(cfg->inject.straggler_s * 1e9);
		/* a checkpoint, a stalled input pipeline: every host idle, once */
		if ((int)it == cfg->inject.pause_at)
			t0 += (uint64_t)llround(cfg->inject.pause_s * 1e9);
		/* packets before the next iteration's start can no longer be preceded */
		err = err ?: emit_until(S, t0, emit, ctx);
	}
	starts[cfg->iterations] = t0;
	err = err ?: emit_until(S, UINT64_MAX, emit, ctx);
	if (!err && truth)
		err = write_truth(S, truth, starts, cfg->iterations, per_iter);
out:
	free(starts);
	free(per_iter);
	free(S->nic_free);
	free(S->next_qp);
	free(S->conns);
	free(S->conn_index);
	free(S->pkts);
	free(S->msgs);
	free(S);
	return err;
}
