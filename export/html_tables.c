// SPDX-License-Identifier: MIT
/* The page's tables: summary, periodicity (job, classes, flows), congestion control. */
#include "html_internal.h"
#include "report_doc.h"

#include <commtap/traffic_class.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static double median(double *x, size_t n)
{
	if (!n)
		return NAN;
	qsort(x, n, sizeof(*x), dbl_cmp);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

static void cell_s(FILE *out, double s)
{
	fputs("<td>", out);
	if (isnan(s) || s < 0)
		fputs("—", out);
	else
		ct_html_seconds(out, s);
	fputs("</td>", out);
}

static void cell_bytes(FILE *out, double b)
{
	fputs("<td>", out);
	if (isnan(b))
		fputs("—", out);
	else
		ct_html_bytes(out, b);
	fputs("</td>", out);
}

static void cell_num(FILE *out, const char *fmt, double x)
{
	fputs("<td>", out);
	if (isnan(x))
		fputs("—", out);
	else
		fprintf(out, fmt, x);
	fputs("</td>", out);
}

static double dist_median(json_object *o, const char *key)
{
	json_object *d = ct_doc_get(o, key);

	return d ? ct_doc_num(d, "median") : NAN;
}

static double num_or_nan(json_object *o, const char *key)
{
	json_object *x = ct_doc_get(o, key);

	return json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int)
		       ? json_object_get_double(x)
		       : NAN;
}

#define LAYOUT_GROUPS_SHOWN 8 /* per class; the rest counted */

/*
 * The layout the signatures read from the wire (p, t, d, ep and each
 * class's groups of hosts), and with a profile whether its layout agrees.
 */
static void layout_rows(FILE *out, json_object *cls)
{
	static const char *const degrees[] = {"p", "t", "d", "ep"};
	json_object *l = ct_doc_get(cls, "inferred_layout"),
		    *check = ct_doc_get(cls, "layout_check");
	json_object *groups = ct_doc_get(l, "groups");

	if (l && ct_doc_get(l, "groups")) {
		fputs("<dt>layout on the wire</dt><dd>", out);
		for (int k = 0; k < 4; k++) {
			json_object *d = ct_doc_get(l, degrees[k]);

			fprintf(out, "%s%s=", k ? ", " : "", degrees[k]);
			if (d)
				fprintf(out, "%" PRIu64, ct_doc_u64(l, degrees[k]));
			else
				fputs("unknown", out);
		}
		fputs(" (unknown: no flow of that class crosses a NIC)", out);
		json_object_object_foreach(groups, name, list)
		{
			size_t n = ct_doc_len(list);

			fputs("<br>", out);
			ct_html_text(out, name);
			fprintf(out, ": %zu group%s", n, n == 1 ? "" : "s");
			for (size_t g = 0; g < n && g < LAYOUT_GROUPS_SHOWN; g++) {
				json_object *hosts = ct_doc_at(list, g);

				fputs(g ? "; " : " — ", out);
				for (size_t h = 0; h < ct_doc_len(hosts); h++) {
					fputs(h ? " " : "", out);
					ct_html_text(out,
						     json_object_get_string(ct_doc_at(hosts, h)));
				}
			}
			if (n > LAYOUT_GROUPS_SHOWN)
				fprintf(out, "; and %zu more", n - LAYOUT_GROUPS_SHOWN);
		}
		fputs("</dd>\n", out);
	}
	if (check) {
		fputs("<dt>profile against the wire</dt><dd>", out);
		fputs(ct_doc_bool(check, "agree") ? "agrees: " : "<strong>differs</strong>: ", out);
		ct_html_text(out, ct_doc_str(check, "summary"));
		fputs("</dd>\n", out);
	}
}

