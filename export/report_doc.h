/* SPDX-License-Identifier: MIT */
/*
 * A commtap.report/v1 document as read back from JSON (json-c): what the
 * cluster merge, the HTML page and the Prometheus exposition work from, so
 * that reports written by analyze, the agent or the mirror all feed them the
 * same way. Missing fields read as zero, NULL or false.
 */
#ifndef COMMTAP_EXPORT_REPORT_DOC_H
#define COMMTAP_EXPORT_REPORT_DOC_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Read and check one report. Returns 0 and the document, or a negative errno
 * with a one-line reason naming the file in err.
 */
int ct_doc_load(const char *path, json_object **out, char *err, size_t errlen);

/* Check that a parsed document is a commtap.report/v1; err says why not. */
int ct_doc_check(json_object *doc, const char *name, char *err, size_t errlen);

json_object *ct_doc_get(json_object *o, const char *key);
uint64_t ct_doc_u64(json_object *o, const char *key);
double ct_doc_num(json_object *o, const char *key);
const char *ct_doc_str(json_object *o, const char *key);
int ct_doc_bool(json_object *o, const char *key);
size_t ct_doc_len(json_object *array);
json_object *ct_doc_at(json_object *array, size_t i);

/* A flow's identity as text: "roce SRC DST qpn" or "tcp SRC DST sport dport". */
void ct_doc_flow_key(json_object *flow, char *buf, size_t len);

/*
 * Order of flows in a report: first packet, then transport, addresses (as
 * bytes) and QPN or ports, like the engine's own order.
 */
int ct_doc_flow_cmp(json_object *a, json_object *b);

#endif
