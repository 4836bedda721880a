/* SPDX-License-Identifier: MIT */
/*
 * The cluster view: several reports of the same interval, one per vantage
 * point (agent host, mirror port), merged into one commtap.report/v1.
 *
 * - flows are deduplicated by key (transport, addresses, QPN or ports); a
 *   flow seen at several vantage points keeps the copy with the most
 *   packets (then the most confident class), ids are renumbered in the
 *   report's order and `reverse` is remapped by key;
 * - capture and engine counters are summed (frames each vantage point
 *   read: a packet seen at two points counts twice there, never in flows);
 *   `capture.vantage_points` lists each report's own totals;
 * - the job's period comes from the most confident report (a job has one
 *   iteration, each vantage point estimates it), `job.source` names it;
 * - cc receivers are deduplicated by address (the copy with most bursts);
 * - anomaly findings of every report are kept, one per anomaly: the same
 *   kind at the same place with overlapping windows in time is one
 *   finding, its most confident copy, with `sources` naming the reports
 *   that found it (merge_anomaly.c).
 */
#ifndef COMMTAP_EXPORT_MERGE_H
#define COMMTAP_EXPORT_MERGE_H

#include <json-c/json.h>
#include <stddef.h>

/*
 * Merge n checked reports (names: their files, for the vantage point list).
 * The result shares sub-objects with the inputs (reference counted): drop
 * it with json_object_put. Returns 0 or -ENOMEM.
 */
int ct_merge_reports(json_object *const *docs, const char *const *names, size_t n,
		     json_object **out);

/*
 * The merged "anomalies" section of n reports (best: the report the merged
 * job comes from, whose iteration count and period the section gives).
 * *out is NULL when no report has the section; a report whose section
 * does not read is named with the reason in its "unread" list. Returns 0 or
 * -ENOMEM.
 */
int ct_merge_anomalies(json_object *const *docs, const char *const *names, size_t n, size_t best,
		       json_object **out);

#endif