void ct_html_summary(FILE *out, const struct ct_view *v)
{
	json_object *cap = ct_doc_get(v->doc, "capture"), *eng = ct_doc_get(v->doc, "engine");
	json_object *job = ct_doc_get(v->doc, "job"), *points = ct_doc_get(cap, "vantage_points");
	const char *method = ct_doc_str(ct_doc_get(v->doc, "classification"), "method");

	fputs("<section id=\"summary\"><h2>Summary</h2><dl "
	      "class=\"summary\">\n<dt>capture</dt><dd>",
	      out);
	ct_html_text(out, ct_doc_str(cap, "file"));
	fprintf(out, " — %" PRIu64 " packets, ", ct_doc_u64(cap, "packets"));
	ct_html_bytes(out, ct_doc_num(cap, "bytes"));
	fputs(" in ", out);
	ct_html_seconds(out, (double)ct_doc_u64(cap, "duration_ns") / 1e9);
	fprintf(out, "%s</dd>\n", ct_doc_bool(cap, "complete") ? "" : " (incomplete)");
	if (ct_doc_len(points)) {
		fprintf(out, "<dt>vantage points</dt><dd>%zu merged:", ct_doc_len(points));
		for (size_t i = 0; i < ct_doc_len(points); i++) {
			json_object *p = ct_doc_at(points, i);

			fputs(i ? "; " : " ", out);
			ct_html_text(out, ct_doc_str(p, "report"));
			fprintf(out, " (%" PRIu64 " flows)", ct_doc_u64(p, "flows"));
		}
		fputs("</dd>\n", out);
	}
	fprintf(out, "<dt>flows</dt><dd>%zu between %zu hosts, classified by ", v->n_flows,
		v->n_hosts);
	ct_html_text(out, method ? method : "nothing (no classes in this report)");
	fputs("</dd>\n", out);
	layout_rows(out, ct_doc_get(v->doc, "classification"));
	fputs("<dt>iteration</dt><dd>", out);
	if (v->periodic) {
		ct_html_seconds(out, v->period_s);
		fprintf(out, " (confidence %.2f, %" PRIu64 " iterations seen)",
			ct_doc_num(job, "period_confidence"), ct_doc_u64(job, "iterations"));
	} else {
		ct_html_text(out, ct_doc_str(job, "reason") ?: "no period claimed");
	}
	fprintf(out,
		"</dd>\n<dt>engine</dt><dd>%" PRIu64 " flows inserted, %" PRIu64
		" evicted idle, %" PRIu64 " evicted full, %" PRIu64
		" bursts dropped</dd>\n<dt>bytes per class</dt><dd>",
		ct_doc_u64(eng, "flows_inserted"), ct_doc_u64(eng, "evicted_idle"),
		ct_doc_u64(eng, "evicted_full"), ct_doc_u64(eng, "bursts_dropped"));
	for (int c = 0; c < CT_HTML_CLASSES; c++) {
		if (!v->class_flows[c])
			continue;
		fprintf(out, "<span class=\"chip\" style=\"border-color:%s\">%s ",
			ct_html_class_colour(c), ct_class_name(c));
		ct_html_bytes(out, ct_view_per_iter(v, (double)v->class_bytes[c]));
		fputs(v->iterations > 0 ? "/iter" : "", out);
		fputs("</span> ", out);
	}
	fputs("</dd></dl></section>\n", out);
}

static void period_header(FILE *out)
{
	fputs("<table class=\"period\"><thead><tr><th>scope</th><th>class</th><th>operation</th>"
	      "<th>flows</th>"
	      "<th>period</th><th>confidence</th><th>duty cycle</th><th>on (median)</th>"
	      "<th>off (median)</th><th>burst bytes (median)</th><th>peak Gb/s</th>"
	      "<th>bytes/iteration</th><th>bytes CV</th></tr></thead><tbody>\n",
	      out);
}

static void job_row(FILE *out, const struct ct_view *v)
{
	json_object *job = ct_doc_get(v->doc, "job");
	uint64_t total = 0;

	for (size_t i = 0; i < v->n_flows; i++)
		total += v->flows[i].bytes;
	fprintf(out,
		"<tr class=\"period-row\" data-scope=\"job\"><td>job</td><td>all</td><td>—</td>"
		"<td>%zu</td>",
		v->n_flows);
	cell_s(out, v->periodic ? v->period_s : NAN);
	cell_num(out, "%.2f", job ? ct_doc_num(job, "period_confidence") : NAN);
	cell_num(out, "%.3f", job ? ct_doc_num(job, "duty_cycle") : NAN);
	cell_s(out, dist_median(job, "on_s"));
	cell_s(out, dist_median(job, "off_s"));
	cell_bytes(out, dist_median(job, "burst_bytes"));
	cell_num(out, "%.1f", job ? ct_doc_num(job, "peak_gbps") : NAN);
	cell_bytes(out, ct_view_per_iter(v, (double)total));
	fputs("<td>—</td></tr>\n", out);
}

