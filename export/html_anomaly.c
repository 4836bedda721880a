// SPDX-License-Identifier: MIT
/*
 * The page's anomaly section (docs/anomalies.md): every finding, where it
 * is, by how much, since when, its evidence and confidence, highlighted;
 * per finding a strip of the job's iterations with those it was seen in
 * marked; and why a detector did not look, when it did not.
 */
#include "html_internal.h"
#include "report_doc.h"

#include <inttypes.h>
#include <string.h>

#define STRIP_CELL 6   /* px per iteration in the strip */
#define STRIP_MAX  120 /* iterations drawn; a longer capture's strip is cut */

static const char *const kinds[][3] = {
	/* kind, title, its figure's unit */
	{"straggler", "Straggler", "delay_s"},	   {"slow_link", "Slow link", "rate_ratio"},
	{"loss", "Loss hot spot", "loss_signals"}, {"congestion", "Congestion", "marked_fraction"},
	{"rhythm", "Rhythm break", "excess_s"},
};

static int kind_of(const char *k)
{
	for (int i = 0; i < 5; i++)
		if (k && !strcmp(k, kinds[i][0]))
			return i;
	return -1;
}

static void where(FILE *out, json_object *f)
{
	const char *scope = ct_doc_str(f, "scope");

	if (scope && !strcmp(scope, "link")) {
		ct_html_text(out, ct_doc_str(f, "src"));
		fputs(" &rarr; ", out);
		ct_html_text(out, ct_doc_str(f, "dst"));
	} else if (scope && !strcmp(scope, "priority")) {
		fprintf(out, "PFC priority %" PRIu64, ct_doc_u64(f, "priority"));
	} else if (scope && !strcmp(scope, "job")) {
		fputs("the job's iterations", out);
	} else {
		ct_html_text(out, ct_doc_str(f, "host"));
		if (scope && !strcmp(scope, "receiver"))
			fputs(" (receiver)", out);
	}
}

static void figure(FILE *out, json_object *f, int k)
{
	double v = ct_doc_num(f, kinds[k][2]);

	switch (k) {
	case 0:
	case 4:
		ct_html_seconds(out, v);
		fprintf(out, " (%.1f%% of the iteration)",
			100 * ct_doc_num(f, "share_of_iteration"));
		break;
	case 1:
		fprintf(out, "%.0f%% of its peers' rate", 100 * v);
		break;
	case 2:
		fprintf(out, "%.0f loss signals", v);
		break;
	default:
		if (ct_doc_get(f, "priority"))
			fprintf(out, "%.0f pause frames", v);
		else
			fprintf(out, "%.1f%% of packets marked", 100 * v);
	}
}

/* The iterations it was seen in, as a strip of cells. */
static void strip(FILE *out, json_object *f, uint64_t iterations)
{
	json_object *its = ct_doc_get(f, "per_iteration");
	uint64_t n = iterations < STRIP_MAX ? iterations : STRIP_MAX;

	if (!its || !n)
		return;
	fprintf(out, "<svg class=\"strip\" width=\"%" PRIu64 "\" height=\"10\" role=\"img\">",
		n * STRIP_CELL);
	for (uint64_t i = 0; i < n; i++)
		fprintf(out,
			"<rect x=\"%" PRIu64 "\" y=\"1\" width=\"%d\" height=\"8\" fill=\"#eee\"/>",
			i * STRIP_CELL, STRIP_CELL - 1);
	for (size_t k = 0; k < ct_doc_len(its); k++) {
		uint64_t i = ct_doc_u64(ct_doc_at(its, k), "iteration");

		if (i < n)
			fprintf(out,
				"<rect class=\"seen\" x=\"%" PRIu64 "\" y=\"1\" width=\"%d\" "
				"height=\"8\" fill=\"#c0392b\"/>",
				i * STRIP_CELL, STRIP_CELL - 1);
	}
	fputs("</svg>", out);
}

void ct_html_anomalies(FILE *out, const struct ct_view *v)
{
	json_object *a = ct_doc_get(v->doc, "anomalies"), *list = ct_doc_get(a, "findings");
	json_object *nl = ct_doc_get(a, "not_looked");
	uint64_t iterations = ct_doc_u64(a, "iterations");

	fputs("<section id=\"anomalies\"><h2>Anomalies</h2>\n", out);
	if (!a) {
		fputs("<p class=\"absent\">This report was not searched for "
		      "anomalies.</p></section>\n",
		      out);
		return;
	}
	if (!ct_doc_len(list)) {
		fprintf(out, "<p class=\"none\">None found over %" PRIu64 " iterations",
			iterations);
		if (ct_doc_get(a, "straggler_jitter_s")) {
			fputs(" (hosts enter the collectives within ", out);
			ct_html_seconds(out, ct_doc_num(a, "straggler_jitter_s"));
			fputs(" of each other)", out);
		}
		fputs(".</p>\n", out);
	} else {
		fputs("<table class=\"anomalies\"><thead><tr><th>anomaly</th><th>where</th>"
		      "<th>how much</th><th>confidence</th><th>since iteration</th>"
		      "<th>iterations seen</th><th "
		      "class=\"evidence\">evidence</th></tr></thead><tbody>\n",
		      out);
		for (size_t i = 0; i < ct_doc_len(list); i++) {
			json_object *f = ct_doc_at(list, i);
			int k = kind_of(ct_doc_str(f, "kind"));

			if (k < 0)
				continue;
			fprintf(out, "<tr class=\"anomaly\" data-kind=\"%s\"><td>%s</td><td>",
				kinds[k][0], kinds[k][1]);
			where(out, f);
			fputs("</td><td>", out);
			figure(out, f, k);
			fprintf(out, "</td><td>%.2f</td><td>", ct_doc_num(f, "confidence"));
			if (ct_doc_get(f, "onset_iteration"))
				fprintf(out, "%" PRIu64 "</td><td>%" PRIu64 " of %" PRIu64 " ",
					ct_doc_u64(f, "onset_iteration"),
					ct_doc_u64(f, "iterations_seen"),
					ct_doc_u64(f, "iterations_since_onset"));
			else
				fputs("whole capture</td><td>", out);
			strip(out, f, iterations);
			fputs("</td><td class=\"evidence\">", out);
			ct_html_text(out, ct_doc_str(f, "evidence"));
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody></table>\n", out);
	}
	if (nl && json_object_object_length(nl)) {
		fputs("<p class=\"absent\">Not looked for: ", out);
		json_object_object_foreach(nl, key, val)
		{
			ct_html_text(out, key);
			fputs(" (", out);
			ct_html_text(out, json_object_get_string(val));
			fputs("). ", out);
		}
		fputs("</p>\n", out);
	}
	fputs("</section>\n", out);
}
