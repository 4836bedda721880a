/* SPDX-License-Identifier: MIT */
/* The report's advice as Prometheus gauges (prom.c renders them in place). */
#ifndef COMMTAP_EXPORT_PROM_ADVICE_H
#define COMMTAP_EXPORT_PROM_ADVICE_H

#include "report_model.h"

#include <stddef.h>
#include <stdio.h>

/*
 * Write the advice families (none without an advice section): per job a
 * handful of gauges, per job and class (a fixed label set) a few more, so
 * a scrape holds at most n_labels x (CT_REP_CLASSES + 1) series a family.
 * labels[j]: the labels of advice job j, as written (escaped, no trailing
 * comma: its ct_job and the vantage); jobs from n_labels on are left out.
 */
void ct_prom_advice(FILE *out, const struct ct_rep_advice *a, char *const *labels, size_t n_labels);

#endif
