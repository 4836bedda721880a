// SPDX-License-Identifier: MIT
/*
 * Congestion: ECN CE marks (and the CNPs a RoCE receiver answers them with)
 * concentrated on one receiver against the job's other receivers — incast
 * into it, a slow drain behind it — and PFC pause storms on one priority.
 * The marks toward a receiver are the CE-marked packets of its flows, or,
 * where the mirror saw no CE marks (marked after the mirror), the CNPs it
 * sent. The mirror sees pause frames without their port: a storm is said of
 * a priority. Both are totals over the capture.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * A receiver is congested from this share of marked packets: DCQCN's
 * steady state marks a few per cent at most (the synthesizer's --noise
 * marks 1 in 64, 1.6%, toward one host, and that is no anomaly).
 */
#define CONG_MIN_FRACTION 0.05
#define CONG_MIN_MARKS	  32  /* and this many marks: a few are a queue's passing hump */
#define CONG_MIN_RATIO	  4.0 /* its share this many times the other receivers' median */
/* a PFC storm: this many pause frames (XOFF) a second on one priority */
#define PFC_STORM_PER_S 100.0
#define PFC_MIN_FRAMES	32
/* and this share of all XOFF frames on it (a storm is one priority's, not the fabric's) */
#define PFC_MIN_SHARE 0.8

struct rcv {
	struct ct_addr host;
	double ce, cnp, packets;
};

static int rcv_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_addr));
}

static int pfc_storm(struct anom_ctx *c)
{
	const struct ct_engine_counters *k = c->counters;
	double secs, all = 0;
	int top = 0;

	if (!k || k->last_ts <= k->first_ts)
		return 0;
	secs = (double)(k->last_ts - k->first_ts) / 1e9;
	for (int p = 0; p < 8; p++) {
		all += (double)k->pfc.xoff[p];
		if (k->pfc.xoff[p] > k->pfc.xoff[top])
			top = p;
	}
	if (k->pfc.xoff[top] < PFC_MIN_FRAMES || k->pfc.xoff[top] / secs < PFC_STORM_PER_S ||
	    k->pfc.xoff[top] < PFC_MIN_SHARE * all)
		return 0;
	{
		struct ct_anomaly an = {.kind = CT_ANOMALY_CONGESTION,
					.scope = CT_ANOMALY_AT_PRIORITY,
					.priority = (int8_t)top,
					.cls = -1,
					.onset = -1,
					.value = (double)k->pfc.xoff[top]};

		an.confidence = fmin(1, k->pfc.xoff[top] / secs / (2 * PFC_STORM_PER_S));
		snprintf(an.evidence, sizeof(an.evidence),
			 "%llu PFC frames paused priority %d, %.0f a second over the capture "
			 "(%.0f%% of all pauses; a storm from %.0f a second)",
			 (unsigned long long)k->pfc.xoff[top], top, k->pfc.xoff[top] / secs,
			 100 * k->pfc.xoff[top] / all, PFC_STORM_PER_S);
		return anom_add(c, &an);
	}
}

int anom_congestion(struct anom_ctx *c)
{
	const struct ct_flow_set *set = c->set;
	struct rcv *r = malloc((2 * set->count + 1) * sizeof(*r));
	double *frac = NULL, all = 0;
	size_t n = 0, k = 0;
	int err = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];

		r[n++] = (struct rcv){f->key.dst, (double)f->ecn_ce, 0, (double)f->packets};
		if (f->cnp) /* sent by the receiver of the marked traffic */
			r[n++] = (struct rcv){f->key.src, 0, (double)f->cnp, 0};
	}
	if (n)
		qsort(r, n, sizeof(*r), rcv_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && !rcv_cmp(&r[i], &r[k - 1])) {
			r[k - 1].ce += r[i].ce;
			r[k - 1].cnp += r[i].cnp;
			r[k - 1].packets += r[i].packets;
		} else {
			r[k++] = r[i];
		}
	}
	frac = malloc((k + 1) * sizeof(*frac));
	if (!frac) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < k; i++)
		all += fmax(r[i].ce, r[i].cnp);
	for (size_t i = 0; i < k && !err; i++) {
		double marks = fmax(r[i].ce, r[i].cnp), f, ref;
		size_t m = 0;

		if (marks < CONG_MIN_MARKS || r[i].packets <= 0)
			continue;
		f = marks / r[i].packets;
		if (f < CONG_MIN_FRACTION)
			continue;
		for (size_t o = 0; o < k; o++)
			if (o != i && r[o].packets > 0)
				frac[m++] = fmax(r[o].ce, r[o].cnp) / r[o].packets;
		ref = anom_median(frac, m);
		if (ref > 0 && f < CONG_MIN_RATIO * ref)
			continue;
		{
			struct ct_anomaly an = {.kind = CT_ANOMALY_CONGESTION,
						.scope = CT_ANOMALY_AT_RECEIVER,
						.priority = -1,
						.cls = -1,
						.host = r[i].host,
						.onset = -1,
						.value = f};

			an.confidence = fmin(1, f / (2 * CONG_MIN_FRACTION)) * (marks / all);
			snprintf(an.evidence, sizeof(an.evidence),
				 "%.1f%% of the packets toward it are congestion-marked (%.0f %s, "
				 "%.0f%% of the capture's marks); the other %zu receivers' median "
				 "is "
				 "%.2f%%",
				 f * 100, marks,
				 r[i].ce >= r[i].cnp ? "ECN CE marks" : "CNPs it sent",
				 100 * marks / all, m, ref * 100);
			err = anom_add(c, &an);
		}
	}
	err = err ?: pfc_storm(c);
out:
	free(r);
	free(frac);
	return err;
}
