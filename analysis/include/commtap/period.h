/* SPDX-License-Identifier: MIT */
/*
 * Periodicity (slow path): the iteration period of a set of on-off bursts,
 * read from the structure of training traffic rather than from its times.
 *
 * 1. Each iteration moves the same tensors: along a flow's cumulative
 *    bytes, the idle time before each burst (log scale) repeats with the
 *    flow's bytes per iteration, however much the compute between them
 *    jitters. Each of the heaviest flows' repetition lags is found from the
 *    autocorrelation of that series (FFTW); the best one and its divisors
 *    that score as well up to noise are candidates (period_repeat.c).
 * 2. For a candidate, every iteration's first burst (the anchor) starts at
 *    the same byte of the iteration, after its longest wait; the anchors'
 *    span over the iterations is the flow's period (the last iteration
 *    counted too when the flow began on a boundary and it is whole).
 * 3. The job's iteration is the candidate period that the most flows
 *    divide (a nested rhythm k times an iteration counts 1/k), each flow
 *    voting with its bytes, its repetition's score and the steadiness of
 *    its anchors; the period is the mean of the flows that repeat once in
 *    it, and the heaviest of them gives the iteration starts.
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
	uint8_t loss, marks; /* loss signals and marks during it (struct ct_flow_burst) */
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

/* The same for a time already placed in iteration k (ct_period_iteration). */
double ct_period_phase_in(const struct ct_period *p, long k, uint64_t t);

#endif
