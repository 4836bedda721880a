// SPDX-License-Identifier: MIT
/*
 * The engine's fast path: parse -> flow table -> message assembly.
 *
 * Where a packet goes:
 *   ct_engine_feed -> roce_shortcut (the plain IPv4 RoCEv2 frame), else ct_parse (parse.c)
 *     RoCE/TCP  -> account_flow -> ct_flow_table_get_inline (flow_table_internal.h)
 *                  -> ct_msg_roce_in_order (message_inline.h), else
 *                     ct_msg_roce / ct_msg_tcp (message.c), ct_cm_inspect (cm.c)
 *     PFC/PAUSE -> account_pfc
 *     otherwise -> engine counters only
 */
#include "engine_internal.h"
#include "flow_table_internal.h"
#include "message_inline.h"
#include "parse_internal.h"

#include <commtap/roce_opcode.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_EVICT_RING 4096
#define DEFAULT_BURST_RING 65536
#define BURST_WRITE_AHEAD  4 /* burst records (80 B) fetched ahead of the one written */

/* The open burst of f ends at its last packet: queue it for the slow path. */
static void burst_emit(struct ct_engine *e, const struct ct_flow *f)
{
	struct ct_flow_burst *b;

	e->c.bursts++;
	if (e->burst_head - e->burst_tail == e->burst_slots) {
		e->c.bursts_dropped++;
		return;
	}
	b = &e->burst_ring[e->burst_head++ % e->burst_slots];
	/*
	 * The ring is written in order but read only by the slow path: fetch
	 * the lines of a later record for writing, so that this store stream
	 * does not wait on each line's read for ownership.
	 */
	__builtin_prefetch(&e->burst_ring[(e->burst_head + BURST_WRITE_AHEAD) % e->burst_slots], 1);
	b->key = f->key;
	b->start = f->cold.burst_start_ts;
	b->end = f->last_ts;
	b->bytes = f->bytes - f->cold.burst_start_bytes;
	b->messages = (uint32_t)f->cold.messages - f->cold.burst_start_messages;
	b->packets = (uint32_t)f->packets - f->cold.burst_start_packets;
	b->loss = f->cold.burst_loss;
	b->marks = f->burst_marks;
}

static inline void burst_begin(struct ct_flow *f, uint64_t ts)
{
	f->cold.burst_start_ts = ts;
	f->cold.burst_start_bytes = f->bytes;
	f->cold.burst_start_messages = (uint32_t)f->cold.messages;
	f->cold.burst_start_packets = (uint32_t)f->packets;
	f->cold.burst_loss = 0;
	f->burst_marks = 0;
	f->state |= CT_FS_IN_BURST;
}

/*
 * Per packet: a gap longer than max(floor, 8 x the flow's usual gap) ends
 * the open burst (the rare, cold path); otherwise the usual gap is updated
 * (an integer moving average with weight 1/8).
 */
static inline uint64_t burst_gap_limit(const struct ct_engine *e, const struct ct_flow *f)
{
	uint64_t limit = (uint64_t)f->gap_ewma * CT_BURST_GAP_FACTOR;

	return limit < e->burst_gap_ns ? e->burst_gap_ns : limit;
}

static inline void burst_track(struct ct_engine *e, struct ct_flow *f, uint64_t ts)
{
	uint64_t gap = ts > f->last_ts ? ts - f->last_ts : 0;

	if (__builtin_expect(gap > burst_gap_limit(e, f), 0)) {
		/* a burst ended by ct_engine_end_quiet_bursts is out already */
		if (f->state & CT_FS_IN_BURST)
			burst_emit(e, f);
		burst_begin(f, ts);
		return;
	}
	if (gap > UINT32_MAX)
		gap = UINT32_MAX;
	f->gap_ewma = (uint32_t)((int64_t)f->gap_ewma + ((int64_t)gap - f->gap_ewma) / 8);
}

