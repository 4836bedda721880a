/* SPDX-License-Identifier: MIT */
/*
 * The report: what an analysis found, written as versioned JSON
 * (commtap.report/v1, docs/report-schema.md), as a readable table, or as one
 * deterministic line per flow (for golden tests).
 */
#ifndef COMMTAP_REPORT_H
#define COMMTAP_REPORT_H

#include <stdio.h>

#include <commtap/classify.h>
#include <commtap/dataplane.h>
#include <commtap/flow_set.h>
#include <commtap/periodicity.h>

#define CT_REPORT_SCHEMA "commtap.report/v1"
#define CT_REPORT_BURSTS_PER_FLOW 64 /* bursts listed per flow in the JSON */

struct ct_report {
	const char *source;	  /* capture file or interface */
	const char *source_kind;  /* "pcap" */
	const char *clock;	  /* where the timestamps come from */
	const char *error;	  /* why reading stopped early, NULL when complete */
	struct ct_engine_counters counters;
	struct ct_flow_set flows; /* sorted and paired */
	const struct ct_periodicity *periodicity; /* NULL when not computed */
	const struct ct_classification *classes;  /* NULL when not computed */
	double nic_gbps; /* receivers' NIC rate, for the cc section */
	/* optional JSON object text written as "host" (the agent: probe and RDMA counters) */
	const char *host_json;
	/* optional JSON object text written as "gpu" (the agent: commtap.gpu/v1) */
	const char *gpu_json;
};

/* Write the JSON report. Returns 0 or a negative errno. */
int ct_report_write_json(const struct ct_report *r, FILE *out);
void ct_report_write_table(const struct ct_report *r, FILE *out);
void ct_report_write_lines(const struct ct_report *r, FILE *out);

#endif
