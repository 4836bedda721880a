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

struct json_object;
struct ct_anomalies;

#define CT_REPORT_SCHEMA "commtap.report/v1"
#define CT_REPORT_MAX_SECTIONS	  4  /* producers' own sections */
#define CT_REPORT_BURSTS_PER_FLOW 64 /* bursts listed per flow in the JSON */

struct ct_report {
	const char *source;	  /* capture file or interface */
	const char *source_kind;  /* "pcap" */
	const char *clock;	  /* where the timestamps come from */
	const char *error;	  /* why reading stopped early, NULL when complete */
	struct ct_engine_counters counters;
	/*
	 * Packets the kernel dropped before they could be read (a live
	 * capture's rings full), when the source can know it (has_kernel_drops).
	 */
	uint64_t kernel_drops;
	int has_kernel_drops;
	struct ct_flow_set flows; /* sorted and paired */
	const struct ct_periodicity *periodicity; /* NULL when not computed */
	const struct ct_classification *classes;  /* NULL when not computed */
	const struct ct_anomalies *anomalies;	  /* NULL when not looked for */
	double nic_gbps; /* receivers' NIC rate, for the cc section */
	/*
	 * The NIC rate the advice measures against and who stated it
	 * ("option": --nic-gbps was given; "profile": its hardware.nic_gbps,
	 * set by ct_analysis_run when no option was); NULL: nobody did, and
	 * the advice says unknown rather than take nic_gbps's default.
	 */
	double nic_gbps_stated;
	const char *nic_source;
	/*
	 * An interval report: the input goes on (the report is not complete,
	 * and that is no error). seq numbers a producer's reports from 0.
	 */
	int interval;
	unsigned seq;
	/* what the analysis left out to meet a deadline (shutdown), NULL: nothing */
	const char *cut_short;
	/* the table lists every flow, its class and periodicity (--flows), else a summary */
	int table_flows;
	/*
	 * A producer's own top-level sections, in the report as they are: the
	 * agent's "host" (probe and RDMA counters) and "gpu" (commtap.gpu/v1),
	 * the mirror's "mirror" (port, queues, capture loss). The producer
	 * keeps its reference; the document takes one of its own.
	 */
	struct ct_report_section {
		const char *name;
		struct json_object *value;
	} sections[CT_REPORT_MAX_SECTIONS];
	unsigned n_sections;
};

/* Add a section (see above); -ENOSPC past CT_REPORT_MAX_SECTIONS. */
int ct_report_add_section(struct ct_report *r, const char *name, struct json_object *value);

/*
 * The report as a commtap.report/v1 document (json-c): what the JSON file
 * holds and what every export (Prometheus, the page, merge) reads, whether
 * built here or loaded from a file. json_object_put() it. NULL when out of
 * memory.
 */
struct json_object *ct_report_document(const struct ct_report *r);

/*
 * The same document with its flows streamed: no tree of every flow (some
 * 16 KiB of json-c each); each flow is made, printed and freed when the
 * document is printed, so r must outlive the document. Its "flows" array
 * holds, for the exports that read flows in memory (/metrics), a brief of
 * each (addresses, ids, volumes, class, job and shape) with
 * CT_REPORT_DOC_BRIEF_FLOWS, nothing otherwise. Printed, it is the
 * document ct_report_document makes, byte for byte.
 */
#define CT_REPORT_DOC_STREAM_FLOWS (1u << 0)
#define CT_REPORT_DOC_BRIEF_FLOWS  (1u << 1)
struct json_object *ct_report_document_ext(const struct ct_report *r, unsigned flags);

/*
 * Write a document as the report's JSON text; a streamed one goes out in
 * pieces as it is printed. Returns 0, -ENOMEM or -EIO.
 */
int ct_report_document_write(struct json_object *doc, FILE *out);

/* Write the JSON report. Returns 0 or a negative errno. */
int ct_report_write_json(const struct ct_report *r, FILE *out);
void ct_report_write_table(const struct ct_report *r, FILE *out);
void ct_report_write_lines(const struct ct_report *r, FILE *out);

#endif