/* Eviction callback: keep a copy for the slow path, or count the loss. */
static void on_evict(void *ctx, const struct ct_flow *flow, enum ct_evict_reason why)
{
	struct ct_engine *e = ctx;
	struct ct_flow *slot;

	if (why == CT_EVICT_FLUSH)
		return;
	if (flow->state & CT_FS_IN_BURST)
		burst_emit(e, flow);
	if (e->evict_head - e->evict_tail == e->evict_slots) {
		e->c.evicted_unreported++;
		return;
	}
	slot = &e->evict_ring[e->evict_head % e->evict_slots];
	memcpy(slot, flow, sizeof(*slot));
	ct_msg_finish(slot);
	slot->state &= ~CT_FS_IN_BURST;
	e->evict_head++;
}

int ct_engine_create(const struct ct_engine_config *cfg, struct ct_engine **out)
{
	struct ct_allocator a = ct_default_allocator;
	struct ct_engine *e;
	int err;

	if (cfg->alloc)
		a = *cfg->alloc;
	e = a.alloc(sizeof(*e), 64, a.ctx);
	if (!e)
		return -ENOMEM;
	e->alloc = a;
	e->tcp_msg_gap_ns = cfg->tcp_msg_gap_ns;
	e->evict_slots = cfg->evict_ring_slots ? cfg->evict_ring_slots : DEFAULT_EVICT_RING;
	e->evict_ring = a.alloc((size_t)e->evict_slots * sizeof(struct ct_flow), 64, a.ctx);
	e->burst_gap_ns = cfg->burst_gap_ns ? cfg->burst_gap_ns : CT_DEFAULT_BURST_GAP_NS;
	e->burst_slots = cfg->burst_ring_slots ? cfg->burst_ring_slots : DEFAULT_BURST_RING;
	e->burst_ring = a.alloc((size_t)e->burst_slots * sizeof(struct ct_flow_burst), 64, a.ctx);
	e->reads = a.alloc(CT_READ_TABLE_SLOTS * sizeof(struct ct_read_entry), 64, a.ctx);
	e->cm_log = a.alloc(CT_CM_LOG_SLOTS * sizeof(struct ct_cm_event), 64, a.ctx);
	if (!e->evict_ring || !e->burst_ring || !e->reads || !e->cm_log) {
		ct_engine_destroy(e);
		return -ENOMEM;
	}
	err = ct_flow_table_create(cfg->memory_budget, cfg->idle_timeout_ns, &a, on_evict, e,
				   &e->table);
	if (err) {
		ct_engine_destroy(e);
		return err;
	}
	*out = e;
	return 0;
}

void ct_engine_destroy(struct ct_engine *e)
{
	if (!e)
		return;
	struct ct_allocator a = e->alloc;

	ct_flow_table_destroy(e->table);
	if (e->evict_ring)
		a.free(e->evict_ring, a.ctx);
	if (e->burst_ring)
		a.free(e->burst_ring, a.ctx);
	if (e->reads)
		a.free(e->reads, a.ctx);
	if (e->cm_log)
		a.free(e->cm_log, a.ctx);
	a.free(e, a.ctx);
}

/*
 * The hot slot already counting opcode op, or -1. The six ids are compared
 * at once as bytes of one word (a zero byte marks a match; the lowest one is
 * exact), instead of a loop whose exit the branch predictor cannot learn.
 * They are read as 4 + 2 bytes, not as the 8 that end with state: a load
 * that overlaps burst_begin's store to state, still in flight, cannot take
 * its bytes from the store buffer and waits for the store to retire (with
 * thousands of QPs busy, every packet begins a burst).
 */
static inline int opcode_slot(const struct ct_flow *f, uint8_t op)
{
	/* the high bit of each byte of the first op_used ids */
	static const uint64_t used_high[CT_OP_SLOTS + 1] = {
		0, 0x80, 0x8080, 0x808080, 0x80808080, 0x8080808080, 0x808080808080,
	};
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t ids, x, zero;
	uint32_t lo;
	uint16_t hi;

	memcpy(&lo, f->op_id, sizeof(lo));
	memcpy(&hi, f->op_id + sizeof(lo), sizeof(hi));
	ids = (uint64_t)hi << 32 | lo; /* bytes 6 and 7 zero: masked off below */
	x = ids ^ (ones * op);
	zero = (x - ones) & ~x & used_high[f->op_used]; /* op_used <= 6 */
	return zero ? __builtin_ctzll(zero) / 8 : -1;
}

