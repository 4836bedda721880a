/* SPDX-License-Identifier: MIT */
/*
 * Periodicity (slow path): the iteration period of a set of on-off bursts.
 *
 * 1. The bursts' bytes are binned into a byte series (spread evenly over
 *    each burst) and its autocorrelation is computed with FFTW.
 * 2. Each candidate lag is scored by the autocorrelation at its first
 *    multiples (harmonic mean of the peaks): the iteration period repeats
 *    at every multiple, a nested micro-batch rhythm does not, so the
 *    smallest lag scoring close to the best is the iteration.
 * 3. The lag is refined to the mean period by the centroids of the
 *    autocovariance at its multiples (many pairs of iterations averaged).
 * 4. In each period the first burst after the longest quiet phase is the
 *    iteration's anchor; the anchors are the iteration boundaries. Where
 *    the bursts keep their places in the iteration and the last iteration
 *    is whole, the anchors' span plus the last iteration's length (read
 *    from where its bytes fall) over the iterations is the period instead.
 * A period is claimed only when at least CT_PERIOD_MIN_ITERATIONS anchors
 * are found and the confidence reaches CT_PERIOD_MIN_CONFIDENCE.
 */
#ifndef COMMTAP_PERIOD_H
#define COMMTAP_PERIOD_H

#include <stddef.h>
#include <stdint.h>

#define CT_PERIOD_MIN_ITERATIONS 3
#define CT_PERIOD_MIN_CONFIDENCE 0.5

struct ct_burst {
	uint64_t start, end; /* ns */
	uint64_t bytes;
	uint32_t messages;
	uint32_t flow;	  /* caller's index */
	uint32_t packets; /* 0 when unknown */
};

struct ct_period {
	int periodic;	    /* 1 when a period is claimed */
	double period_s;    /* iteration period */
	double confidence;  /* 0..1 */
	double acf_peak;    /* autocorrelation at the period, 0..1 */
	size_t iterations;  /* anchors found */
	uint64_t *starts;   /* iteration start times (ns), iterations entries; free() */
	const char *reason; /* why no period was claimed */
};

/*
 * Estimate the period of bursts (any order; they are sorted in place by
 * start). min_period_s bounds the search from below (0: 4 bins). Returns 0
 * or -ENOMEM; out->periodic says whether a period was found.
 */
int ct_period_estimate(struct ct_burst *bursts, size_t n, double min_period_s,
		       struct ct_period *out);
void ct_period_free(struct ct_period *p);

/* The iteration (index into starts) a time falls in, or -1. */
long ct_period_iteration(const struct ct_period *p, uint64_t t);

/*
 * Phase of a time inside the iteration that contains it, 0..1, given the
 * iteration starts; -1 outside them.
 */
double ct_period_phase(const struct ct_period *p, uint64_t t);

#endif
