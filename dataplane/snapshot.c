// SPDX-License-Identifier: MIT
/*
 * Engine snapshots (see commtap/snapshot.h): slow-path copies of an engine's
 * state, cumulative, and their merge across engines.
 */
#include <commtap/snapshot.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Make room for one more element; 0 or -ENOMEM. */
static int reserve(void **array, size_t *cap, size_t n, size_t elem)
{
	size_t want;
	void *grown;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : 256;
	grown = realloc(*array, want * elem);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = want;
	return 0;
}

static int push_flow(struct ct_snapshot *s, const struct ct_flow *f)
{
	if (reserve((void **)&s->flows, &s->flows_cap, s->n_flows, sizeof(*f))) {
		s->lost++;
		return -ENOMEM;
	}
	s->flows[s->n_flows++] = *f;
	return 0;
}

static int push_burst(struct ct_snapshot *s, const struct ct_flow_burst *b)
{
	if (reserve((void **)&s->bursts, &s->bursts_cap, s->n_bursts, sizeof(*b))) {
		s->lost++;
		return -ENOMEM;
	}
	s->bursts[s->n_bursts++] = *b;
	return 0;
}

static int push_cm(struct ct_snapshot *s, const struct ct_cm_event *ev)
{
	if (reserve((void **)&s->cm, &s->cm_cap, s->n_cm, sizeof(*ev))) {
		s->lost++;
		return -ENOMEM;
	}
	s->cm[s->n_cm++] = *ev;
	return 0;
}

void ct_snapshot_init(struct ct_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void ct_snapshot_free(struct ct_snapshot *s)
{
	free(s->flows);
	free(s->bursts);
	free(s->cm);
	ct_snapshot_init(s);
}

static void on_ended(const struct ct_flow *f, void *ctx)
{
	push_flow(ctx, f);
}

static void on_live(struct ct_flow *f, void *ctx)
{
	push_flow(ctx, f);
}

static void on_burst(const struct ct_flow_burst *b, void *ctx)
{
	push_burst(ctx, b);
}

/* Ended flows must stay ahead of the live copies: drop the copies first. */
static void collect_ended(struct ct_engine *e, struct ct_snapshot *s)
{
	s->n_flows = s->n_ended;
	ct_engine_drain_evicted(e, on_ended, s);
	s->n_ended = s->n_flows;
	ct_engine_drain_bursts(e, on_burst, s);
}

static void copy_cm(struct ct_engine *e, struct ct_snapshot *s)
{
	const struct ct_cm_event *ev;
	unsigned n = ct_engine_cm_events(e, &ev);

	/* the engine's log only grows; keep what is new */
	for (size_t i = s->n_cm; i < n; i++)
		push_cm(s, &ev[i]);
}

int ct_snapshot_take(struct ct_engine *e, struct ct_snapshot *s)
{
	struct ct_engine_counters c;
	uint64_t lost = s->lost;

	/* bursts a gap has ended by the engine's last packet are over: in the report */
	ct_engine_get_counters(e, &c);
	ct_engine_end_quiet_bursts(e, c.last_ts);
	collect_ended(e, s);
	ct_engine_foreach_flow(e, on_live, s);
	copy_cm(e, s);
	ct_engine_get_counters(e, &s->counters);
	return s->lost != lost ? -ENOMEM : 0;
}

int ct_snapshot_finish(struct ct_engine *e, struct ct_snapshot *s)
{
	uint64_t lost = s->lost;

	s->n_flows = s->n_ended;
	ct_engine_finish(e, on_ended, s);
	s->n_ended = s->n_flows;
	ct_engine_drain_bursts(e, on_burst, s);
	copy_cm(e, s);
	ct_engine_get_counters(e, &s->counters);
	return s->lost != lost ? -ENOMEM : 0;
}

void ct_engine_counters_add(struct ct_engine_counters *a, const struct ct_engine_counters *b)
{
	uint64_t first = a->first_ts, last = a->last_ts;

	a->packets += b->packets;
	a->bytes += b->bytes;
	a->roce_packets += b->roce_packets;
	a->roce_bytes += b->roce_bytes;
	a->tcp_packets += b->tcp_packets;
	a->tcp_bytes += b->tcp_bytes;
	a->other_l2 += b->other_l2;
	a->other_ip += b->other_ip;
	a->encapsulated += b->encapsulated;
	a->truncated += b->truncated;
	for (int i = 0; i < CT_CUT_COUNT; i++)
		a->roce_cut[i] += b->roce_cut[i];
	a->messages_size_inferred += b->messages_size_inferred;
	a->malformed += b->malformed;
	for (int i = 0; i < CT_MAL_COUNT; i++)
		a->malformed_by_reason[i] += b->malformed_by_reason[i];
	a->evicted_unreported += b->evicted_unreported;
	a->cm_messages += b->cm_messages;
	a->cm_dropped += b->cm_dropped;
	a->read_overwrites += b->read_overwrites;
	a->bursts += b->bursts;
	a->bursts_dropped += b->bursts_dropped;
	a->pfc.pause_frames += b->pfc.pause_frames;
	a->pfc.pause_quanta += b->pfc.pause_quanta;
	a->pfc.pfc_frames += b->pfc.pfc_frames;
	for (int i = 0; i < 8; i++) {
		a->pfc.frames[i] += b->pfc.frames[i];
		a->pfc.quanta[i] += b->pfc.quanta[i];
		a->pfc.xoff[i] += b->pfc.xoff[i];
	}
	a->table.inserts += b->table.inserts;
	a->table.evicted_idle += b->table.evicted_idle;
	a->table.evicted_full += b->table.evicted_full;
	a->table.live += b->table.live;
	a->table.capacity += b->table.capacity;
	a->table.memory_bytes += b->table.memory_bytes;
	/* a timestamp of 0 means no packet yet */
	if (b->packets) {
		a->first_ts = first && first < b->first_ts ? first : b->first_ts;
		a->last_ts = last > b->last_ts ? last : b->last_ts;
	}
}

int ct_snapshot_merge(struct ct_snapshot *dst, const struct ct_snapshot *src)
{
	uint64_t lost = dst->lost;
	size_t i;

	for (i = 0; i < src->n_flows; i++)
		push_flow(dst, &src->flows[i]);
	/* a merged snapshot is for reporting: every flow in it counts as ended */
	dst->n_ended = dst->n_flows;
	for (i = 0; i < src->n_bursts; i++)
		push_burst(dst, &src->bursts[i]);
	for (i = 0; i < src->n_cm; i++)
		push_cm(dst, &src->cm[i]);
	ct_engine_counters_add(&dst->counters, &src->counters);
	dst->lost += src->lost;
	return dst->lost != lost ? -ENOMEM : 0;
}
