/* SPDX-License-Identifier: MIT */
/* The HTML page's pieces: the view of a report they share, and the sections. */
#ifndef COMMTAP_EXPORT_HTML_INTERNAL_H
#define COMMTAP_EXPORT_HTML_INTERNAL_H

#include "html.h"
#include "report_model.h"

#include <stddef.h>
#include <stdint.h>

#define CT_ADDR_TEXT 64
/* hosts drawn in the heatmaps: the busiest, the rest as one "other hosts" row and column */
#define CT_HTML_MAX_HOSTS 64

struct ct_view_flow {
	const struct ct_rep_flow *rep;
	int cls; /* index in ct_class_name order */
	uint64_t bytes, messages;
};

/* What the sections draw from, derived once from the report. */
struct ct_view {
	const struct ct_rep *rep;
	size_t n_hosts;
	char (*hosts)[CT_ADDR_TEXT]; /* numeric address order, then "other hosts" if any */
	size_t n_listed;	     /* hosts with their own row: n_hosts, or n_hosts - 1 */
	size_t n_others;	     /* hosts folded into the last row */
	size_t n_flows;
	struct ct_view_flow *flows; /* report order */
	size_t *busiest;	    /* flow indexes, most bytes first */
	uint64_t class_bytes[CT_HTML_CLASSES], class_messages[CT_HTML_CLASSES];
	size_t class_flows[CT_HTML_CLASSES];
	double *matrix;	   /* [class][src][dst] bytes over the capture */
	double iterations; /* capture duration / period; 0 when not periodic */
	int periodic;
	double period_s;
	uint64_t t0;		     /* first packet: every time is an offset from it */
	uint64_t win_start, win_end; /* the timeline's span */
	const uint64_t *iter_starts;
	size_t n_iter;
	uint64_t *iter_buf;
};

/* A burst, or bursts joined: [s, e) in ns since the epoch. */
struct ct_span {
	uint64_t s, e;
};

/*
 * The class's bursts inside the timeline's span, clipped to it, sorted and
 * joined where they overlap or lie closer than join_ns. Returns how many
 * (*out: free() it), or -ENOMEM.
 */
long ct_view_class_spans(const struct ct_view *v, int cls, uint64_t join_ns, struct ct_span **out);

int ct_view_build(const struct ct_rep *rep, const struct ct_html_opts *o, struct ct_view *v);
void ct_view_free(struct ct_view *v);
int ct_view_host(const struct ct_view *v, const char *addr);
double *ct_view_cell(const struct ct_view *v, int cls, size_t src, size_t dst);
/* bytes per iteration when periodic, else over the capture */
double ct_view_per_iter(const struct ct_view *v, double bytes);

/* drawing helpers */
void ct_html_text(FILE *out, const char *s); /* escaped for text and attributes */
void ct_html_bytes(FILE *out, double bytes); /* 1.5 MiB */
void ct_html_seconds(FILE *out, double s);   /* 12.3 ms */
void ct_html_colour(double t, char out[8]);  /* 0..1 to a sequential palette */
const char *ct_html_class_colour(int cls);

/* sections */
void ct_html_summary(FILE *out, const struct ct_view *v);
void ct_html_heatmaps(FILE *out, const struct ct_view *v);
void ct_html_cdfs(FILE *out, const struct ct_view *v);
void ct_html_timeline(FILE *out, const struct ct_view *v, const struct ct_html_opts *o);
void ct_html_periodicity(FILE *out, const struct ct_view *v, const struct ct_html_opts *o);
void ct_html_cc(FILE *out, const struct ct_view *v);
void ct_html_expected(FILE *out, const struct ct_view *v, const struct ct_html_expect *e);
void ct_html_gpu(FILE *out, const struct ct_view *v);
void ct_html_anomalies(FILE *out, const struct ct_rep_anomalies *a);
void ct_html_advice(FILE *out, const struct ct_rep_advice *a);

#endif
