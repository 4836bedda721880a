// SPDX-License-Identifier: MIT
/* Message-size distributions: one cumulative curve per class over log2 size buckets. */
#include "html_internal.h"

#include <commtap/traffic_class.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 64 /* log2 of a size: bucket b holds [2^b, 2^(b+1)) */
#define PLOT_W	560
#define PLOT_H	240
#define LEFT	56
#define TOP	16

/* Sum the class's flows' log2 histograms; returns the message count. */
static double class_hist(const struct ct_view *v, int cls, double hist[BUCKETS])
{
	double total = 0;

	memset(hist, 0, BUCKETS * sizeof(*hist));
	for (size_t i = 0; i < v->n_flows; i++) {
		const struct ct_rep_flow *f = v->flows[i].rep;

		if (v->flows[i].cls != cls)
			continue;
		for (size_t k = 0; k < f->n_msg_size_hist; k++) {
			unsigned long long lo = strtoull(f->msg_size_hist[k].name, NULL, 10);
			int b = lo ? 63 - __builtin_clzll(lo) : 0;
			double n = (double)f->msg_size_hist[k].count;

			hist[b] += n;
			total += n;
		}
	}
	return total;
}

static double x_of(int log2_size, int lo, int hi)
{
	return LEFT + (double)PLOT_W * (log2_size - lo) / (hi - lo);
}

static double y_of(double frac)
{
	return TOP + PLOT_H * (1 - frac);
}

void ct_html_cdfs(FILE *out, const struct ct_view *v)
{
	double hist[CT_HTML_CLASSES][BUCKETS], total[CT_HTML_CLASSES];
	int lo = BUCKETS, hi = 0, curves = 0;

	for (int c = 0; c < CT_HTML_CLASSES; c++) {
		total[c] = class_hist(v, c, hist[c]);
		for (int b = 0; b < BUCKETS && total[c] > 0; b++) {
			if (hist[c][b] > 0) {
				lo = b < lo ? b : lo;
				hi = b + 1 > hi ? b + 1 : hi;
			}
		}
	}
	fputs("<section id=\"sizes\"><h2>Message sizes per class</h2>\n", out);
	if (lo >= hi) {
		fputs("<p>No complete messages in this report.</p></section>\n", out);
		return;
	}
	lo = lo > 6 ? lo - 1 : 6;
	fprintf(out,
		"<p>Share of each class's messages at or below a size (log2 buckets from the "
		"report's histograms; exact at bucket bounds).</p>\n<svg class=\"cdf-plot\" "
		"width=\"%d\" height=\"%d\" role=\"img\">\n",
		LEFT + PLOT_W + 150, TOP + PLOT_H + 44);
	for (int q = 0; q <= 4; q++)
		fprintf(out,
			"<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n",
			LEFT, LEFT + PLOT_W, y_of(q / 4.0), y_of(q / 4.0), LEFT - 6,
			y_of(q / 4.0) + 4, q / 4.0);
	for (int b = lo; b <= hi; b++) {
		if ((b - lo) % ((hi - lo) / 8 + 1))
			continue;
		fprintf(out,
			"<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
			x_of(b, lo, hi), x_of(b, lo, hi), TOP, TOP + PLOT_H, x_of(b, lo, hi),
			TOP + PLOT_H + 16);
		ct_html_bytes(out, ldexp(1, b));
		fputs("</text>\n", out);
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size</text>\n",
		LEFT + PLOT_W / 2, TOP + PLOT_H + 36);
	for (int c = 0; c < CT_HTML_CLASSES; c++) {
		double cum = 0;

		if (total[c] <= 0)
			continue;
		fprintf(out,
			"<path class=\"cdf\" data-class=\"%s\" data-messages=\"%.0f\" "
			"fill=\"none\" "
			"stroke=\"%s\" stroke-width=\"2\" d=\"M%.1f %.1f",
			ct_class_name(c), total[c], ct_html_class_colour(c), x_of(lo, lo, hi),
			y_of(0));
		for (int b = lo; b < hi; b++) {
			cum += hist[c][b];
			fprintf(out, " L%.1f %.1f", x_of(b + 1, lo, hi), y_of(cum / total[c]));
		}
		fprintf(out, "\"><title>%s: %.0f messages</title></path>\n", ct_class_name(c),
			total[c]);
		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">%s (%.0f)</text>\n",
			LEFT + PLOT_W + 14, TOP + 18 * curves, ct_html_class_colour(c),
			LEFT + PLOT_W + 32, TOP + 18 * curves + 11, ct_class_name(c), total[c]);
		curves++;
	}
	fputs("</svg></section>\n", out);
}
