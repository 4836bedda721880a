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
 * - cc receivers are deduplicated by address (the copy with most bursts).
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

#endif
