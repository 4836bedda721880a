// SPDX-License-Identifier: MIT
/*
 * The host probe: XDP on ingress, TC clsact on egress, one flow table.
 *
 * Per packet: parse (parse.bpf.h), add to the per-CPU totals, then update
 * the flow's record in the LRU hash: volume, ECN, PSN tracking, verbs
 * message assembly (as dataplane/message.c), on/off bursts (as
 * dataplane/engine.c). Completed messages and finished bursts go to the ring
 * buffer, one record each; never one per packet.
 *
 * The kernel evicts LRU entries silently (in batches, before the map is
 * full), so everything that must add up lives in the per-CPU totals too; the
 * agent derives evictions as inserts minus live entries.
 */
#include "vmlinux.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "parse.bpf.h"

#define TC_ACT_UNSPEC (-1)
#define PSN_MASK      0xffffffu
#define PSN_HALF      0x800000u

/* ct_msg_kind / ct_msg_pos values (dataplane/include/commtap/roce_opcode.h) */
#define KIND_SEND      1
#define KIND_READ_RESP 4
#define KIND_ATOMIC    5
#define KIND_ACK       6
#define KIND_CNP       7
#define POS_NONE       0
#define POS_FIRST      1
#define POS_MIDDLE     2
#define POS_LAST       3
#define POS_ONLY       4
#define EXT_RETH       (1u << 3)

/* Settings, fixed at load time. */
const volatile __u64 ctp_burst_gap_ns = 100000;	   /* CT_DEFAULT_BURST_GAP_NS */
const volatile __u64 ctp_tcp_msg_gap_ns = 1000000; /* CT_DEFAULT_TCP_MSG_GAP_NS */
const volatile __u32 ctp_sample_every = 1;	   /* flows see 1 packet in N; totals see all */
const volatile __u32 ctp_transports = CTP_EN_ROCE | CTP_EN_TCP;
const volatile __u32 ctp_message_records = 1; /* a ring record per completed message */

struct ctp_totals {
	__u64 t[CTP_T_COUNT];
	__u64 sample_ctr;
};

/*
 * The flow table, in two maps so that IPv4 flows (the common case) hash and
 * compare a 16-byte key per packet instead of 40: ctp_flows holds IPv4
 * flows, ctp_flows6 IPv6 flows.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); /* the loader sets it */
	__type(key, struct ctp_flow_key4);
	__type(value, struct ctp_flow);
} ctp_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192); /* the loader sets it */
	__type(key, struct ctp_flow_key);
	__type(value, struct ctp_flow);
} ctp_flows6 SEC(".maps");

/* The probe's CTP_ABI_VERSION, pinned beside the maps (the loader writes it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ctp_abi SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctp_totals);
} ctp_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* the loader sets it */
} ctp_events SEC(".maps");

/* Records carry the engine's 40-byte key: IPv4 addresses as ::ffff:a.b.c.d. */
static __always_inline void record_key(struct ctp_flow_key *out, const struct ctp_pkt *p)
{
	if (p->ipv6) {
		__builtin_memcpy(out, p, sizeof(*out));
		return;
	}
	__builtin_memset(out, 0, sizeof(*out));
	out->src[10] = out->src[11] = out->dst[10] = out->dst[11] = 0xff;
	__builtin_memcpy(out->src + 12, p->key4.src, 4);
	__builtin_memcpy(out->dst + 12, p->key4.dst, 4);
	out->id = p->key4.id;
	out->transport = p->key4.transport;
}

static __always_inline void emit(struct ctp_totals *t, const struct ctp_pkt *pkt, __u32 type,
				 __u64 start, __u64 end, __u64 bytes, __u32 packets, __u32 messages,
				 __u8 loss, __u8 marks)
{
	struct ctp_record *r = bpf_ringbuf_reserve(&ctp_events, sizeof(*r), 0);

	if (!r) {
		t->t[CTP_T_RING_DROPS]++;
		if (type == CTP_REC_BURST)
			t->t[CTP_T_RING_DROPS_BURST]++;
		return;
	}
	record_key(&r->key, pkt);
	r->type = type;
	r->packets = packets;
	r->messages = messages;
	r->loss = loss;
	r->marks = marks;
	r->pad = 0;
	r->start = start;
	r->end = end;
	r->bytes = bytes;
	bpf_ringbuf_submit(r, 0);
}

