// SPDX-License-Identifier: MIT
/* Predicted versus observed (with a profile) and the GPU's per-iteration bars (when present). */
#include "html_internal.h"

#include <commtap/traffic_class.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/*
 * Seconds a class is on per iteration: the union of its flows' listed bursts
 * inside the timeline's span, over the iterations the span holds. NAN when
 * unknown.
 */
static double class_on_per_iter(const struct ct_view *v, int cls)
{
	double iters =
		v->period_s > 0 ? (double)(v->win_end - v->win_start) / 1e9 / v->period_s : 0;
	struct ct_span *sp;
	long n;
	uint64_t on = 0;

	if (iters < 0.5)
		return NAN;
	n = ct_view_class_spans(v, cls, 0, &sp);
	if (n < 0)
		return NAN;
	for (long i = 0; i < n; i++)
		on += sp[i].e - sp[i].s;
	free(sp);
	return (double)on / 1e9 / iters;
}

static void err_cell(FILE *out, double pred, double obs)
{
	if (pred > 0)
		fprintf(out, "<td class=\"err%s\">%+.1f%%</td>",
			fabs(obs / pred - 1) > 0.25 ? " warn" : "", 100 * (obs / pred - 1));
	else
		fputs(obs > 0 ? "<td class=\"err warn\">unexpected</td>" : "<td>—</td>", out);
}

static void time_row(FILE *out, const char *what, double pred, double obs)
{
	fprintf(out, "<tr class=\"expect-time\"><td>%s</td><td>", what);
	ct_html_seconds(out, pred);
	fputs("</td><td>", out);
	if (isnan(obs))
		fputs("—", out);
	else
		ct_html_seconds(out, obs);
	fputs("</td>", out);
	if (isnan(obs))
		fputs("<td>—</td>", out);
	else
		err_cell(out, pred, obs);
	fputs("</tr>\n", out);
}

void ct_html_expected(FILE *out, const struct ct_view *v, const struct ct_html_expect *e)
{
	unsigned h = e->n_hosts;
	double iters = v->iterations > 0 ? v->iterations : 1;

	fputs("<section id=\"expected\"><h2>Predicted versus observed</h2>\n<p>Profile <b>", out);
	ct_html_text(out, e->profile);
	fputs("</b>. Observed bytes are wire bytes (headers and acknowledgements included), "
	      "predicted ones are payload.</p>\n",
	      out);
	if (v->iterations <= 0)
		fputs("<p class=\"warn\">No iteration period was found: observed volumes are for "
		      "the "
		      "whole capture.</p>\n",
		      out);
	fputs("<table class=\"expect\"><thead><tr><th>class</th><th>predicted bytes/iteration</th>"
	      "<th>observed</th><th>error</th></tr></thead><tbody>\n",
	      out);
	for (int c = 0; c < CT_HTML_CLASSES; c++) {
		double pred = 0;

		for (unsigned s = 0; s < h && c < CT_CLASS_COUNT; s++)
			for (unsigned d = 0; d < h; d++)
				pred += s != d ? e->bytes[((size_t)c * h + s) * h + d] : 0;
		if (pred <= 0 && !v->class_flows[c])
			continue;
		fprintf(out, "<tr class=\"expect-class\" data-class=\"%s\"><td>%s</td><td>",
			ct_class_name(c), ct_class_name(c));
		ct_html_bytes(out, pred);
		fputs("</td><td>", out);
		ct_html_bytes(out, (double)v->class_bytes[c] / iters);
		fputs("</td>", out);
		err_cell(out, pred, (double)v->class_bytes[c] / iters);
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n<h3>Iteration time</h3><table "
	      "class=\"expect\"><thead><tr><th></th>"
	      "<th>predicted</th><th>observed</th><th>error</th></tr></thead><tbody>\n",
	      out);
	time_row(out, "iteration", e->t_iter, v->periodic ? v->period_s : NAN);
	time_row(out, "compute (not observable on the wire)", e->t_comp, NAN);
	for (int c = 0; c < CT_CLASS_COUNT; c++)
		if (e->t_class[c] > 0 || v->class_flows[c]) {
			char what[96];

			snprintf(what, sizeof(what), "%s communication%s", ct_class_name(c),
				 e->on_wire[c] ? " (observed: union of its bursts)"
					       : " (inside hosts, not on the wire)");
			time_row(out, what, e->t_class[c],
				 e->on_wire[c] ? class_on_per_iter(v, c) : NAN);
		}
	time_row(out, "pipeline bubble", e->t_bubble, NAN);
	fputs("</tbody></table>\n<h3>Per class and host pair</h3><table class=\"expect\"><thead>"
	      "<tr><th>class</th><th>from</th><th>to</th><th>predicted bytes/iteration</th>"
	      "<th>observed</th><th>error</th></tr></thead><tbody>\n",
	      out);
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		for (unsigned s = 0; s < h; s++) {
			for (unsigned d = 0; d < h; d++) {
				double pred = e->bytes[((size_t)c * h + s) * h + d], obs = 0;
				int vs = ct_view_host(v, e->host_addr[s]);
				int vd = ct_view_host(v, e->host_addr[d]);

				if (s == d)
					continue;
				if (vs >= 0 && vd >= 0)
					obs = *ct_view_cell(v, c, (size_t)vs, (size_t)vd) / iters;
				if (pred <= 0 && obs <= 0)
					continue;
				fprintf(out, "<tr class=\"expect-pair\"><td>%s</td><td>",
					ct_class_name(c));
				ct_html_text(out, e->host_addr[s]);
				fputs("</td><td>", out);
				ct_html_text(out, e->host_addr[d]);
				fputs("</td><td>", out);
				ct_html_bytes(out, pred);
				fputs("</td><td>", out);
				ct_html_bytes(out, obs);
				fputs("</td>", out);
				err_cell(out, pred, obs);
				fputs("</tr>\n", out);
			}
		}
	}
	fputs("</tbody></table></section>\n", out);
}

