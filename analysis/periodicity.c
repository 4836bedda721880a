// SPDX-License-Identifier: MIT
/*
 * Periodicity of a report. The job's period comes from the spectral
 * estimate on all bursts together (period.c); a flow's own period comes
 * from its burst starts, one job iteration apart, so the cost per flow is
 * linear in its bursts (no transform per flow).
 */
#include "periodicity_internal.h"

#include <commtap/burst_sort.h>
#include <commtap/slow_alloc.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct ct_period *ct_periodicity_job_period(const struct ct_periodicity *p, size_t j)
{
	return j ? &p->jobs[j].period : &p->job;
}

const struct ct_period *ct_periodicity_period_of(const struct ct_periodicity *p, size_t flow)
{
	int j = p->flows[flow].job;

	return ct_periodicity_job_period(p, j > 0 ? (size_t)j : 0);
}

int ct_periodicity_compute(const struct ct_flow_set *set, const struct ct_burst_log *log,
			   double min_period_s, struct ct_periodicity *out)
{
	struct ct_burst *all = ct_slow_alloc((log->n + 1) * sizeof(*all)), *tmp = NULL;
	const struct ct_flow_key *last = NULL;
	struct ct_hosts hosts = {0};
	size_t n = 0, flows = 0;
	int64_t f = -1;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->flows = ct_slow_calloc(set->count + 1, sizeof(*out->flows));
	out->n_flows = set->count;
	if (!all || !out->flows) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < log->n; i++) {
		const struct ct_flow_burst *fb = &log->b[i];

		/* a flow's bursts tend to come in runs: look its key up once a run */
		if (!last || memcmp(&fb->key, last, sizeof(*last)))
			f = ct_flow_set_find(set, &fb->key);
		last = &fb->key;
		if (f < 0)
			continue;
		all[n++] = (struct ct_burst){fb->start,	  fb->end,     fb->bytes, fb->messages,
					     (uint32_t)f, fb->packets, fb->loss,  fb->marks};
	}
	out->bursts = n;
	/*
	 * One room for both sorts: the job's by start (the period's own sort
	 * then finds them in order) and the flows' (a fresh buffer a sort is
	 * 20,000 page faults at 80 MB).
	 */
	tmp = ct_slow_alloc((n + 1) * sizeof(*tmp));
	if (tmp) /* else (or without memory for the counts) the period sorts */
		(void)ct_bursts_sort_by_start_using(all, n, tmp);
	err = ct_period_estimate(all, n, min_period_s, &out->job); /* sorts by start */
	err = err ?: ct_onoff_of(all, n, &out->job_onoff);
	if (err)
		goto out;

	/* by flow, each flow's bursts staying in start order */
	ct_bursts_sort_by_flow_then_start(all, n, tmp);
	free(tmp);
	tmp = NULL;
	/* every flow's volumes in one room */
	for (size_t i = 0; i < n; i++)
		flows += !i || all[i].flow != all[i - 1].flow;
	if (out->job.periodic) {
		out->volume_room = ct_slow_alloc((2 * flows * out->job.iterations + 1) *
						 sizeof(*out->volume_room));
		if (!out->volume_room) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0, k = 0; i < n && !err; k++) {
		size_t j = i;
		struct ct_flow_periodicity *fp = &out->flows[all[i].flow];

		while (j < n && all[j].flow == all[i].flow)
			j++;
		fp->bursts = all + i;
		fp->n_bursts = j - i;
		err = ct_onoff_of(all + i, j - i, &fp->onoff);
		err = err
			      ?: ct_flow_periodicity_against(fp, &out->job,
							     out->volume_room +
								     2 * k * out->job.iterations);
		i = j;
	}
	out->by_flow = all;
	all = NULL;
	err = err ?: ct_hosts_rank(set, &hosts);
	err = err ?: ct_jobs_find(set, &hosts, min_period_s, out);
	err = err
		      ?: ct_receivers_cc(set, &hosts, &out->job, out, NULL, &out->receivers,
					 &out->n_receivers);
out:
	ct_hosts_free(&hosts);
	free(all);
	free(tmp);
	if (err)
		ct_periodicity_free(out);
	return err;
}

void ct_periodicity_free(struct ct_periodicity *p)
{
	free(p->class_receivers);
	free(p->volume_room); /* every flow's volumes */
	free(p->flows);
	free(p->receivers);
	free(p->by_flow);
	ct_jobs_free(p);
	ct_period_free(&p->job);
	memset(p, 0, sizeof(*p));
}