static __always_inline void message_complete(struct ctp_totals *t, struct ctp_flow *f,
					     const struct ctp_pkt *pkt, __u64 size, __u64 now)
{
	f->messages++;
	f->message_bytes += size;
	t->t[CTP_T_MESSAGES]++;
	t->t[CTP_T_MESSAGE_BYTES] += size;
	if (ctp_message_records)
		emit(t, pkt, CTP_REC_MESSAGE, now, now, size, 0, 0, 0, 0);
}

static __always_inline void learn_pmtu(struct ctp_flow *f, __u32 payload)
{
	if (payload > f->pmtu && payload <= 0xffff)
		f->pmtu = (__u16)payload;
}

static __always_inline void burst_begin(struct ctp_flow *f, __u64 now)
{
	f->burst_start_ts = now;
	f->burst_start_bytes = f->bytes;
	f->burst_start_packets = (__u32)f->packets;
	f->burst_start_messages = (__u32)f->messages;
	f->burst_start_loss = ctp_flow_loss(f);
	f->burst_start_marks = ctp_flow_marks(f);
}

/* A gap longer than max(burst gap, 8 x the usual gap) ends the open burst. */
static __always_inline void burst_track(struct ctp_totals *t, struct ctp_flow *f,
					const struct ctp_pkt *pkt, __u64 now)
{
	__u64 gap = now > f->last_ts ? now - f->last_ts : 0;
	__u64 limit = (__u64)f->gap_ewma * 8;

	if (limit < ctp_burst_gap_ns)
		limit = ctp_burst_gap_ns;
	if (gap > limit) {
		t->t[CTP_T_BURSTS]++;
		emit(t, pkt, CTP_REC_BURST, f->burst_start_ts, f->last_ts,
		     f->bytes - f->burst_start_bytes, (__u32)f->packets - f->burst_start_packets,
		     (__u32)f->messages - f->burst_start_messages,
		     ctp_burst_count(ctp_flow_loss(f), f->burst_start_loss),
		     ctp_burst_count(ctp_flow_marks(f), f->burst_start_marks));
		burst_begin(f, now);
		return;
	}
	if (gap > 0xffffffffu)
		gap = 0xffffffffu;
	/* integer moving average, weight 1/8, rounding toward zero like the engine */
	if (gap >= f->gap_ewma)
		f->gap_ewma += (__u32)((gap - f->gap_ewma) / 8);
	else
		f->gap_ewma -= (__u32)((f->gap_ewma - gap) / 8);
}

/* 0: a new request PSN (assemble it); 1: one seen before (a retransmission). */
static __always_inline int request_psn(struct ctp_totals *t, struct ctp_flow *f, __u32 psn)
{
	if (!(f->seen & CTP_SEEN_REQ_PSN)) {
		f->seen |= CTP_SEEN_REQ_PSN;
		f->req_first_psn = psn;
	}
	if (f->state & CTP_FS_REQ_PSN_OK) {
		__u32 ahead = (psn - f->next_psn) & PSN_MASK;

		if (ahead >= PSN_HALF) {
			f->retransmits++;
			t->t[CTP_T_RETRANSMITS]++;
			return 1;
		}
		if (ahead) {
			f->psn_gaps++;
			f->psn_missing += ahead;
		}
	}
	return 0;
}