_Static_assert(CT_OP_SLOTS == 6, "opcode_slot reads op_id[] as 4 + 2 bytes");

static __attribute__((noinline)) void count_new_opcode(struct ct_flow *f, uint8_t op)
{
	unsigned i;

	if (f->op_used < CT_OP_SLOTS) {
		f->op_id[f->op_used] = op;
		f->op_count[f->op_used++] = 1;
		return;
	}
	for (i = 0; i < CT_OP_EXTRA; i++) {
		if (f->cold.op_extra_count[i] && f->cold.op_extra_id[i] == op)
			break;
		if (!f->cold.op_extra_count[i]) {
			f->cold.op_extra_id[i] = op;
			break;
		}
	}
	if (i < CT_OP_EXTRA) {
		if (f->cold.op_extra_count[i] != UINT32_MAX)
			f->cold.op_extra_count[i]++;
	} else if (f->cold.op_other != UINT32_MAX) {
		f->cold.op_other++;
	}
}

static inline void count_opcode(struct ct_flow *f, uint8_t op)
{
	int i = opcode_slot(f, op);

	if (__builtin_expect(i < 0, 0)) {
		count_new_opcode(f, op);
		return;
	}
	if (__builtin_expect(++f->op_count[i] == 0, 0))
		f->cold.op_count_hi[i]++;
}

/*
 * A RoCE copy whose headers were cut: what they still say goes on the flow.
 * Without the RETH a message is sized by its payloads (message.c); without
 * the PSN nothing is assembled; without the QPN the flow is the address
 * pair's (parse.h, CT_QPN_CUT) and only its packets and bytes count.
 */
static __attribute__((noinline)) void account_cut(struct ct_engine *e, struct ct_flow *f,
						  const struct ct_pkt *p)
{
	e->c.roce_cut[p->hdr_cut]++;
	if (p->hdr_cut == CT_CUT_BEFORE_QPN)
		return;
	count_opcode(f, p->roce.opcode);
	if (p->hdr_cut == CT_CUT_ROCE_EXT)
		ct_msg_roce(e, f, p);
}

static inline void flow_key_of(const struct ct_pkt *p, struct ct_flow_key *key)
{
	memcpy(&key->src, &p->src, sizeof(key->src));
	memcpy(&key->dst, &p->dst, sizeof(key->dst));
	memset(key->zero, 0, sizeof(key->zero));
	if (p->kind == CT_PKT_ROCE) {
		key->id = p->roce.dqpn;
		key->transport = CT_TRANSPORT_ROCE;
	} else {
		key->id = (uint32_t)p->tcp.sport << 16 | p->tcp.dport;
		key->transport = CT_TRANSPORT_TCP;
	}
}

/* Per-burst sums of the engine counters, added to them once per call. */
struct feed_totals {
	uint64_t bytes, truncated, encapsulated;
	uint64_t roce_packets, roce_bytes, tcp_packets, tcp_bytes;
	uint64_t ts_min, ts_max;
};

/* A frame of a stage of ct_engine_feed: what its parse found, its flow key and hash. */
struct stage_frame {
	struct ct_pkt p;
	struct ct_flow_key key;
	uint32_t hash;
	uint64_t ts;
};

/*
 * shortcut: the frame came through roce_shortcut (a RoCE frame, nothing cut,
 * not QP1); in_order: the in-order message cases are inlined (else all go
 * to ct_msg_roce, for ct_engine_feed_layered).
 */
