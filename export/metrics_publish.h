/* SPDX-License-Identifier: MIT */
/*
 * Publish an in-memory report (struct ct_report, what analyze, the agent and
 * the mirror build each interval) on a /metrics server: the report goes
 * through its JSON form so that the exposition is drawn from exactly what
 * the JSON report says.
 */
#ifndef COMMTAP_EXPORT_METRICS_PUBLISH_H
#define COMMTAP_EXPORT_METRICS_PUBLISH_H

#include <commtap/report.h>

#include "metrics_server.h"
#include "prom.h"

/* Returns 0, -ENOMEM or -EIO. */
int ct_metrics_publish_report(struct ct_metrics_server *s, const struct ct_report *r,
			      const struct ct_prom_opts *opts);

#endif
