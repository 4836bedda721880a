/* SPDX-License-Identifier: MIT */
/* Shared inside the periodicity code (periodicity.c, flow_periodicity.c, cc.c, hosts.c, jobs.c). */
#ifndef COMMTAP_PERIODICITY_INTERNAL_H
#define COMMTAP_PERIODICITY_INTERNAL_H

#include <commtap/periodicity.h>

#include "hosts.h"

/*
 * A flow's figures that depend on the iteration: volumes (into room, for
 * 2 * job->iterations doubles), phases and its own period.
 */
int ct_flow_periodicity_against(struct ct_flow_periodicity *fp, const struct ct_period *job,
				double *room);

/*
 * Per receiving host (in address order) of the flows of set that want
 * marks (all when want is NULL): the cc figures against job, from the
 * flows' bursts in out. *list is calloc'ed. Returns 0 or -ENOMEM.
 */
int ct_receivers_cc(const struct ct_flow_set *set, const struct ct_hosts *h,
		    const struct ct_period *job, const struct ct_periodicity *out,
		    const uint8_t *want, struct ct_receiver_cc **list, size_t *n_list);

/*
 * Group the flows into jobs (per->job estimated from all bursts, every
 * flow's figures against it): fills per->jobs, moves the flows of further
 * jobs onto their own period, and puts the job with the most bytes first
 * (into per->job). Returns 0 or a negative errno.
 */
int ct_jobs_find(const struct ct_flow_set *set, const struct ct_hosts *h, double min_period_s,
		 struct ct_periodicity *per);
void ct_jobs_free(struct ct_periodicity *per);

#endif
