// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: frames through the parser, then through an engine.
 *
 * The input is a run of frames as a mirror session would deliver them:
 *
 *   byte 0             frames per ct_engine_feed call: 1 + byte % 48
 *   then per frame     u16 le  frame length (cut to what the input holds)
 *                      u16 le  captured length (0: all of it; else at most that)
 *                      u8      wire length: bit 7 set, len - (b & 0x7f) (a
 *                              capture that claims less than it holds);
 *                              else len + 64 * b (a truncated mirror copy)
 *                      u8      time step: < 128 that many us forward; < 250
 *                              (b - 128) ms forward; 250..254 back (b - 249)
 *                              ms; 255 forward 2^40 ns
 *                      bytes   the frame
 *
 * Each frame is copied into a heap buffer of exactly its captured length,
 * so that ASan catches any read past it. The engine is created per input
 * (a tiny table, so that inputs fill it and evict) and so a crash replays
 * from its input alone. Invariants checked: the parser's result is
 * consistent with the bytes it was given; the engine's counters add up;
 * every packet of a flow and every byte reaches a flow record or a burst
 * exactly once (the rings are sized so nothing is dropped).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <commtap/dataplane.h>
#include <commtap/roce_opcode.h>

#define MAX_FRAMES   64
#define REC_HDR	     6
#define TABLE_BUDGET (8u << 10) /* seven flows: inputs fill it and evict */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz_parse: %s:%d: invariant failed: %s\n", __FILE__,     \
				__LINE__, #cond);                                                  \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct frames {
	struct ct_packet pkt[MAX_FRAMES];
	uint8_t *buf[MAX_FRAMES];
	unsigned n;
};

/* Totals seen through the flows handed out and through the bursts. */
struct tally {
	uint64_t flow_packets, flow_bytes, flows;
	uint64_t burst_packets, burst_bytes, bursts;
};

static void check_addr_kind(const struct ct_pkt *p)
{
	CHECK(p->ip_version == 4 || p->ip_version == 6);
	if (p->ip_version == 4)
		CHECK(ct_addr_is_v4(&p->src) && ct_addr_is_v4(&p->dst));
}

static void check_roce(const uint8_t *frame, uint32_t cap, const struct ct_pkt *p)
{
	const struct ct_roce *r = &p->roce;
	const struct ct_opcode_info *info = &ct_opcode_table[r->opcode];

	CHECK(p->hdr_cut < CT_CUT_COUNT);
	if (p->hdr_cut == CT_CUT_BEFORE_QPN) { /* on the address pair's flow */
		CHECK(CT_QPN_IS_CUT(r->dqpn));
		CHECK(CT_QPN_CUT_REASON(r->dqpn) == CT_MAL_UDP_TRUNCATED ||
		      CT_QPN_CUT_REASON(r->dqpn) == CT_MAL_BTH_TRUNCATED);
		return;
	}
	CHECK(info->valid);
	CHECK(r->dqpn <= 0xffffff && r->psn <= 0xffffff);
	CHECK(r->pad <= 3);
	if (p->hdr_cut == CT_CUT_AFTER_QPN)
		return;
	if (p->hdr_cut == CT_CUT_ROCE_EXT) { /* the headers kept are a strict subset */
		CHECK((r->ext & ~info->ext) == 0 && r->ext != info->ext);
		CHECK(r->payload == NULL && r->payload_cap == 0);
		return;
	}
	CHECK(r->ext == info->ext);
	CHECK(r->payload_cap <= r->payload_len);
	CHECK(r->payload >= frame && r->payload <= frame + cap);
	CHECK(r->payload_cap <= (uint32_t)(frame + cap - r->payload));
}