static void class_row(FILE *out, const struct ct_view *v, int cls, double *scratch)
{
	double *col[6];
	size_t n[6] = {0};
	double peak = 0;

	for (int k = 0; k < 6; k++)
		col[k] = scratch + (size_t)k * v->n_flows;
	for (size_t i = 0; i < v->n_flows; i++) {
		json_object *p = ct_doc_get(v->flows[i].json, "periodicity");
		double x[6] = {num_or_nan(p, "period_s"),
			       num_or_nan(p, "duty_cycle"),
			       dist_median(p, "on_s"),
			       dist_median(p, "off_s"),
			       dist_median(p, "burst_bytes"),
			       num_or_nan(ct_doc_get(p, "per_iteration"), "bytes_cv")};

		if (v->flows[i].cls != cls || !p)
			continue;
		for (int k = 0; k < 6; k++)
			if (!isnan(x[k]))
				col[k][n[k]++] = x[k];
		peak = fmax(peak, ct_doc_num(p, "peak_gbps"));
	}
	fprintf(out,
		"<tr class=\"period-row\" data-scope=\"class\" data-class=\"%s\"><td>class "
		"(medians of its flows)</td><td style=\"color:%s\">%s</td><td>—</td><td>%zu</td>",
		ct_class_name(cls), ct_html_class_colour(cls), ct_class_name(cls),
		v->class_flows[cls]);
	cell_s(out, median(col[0], n[0]));
	fputs("<td>—</td>", out);
	cell_num(out, "%.3f", median(col[1], n[1]));
	cell_s(out, median(col[2], n[2]));
	cell_s(out, median(col[3], n[3]));
	cell_bytes(out, median(col[4], n[4]));
	cell_num(out, "%.1f", peak);
	cell_bytes(out, ct_view_per_iter(v, (double)v->class_bytes[cls]));
	cell_num(out, "%.2f", median(col[5], n[5]));
	fputs("</tr>\n", out);
}

static void flow_row(FILE *out, const struct ct_view *v, size_t i)
{
	const struct ct_view_flow *f = &v->flows[i];
	json_object *p = ct_doc_get(f->json, "periodicity");

	fprintf(out, "<tr class=\"period-row\" data-scope=\"flow\" data-flow=\"%zu\"><td>", i);
	ct_html_text(out, ct_doc_str(f->json, "src"));
	fputs(" → ", out);
	ct_html_text(out, ct_doc_str(f->json, "dst"));
	if (ct_doc_get(f->json, "qpn"))
		fprintf(out, " qp %" PRIu64, ct_doc_u64(f->json, "qpn"));
	else
		fprintf(out, " %" PRIu64 "→%" PRIu64, ct_doc_u64(f->json, "sport"),
			ct_doc_u64(f->json, "dport"));
	fprintf(out, "</td><td style=\"color:%s\">%s</td><td>", ct_html_class_colour(f->cls),
		ct_class_name(f->cls));
	ct_html_text(out, ct_doc_str(f->json, "operation") ?: "—"); /* absent in older reports */
	fputs("</td><td>1</td>", out);
	cell_s(out, num_or_nan(p, "period_s"));
	cell_num(out, "%.2f", num_or_nan(f->json, "class_confidence"));
	cell_num(out, "%.3f", num_or_nan(p, "duty_cycle"));
	cell_s(out, dist_median(p, "on_s"));
	cell_s(out, dist_median(p, "off_s"));
	cell_bytes(out, dist_median(p, "burst_bytes"));
	cell_num(out, "%.1f", num_or_nan(p, "peak_gbps"));
	cell_bytes(out, ct_view_per_iter(v, (double)f->bytes));
	cell_num(out, "%.2f", num_or_nan(ct_doc_get(p, "per_iteration"), "bytes_cv"));
	fputs("</tr>\n", out);
}

void ct_html_periodicity(FILE *out, const struct ct_view *v, const struct ct_html_opts *o)
{
	size_t top = o->table_flows ? o->table_flows : 40;
	double *scratch = calloc(6 * v->n_flows + 1, sizeof(*scratch));

	top = top < v->n_flows ? top : v->n_flows;
	fputs("<section id=\"periodicity\"><h2>Periodicity</h2>\n<p>The job's iteration, each "
	      "class, and the busiest flows. A flow's confidence column is its class "
	      "confidence; its operation is the collective the wire shows it carrying.</p>\n",
	      out);
	period_header(out);
	job_row(out, v);
	for (int c = 0; c < CT_HTML_CLASSES && scratch; c++)
		if (v->class_flows[c])
			class_row(out, v, c, scratch);
	for (size_t r = 0; r < top; r++)
		flow_row(out, v, v->busiest[r]);
	fputs("</tbody></table>\n", out);
	if (top < v->n_flows)
		fprintf(out, "<p>%zu smaller flows not listed.</p>\n", v->n_flows - top);
	fputs("</section>\n", out);
	free(scratch);
}

