/* SPDX-License-Identifier: MIT */
/* The report's anomalies as Prometheus series (prom.c renders them in place). */
#ifndef COMMTAP_EXPORT_PROM_ANOMALY_H
#define COMMTAP_EXPORT_PROM_ANOMALY_H

#include "report_model.h"

#include <stdio.h>

/* The most confident findings with their own series; the rest only counted per kind. */
#define CT_PROM_TOP_ANOMALIES 16

/*
 * Write the anomaly families of a report (none without an anomalies section).
 * labels: put first in every series, as written (escaped, no trailing
 * comma): the fleet's ct_job and vantage of the job the findings are of
 * (prom.c); NULL or "" for none.
 */
void ct_prom_anomalies(FILE *out, const struct ct_rep_anomalies *a, const char *labels);

#endif