static __always_inline void roce_request(struct ctp_totals *t, struct ctp_flow *f,
					 const struct ctp_pkt *p, __u64 now)
{
	__u32 kind = CTP_OP_KIND(p->opinfo), pos = CTP_OP_POS(p->opinfo);

	if (request_psn(t, f, p->psn))
		return;
	if (pos == POS_FIRST) {
		if (f->state & CTP_FS_REQ_IN_MSG)
			f->partial_messages++;
		f->state = (f->state & ~CTP_FS_MSG_SEND) | CTP_FS_REQ_IN_MSG |
			   (kind == KIND_SEND ? CTP_FS_MSG_SEND : 0);
		f->msg_bytes = p->payload_len;
		f->msg_len = (CTP_OP_EXT(p->opinfo) & EXT_RETH) ? p->reth_len : 0;
		learn_pmtu(f, p->payload_len);
	} else if (pos == POS_MIDDLE || pos == POS_LAST) {
		int same_kind = !(f->state & CTP_FS_MSG_SEND) == (kind != KIND_SEND);

		if (!(f->state & CTP_FS_REQ_IN_MSG) || !same_kind) {
			if (f->state & CTP_FS_REQ_IN_MSG)
				f->partial_messages++;
			if (pos == POS_LAST)
				f->partial_messages++;
			f->state &= ~CTP_FS_REQ_IN_MSG;
		} else {
			f->msg_bytes += p->payload_len;
			if (pos == POS_MIDDLE) {
				learn_pmtu(f, p->payload_len);
			} else {
				/* a WRITE's size is its RETH length */
				message_complete(t, f, p, f->msg_len ?: f->msg_bytes, now);
				f->state &= ~CTP_FS_REQ_IN_MSG;
			}
		}
	} else if (pos == POS_ONLY) {
		if (f->state & CTP_FS_REQ_IN_MSG) {
			f->partial_messages++;
			f->state &= ~CTP_FS_REQ_IN_MSG;
		}
		message_complete(t, f, p, kind == KIND_ATOMIC ? 8 : p->payload_len, now);
	} else { /* READ request: re-synchronise on the next request */
		f->next_psn = (p->psn + 1) & PSN_MASK;
		f->state &= ~CTP_FS_REQ_PSN_OK;
		return;
	}
	f->next_psn = (p->psn + 1) & PSN_MASK;
	f->state |= CTP_FS_REQ_PSN_OK;
}

static __always_inline void roce_read_response(struct ctp_totals *t, struct ctp_flow *f,
					       const struct ctp_pkt *p, __u64 now)
{
	__u32 pos = CTP_OP_POS(p->opinfo);

	if (pos == POS_FIRST) {
		if (f->state & CTP_FS_RESP_IN_MSG)
			f->partial_messages++;
		f->state |= CTP_FS_RESP_IN_MSG;
		f->resp_msg_bytes = p->payload_len;
		learn_pmtu(f, p->payload_len);
	} else if (pos == POS_MIDDLE || pos == POS_LAST) {
		if (!(f->state & CTP_FS_RESP_IN_MSG)) {
			if (pos == POS_LAST)
				f->partial_messages++;
			goto out;
		}
		if (p->psn != f->resp_next_psn) {
			__u32 ahead = (p->psn - f->resp_next_psn) & PSN_MASK;

			if (ahead >= PSN_HALF) {
				f->retransmits++;
				t->t[CTP_T_RETRANSMITS]++;
				return;
			}
			f->psn_gaps++;
			f->psn_missing += ahead;
		}
		f->resp_msg_bytes += p->payload_len;
		if (pos == POS_MIDDLE) {
			learn_pmtu(f, p->payload_len);
		} else {
			f->state &= ~CTP_FS_RESP_IN_MSG;
			message_complete(t, f, p, f->resp_msg_bytes, now);
		}
	} else if (pos == POS_ONLY) {
		if (f->state & CTP_FS_RESP_IN_MSG) {
			f->partial_messages++;
			f->state &= ~CTP_FS_RESP_IN_MSG;
		}
		message_complete(t, f, p, p->payload_len, now);
	}
out:
	f->resp_next_psn = (p->psn + 1) & PSN_MASK;
}

static __always_inline void roce(struct ctp_totals *t, struct ctp_flow *f, const struct ctp_pkt *p,
				 __u64 now)
{
	__u32 kind = CTP_OP_KIND(p->opinfo);

	if (p->opinfo & CTP_OP_RESPONSE) {
		if (!(f->seen & CTP_SEEN_RESP_PSN)) {
			f->seen |= CTP_SEEN_RESP_PSN;
			f->resp_first_psn = p->psn;
		}
		if (kind == KIND_ACK) {
			__u8 k = (p->aeth_syndrome >> 5) & 3;

			if (k == 1)
				f->naks_rnr++;
			else if (k == 3 && !(p->aeth_syndrome & 0x1f))
				f->naks_seq++;
			else if (k == 3)
				f->naks_other++;
			f->resp_next_psn = (p->psn + 1) & PSN_MASK;
		} else {
			roce_read_response(t, f, p, now);
		}
		return;
	}
	if (kind == KIND_CNP) {
		f->cnp++;
		t->t[CTP_T_CNP]++;
		return;
	}
	roce_request(t, f, p, now);
}

