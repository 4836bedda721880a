// SPDX-License-Identifier: MIT
/*
 * On-off timeline: each class and the busiest flows over a few iterations,
 * iteration boundaries marked. Drawn from the bursts the report lists per
 * flow (`periodicity.first_bursts`); times are uint64 offsets from the
 * capture's first packet, so nothing is rounded through a double first.
 */
#include "html_internal.h"

#include <commtap/traffic_class.h>

#include <inttypes.h>
#include <stdlib.h>

#define LABEL_W 260
#define PLOT_W	820
#define ROW_H	18

static double x_at(const struct ct_view *v, uint64_t t)
{
	if (t < v->win_start)
		t = v->win_start;
	if (t > v->win_end)
		t = v->win_end;
	return LABEL_W +
	       (double)PLOT_W * (double)(t - v->win_start) / (double)(v->win_end - v->win_start);
}

/* One flow's bursts inside the window, on row y. */
static void bursts(FILE *out, const struct ct_view *v, const struct ct_rep_flow *flow, int y,
		   const char *fill)
{
	for (size_t k = 0; k < flow->n_first_bursts; k++) {
		uint64_t s = flow->first_bursts[k].start, e = flow->first_bursts[k].end;
		double x0, x1;

		if (e < v->win_start || s > v->win_end || e < s)
			continue;
		x0 = x_at(v, s);
		x1 = x_at(v, e);
		fprintf(out,
			"<rect class=\"burst\" data-start-ns=\"%" PRIu64 "\" data-end-ns=\"%" PRIu64
			"\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
			s - v->t0, e - v->t0, x0, y + 2, x1 - x0 < 1 ? 1 : x1 - x0, ROW_H - 4,
			fill);
	}
	fputc('\n', out);
}

/*
 * A class's row: its flows' bursts joined where they overlap or lie within
 * half a pixel, so a class of thousands of flows stays a few hundred shapes.
 */
static void class_bursts(FILE *out, const struct ct_view *v, int cls, int y)
{
	uint64_t half_pixel = (v->win_end - v->win_start) / (2 * PLOT_W);
	struct ct_span *sp;
	long n = ct_view_class_spans(v, cls, half_pixel, &sp);

	for (long k = 0; k < n; k++) {
		double x0 = x_at(v, sp[k].s), x1 = x_at(v, sp[k].e);

		fprintf(out,
			"<rect class=\"burst\" data-start-ns=\"%" PRIu64 "\" data-end-ns=\"%" PRIu64
			"\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
			sp[k].s - v->t0, sp[k].e - v->t0, x0, y + 2, x1 - x0 < 1 ? 1 : x1 - x0,
			ROW_H - 4, ct_html_class_colour(cls));
	}
	fputc('\n', out);
	if (n > 0)
		free(sp);
}

static void flow_label(FILE *out, const struct ct_rep_flow *f)
{
	ct_html_text(out, f->src);
	fputs(" → ", out);
	ct_html_text(out, f->dst);
	if (f->has_qpn)
		fprintf(out, " qp %" PRIu64, f->qpn);
	else
		fprintf(out, " :%" PRIu64, f->dport);
}

void ct_html_timeline(FILE *out, const struct ct_view *v, const struct ct_html_opts *o)
{
	size_t top = o->timeline_flows ? o->timeline_flows : 8;
	int classes = 0, rows, y, h;
	double span_s = (double)(v->win_end - v->win_start) / 1e9;

	for (int c = 0; c < CT_HTML_CLASSES; c++)
		classes += v->class_flows[c] > 0;
	top = top < v->n_flows ? top : v->n_flows;
	rows = classes + (int)top;
	h = 30 + ROW_H * rows + 34;
	fputs("<section id=\"timeline\"><h2>On and off, iteration by iteration</h2>\n<p>", out);
	if (v->periodic)
		fprintf(out, "%zu iteration boundaries found; ", v->n_iter);
	fprintf(out,
		"the span shown starts %" PRIu64 " ns after the first packet (t0 = %" PRIu64
		" ns since the epoch) and lasts ",
		v->win_start - v->t0, v->t0);
	ct_html_seconds(out, span_s);
	fputs(". Each class row is the union of its flows' bursts; then the busiest flows.</p>\n",
	      out);
	fprintf(out, "<svg class=\"timeline\" width=\"%d\" height=\"%d\" role=\"img\">\n",
		LABEL_W + PLOT_W + 70, h);
	for (int t = 0; t <= 10; t++) {
		double x = LABEL_W + PLOT_W * t / 10.0;

		fprintf(out,
			"<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"24\" y2=\"%d\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			x, x, 30 + ROW_H * rows, x, 40 + ROW_H * rows + 8);
		ct_html_seconds(out, span_s * t / 10);
		fputs("</text>\n", out);
	}
	for (size_t k = 0; k < v->n_iter; k++) {
		uint64_t s = v->iter_starts[k];
		double x;

		if (s < v->win_start || s > v->win_end)
			continue;
		x = x_at(v, s);
		fprintf(out,
			"<line class=\"iter-boundary\" data-offset-ns=\"%" PRIu64
			"\" x1=\"%.1f\" x2=\"%.1f\" y1=\"14\" y2=\"%d\"/>"
			"<text x=\"%.1f\" y=\"12\" text-anchor=\"middle\">iteration %zu</text>\n",
			s - v->t0, x, x, 30 + ROW_H * rows, x + 4, k);
	}
	y = 30;
	for (int c = 0; c < CT_HTML_CLASSES; c++) {
		if (!v->class_flows[c])
			continue;
		fprintf(out,
			"<g class=\"row class-row\" data-class=\"%s\"><text x=\"%d\" y=\"%d\" "
			"text-anchor=\"end\"><tspan font-weight=\"bold\" fill=\"%s\">%s</tspan> "
			"(all "
			"%zu flows)</text>\n",
			ct_class_name(c), LABEL_W - 6, y + ROW_H - 5, ct_html_class_colour(c),
			ct_class_name(c), v->class_flows[c]);
		class_bursts(out, v, c, y);
		fputs("</g>\n", out);
		y += ROW_H;
	}
	for (size_t r = 0; r < top; r++) {
		const struct ct_view_flow *f = &v->flows[v->busiest[r]];

		fprintf(out,
			"<g class=\"row flow-row\" data-flow=\"%zu\"><text x=\"%d\" y=\"%d\" "
			"text-anchor=\"end\">",
			v->busiest[r], LABEL_W - 6, y + ROW_H - 5);
		flow_label(out, f->rep);
		fprintf(out, " <tspan fill=\"%s\">%s</tspan></text>\n",
			ct_html_class_colour(f->cls), ct_class_name(f->cls));
		bursts(out, v, f->rep, y, ct_html_class_colour(f->cls));
		fputs("</g>\n", out);
		y += ROW_H;
	}
	fputs("</svg></section>\n", out);
}