static inline __attribute__((always_inline)) void
account_flow(struct ct_engine *e, struct ct_flow_index x, struct feed_totals *tot,
	     const struct stage_frame *s, const int shortcut, const int in_order)
{
	const struct ct_pkt *p = &s->p;
	uint64_t ts = s->ts;
	struct ct_flow *f;
	int created;

	f = ct_flow_table_get_inline(e->table, x, &s->key, s->hash, ts, &created);
	if (__builtin_expect(created, 0))
		burst_begin(f, ts);
	else
		burst_track(e, f, ts);

	f->packets++;
	f->bytes += p->wire_len;
	if (ts > f->last_ts)
		f->last_ts = ts;
	if (__builtin_expect(p->ecn == 3, 0)) {
		f->cold.ecn_ce++;
		ct_flow_burst_count(&f->burst_marks);
	}
	f->seen |= (uint8_t)(1u << (CT_SEEN_ECN_SHIFT + p->ecn));
	if (!created && f->dscp != p->dscp)
		f->seen |= CT_SEEN_DSCP_MIX;
	f->dscp = p->dscp;
	f->pcp = p->pcp;

	if (shortcut || p->kind == CT_PKT_ROCE) {
		if (!shortcut) { /* else counted per stage */
			tot->roce_packets++;
			tot->roce_bytes += p->wire_len;
		}
		if (!shortcut && __builtin_expect(p->hdr_cut != CT_CUT_NONE, 0)) {
			account_cut(e, f, p);
			return;
		}
		count_opcode(f, p->roce.opcode);
		if (!in_order || !ct_msg_roce_in_order(f, &p->roce))
			ct_msg_roce(e, f, p);
		if (!shortcut && __builtin_expect(p->roce.dqpn == 1, 0))
			ct_cm_inspect(e, p, ts);
	} else {
		tot->tcp_packets++;
		tot->tcp_bytes += p->wire_len;
		ct_msg_tcp(e, f, p, ts);
	}
}

static void account_pfc(struct ct_engine *e, const struct ct_pfc *pfc)
{
	struct ct_pfc_counters *c = &e->c.pfc;

	if (pfc->opcode == 0x0001) {
		c->pause_frames++;
		c->pause_quanta += pfc->quanta[0];
		return;
	}
	c->pfc_frames++;
	for (int i = 0; i < 8; i++) {
		if (!(pfc->class_enable & (1u << i)))
			continue;
		c->frames[i]++;
		c->quanta[i] += pfc->quanta[i];
		if (pfc->quanta[i])
			c->xoff[i]++;
	}
}

/* A frame without a flow: PFC, other traffic, malformed reasons. */
static __attribute__((noinline)) void account_flowless(struct ct_engine *e, const struct ct_pkt *p)
{
	switch (p->kind) {
	case CT_PKT_ROCE:
	case CT_PKT_TCP:
		break;
	case CT_PKT_PFC:
		account_pfc(e, &p->pfc);
		break;
	case CT_PKT_OTHER_IP:
		e->c.other_ip++;
		break;
	case CT_PKT_OTHER_L2:
		e->c.other_l2++;
		break;
	case CT_PKT_MALFORMED:
		e->c.malformed++;
		e->c.malformed_by_reason[p->malformed]++;
		break;
	}
}

static void add_totals(struct ct_engine *e, const struct feed_totals *tot, unsigned n)
{
	struct ct_engine_counters *c = &e->c;

	if (!n)
		return;
	if (!c->packets || tot->ts_min < c->first_ts)
		c->first_ts = tot->ts_min;
	if (tot->ts_max > c->last_ts)
		c->last_ts = tot->ts_max;
	c->packets += n;
	c->bytes += tot->bytes;
	c->truncated += tot->truncated;
	c->encapsulated += tot->encapsulated;
	c->roce_packets += tot->roce_packets;
	c->roce_bytes += tot->roce_bytes;
	c->tcp_packets += tot->tcp_packets;
	c->tcp_bytes += tot->tcp_bytes;
}

