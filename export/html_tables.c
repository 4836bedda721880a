// SPDX-License-Identifier: MIT
/* The page's tables: summary, periodicity (job, classes, flows), congestion control. */
#include "html_internal.h"

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

static double dist_median(const struct ct_rep_dist *d)
{
	return d->present ? d->median : NAN;
}

static double or_nan(bool has, double x)
{
	return has ? x : NAN;
}

/* A figure the report writes as a count (incast degree), as a count. */
static uint64_t count_of(double x)
{
	return x > 0 && x < 18446744073709549568.0 ? (uint64_t)x : 0;
}

#define LAYOUT_GROUPS_SHOWN 8 /* per class; the rest counted */

/*
 * The layout the signatures read from the wire (p, t, d, ep and each
 * class's groups of hosts), and with a profile whether its layout agrees.
 */
static void layout_rows(FILE *out, const struct ct_rep *rep)
{
	/* the degrees' names, in the order of rep->layout_degree */
	static const char *const degrees[] = {"p", "t", "d", "ep"};

	if (rep->has_layout) {
		fputs("<dt>layout on the wire</dt><dd>", out);
		for (int k = 0; k < 4; k++) {
			fprintf(out, "%s%s=", k ? ", " : "", degrees[k]);
			if (rep->layout_degree_has & 1u << k)
				fprintf(out, "%" PRIu64, rep->layout_degree[k]);
			else
				fputs("unknown", out);
		}
		fputs(" (unknown: no flow of that class crosses a NIC)", out);
		for (size_t c = 0; c < rep->n_layout_groups; c++) {
			const struct ct_rep_groups *gr = &rep->layout_groups[c];
			size_t n = gr->n_groups;

			fputs("<br>", out);
			ct_html_text(out, gr->name);
			fprintf(out, ": %zu group%s", n, n == 1 ? "" : "s");
			for (size_t g = 0; g < n && g < LAYOUT_GROUPS_SHOWN; g++) {
				const struct ct_rep_host_group *hosts = &gr->groups[g];

				fputs(g ? "; " : " — ", out);
				for (size_t h = 0; h < hosts->n_hosts; h++) {
					fputs(h ? " " : "", out);
					ct_html_text(out, hosts->hosts[h]);
				}
			}
			if (n > LAYOUT_GROUPS_SHOWN)
				fprintf(out, "; and %zu more", n - LAYOUT_GROUPS_SHOWN);
		}
		fputs("</dd>\n", out);
	}
	if (rep->has_layout_check) {
		fputs("<dt>profile against the wire</dt><dd>", out);
		fputs(rep->layout_agrees ? "agrees: " : "<strong>differs</strong>: ", out);
		ct_html_text(out, rep->layout_summary);
		fputs("</dd>\n", out);
	}
}

