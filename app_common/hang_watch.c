// SPDX-License-Identifier: MIT
/* The hang watch between interval reports (hang_watch.h). */
#include "hang_watch.h"

#include <stdlib.h>
#include <string.h>

#include <commtap/anomaly.h>

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_flow_key));
}

void hang_watch_keep(struct ct_report *r, void *ctx)
{
	struct hang_watch *w = ctx;
	const struct ct_anomalies *a = r->anomalies;
	struct ct_flow_key *keys = NULL;

	w->due = 0; /* nothing watched until a report names the flows */
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		if (a->list[i].kind == CT_ANOMALY_HANG && a->list[i].confidence >= CT_ANOMALY_ALARM)
			w->told = w->last;
	if (a->hang_after_s <= 0 || !a->n_hang_flows)
		return;
	keys = malloc(a->n_hang_flows * sizeof(*keys));
	if (!keys) /* out of memory: the watch stays off until the next report */
		return;
	memcpy(keys, a->hang_flows, a->n_hang_flows * sizeof(*keys));
	qsort(keys, a->n_hang_flows, sizeof(*keys), key_cmp); /* looked up per live flow */
	free(w->keys);
	w->keys = keys;
	w->n = a->n_hang_flows;
	w->after_ns = (uint64_t)(a->hang_after_s * 1e9);
	w->due = 1; /* from the next packet: the silence may have begun already */
}

struct last_seen {
	const struct hang_watch *w;
	uint64_t last;
};

static int watched(const struct hang_watch *w, const struct ct_flow_key *key)
{
	return bsearch(key, w->keys, w->n, sizeof(*w->keys), key_cmp) != NULL;
}

/*
 * A live flow's last packet, its acknowledgements' too: the hang detector
 * times the silence from the job's flows' last burst of any kind (a
 * stopped rank's kernel acknowledges what still comes to it).
 */
static uint64_t later(const struct hang_watch *w, const struct ct_flow *flow, uint64_t last)
{
	return flow->last_ts > last && watched(w, &flow->key) ? flow->last_ts : last;
}

static void take_last(struct ct_flow *flow, void *ctx)
{
	struct last_seen *d = ctx;

	d->last = later(d->w, flow, d->last);
}

int hang_watch_judge(struct hang_watch *w, uint64_t last, uint64_t now)
{
	if (!last) { /* none of them seen: nothing to time */
		w->due = 0;
		return 0;
	}
	if (last != w->last) {
		w->last = last;
		w->tries = 0;
	}
	if (now < last + w->after_ns) {
		w->due = last + w->after_ns;
		return 0;
	}
	/* look again later: the job may come back, or the report not page yet */
	w->due = now + w->after_ns / 2;
	if (last == w->told || w->tries >= HANG_WATCH_TRIES)
		return 0;
	w->tries++;
	return 1;
}

void hang_watch_snapshot(const struct hang_watch *w, const struct ct_snapshot *s, uint64_t *last,
			 uint64_t *now)
{
	for (size_t i = 0; i < s->n_flows; i++)
		*last = later(w, &s->flows[i], *last);
	if (s->counters.last_ts > *now)
		*now = s->counters.last_ts;
}

uint64_t hang_watch_last_in_set(const struct hang_watch *w, const struct ct_flow_set *s)
{
	uint64_t last = 0;

	for (size_t i = 0; i < w->n; i++) {
		int64_t f = ct_flow_set_find(s, &w->keys[i]);

		if (f >= 0 && s->flows[f].last_ts > last)
			last = s->flows[f].last_ts;
	}
	return last;
}

int hang_watch_look(struct hang_watch *w, struct ct_engine *e, const struct ct_flow_set *gone,
		    uint64_t now)
{
	struct last_seen d = {w, 0};
	uint64_t evicted = hang_watch_last_in_set(w, gone); /* silent since their last packet */

	ct_engine_foreach_flow(e, take_last, &d);
	return hang_watch_judge(w, evicted > d.last ? evicted : d.last, now);
}

void hang_watch_free(struct hang_watch *w)
{
	free(w->keys);
	memset(w, 0, sizeof(*w));
}