/*
 * The frame a RoCE mirror sees nearly always (ct_plain_v4_roce), with a
 * valid opcode, its extension headers captured whole and a QP other than
 * QP1: straight from the frame to the fields of struct ct_pkt that
 * account_flow and message.c read (kind, wire_len, dscp, ecn, pcp,
 * hdr_cut, roce.opcode/dqpn/psn/ext/payload_len and the extension
 * headers' fields; the others are left as they were) and to the flow key,
 * written as five words (::ffff:src, ::ffff:dst, the QPN and
 * CT_TRANSPORT_ROCE), and its hash. Anything else returns 0 and takes
 * ct_parse; test_engine feeds both ways and compares every flow.
 */
static inline int roce_shortcut(const uint8_t *d, uint32_t cap, struct ct_pkt *p,
				struct ct_flow_key *key, uint32_t *hash, const int crc32c)
{
	const uint8_t *b = d + CT_PLAIN_V4_ROCE_HLEN;
	const struct ct_opcode_info *info;
	struct ct_roce *r = &p->roce;
	uint32_t udp_len, need, dqpn, src, dst;
	uint64_t w[5];
	int ok;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return 0; /* the key's words below are laid out little-endian */
#endif
	if (__builtin_expect(!ct_plain_v4_roce(d, cap, &udp_len), 0))
		return 0;
	info = &ct_opcode_table[b[0]];
	need = CT_BTH_LEN + info->ext_len + ((b[1] >> 4) & 3) + CT_ICRC_LEN;
	dqpn = ct_get32(b + 4) & 0xffffffu;
	ok = info->valid && !(b[1] & 0x0f); /* not reserved, TVer 0 */
	ok &= udp_len - CT_UDP_HLEN >= need;
	ok &= cap >= CT_PLAIN_V4_ROCE_HLEN + CT_BTH_LEN + (uint32_t)info->ext_len;
	ok &= dqpn != 1; /* QP1 carries connection management: ct_cm_inspect */
	if (__builtin_expect(!ok, 0))
		return 0;
	p->kind = CT_PKT_ROCE;
	p->hdr_cut = CT_CUT_NONE;
	p->wire_len = CT_ETH_HLEN + ct_get16(d + CT_ETH_HLEN + 2);
	p->dscp = d[CT_ETH_HLEN + 1] >> 2;
	p->ecn = d[CT_ETH_HLEN + 1] & 3;
	p->pcp = 0xff;
	r->opcode = b[0];
	r->dqpn = dqpn;
	r->psn = ct_get32(b + 8) & 0xffffffu;
	r->ext = info->ext;
	r->payload_len = udp_len - CT_UDP_HLEN - need;
	if (info->ext) /* reth_len is read only where ext has CT_EXT_RETH */
		ct_read_roce_ext(b + CT_BTH_LEN, info->ext, r);
	memcpy(&src, d + CT_ETH_HLEN + 12, 4);
	memcpy(&dst, d + CT_ETH_HLEN + 16, 4);
	w[0] = 0;
	w[1] = (uint64_t)src << 32 | 0xffff0000u; /* bytes 8..15: 0 0 ff ff, the address */
	w[2] = 0;
	w[3] = (uint64_t)dst << 32 | 0xffff0000u;
	w[4] = (uint64_t)CT_TRANSPORT_ROCE << 32 | dqpn;
	memcpy(key, w, sizeof(w));
	*hash = ct_flow_key_hash_v4(w[1], w[3], w[4], crc32c);
	return 1;
}

_Static_assert(offsetof(struct ct_flow_key, src) == 0 && offsetof(struct ct_flow_key, dst) == 16 &&
		       offsetof(struct ct_flow_key, id) == 32 &&
		       offsetof(struct ct_flow_key, transport) == 36,
	       "roce_shortcut writes the key as five words");

