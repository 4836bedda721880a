// SPDX-License-Identifier: MIT
/*
 * The page's anomaly section (docs/anomalies.md): every finding, where it
 * is, by how much, since when, its evidence and confidence, highlighted;
 * per finding a strip of the job's iterations with those it was seen in
 * marked; and why a detector did not look, when it did not.
 */
#include "html_internal.h"

#include <inttypes.h>

#define STRIP_CELL 6   /* px per iteration in the strip */
#define STRIP_MAX  120 /* iterations drawn; a longer capture's strip is cut */

/* Each kind's title, in enum ct_anomaly_kind order. */
static const char *const titles[CT_ANOMALY_KINDS] = {
	"Straggler", "Slow link", "Loss hot spot", "Congestion", "Rhythm break", "Hang",
};

static void where(FILE *out, const struct ct_rep_finding *f)
{
	if (f->scope == CT_ANOMALY_AT_LINK) {
		ct_html_text(out, f->src);
		fputs(" &rarr; ", out);
		ct_html_text(out, f->dst);
	} else if (f->scope == CT_ANOMALY_AT_PRIORITY) {
		fprintf(out, "PFC priority %" PRIu64, f->priority);
	} else if (f->scope == CT_ANOMALY_AT_JOB) {
		fputs("the job's iterations", out);
	} else {
		ct_html_text(out, f->host);
		if (f->scope == CT_ANOMALY_AT_RECEIVER)
			fputs(" (receiver)", out);
	}
}

static void figure(FILE *out, const struct ct_rep_finding *f)
{
	double v = f->value;

	switch (f->kind) {
	case CT_ANOMALY_STRAGGLER:
	case CT_ANOMALY_RHYTHM:
		ct_html_seconds(out, v);
		fprintf(out, " (%.1f%% of the iteration)", 100 * f->share);
		break;
	case CT_ANOMALY_SLOW_LINK:
		fprintf(out, "%.0f%% of its peers' rate", 100 * v);
		break;
	case CT_ANOMALY_HANG:
		fputs("silent ", out);
		ct_html_seconds(out, v);
		fprintf(out, " (%.1f periods)", f->share);
		break;
	case CT_ANOMALY_LOSS:
		fprintf(out, "%.0f loss signals", v);
		break;
	default:
		if (f->has_priority)
			fprintf(out, "%.0f pause frames", v);
		else
			fprintf(out, "%.1f%% of packets marked", 100 * v);
	}
}

/* The iterations it was seen in, as a strip of cells. */
static void strip(FILE *out, const struct ct_rep_finding *f, uint64_t iterations)
{
	uint64_t n = iterations < STRIP_MAX ? iterations : STRIP_MAX;

	if (!f->has_per_iteration || !n)
		return;
	fprintf(out, "<svg class=\"strip\" width=\"%" PRIu64 "\" height=\"10\" role=\"img\">",
		n * STRIP_CELL);
	for (uint64_t i = 0; i < n; i++)
		fprintf(out,
			"<rect x=\"%" PRIu64 "\" y=\"1\" width=\"%d\" height=\"8\" fill=\"#eee\"/>",
			i * STRIP_CELL, STRIP_CELL - 1);
	for (size_t k = 0; k < f->n_per_iteration; k++) {
		uint64_t i = f->per_iteration[k].iteration;

		if (i < n)
			fprintf(out,
				"<rect class=\"seen\" x=\"%" PRIu64 "\" y=\"1\" width=\"%d\" "
				"height=\"8\" fill=\"#c0392b\"/>",
				i * STRIP_CELL, STRIP_CELL - 1);
	}
	fputs("</svg>", out);
}

void ct_html_anomalies(FILE *out, const struct ct_rep_anomalies *a)
{
	uint64_t iterations = a->iterations;

	fputs("<section id=\"anomalies\"><h2>Anomalies</h2>\n", out);
	if (!a->present) {
		fputs("<p class=\"absent\">This report was not searched for "
		      "anomalies.</p></section>\n",
		      out);
		return;
	}
	if (!a->n_findings) {
		fprintf(out, "<p class=\"none\">None found over %" PRIu64 " iterations",
			iterations);
		if (a->has_jitter) {
			fputs(" (hosts enter the collectives within ", out);
			ct_html_seconds(out, a->straggler_jitter_s);
			fputs(" of each other)", out);
		}
		fputs(".</p>\n", out);
	} else {
		fputs("<table class=\"anomalies\"><thead><tr><th>anomaly</th><th>where</th>"
		      "<th>how much</th><th>confidence</th><th>since iteration</th>"
		      "<th>iterations seen</th><th "
		      "class=\"evidence\">evidence</th></tr></thead><tbody>\n",
		      out);
		for (size_t i = 0; i < a->n_findings; i++) {
			const struct ct_rep_finding *f = &a->findings[i];

			fprintf(out, "<tr class=\"anomaly\" data-kind=\"%s\"><td>%s</td><td>",
				ct_rep_kind_name(f->kind), titles[f->kind]);
			where(out, f);
			fputs("</td><td>", out);
			figure(out, f);
			fprintf(out, "</td><td>%.2f</td><td>", f->confidence);
			if (f->has_onset)
				fprintf(out, "%" PRIu64 "</td><td>%" PRIu64 " of %" PRIu64 " ",
					(uint64_t)f->onset_iteration, (uint64_t)f->iterations_seen,
					(uint64_t)f->iterations_since_onset);
			else
				fputs("whole capture</td><td>", out);
			strip(out, f, iterations);
			fputs("</td><td class=\"evidence\">", out);
			ct_html_text(out, f->evidence);
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody></table>\n", out);
	}
	if (a->n_not_looked) {
		fputs("<p class=\"absent\">Not looked for: ", out);
		for (size_t i = 0; i < a->n_not_looked; i++) {
			ct_html_text(out, a->not_looked[i].name);
			fputs(" (", out);
			ct_html_text(out, a->not_looked[i].why);
			fputs("). ", out);
		}
		fputs("</p>\n", out);
	}
	fputs("</section>\n", out);
}