/* TCP: a message is the data between idle gaps (as ct_msg_tcp). */
static __always_inline void tcp(struct ctp_totals *t, struct ctp_flow *f, const struct ctp_pkt *p,
				__u64 now)
{
	__u32 len = p->payload_len;

	if (p->tcp_flags & 0x02) { /* SYN consumes one sequence number */
		f->next_psn = f->msg_len = p->psn + 1;
		f->state |= CTP_FS_TCP_SEQ_OK;
	}
	if (p->tcp_flags & 0x05) /* FIN or RST */
		f->state |= CTP_FS_TCP_CLOSED;
	if (!len)
		return;
	if (f->state & CTP_FS_TCP_SEQ_OK) {
		__u32 end = p->psn + len;

		if ((__s32)(end - f->next_psn) > 0) {
			/* a jump ahead opens a hole (msg_len: its start); in order closes it */
			f->msg_len = (__s32)(p->psn - f->next_psn) > 0 ? f->next_psn : end;
			f->next_psn = end;
		} else if (f->msg_len != f->next_psn && end == f->msg_len) {
			return; /* a repeat of the fill that ended there: reordered (ct_msg_tcp) */
		} else if (f->msg_len != f->next_psn && (__s32)(p->psn - f->msg_len) >= 0) {
			/* it fills the hole the last new segment opened: reordered (ct_msg_tcp) */
			if (p->psn == f->msg_len)
				f->msg_len = end;
		} else { /* every byte seen before */
			f->retransmits++;
			t->t[CTP_T_RETRANSMITS]++;
			return;
		}
	} else {
		f->next_psn = f->msg_len = p->psn + len;
		f->state |= CTP_FS_TCP_SEQ_OK;
	}
	if (f->msg_bytes && now - f->tcp_last_data_ts > ctp_tcp_msg_gap_ns) {
		message_complete(t, f, p, f->msg_bytes, now);
		f->msg_bytes = 0;
	}
	f->msg_bytes += len;
	f->tcp_last_data_ts = now;
}

/*
 * A new flow's record in map, created: out of line, so that the compiler
 * cannot hoist zeroing the 176-byte template onto the path of every packet
 * whose flow exists (it did: 19 stores per packet).
 */
static __noinline struct ctp_flow *flow_create(void *map, const struct ctp_pkt *p,
					       struct ctp_totals *t, __u64 now, int *created)
{
	const void *key = p->ipv6 ? (const void *)&p->key : (const void *)&p->key4;
	struct ctp_flow init = {};
	struct ctp_flow *f;
	long err;

	init.first_ts = now;
	init.last_ts = now;
	init.burst_start_ts = now;
	init.dscp = p->dscp;
	init.pcp = 0xff;
	err = bpf_map_update_elem(map, key, &init, BPF_NOEXIST);
	if (!err)
		t->t[CTP_T_FLOWS_INSERTED]++;
	f = bpf_map_lookup_elem(map, key);
	if (!f)
		t->t[CTP_T_FLOW_INSERT_FAILED]++;
	*created = !err;
	return f;
}

/*
 * The flow's record in map (ctp_flows or ctp_flows6: a constant at each
 * inlined call, so the verifier can inline the lookup), created if new.
 */
static __always_inline struct ctp_flow *flow_of(void *map, const void *key, struct ctp_totals *t,
						const struct ctp_pkt *p, __u64 now, int *created)
{
	struct ctp_flow *f = bpf_map_lookup_elem(map, key);

	if (f)
		return f;
	return flow_create(map, p, t, now, created);
}

static __always_inline void account_flow(struct ctp_totals *t, const struct ctp_pkt *p, __u32 segs,
					 __u64 bytes, __u64 now)
{
	int created = 0;
	struct ctp_flow *f = p->ipv6 ? flow_of(&ctp_flows6, &p->key, t, p, now, &created)
				     : flow_of(&ctp_flows, &p->key4, t, p, now, &created);

	if (!f)
		return;
	if (!created)
		burst_track(t, f, p, now);
	f->packets += segs;
	f->bytes += bytes;
	if (now > f->last_ts)
		f->last_ts = now;
	if (p->ecn == 3)
		f->ecn_ce += segs;
	f->ecn_seen |= (__u8)(1u << p->ecn);
	if (!created && f->dscp != p->dscp)
		f->seen |= CTP_SEEN_DSCP_MIX;
	f->dscp = p->dscp;
	f->pcp = p->pcp;
	if (p->kind == CTP_PKT_ROCE)
		roce(t, f, p, now);
	else
		tcp(t, f, p, now);
}

