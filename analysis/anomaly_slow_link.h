/* SPDX-License-Identifier: MIT */
/* The two judgements of a slow link (anomaly_slow_link.c): against its peers, against itself. */
#ifndef COMMTAP_ANOMALY_SLOW_LINK_H
#define COMMTAP_ANOMALY_SLOW_LINK_H

#include "anomaly_internal.h"

/*
 * A pair is slow in an iteration below this share of its reference rate
 * (its peers' median, or its own before): clean synthesized jobs' pairs
 * stay within 0.8..1.25 of their class's median, a link at half rate
 * reads 0.5 and below.
 */
#define SLOW_RATIO 0.6
/* seen in at least this many iterations, and in most of them from its onset */
#define SLOW_MIN_ITERATIONS 2
#define SLOW_MIN_STEADY	    0.5
/*
 * Iterations of a pair's own before a step, at least: the fewest whose
 * median one outlier does not move (a slow first iteration of a job is
 * warm-up).
 */
#define SLOW_MIN_BEFORE 3
/*
 * Healthy is what the job's own pairs do: a pair is slow in an iteration
 * only where its shortfall from the peers' median is SLOW_SPREAD_Z robust
 * deviations (1.4826 MAD of the peers' rates, relative to their median) or
 * more, 3 being the usual robust outlier bound. Synthesized pairs spread
 * by 0.03-0.1 of their median and a link at a third of its rate stands
 * out; on clean real runs the pairs of token routing (EP) and of a
 * pipeline move 0.1..0.5 of their median from iteration to iteration
 * (gloo on a loaded 2-core machine): below 60% there was the healthy
 * spread, 25 findings at confidence 0.5 or more in 1,088 clean iterations.
 */
#define SLOW_SPREAD_Z 3.0

/*
 * A link that slowed is slower than it was: an alarm needs the pair's own
 * ratio to its peers before the onset (SLOW_MIN_BEFORE of them at least)
 * and the slow iterations below SLOW_RATIO of it, by SLOW_SPREAD_Z of its
 * own spread there (a pair whose ratio swings is not judged by one dip,
 * nor by the ratio it had in two iterations). A pair below its peers from
 * its first iterations, or one that was already most of the way there, is
 * what a host slower by placement shows too (gloo ranks sharing a loaded
 * 2-core machine: on clean real runs ring pairs sit at 0.4-0.6 of their
 * peers for a whole run): reported, below an alarm.
 */
#define SLOW_UNDECIDED_CONFIDENCE 0.45

/*
 * A step pages only where the job can feel it: what the pair's slow bursts
 * took beyond their time at its ratio before (before; on: their on-time per
 * iteration, s), a median over the finding's iterations, is the most the
 * step adds to an iteration (all of it on the critical path, as in a ring).
 * Where that is within SLOW_SPREAD_Z robust deviations of the job's own
 * iteration time, the step explains nothing the job shows: the finding is
 * held below an alarm and its evidence (from evidence + at) says so. tmp:
 * n_iter doubles. Measured: on clean real gloo runs, senders whose packets
 * went from 6 to 25 us apart mid-run (gradacc-3: 101% -> 32% of its peers)
 * cost 2.0-7.5 ms an iteration against swings of 5.5-29 ms (6 alarms in
 * 1,255 iterations before, 0 after); the synthesized corpus's slowed links
 * cost 0.001-0.08 ms against swings of 0.6-2.2 ms (docs/accuracy.md).
 */
void anom_slow_step_felt(const struct anom_ctx *c, struct ct_anomaly *an, const double *on,
			 double before, size_t at, double *tmp);

/*
 * A pair with no peers of its class, judged against its own earlier
 * iterations: rate[it] is its bytes over its bursts' time in iteration it
 * (0: none timed), on[it] that time (s). Adds a finding (anom_add) where its rate steps down and
 * stays down beyond its own run-to-run spread. 0 or -ENOMEM.
 */
int anom_slow_link_own(struct anom_ctx *c, const struct ct_addr *src, const struct ct_addr *dst,
		       int cls, const double *rate, const double *on);

#endif
