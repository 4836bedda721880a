// SPDX-License-Identifier: MIT
/*
 * A flow's figures against a job's period (periodicity_internal.h): its
 * per-iteration volumes, phases, and its own period from its burst starts,
 * one job iteration apart (no transform per flow).
 */
#include "periodicity_internal.h"

#include <string.h>

/* A flow's period: its first burst in each job iteration, over the iterations between. */
static void flow_period(const struct ct_burst *b, size_t n, const struct ct_period *job,
			struct ct_flow_periodicity *fp)
{
	uint64_t first_start = 0, last_start = 0;
	long first_it = -1, last_it = -1, prev = -1;
	size_t seen = 0;

	for (size_t i = 0; i < n; i++) {
		long it = ct_period_iteration(job, b[i].start);

		if (it < 0 || it == prev)
			continue;
		prev = it;
		seen++;
		if (first_it < 0) {
			first_it = it;
			first_start = b[i].start;
		}
		last_it = it;
		last_start = b[i].start;
	}
	if (seen >= CT_PERIOD_MIN_ITERATIONS && last_it > first_it) {
		fp->periodic = 1;
		fp->period_s =
			(double)(last_start - first_start) / (double)(last_it - first_it) / 1e9;
	}
}

int ct_flow_periodicity_against(struct ct_flow_periodicity *fp, const struct ct_period *job,
				double *room)
{
	int err;

	fp->periodic = 0;
	fp->period_s = 0;
	fp->phase_first = fp->phase_last = -1;
	memset(&fp->volumes, 0, sizeof(fp->volumes));
	if (!job->periodic)
		return 0;
	err = ct_iteration_volumes_in(fp->bursts, fp->n_bursts, job, &fp->volumes, room);
	if (err)
		return err;
	fp->phase_first = fp->volumes.phase_first;
	fp->phase_last = fp->volumes.phase_last;
	flow_period(fp->bursts, fp->n_bursts, job, fp);
	return 0;
}