/*
 * One parsed frame (segs segments of bytes wire bytes in all); frame_len is
 * the frame's length for what has no IP length.
 */
static __always_inline void account(struct ctp_pkt *p, int kind, __u32 segs, __u64 bytes,
				    __u64 frame_len)
{
	__u32 zero = 0;
	struct ctp_totals *t = bpf_map_lookup_elem(&ctp_totals, &zero);
	__u64 now;

	if (!t)
		return;
	p->kind = (__u8)kind;
	t->t[CTP_T_PACKETS] += segs;
	if (segs > 1)
		t->t[CTP_T_GSO_PACKETS]++;
	switch (kind) {
	case CTP_PKT_ROCE:
		t->t[CTP_T_BYTES] += bytes;
		t->t[CTP_T_ROCE_PACKETS] += segs;
		t->t[CTP_T_ROCE_BYTES] += bytes;
		if (p->ecn == 3)
			t->t[CTP_T_ECN_CE] += segs;
		if (!(ctp_transports & CTP_EN_ROCE))
			return;
		break;
	case CTP_PKT_TCP:
		t->t[CTP_T_BYTES] += bytes;
		t->t[CTP_T_TCP_PACKETS] += segs;
		t->t[CTP_T_TCP_BYTES] += bytes;
		if (p->ecn == 3)
			t->t[CTP_T_ECN_CE] += segs;
		if (!(ctp_transports & CTP_EN_TCP))
			return;
		break;
	case CTP_PKT_OTHER_IP:
		t->t[CTP_T_BYTES] += bytes;
		t->t[CTP_T_OTHER_IP]++;
		return;
	case CTP_PKT_OTHER_L2:
		t->t[CTP_T_BYTES] += frame_len;
		t->t[CTP_T_OTHER_L2]++;
		return;
	default:
		t->t[CTP_T_BYTES] += frame_len;
		t->t[CTP_T_MALFORMED]++;
		return;
	}
	if (ctp_sample_every > 1 && ++t->sample_ctr % ctp_sample_every) {
		t->t[CTP_T_SAMPLED_OUT] += segs;
		return;
	}
	now = bpf_ktime_get_ns();
	account_flow(t, p, segs, bytes, now);
}

SEC("xdp.frags")
int ct_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ctp_pkt pkt = {};
	int kind = ctp_parse(data, end, 0, 0, &pkt);

	/* the frame's length is needed only for what has no IP length */
	account(&pkt, kind, 1, pkt.wire_len,
		kind == CTP_PKT_OTHER_L2 || kind == CTP_PKT_MALFORMED ? bpf_xdp_get_buff_len(ctx)
								      : 0);
	return XDP_PASS;
}

/* Headers the parser may need in the linear part of an skb. */
#define TC_PULL_LEN 256

SEC("tc")
int ct_tc_egress(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ctp_pkt pkt = {};
	__u32 segs = 1, in_frame;
	__u64 bytes;
	int kind;

	if (data + TC_PULL_LEN > end && skb->len > (__u32)(end - data)) {
		bpf_skb_pull_data(skb, skb->len < TC_PULL_LEN ? skb->len : TC_PULL_LEN);
		data = (void *)(long)skb->data;
		end = (void *)(long)skb->data_end;
	}
	kind = ctp_parse(data, end, skb->vlan_present, (__u16)skb->vlan_tci, &pkt);
	bytes = pkt.wire_len;
	if (skb->gso_segs > 1 && (kind == CTP_PKT_TCP || kind == CTP_PKT_ROCE)) {
		/*
		 * A GSO super-packet leaves as gso_segs frames, each with the
		 * headers: count them as those frames would be counted.
		 */
		segs = skb->gso_segs;
		in_frame = pkt.hdr_len - (skb->vlan_present ? 4 : 0);
		if (skb->len > in_frame) {
			__u32 payload = skb->len - in_frame;

			bytes = (__u64)segs * pkt.hdr_len + payload;
			pkt.payload_len = payload;
		}
	}
	account(&pkt, kind, segs, bytes, skb->len + (skb->vlan_present ? 4 : 0));
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