/*
 * A burst goes through in stages of CT_FEED_STAGE frames, each in two passes,
 * so that memory latency overlaps (the group prefetch of DPDK's l3fwd):
 * parse every frame (prefetching the headers of the one CT_FEED_FRAME_AHEAD
 * later), hash its key and prefetch its index line, and prefetch the flow
 * named by the index line of the frame CT_FEED_FLOW_AHEAD before, which has
 * had those frames' parse to arrive; then update the flows in arrival
 * order, prefetching the remaining flows one per update. (Prefetching every
 * flow only once the stage was parsed read the last frames' index lines
 * before they arrived, and updated the first frames' flows while they were
 * still on the way.) Engine totals are summed per call and added once at
 * the end. With shortcut 0 every frame takes ct_parse and every RoCE packet
 * ct_msg_roce (ct_engine_feed_layered, for tests); crc32c picks the key
 * hash (ct_flow_hash_crc32c), a constant in each copy of the loop.
 */
static inline __attribute__((always_inline)) void feed(struct ct_engine *e,
						       const struct ct_packet *pkts, unsigned n,
						       const int shortcut, const int crc32c)
{
	struct stage_frame st[CT_FEED_STAGE]; /* the frames that have a flow, in arrival order */
	struct feed_totals tot = {.ts_min = UINT64_MAX};
	const struct ct_flow_index x = ct_flow_table_index(e->table);

	for (unsigned base = 0; base < n; base += CT_FEED_STAGE) {
		const struct ct_packet *in = &pkts[base];
		const struct ct_packet *end =
			in + (n - base < CT_FEED_STAGE ? n - base : CT_FEED_STAGE);
		struct stage_frame *s = st;
		struct stage_frame *pf = st; /* the next frame whose flow to prefetch */
		int all_shortcut = shortcut;
		uint64_t flow_bytes = 0; /* of the frames that have a flow */

		for (; in < end; in++) {
			uint64_t t = in->ts_ns;

			/* a frame a few ahead, to its BTH's end (two lines if it straddles) */
			if (in + CT_FEED_FRAME_AHEAD < end) {
				__builtin_prefetch(in[CT_FEED_FRAME_AHEAD].data);
				__builtin_prefetch(in[CT_FEED_FRAME_AHEAD].data +
						   CT_PLAIN_V4_ROCE_HLEN + CT_BTH_LEN - 1);
			}
			tot.ts_min = t < tot.ts_min ? t : tot.ts_min;
			tot.ts_max = t > tot.ts_max ? t : tot.ts_max;
			tot.truncated += in->cap_len < in->wire_len;
			if (!shortcut || !roce_shortcut(in->data, in->cap_len, &s->p, &s->key,
							&s->hash, crc32c)) {
				enum ct_pkt_kind kind =
					ct_parse(in->data, in->cap_len, in->wire_len, &s->p);

				all_shortcut = 0;
				tot.encapsulated += s->p.encap;
				if (__builtin_expect(kind != CT_PKT_ROCE && kind != CT_PKT_TCP,
						     0)) {
					tot.bytes += s->p.wire_len;
					account_flowless(e, &s->p);
					continue;
				}
				flow_key_of(&s->p, &s->key);
				s->hash = ct_flow_key_hash_inline(&s->key, crc32c);
			}
			flow_bytes += s->p.wire_len;
			s->ts = t;
			ct_flow_table_prefetch_slot_inline(x, s->hash);
			/* the index line of the frame parsed that many before has arrived */
			if (s - pf >= CT_FEED_FLOW_AHEAD)
				ct_flow_table_prefetch_flow_inline(x, (pf++)->hash);
			s++;
		}
		/* a short stage: no time to spread them over */
		if (s - st <= CT_FEED_FLOW_AHEAD)
			for (; pf < s; pf++)
				ct_flow_table_prefetch_flow_inline(x, pf->hash);
		tot.bytes += flow_bytes;
		/*
		 * The flows of the last CT_FEED_FLOW_AHEAD frames are fetched one
		 * per update, the first of them while the stage's first frame is
		 * updated, so each has the updates of the frames before it to arrive.
		 * A stage of shortcut frames only (RoCE, nothing cut, not QP1) skips
		 * the per-frame kind, cut and QP1 tests.
		 */
		if (all_shortcut) {
			tot.roce_packets += (uint64_t)(s - st);
			tot.roce_bytes += flow_bytes;
			for (struct stage_frame *f = st; f < s; f++) {
				if (pf < s)
					ct_flow_table_prefetch_flow_inline(x, (pf++)->hash);
				account_flow(e, x, &tot, f, 1, 1);
			}
		} else
			for (struct stage_frame *f = st; f < s; f++) {
				if (pf < s)
					ct_flow_table_prefetch_flow_inline(x, (pf++)->hash);
				account_flow(e, x, &tot, f, 0, shortcut);
			}
	}
	add_totals(e, &tot, n);
	/* Idle eviction keeps pace with the input: a record examined per 8 packets. */
	ct_flow_table_expire(e->table, e->c.last_ts, n / 8 + 1);
}