void ct_html_summary(FILE *out, const struct ct_view *v)
{
	const struct ct_rep_capture *cap = &v->rep->capture;
	const struct ct_rep_engine *eng = &v->rep->engine;
	const struct ct_rep_period *job = &v->rep->job;
	const char *method = v->rep->method;

	fputs("<section id=\"summary\"><h2>Summary</h2><dl "
	      "class=\"summary\">\n<dt>capture</dt><dd>",
	      out);
	ct_html_text(out, cap->file);
	fprintf(out, " — %" PRIu64 " packets, ", cap->packets);
	ct_html_bytes(out, (double)cap->bytes);
	fputs(" in ", out);
	ct_html_seconds(out, (double)cap->duration_ns / 1e9);
	fprintf(out, "%s</dd>\n", cap->complete ? "" : " (incomplete)");
	if (cap->n_vantage_points) {
		fprintf(out, "<dt>vantage points</dt><dd>%zu merged:", cap->n_vantage_points);
		for (size_t i = 0; i < cap->n_vantage_points; i++) {
			const struct ct_rep_vantage *p = &cap->vantage_points[i];

			fputs(i ? "; " : " ", out);
			ct_html_text(out, p->report);
			fprintf(out, " (%" PRIu64 " flows)", p->flows);
		}
		fputs("</dd>\n", out);
	}
	fprintf(out, "<dt>flows</dt><dd>%zu between %zu hosts, classified by ", v->n_flows,
		v->n_hosts);
	ct_html_text(out, method ? method : "nothing (no classes in this report)");
	fputs("</dd>\n", out);
	layout_rows(out, v->rep);
	fputs("<dt>iteration</dt><dd>", out);
	if (v->periodic) {
		ct_html_seconds(out, v->period_s);
		fprintf(out, " (confidence %.2f, %" PRIu64 " iterations seen)",
			job->period_confidence, job->iterations);
	} else {
		ct_html_text(out, job->reason ?: "no period claimed");
	}
	fprintf(out,
		"</dd>\n<dt>engine</dt><dd>%" PRIu64 " flows inserted, %" PRIu64
		" evicted idle, %" PRIu64 " evicted full, %" PRIu64
		" bursts dropped</dd>\n<dt>bytes per class</dt><dd>",
		eng->flows_inserted, eng->evicted_idle, eng->evicted_full, eng->bursts_dropped);
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
	const struct ct_rep_period *job = &v->rep->job;
	uint64_t total = 0;

	for (size_t i = 0; i < v->n_flows; i++)
		total += v->flows[i].bytes;
	fprintf(out,
		"<tr class=\"period-row\" data-scope=\"job\"><td>job</td><td>all</td><td>—</td>"
		"<td>%zu</td>",
		v->n_flows);
	cell_s(out, v->periodic ? v->period_s : NAN);
	cell_num(out, "%.2f", or_nan(job->present, job->period_confidence));
	cell_num(out, "%.3f", or_nan(job->present, job->duty_cycle));
	cell_s(out, dist_median(&job->on_s));
	cell_s(out, dist_median(&job->off_s));
	cell_bytes(out, dist_median(&job->burst_bytes));
	cell_num(out, "%.1f", or_nan(job->present, job->peak_gbps));
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
		const struct ct_rep_flow *p = v->flows[i].rep;
		double x[6] = {or_nan(p->has_period, p->period_s),
			       or_nan(p->has_duty, p->duty_cycle),
			       dist_median(&p->on_s),
			       dist_median(&p->off_s),
			       dist_median(&p->burst_bytes),
			       or_nan(p->has_bytes_cv, p->bytes_cv)};

		if (v->flows[i].cls != cls || !p->has_periodicity)
			continue;
		for (int k = 0; k < 6; k++)
			if (!isnan(x[k]))
				col[k][n[k]++] = x[k];
		peak = fmax(peak, p->peak_gbps);
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
	const struct ct_rep_flow *p = f->rep;

	fprintf(out, "<tr class=\"period-row\" data-scope=\"flow\" data-flow=\"%zu\"><td>", i);
	ct_html_text(out, p->src);
	fputs(" → ", out);
	ct_html_text(out, p->dst);
	if (p->has_qpn)
		fprintf(out, " qp %" PRIu64, p->qpn);
	else
		fprintf(out, " %" PRIu64 "→%" PRIu64, p->sport, p->dport);
	fprintf(out, "</td><td style=\"color:%s\">%s</td><td>", ct_html_class_colour(f->cls),
		ct_class_name(f->cls));
	ct_html_text(out, p->op_name ?: "—"); /* absent in older reports */
	fputs("</td><td>1</td>", out);
	cell_s(out, or_nan(p->has_period, p->period_s));
	cell_num(out, "%.2f", or_nan(p->has_class_confidence, p->class_confidence));
	cell_num(out, "%.3f", or_nan(p->has_duty, p->duty_cycle));
	cell_s(out, dist_median(&p->on_s));
	cell_s(out, dist_median(&p->off_s));
	cell_bytes(out, dist_median(&p->burst_bytes));
	cell_num(out, "%.1f", or_nan(p->has_peak, p->peak_gbps));
	cell_bytes(out, ct_view_per_iter(v, (double)f->bytes));
	cell_num(out, "%.2f", or_nan(p->has_bytes_cv, p->bytes_cv));
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
	const struct ct_rep *rep = v->rep;
	uint64_t cnp[CT_HTML_CLASSES] = {0}, ce[CT_HTML_CLASSES] = {0}, rtx[CT_HTML_CLASSES] = {0};

	fputs("<section id=\"cc\"><h2>Congestion control</h2>\n<table class=\"cc\"><thead><tr>"
	      "<th>receiver</th><th>class</th><th>senders</th><th>incast degree</th><th>peak "
	      "Gb/s</th>"
	      "<th>peak / NIC</th><th>duty cycle</th><th>start spread</th><th>CNP/s on</th>"
	      "<th>ECN CE share</th><th>retransmits</th></tr></thead><tbody>\n",
	      out);
	for (size_t i = 0; i < rep->n_receivers; i++) {
		const struct ct_rep_receiver *r = &rep->receivers[i];
		double ratio = r->peak_over_nic;

		fputs("<tr class=\"cc-row\"><td>", out);
		ct_html_text(out, r->receiver);
		fputs("</td><td>", out);
		ct_html_text(out, r->class_name ? r->class_name : "all");
		fprintf(out, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%.1f</td>",
			r->senders, count_of(r->incast_degree), r->peak_gbps);
		fprintf(out, "<td%s>%.2f</td><td>%.3f</td>", ratio >= 1 ? " class=\"warn\"" : "",
			ratio, r->duty_cycle);
		cell_s(out, or_nan(r->has_start_spread, r->start_spread_s));
		fprintf(out, "<td>%.0f</td><td>%.4f</td><td>%" PRIu64 "</td></tr>\n",
			r->cnp_per_s_on, r->ecn_ce_fraction, r->retransmits);
	}
	fputs("</tbody></table>\n", out);
	if (!rep->n_receivers)
		fputs("<p>No receiver figures in this report.</p>\n", out);
	for (size_t i = 0; i < v->n_flows; i++) {
		cnp[v->flows[i].cls] += v->flows[i].rep->cnp;
		ce[v->flows[i].cls] += v->flows[i].rep->ecn_ce;
		rtx[v->flows[i].cls] += v->flows[i].rep->retransmits;
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
		rep->pause_frames, rep->pause_quanta, rep->pfc_frames);
	for (size_t i = 0; i < rep->n_priorities; i++) {
		const struct ct_rep_pfc_priority *p = &rep->priorities[i];

		if (p->frames)
			fprintf(out, "; priority %zu: %" PRIu64 " frames, %" PRIu64 " XOFF", i,
				p->frames, p->xoff);
	}
	fputs(". Switches often do not mirror pause frames: zero does not prove no pausing.</p>"
	      "</section>\n",
	      out);
}