/*
 * GPU time per iteration, when the report carries the agent's correlation
 * (`gpu`, commtap.gpu/v1: `iterations[]` with `t_comp`, `t_<class>` in
 * seconds for each class, `overlap` and `bubble`). Reports without GPU data
 * get a line saying so.
 */
static double gpu_comm(const struct ct_rep_gpu_iteration *it, int cls)
{
	return it->t_class[cls];
}

void ct_html_gpu(FILE *out, const struct ct_view *v)
{
	const struct ct_rep_gpu_iteration *its = v->rep->gpu.iterations;
	size_t n = v->rep->gpu.n_iterations;
	double longest = 0;
	const int left = 90, width = 760, row = 22;

	fputs("<section id=\"gpu\"><h2>GPU time per iteration</h2>\n", out);
	if (!n) {
		fputs("<p class=\"absent\">No GPU data in this report (the agent adds it when the "
		      "NCCL profiler plugin or CUPTI library runs with the job).</p></section>\n",
		      out);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ct_rep_gpu_iteration *it = &its[i];
		double t = it->t_comp + it->bubble;

		for (int c = 0; c < CT_CLASS_COUNT; c++)
			t += gpu_comm(it, c);
		longest = fmax(longest, t);
	}
	fprintf(out, "<svg class=\"gpu\" width=\"%d\" height=\"%zu\" role=\"img\">\n",
		left + width + 20, n * row + 30);
	for (size_t i = 0; i < n && longest > 0; i++) {
		const struct ct_rep_gpu_iteration *it = &its[i];
		double x = left, y = (double)i * row + 4;
		double parts[2] = {it->t_comp, it->bubble};

		fprintf(out,
			"<g class=\"gpu-iter\"><text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">"
			"iteration %zu</text>",
			left - 6, y + 14, i);
		fprintf(out,
			"<rect class=\"gpu-compute\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
			"height=\"%d\" fill=\"#555\"/>",
			x, y, width * parts[0] / longest, row - 6);
		x += width * parts[0] / longest;
		for (int c = 0; c < CT_CLASS_COUNT; c++) {
			double w = width * gpu_comm(it, c) / longest;

			if (!(w > 0))
				continue;
			fprintf(out,
				"<rect class=\"gpu-comm\" data-class=\"%s\" x=\"%.1f\" "
				"y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
				ct_class_name(c), x, y, w, row - 6, ct_html_class_colour(c));
			x += w;
		}
		fprintf(out,
			"<rect class=\"gpu-bubble\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
			"height=\"%d\" "
			"fill=\"#ddd\"/>",
			x, y, width * parts[1] / longest, row - 6);
		if (it->overlap > 0)
			fprintf(out,
				"<rect class=\"gpu-overlap\" x=\"%d\" y=\"%.0f\" width=\"%.1f\" "
				"height=\"3\" fill=\"#000\"/>",
				left, y + row - 6, width * it->overlap / longest);
		fputs("</g>\n", out);
	}
	fputs("</svg><p>Grey: compute; colours: communication per class; light: bubble; black "
	      "line: compute and communication overlapping.</p></section>\n",
	      out);
}