/* What ct_parse said about one frame must be consistent with the frame. */
static void check_parse(const uint8_t *frame, uint32_t cap, const struct ct_pkt *p)
{
	CHECK((unsigned)p->kind <= CT_PKT_OTHER_IP);
	CHECK((unsigned)p->malformed < CT_MAL_COUNT);
	CHECK((p->kind == CT_PKT_MALFORMED) == (p->malformed != CT_MAL_NONE));
	CHECK(strcmp(ct_malformed_name(p->malformed), "unknown") != 0);
	CHECK(p->encap <= 1);
	CHECK(p->ecn <= 3 && p->dscp <= 63);
	if (p->kind == CT_PKT_MALFORMED)
		return;
	CHECK(p->vlan_count <= CT_MAX_VLAN);
	CHECK(p->vlan_count ? p->pcp <= 7 : p->pcp == 0xff);
	switch (p->kind) {
	case CT_PKT_ROCE:
		check_addr_kind(p);
		CHECK(p->ip_proto == 17);
		check_roce(frame, cap, p);
		break;
	case CT_PKT_TCP:
		check_addr_kind(p);
		CHECK(p->ip_proto == 6);
		break;
	case CT_PKT_PFC:
		CHECK(p->pfc.opcode == 0x0101 || p->pfc.opcode == 0x0001);
		break;
	default:
		break;
	}
}

static uint64_t time_step(uint8_t b)
{
	if (b < 128)
		return b * 1000ull;
	if (b < 250)
		return (b - 128) * 1000000ull;
	if (b < 255)
		return (uint64_t) - ((b - 249) * 1000000ll);
	return 1ull << 40;
}

static uint32_t wire_len_of(uint32_t len, uint8_t b)
{
	if (b & 0x80)
		return len > (b & 0x7fu) ? len - (b & 0x7fu) : 0;
	return len + 64u * b;
}

/* Cut the input into frames, each in a buffer of exactly its captured length. */
static int frames_load(struct frames *fr, const uint8_t *data, size_t size)
{
	uint64_t ts = 1ull << 50;
	size_t off = 1;

	fr->n = 0;
	while (fr->n < MAX_FRAMES && size - off >= REC_HDR) {
		const uint8_t *h = data + off;
		uint32_t len = (uint32_t)(h[0] | h[1] << 8), cap = (uint32_t)(h[2] | h[3] << 8);
		struct ct_packet *pkt = &fr->pkt[fr->n];
		uint8_t *buf;

		off += REC_HDR;
		if (len > size - off)
			len = (uint32_t)(size - off);
		if (!cap || cap > len)
			cap = len;
		buf = malloc(cap ? cap : 1);
		if (!buf)
			return -1;
		memcpy(buf, data + off, cap);
		off += len;
		ts += time_step(h[5]);
		*pkt = (struct ct_packet){buf, cap, wire_len_of(len, h[4]), ts};
		fr->buf[fr->n++] = buf;
	}
	return 0;
}

static void frames_free(struct frames *fr)
{
	for (unsigned i = 0; i < fr->n; i++)
		free(fr->buf[i]);
}

/* Opcodes a flow counted: each valid and named once. */
struct op_seen {
	uint64_t packets;
	uint8_t seen[256];
};

static void on_opcode(uint8_t opcode, uint64_t count, void *ctx)
{
	struct op_seen *o = ctx;

	CHECK(ct_opcode_table[opcode].valid);
	CHECK(!o->seen[opcode] && count > 0);
	o->seen[opcode] = 1;
	o->packets += count;
}

static void on_flow(const struct ct_flow *f, void *ctx)
{
	struct tally *t = ctx;
	struct op_seen ops = {0};

	CHECK(f->key.transport == CT_TRANSPORT_ROCE || f->key.transport == CT_TRANSPORT_TCP);
	CHECK(!(f->state & CT_FS_IN_BURST));
	CHECK(f->op_used <= CT_OP_SLOTS);
	/* every RoCE packet is counted under exactly one opcode, or as "other" */
	ct_flow_foreach_opcode(f, on_opcode, &ops);
	if (f->key.transport == CT_TRANSPORT_ROCE && CT_QPN_IS_CUT(f->key.id))
		CHECK(ops.packets == 0); /* copies cut before their QPN: no opcode counted */
	else if (f->key.transport == CT_TRANSPORT_ROCE)
		CHECK(ops.packets + f->cold.op_other == f->packets);
	else
		CHECK(ops.packets == 0);
	t->flow_packets += f->packets;
	t->flow_bytes += f->bytes;
	t->flows++;
}

