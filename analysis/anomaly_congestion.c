// SPDX-License-Identifier: MIT
/*
 * Congestion: ECN CE marks (and the CNPs a RoCE receiver answers them with)
 * concentrated on one receiver against the job's other receivers — incast
 * into it, a slow drain behind it — and PFC pause storms on one priority.
 * The marks toward a receiver are the CE-marked packets of its flows, or,
 * where the mirror saw no CE marks (marked after the mirror), the CNPs it
 * sent. The mirror sees pause frames without their port: a storm is said of
 * a priority. The counters are totals over the capture; a receiver's
 * marks and packets per iteration, from its flows' bursts, give the
 * iteration its marking started in, and the marked share is judged from
 * there on (anomaly_onset.c). A storm is of the whole capture.
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
/*
 * A receiver whose share over the whole capture is below CONG_MIN_FRACTION
 * / CONG_ONSET_DILUTION is not looked at per iteration: marking that
 * started in the capture's last quarter is left to the next report (an
 * interval report's capture is its interval).
 */
#define CONG_ONSET_DILUTION 4.0
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

static int same_addr(const struct ct_addr *a, const struct ct_addr *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/*
 * The marked share toward r from its marking's onset on, set into an
 * (onset, the iterations marked and their shares); the whole capture's
 * share (f_all) where the bursts do not tell.
 */
static int share_since_onset(struct anom_ctx *c, const struct rcv *r, struct ct_anomaly *an,
			     double f_all, double *f)
{
	const struct ct_flow_set *set = c->set;
	double *w = calloc(set->count + 1, sizeof(*w)), *pw = calloc(set->count + 1, sizeof(*pw));
	double *x = malloc((c->n_iter + 1) * sizeof(*x)), *p = malloc((c->n_iter + 1) * sizeof(*p));
	int by_cnp = r->cnp > r->ce, err = -ENOMEM;
	double marks = fmax(r->ce, r->cnp), x_all = 0, x_after = 0, p_all = 0, p_after = 0, scale;
	double cut, p_cut;

	*f = f_all;
	if (!w || !pw || !x || !p)
		goto out;
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *fl = &set->flows[i];
		double both = (double)(fl->ecn_ce + fl->cnp);

		if (same_addr(&fl->key.dst, &r->host)) {
			pw[i] = 1;
			if (!by_cnp && both > 0)
				w[i] = (double)fl->ecn_ce / both;
		}
		if (by_cnp && both > 0 && same_addr(&fl->key.src, &r->host))
			w[i] = (double)fl->cnp / both;
	}
	err = anom_burst_series(c, w, ANOM_BURST_MARKS, x, &cut);
	err = err ?: anom_burst_series(c, pw, ANOM_BURST_PACKETS, p, &p_cut);
	if (err == -ENOENT) {
		err = 0;
		goto out;
	}
	err = err ?: anom_onset_of_series(c, an, x, NULL, p, cut, marks);
	if (err || an->onset < 0)
		goto out;
	anom_onset_at_first_signal(c, an, w, ANOM_BURST_MARKS);
	for (size_t i = 0; i < c->n_iter; i++) {
		x_all += x[i];
		p_all += p[i];
		if (i >= (size_t)an->onset) {
			x_after += x[i];
			p_after += p[i];
		}
	}
	if (p_after <= 0 || x_all <= 0)
		goto out;
	/*
	 * The series give shares in time, the totals the magnitude: a burst's
	 * count saturates at 255, so the series' own ratio could read low.
	 */
	*f = marks * (x_after / x_all) / (r->packets * (p_after / p_all));
	scale = (marks / x_all) / (r->packets / p_all);
	for (unsigned s = 0; s < an->seen; s++) {
		uint32_t it = an->iters[s].iteration;

		an->iters[s].value = p[it] > 0 ? fmin(1, scale * x[it] / p[it]) : 0;
	}
out:
	free(w);
	free(pw);
	free(x);
	free(p);
	return err;
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
		struct ct_anomaly an = {.kind = CT_ANOMALY_CONGESTION,
					.scope = CT_ANOMALY_AT_RECEIVER,
					.priority = -1,
					.cls = -1,
					.host = r[i].host,
					.onset = -1};
		size_t m = 0;

		if (marks < CONG_MIN_MARKS || r[i].packets <= 0)
			continue;
		f = marks / r[i].packets;
		if (f < CONG_MIN_FRACTION / CONG_ONSET_DILUTION)
			continue;
		err = share_since_onset(c, &r[i], &an, f, &f);
		if (!err && f < CONG_MIN_FRACTION)
			goto next;
		for (size_t o = 0; o < k; o++)
			if (o != i && r[o].packets > 0)
				frac[m++] = fmax(r[o].ce, r[o].cnp) / r[o].packets;
		ref = anom_median(frac, m);
		if (err || (ref > 0 && f < CONG_MIN_RATIO * ref))
			goto next;
		an.value = f;
		an.confidence = fmin(1, f / (2 * CONG_MIN_FRACTION)) * (marks / all);
		snprintf(an.evidence, sizeof(an.evidence),
			 "%.1f%% of the packets toward it are congestion-marked%s (%.0f %s, %.0f%% "
			 "of the capture's marks); the other %zu receivers' median is %.2f%%",
			 f * 100, an.onset > 0 ? " from its onset on" : "", marks,
			 r[i].ce >= r[i].cnp ? "ECN CE marks" : "CNPs it sent", 100 * marks / all,
			 m, ref * 100);
		err = anom_add(c, &an);
		continue;
	next:
		free(an.iters);
	}
	err = err ?: pfc_storm(c);
out:
	free(r);
	free(frac);
	return err;
}
