// SPDX-License-Identifier: MIT
/*
 * Anomaly localisation: runs every detector of the table below over an
 * analysed report (after periodicity and classification) and keeps what
 * they found, by kind, the most confident first. A detector is one file;
 * adding one is a line here.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct anom_detector detectors[] = {
	{CT_ANOMALY_STRAGGLER, anom_straggler},
	{CT_ANOMALY_STRAGGLER, anom_straggler_pairs},
	{CT_ANOMALY_SLOW_LINK, anom_slow_link},
	{CT_ANOMALY_LOSS, anom_loss},
	{CT_ANOMALY_CONGESTION, anom_congestion},
	{CT_ANOMALY_RHYTHM, anom_rhythm},
	{CT_ANOMALY_HANG, anom_hang},
};

const char *ct_anomaly_kind_name(enum ct_anomaly_kind k)
{
	static const char *const names[] = {
		[CT_ANOMALY_STRAGGLER] = "straggler", [CT_ANOMALY_SLOW_LINK] = "slow_link",
		[CT_ANOMALY_LOSS] = "loss",	      [CT_ANOMALY_CONGESTION] = "congestion",
		[CT_ANOMALY_RHYTHM] = "rhythm",	      [CT_ANOMALY_HANG] = "hang",
	};

	return (unsigned)k < CT_ANOMALY_KINDS ? names[k] : "unknown";
}

const char *ct_anomaly_scope_name(enum ct_anomaly_scope s)
{
	static const char *const names[] = {"host", "link", "receiver", "priority", "job"};

	return (unsigned)s <= CT_ANOMALY_AT_JOB ? names[s] : "unknown";
}

/*
 * A job's iteration holds every one of its collectives: each class of its
 * data flows sends in most whole iterations. Where one sends in fewer than
 * ITER_CLASS_MIN_SHARE of them, the period is a rhythm inside the iteration
 * (the layers' collectives), not the iteration: what the detectors would
 * judge per iteration is not the job's. (An interval report whose window
 * held two of a synthesized GPT job's 50 ms iterations read a period of
 * 5.8 ms, its data-parallel flows in 1 of 15 "iterations", and called the
 * one holding them a rhythm break at confidence 1; an MoE job's read 1.8 ms
 * and a hang at 0.9. In whole reports every class sends in every iteration.)
 */
#define ITER_CLASS_MIN_SHARE 0.5

static int period_is_part_of_iteration(const struct anom_ctx *c)
{
	size_t whole = c->n_iter - 1, present[CT_CLASS_COUNT] = {0}, active = 0;
	uint32_t *seen;
	int part = 0;

	if (whole < 2 || !c->classes)
		return 0;
	seen = calloc(whole, sizeof(*seen)); /* per iteration, a bit per class */
	if (!seen)
		return -ENOMEM;
	for (size_t f = 0; f < c->per->n_flows; f++) {
		const struct ct_flow_periodicity *fp = &c->per->flows[f];
		int cls = anom_class(c, f);

		if (!anom_job_data_flow(c, f) || cls < 0 || cls >= CT_CLASS_COUNT)
			continue;
		for (size_t b = 0; b < fp->n_bursts; b++) {
			long it = anom_iteration(c, fp->bursts[b].start);

			if (it >= 0 && (size_t)it < whole)
				seen[it] |= 1u << cls;
		}
	}
	for (size_t i = 0; i < whole; i++)
		for (int k = 0; k < CT_CLASS_COUNT; k++)
			present[k] += (seen[i] >> k) & 1;
	for (int k = 0; k < CT_CLASS_COUNT; k++) {
		active += present[k] > 0;
		if (present[k] && (double)present[k] < ITER_CLASS_MIN_SHARE * (double)whole)
			part = 1;
	}
	free(seen);
	return active > 1 && part;
}

int ct_anomalies_find(const struct ct_flow_set *set, const struct ct_periodicity *per,
		      const struct ct_classification *classes,
		      const struct ct_engine_counters *counters, struct ct_anomalies *out)
{
	struct anom_ctx c = {
		.set = set, .per = per, .classes = classes, .counters = counters, .out = out};
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->straggler_jitter_s = out->straggler_threshold_s = -1;
	if (per && per->job.periodic && per->job.iterations >= 2) {
		const struct ct_period *job = &per->job;

		c.n_iter = job->iterations;
		c.period_s = job->period_s;
		c.bounds = malloc((c.n_iter + 1) * sizeof(*c.bounds));
		if (!c.bounds)
			return -ENOMEM;
		memcpy(c.bounds, job->starts, c.n_iter * sizeof(*c.bounds));
		/* the last iteration lasts a period */
		c.bounds[c.n_iter] = job->starts[c.n_iter - 1] + (uint64_t)(job->period_s * 1e9);
		out->iterations = c.n_iter;
		out->period_s = c.period_s;
		err = period_is_part_of_iteration(&c);
		if (err < 0) {
			free(c.bounds);
			return err;
		}
		if (err > 0) {
			/* nothing is judged per iteration (loss and congestion: over the capture)
			 */
			static const enum ct_anomaly_kind per_iteration[] = {
				CT_ANOMALY_STRAGGLER, CT_ANOMALY_SLOW_LINK, CT_ANOMALY_RHYTHM,
				CT_ANOMALY_HANG};

			for (size_t k = 0; k < sizeof(per_iteration) / sizeof(*per_iteration); k++)
				out->not_looked[per_iteration[k]] =
					"the period is a part of the job's iteration: one of its "
					"collectives sends in fewer than half of the periods";
			free(c.bounds);
			c.bounds = NULL;
			c.n_iter = 0;
			err = 0;
		}
	}
	c.rdv = malloc(set->count + 1);
	err = c.rdv ? anom_rendezvous(set, c.rdv, &c.rdv_host, &c.rdv_port) : -ENOMEM;
	if (!err && c.n_iter)
		c.starting = anom_job_starting(&c);
	for (size_t i = 0; i < sizeof(detectors) / sizeof(detectors[0]) && !err; i++)
		err = detectors[i].run(&c);
	free(c.rdv);
	free(c.bounds);
	if (err) {
		ct_anomalies_free(out);
		return err;
	}
	if (out->n)
		qsort(out->list, out->n, sizeof(*out->list), anom_finding_cmp);
	return 0;
}

void ct_anomalies_free(struct ct_anomalies *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->list[i].iters);
	free(a->list);
	free(a->hang_flows);
	memset(a, 0, sizeof(*a));
}