static void on_burst(const struct ct_flow_burst *b, void *ctx)
{
	struct tally *t = ctx;

	CHECK(b->packets >= 1);
	t->burst_packets += b->packets;
	t->burst_bytes += b->bytes;
	t->bursts++;
}

/* The CM log holds REQs and REPs, no more than were counted. */
static void check_cm_log(const struct ct_engine *e, const struct ct_engine_counters *c)
{
	const struct ct_cm_event *ev;
	unsigned n = ct_engine_cm_events(e, &ev);

	CHECK(n + c->cm_dropped == c->cm_messages);
	for (unsigned i = 0; i < n; i++) {
		CHECK(ev[i].type == CT_CM_REQ || ev[i].type == CT_CM_REP);
		CHECK(ev[i].local_qpn <= 0xffffff);
	}
}

/* The engine's counters add up, and every flow packet is in exactly one flow and one burst. */
static void check_engine(struct ct_engine *e, const struct frames *fr, struct tally *t)
{
	struct ct_engine_counters c;
	uint64_t by_reason = 0, kinds;

	ct_engine_get_counters(e, &c);
	CHECK(c.packets == fr->n);
	for (unsigned i = 0; i < CT_MAL_COUNT; i++)
		by_reason += c.malformed_by_reason[i];
	CHECK(by_reason == c.malformed && !c.malformed_by_reason[CT_MAL_NONE]);
	kinds = c.roce_packets + c.tcp_packets + c.other_l2 + c.other_ip + c.malformed +
		c.pfc.pfc_frames + c.pfc.pause_frames;
	CHECK(kinds == c.packets);
	CHECK(c.table.live <= c.table.capacity);
	CHECK(c.table.inserts == c.table.live + c.table.evicted_idle + c.table.evicted_full);
	CHECK(!c.evicted_unreported && !c.bursts_dropped);
	check_cm_log(e, &c);

	ct_engine_finish(e, on_flow, t);
	ct_engine_drain_bursts(e, on_burst, t);
	ct_engine_get_counters(e, &c);
	CHECK(c.table.live == 0 && !c.bursts_dropped);
	CHECK(t->flows == c.table.inserts);
	CHECK(t->flow_packets == c.roce_packets + c.tcp_packets);
	CHECK(t->flow_bytes == c.roce_bytes + c.tcp_bytes);
	CHECK(t->burst_packets == t->flow_packets);
	CHECK(t->burst_bytes == t->flow_bytes);
	CHECK(t->bursts == c.bursts);
}

static struct ct_engine *engine_new(void)
{
	struct ct_engine_config cfg = {
		.memory_budget = TABLE_BUDGET,
		.idle_timeout_ns = 1000000,
		.tcp_msg_gap_ns = 1000,
		.burst_gap_ns = 5000,
		/* room for every flow and burst an input can make: nothing dropped */
		.evict_ring_slots = MAX_FRAMES,
		.burst_ring_slots = 2 * MAX_FRAMES,
	};
	struct ct_engine *e;

	if (ct_engine_create(&cfg, &e))
		abort();
	return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tally t = {0};
	struct frames fr;
	struct ct_engine *e;
	unsigned per_call;

	if (size < 1 + REC_HDR)
		return 0;
	if (frames_load(&fr, data, size)) {
		frames_free(&fr);
		return 0;
	}
	for (unsigned i = 0; i < fr.n; i++) {
		struct ct_pkt p;
		enum ct_pkt_kind kind =
			ct_parse(fr.pkt[i].data, fr.pkt[i].cap_len, fr.pkt[i].wire_len, &p);

		CHECK(kind == p.kind);
		check_parse(fr.pkt[i].data, fr.pkt[i].cap_len, &p);
	}
	e = engine_new();
	per_call = 1 + data[0] % 48;
	for (unsigned i = 0; i < fr.n; i += per_call)
		ct_engine_feed(e, &fr.pkt[i], fr.n - i < per_call ? fr.n - i : per_call);
	check_engine(e, &fr, &t);
	ct_engine_destroy(e);
	frames_free(&fr);
	return 0;
}
