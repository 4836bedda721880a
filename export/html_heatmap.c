// SPDX-License-Identifier: MIT
/* Host x host heatmaps, one per class, on one shared logarithmic colour scale. */
#include "html_internal.h"

#include <commtap/traffic_class.h>

#include <math.h>

#define LABEL_W 118 /* room for an IPv4 address */

struct scale {
	double lo, hi; /* log10 of the smallest and largest non-zero cell */
};

static double scale_pos(const struct scale *s, double v)
{
	if (s->hi <= s->lo)
		return 1;
	return (log10(v) - s->lo) / (s->hi - s->lo);
}

static void legend(FILE *out, const struct ct_view *v, const struct scale *s)
{
	char c[8];

	fputs("<figure class=\"legend\"><svg width=\"400\" height=\"46\" role=\"img\">"
	      "<defs><linearGradient id=\"heat\">",
	      out);
	for (int i = 0; i <= 10; i++) {
		ct_html_colour(i / 10.0, c);
		fprintf(out, "<stop offset=\"%d%%\" stop-color=\"%s\"/>", i * 10, c);
	}
	fputs("</linearGradient></defs><rect x=\"30\" y=\"4\" width=\"340\" height=\"14\" "
	      "fill=\"url(#heat)\"/>",
	      out);
	for (int i = 0; i <= 4; i++) {
		double val = pow(10, s->lo + (s->hi - s->lo) * i / 4);

		fprintf(out, "<text x=\"%d\" y=\"34\" text-anchor=\"middle\">", 30 + 85 * i);
		ct_html_bytes(out, val);
		fputs("</text>", out);
	}
	fprintf(out, "</svg><figcaption>bytes %s, logarithmic; grey: none</figcaption></figure>\n",
		v->iterations > 0 ? "per iteration" : "over the capture (no period found)");
}

static void heatmap(FILE *out, const struct ct_view *v, int cls, const struct scale *s)
{
	size_t n = v->n_hosts;
	int cell = n > 24 ? 12 : n > 12 ? 20 : 36;
	int w = LABEL_W + cell * (int)n + 70, h = LABEL_W + cell * (int)n + 10;
	char colour[8];

	fprintf(out, "<figure class=\"heatmap\" data-class=\"%s\" data-hosts=\"%zu\">\n",
		ct_class_name(cls), n);
	fprintf(out, "<figcaption><b style=\"color:%s\">%s</b>: %zu flows, ",
		ct_html_class_colour(cls), ct_class_name(cls), v->class_flows[cls]);
	ct_html_bytes(out, ct_view_per_iter(v, (double)v->class_bytes[cls]));
	fprintf(out, " %s</figcaption>\n", v->iterations > 0 ? "per iteration" : "in the capture");
	fprintf(out, "<svg width=\"%d\" height=\"%d\" role=\"img\">\n", w, h);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "<text class=\"host\" x=\"%d\" y=\"%d\" text-anchor=\"end\">",
			LABEL_W - 4, LABEL_W + cell * (int)i + cell / 2 + 4);
		ct_html_text(out, v->hosts[i]);
		fprintf(out,
			"</text><text class=\"host\" transform=\"translate(%d,%d) rotate(-60)\">",
			LABEL_W + cell * (int)i + cell / 2 + 4, LABEL_W - 4);
		ct_html_text(out, v->hosts[i]);
		fputs("</text>\n", out);
	}
	for (size_t r = 0; r < n; r++) {
		for (size_t c = 0; c < n; c++) {
			double b = ct_view_per_iter(v, *ct_view_cell(v, cls, r, c));
			int x = LABEL_W + cell * (int)c, y = LABEL_W + cell * (int)r;

			if (r == c) {
				fprintf(out,
					"<rect class=\"diag\" x=\"%d\" y=\"%d\" width=\"%d\" "
					"height=\"%d\"/>\n",
					x, y, cell - 1, cell - 1);
				continue;
			}
			if (b > 0)
				ct_html_colour(scale_pos(s, b), colour);
			fputs("<rect class=\"cell\" data-src=\"", out);
			ct_html_text(out, v->hosts[r]);
			fputs("\" data-dst=\"", out);
			ct_html_text(out, v->hosts[c]);
			fprintf(out,
				"\" data-bytes=\"%.0f\" x=\"%d\" y=\"%d\" width=\"%d\" "
				"height=\"%d\" fill=\"%s\"><title>",
				b, x, y, cell - 1, cell - 1, b > 0 ? colour : "#e4e4e4");
			ct_html_text(out, v->hosts[r]);
			fputs(" → ", out);
			ct_html_text(out, v->hosts[c]);
			fprintf(out, " %s: ", ct_class_name(cls));
			ct_html_bytes(out, b);
			fprintf(out, "%s</title></rect>\n",
				v->iterations > 0 ? " per iteration" : "");
		}
	}
	fputs("</svg></figure>\n", out);
}

void ct_html_heatmaps(FILE *out, const struct ct_view *v)
{
	struct scale s = {INFINITY, -INFINITY};
	size_t cells = (size_t)CT_HTML_CLASSES * v->n_hosts * v->n_hosts;

	for (size_t i = 0; i < cells; i++) {
		double b = ct_view_per_iter(v, v->matrix[i]);

		if (b > 0) {
			s.lo = fmin(s.lo, log10(b));
			s.hi = fmax(s.hi, log10(b));
		}
	}
	if (s.lo > s.hi)
		s.lo = s.hi = 0;
	fputs("<section id=\"heatmaps\"><h2>Who talks to whom, per class</h2>\n"
	      "<p>Rows send, columns receive; one cell per ordered host pair.",
	      out);
	if (v->n_others)
		fprintf(out,
			" The %zu busiest hosts are drawn; the other %zu are summed in the last "
			"row and column (traffic among them is not shown).",
			v->n_listed, v->n_others);
	fputs("</p>\n", out);
	legend(out, v, &s);
	fputs("<div class=\"grid\">\n", out);
	for (int c = 0; c < CT_HTML_CLASSES; c++)
		if (v->class_flows[c])
			heatmap(out, v, c, &s);
	if (!v->n_flows)
		fputs("<p>No flows in this report.</p>\n", out);
	fputs("</div></section>\n", out);
}
