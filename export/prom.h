/* SPDX-License-Identifier: MIT */
/*
 * Prometheus text exposition (format 0.0.4) of a commtap.report/v1
 * document: engine health, per class and host pair byte and message
 * counters, the iteration period and its confidence, duty cycles,
 * CNP/ECN/PFC/retransmission counters. Label sets are bounded whatever the
 * traffic: classes and reasons are fixed lists, host pairs, flows and
 * receivers are the top N by bytes (or peak) and the rest is summed into one
 * series labelled "_other", so the sums still match the report.
 *
 * commtap analyze --listen, commtap agent and commtap-mirror all publish
 * their reports through this writer and metrics_server.h, from the
 * document the report sink built (report_sink.h).
 */
#ifndef COMMTAP_EXPORT_PROM_H
#define COMMTAP_EXPORT_PROM_H

#include "report_model.h"

#include <json-c/json.h>
#include <stddef.h>

#define CT_PROM_TOP_FLOWS     20
#define CT_PROM_TOP_PAIRS     64
#define CT_PROM_TOP_RECEIVERS 32
#define CT_PROM_TOP_JOBS      8 /* jobs labelled by ct_job; the rest "_other" */

struct ct_prom_opts {
	unsigned top_flows;	/* 0: CT_PROM_TOP_FLOWS */
	unsigned top_pairs;	/* 0: CT_PROM_TOP_PAIRS */
	unsigned top_receivers; /* 0: CT_PROM_TOP_RECEIVERS */
};

/*
 * Render the exposition of a report into a new buffer (free() it).
 * Returns 0, or -ENOMEM.
 */
int ct_prom_render_report(const struct ct_rep *rep, const struct ct_prom_opts *opts, char **text,
			  size_t *len);

/*
 * The same from a document (ct_rep_read): -EINVAL when a field has the
 * wrong type.
 */
int ct_prom_render(json_object *report, const struct ct_prom_opts *opts, char **text, size_t *len);

#endif
