/* SPDX-License-Identifier: MIT */
/*
 * commtap predict --what-if: the profile's job under the other mapping,
 * another d and the other transport, optionally fitted to an analysed
 * report of the job (docs/advice.md, "What-if").
 */
#ifndef COMMTAP_PREDICT_WHATIF_H
#define COMMTAP_PREDICT_WHATIF_H

#include "profile.h"

struct whatif_args {
	const char *report;    /* an analysed report of the job, or NULL */
	unsigned d;	       /* another data-parallel size, 0: none */
	const char *transport; /* the job's transport ("roce", "tcp"), NULL: the report's or roce */
	int json;
};

/* Print the what-if; returns 0 or a negative errno, said once on stderr. */
int predict_whatif(const struct ct_profile *p, const struct whatif_args *a);

#endif