void ct_html_cc(FILE *out, const struct ct_view *v)
{
	json_object *recv = ct_doc_get(ct_doc_get(v->doc, "cc"), "receivers");
	json_object *pfc = ct_doc_get(v->doc, "pfc"), *prios = ct_doc_get(pfc, "priorities");
	uint64_t cnp[CT_HTML_CLASSES] = {0}, ce[CT_HTML_CLASSES] = {0}, rtx[CT_HTML_CLASSES] = {0};

	fputs("<section id=\"cc\"><h2>Congestion control</h2>\n<table class=\"cc\"><thead><tr>"
	      "<th>receiver</th><th>class</th><th>senders</th><th>incast degree</th><th>peak "
	      "Gb/s</th>"
	      "<th>peak / NIC</th><th>duty cycle</th><th>start spread</th><th>CNP/s on</th>"
	      "<th>ECN CE share</th><th>retransmits</th></tr></thead><tbody>\n",
	      out);
	for (size_t i = 0; i < ct_doc_len(recv); i++) {
		json_object *r = ct_doc_at(recv, i);
		double ratio = ct_doc_num(r, "peak_over_nic");

		fputs("<tr class=\"cc-row\"><td>", out);
		ct_html_text(out, ct_doc_str(r, "receiver"));
		fputs("</td><td>", out);
		ct_html_text(out, ct_doc_str(r, "class") ? ct_doc_str(r, "class") : "all");
		fprintf(out, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%.1f</td>",
			ct_doc_u64(r, "senders"), ct_doc_u64(r, "incast_degree"),
			ct_doc_num(r, "peak_gbps"));
		fprintf(out, "<td%s>%.2f</td><td>%.3f</td>", ratio >= 1 ? " class=\"warn\"" : "",
			ratio, ct_doc_num(r, "duty_cycle"));
		cell_s(out, num_or_nan(r, "start_spread_s"));
		fprintf(out, "<td>%.0f</td><td>%.4f</td><td>%" PRIu64 "</td></tr>\n",
			ct_doc_num(r, "cnp_per_s_on"), ct_doc_num(r, "ecn_ce_fraction"),
			ct_doc_u64(r, "retransmits"));
	}
	fputs("</tbody></table>\n", out);
	if (!ct_doc_len(recv))
		fputs("<p>No receiver figures in this report.</p>\n", out);
	for (size_t i = 0; i < v->n_flows; i++) {
		cnp[v->flows[i].cls] += ct_doc_u64(v->flows[i].json, "cnp");
		ce[v->flows[i].cls] += ct_doc_u64(v->flows[i].json, "ecn_ce");
		rtx[v->flows[i].cls] += ct_doc_u64(v->flows[i].json, "retransmits");
	}
	fputs("<table class=\"cc-class\"><thead><tr><th>class</th><th>CNPs</th><th>ECN CE "
	      "packets</th><th>retransmits</th></tr></thead><tbody>\n",
	      out);
	for (int c = 0; c < CT_HTML_CLASSES; c++)
		if (v->class_flows[c])
			fprintf(out,
				"<tr><td>%s</td><td>%" PRIu64 "</td><td>%" PRIu64
				"</td><td>%" PRIu64 "</td></tr>\n",
				ct_class_name(c), cnp[c], ce[c], rtx[c]);
	fprintf(out,
		"</tbody></table>\n<p>Pause frames: %" PRIu64 " 802.3x (%" PRIu64
		" quanta), %" PRIu64 " PFC",
		ct_doc_u64(pfc, "pause_frames"), ct_doc_u64(pfc, "pause_quanta"),
		ct_doc_u64(pfc, "pfc_frames"));
	for (size_t i = 0; i < ct_doc_len(prios); i++) {
		json_object *p = ct_doc_at(prios, i);

		if (ct_doc_u64(p, "frames"))
			fprintf(out, "; priority %zu: %" PRIu64 " frames, %" PRIu64 " XOFF", i,
				ct_doc_u64(p, "frames"), ct_doc_u64(p, "xoff"));
	}
	fputs(". Switches often do not mirror pause frames: zero does not prove no pausing.</p>"
	      "</section>\n",
	      out);
}