void ct_engine_feed(struct ct_engine *e, const struct ct_packet *pkts, unsigned n)
{
	if (ct_flow_hash_crc32c)
		feed(e, pkts, n, 1, 1);
	else
		feed(e, pkts, n, 1, 0);
}

void ct_engine_feed_layered(struct ct_engine *e, const struct ct_packet *pkts, unsigned n)
{
	feed(e, pkts, n, 0, ct_flow_hash_crc32c);
}

void ct_engine_get_counters(const struct ct_engine *e, struct ct_engine_counters *c)
{
	*c = e->c;
	ct_flow_table_get_stats(e->table, &c->table);
}

unsigned ct_engine_drain_evicted(struct ct_engine *e,
				 void (*fn)(const struct ct_flow *flow, void *ctx), void *ctx)
{
	unsigned n = 0;

	for (; e->evict_tail != e->evict_head; e->evict_tail++, n++)
		fn(&e->evict_ring[e->evict_tail % e->evict_slots], ctx);
	return n;
}

void ct_engine_foreach_flow(struct ct_engine *e, void (*fn)(struct ct_flow *flow, void *ctx),
			    void *ctx)
{
	ct_flow_table_foreach(e->table, fn, ctx);
}

struct quiet_ctx {
	struct ct_engine *e;
	uint64_t now;
	unsigned ended;
};

static void end_if_quiet(struct ct_flow *f, void *arg)
{
	struct quiet_ctx *q = arg;

	if (!(f->state & CT_FS_IN_BURST) || q->now <= f->last_ts ||
	    q->now - f->last_ts <= burst_gap_limit(q->e, f))
		return;
	burst_emit(q->e, f);
	f->state &= ~CT_FS_IN_BURST;
	q->ended++;
}

unsigned ct_engine_end_quiet_bursts(struct ct_engine *e, uint64_t now)
{
	struct quiet_ctx q = {e, now, 0};

	ct_flow_table_foreach(e->table, end_if_quiet, &q);
	return q.ended;
}

unsigned ct_engine_drain_bursts(struct ct_engine *e,
				void (*fn)(const struct ct_flow_burst *burst, void *ctx), void *ctx)
{
	unsigned n = 0;

	for (; e->burst_tail != e->burst_head; e->burst_tail++, n++)
		fn(&e->burst_ring[e->burst_tail % e->burst_slots], ctx);
	return n;
}

unsigned ct_engine_cm_events(const struct ct_engine *e, const struct ct_cm_event **events)
{
	*events = e->cm_log;
	return e->cm_count;
}

struct finish_ctx {
	struct ct_engine *e;
	void (*fn)(const struct ct_flow *flow, void *ctx);
	void *ctx;
};

static void finish_one(struct ct_flow *f, void *arg)
{
	struct finish_ctx *fc = arg;

	ct_msg_finish(f);
	if (f->state & CT_FS_IN_BURST)
		burst_emit(fc->e, f);
	f->state &= ~CT_FS_IN_BURST;
	fc->fn(f, fc->ctx);
}

void ct_engine_finish(struct ct_engine *e, void (*fn)(const struct ct_flow *flow, void *ctx),
		      void *ctx)
{
	struct finish_ctx fc = {e, fn, ctx};

	ct_engine_drain_evicted(e, fn, ctx);
	ct_flow_table_foreach(e->table, finish_one, &fc);
	ct_flow_table_flush(e->table);
}
