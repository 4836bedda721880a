/* SPDX-License-Identifier: MIT */
/* Inside the advice (advice.c, advice_pushpull.c). */
#ifndef COMMTAP_ANALYSIS_ADVICE_INTERNAL_H
#define COMMTAP_ANALYSIS_ADVICE_INTERNAL_H

#include <stdint.h>

#include <commtap/advice.h>

enum { CT_ADVICE_PUSH = 1, CT_ADVICE_PULL = 2 };

/*
 * Per flow of r (dir: r->flows.count entries): CT_ADVICE_PUSH toward a
 * parameter server, CT_ADVICE_PULL from one, 0 for a flow carrying no
 * PushPull (or between ends alike). Returns 0 or -ENOMEM.
 */
int ct_advice_pushpull_dirs(const struct ct_report *r, uint8_t *dir);

#endif
