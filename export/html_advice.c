// SPDX-License-Identifier: MIT
/*
 * The page's "What would help" panel: per job, what perfect overlap could
 * buy (the scheduling bound), what running every class at the NIC's rate
 * could buy (the network bound) and who stands in the way, then each
 * class's share of the iteration and of the NIC (docs/advice.md).
 */
#include "html_internal.h"

#include <string.h>

static void percent(FILE *out, double share)
{
	fprintf(out, "%.0f%%", share * 100);
}

/* The sentence a job's figures make: which of the two would help, and how much at most. */
static void verdict(FILE *out, const struct ct_rep_advice *a, const struct ct_rep_advice_job *j)
{
	fputs("<ul class=\"advice\">", out);
	fputs("<li data-figure=\"scheduling\">Scheduling: perfect overlap of computation and "
	      "communication could make the iteration at most ",
	      out);
	fprintf(out, "<b>%.2f&times;</b> faster (", j->speedup_bound);
	ct_html_seconds(out, j->best_iteration_s);
	if (j->source && !strcmp(j->source, "gpu")) {
		fputs(" at best; the GPU's computation ", out);
		ct_html_seconds(out, j->t_comp);
		fputs(", communication ", out);
		ct_html_seconds(out, j->t_comm);
		fputs(", overlapped ", out);
		ct_html_seconds(out, j->overlap);
	} else {
		fputs(" at best; communication ", out);
		ct_html_seconds(out, j->t_comm);
		fputs(" on the wire, computation at least the ", out);
		ct_html_seconds(out, j->t_comp);
		fputs(" off it, no overlap seen", out);
	}
	fputs("); the job is ", out);
	ct_html_text(out, j->regime);
	fputs(".</li>\n", out);
	if (j->has_push_pull) {
		fputs("<li data-figure=\"push-pull\">Parameter server: pushes and pulls use the "
		      "links' two directions, each of them could overlap computation: at most ",
		      out);
		fprintf(out, "<b>%.2f&times;</b> (", j->speedup_bound3);
		ct_html_seconds(out, j->best3_s);
		fputs(" at best; push ", out);
		ct_html_seconds(out, j->push_s);
		fputs(", pull ", out);
		ct_html_seconds(out, j->pull_s);
		fputs(" on the wire).</li>\n", out);
	}
	fputs("<li data-figure=\"network\">Network: ", out);
	if (j->has_network) {
		fputs("with every class at the NIC's rate (", out);
		fprintf(out, "%.0f Gb/s, from the ", a->nic_gbps);
		ct_html_text(out, a->nic_source);
		fputs(") the iteration would take ", out);
		ct_html_seconds(out, j->iteration_s_at_nic);
		fprintf(out, ", <b>%.2f&times;</b> faster at most (cc and transport tuning).",
			j->network_speedup);
	} else {
		fputs("<span class=\"absent\">the NIC's rate was not stated (--nic-gbps or a "
		      "profile's hardware): no utilization, no network bound.</span>",
		      out);
	}
	fputs("</li></ul>\n", out);
}

static void class_row(FILE *out, int c, const struct ct_rep_advice_class *k)
{
	fprintf(out, "<tr data-class=\"%s\"><td><span class=\"chip\" style=\"border-color:%s\">",
		ct_class_name(c), ct_html_class_colour(c));
	ct_html_text(out, ct_class_name(c));
	fputs("</span></td><td>", out);
	percent(out, k->comm_ratio);
	fputs("</td><td>", out);
	ct_html_bytes(out, k->bytes_per_iteration);
	fprintf(out, "</td><td>%.1f</td><td>", k->effective_gbps);
	if (k->has_util)
		percent(out, k->bw_utilization);
	else
		fputs("<span class=\"absent\">unknown</span>", out);
	fputs("</td><td>", out);
	if (k->has_on_at_nic)
		ct_html_seconds(out, k->on_s_at_nic);
	else
		fputs("<span class=\"absent\">unknown</span>", out);
	fputs("</td><td class=\"evidence\">", out);
	for (size_t i = 0; i < k->n_blockers; i++) {
		const struct ct_rep_advice_blocker *b = &k->blockers[i];

		fputs(i ? "; " : "", out);
		ct_html_text(out, b->receiver);
		fprintf(out, " (CE %.1f%%, %.0f CNP/s on, %llu retransmits, senders at once: %llu",
			b->ecn_ce_fraction * 100, b->cnp_per_s_on,
			(unsigned long long)b->retransmits, (unsigned long long)b->incast_degree);
		if (b->has_peak)
			fprintf(out, ", peak %.0f%% of the NIC", b->peak_over_nic * 100);
		fputs(")", out);
	}
	fputs("</td></tr>\n", out);
}

void ct_html_advice(FILE *out, const struct ct_rep_advice *a)
{
	fputs("<section id=\"advice\"><h2>What would help</h2>\n", out);
	if (!a->present || !a->n_jobs) {
		fputs("<p class=\"absent\">No advice in this report: it needs a job's "
		      "iterations, and a merged report carries none (each vantage's own report "
		      "has it).</p></section>\n",
		      out);
		return;
	}
	for (size_t i = 0; i < a->n_jobs; i++) {
		const struct ct_rep_advice_job *j = &a->jobs[i];

		fprintf(out, "<h3>Job %llu</h3>\n", (unsigned long long)j->job);
		if (j->reason) {
			fputs("<p class=\"absent\">", out);
			ct_html_text(out, j->reason);
			fputs("</p>\n", out);
			continue;
		}
		fputs("<p>Communication is on the wire ", out);
		percent(out, j->comm_ratio);
		fputs(" of each iteration (", out);
		ct_html_seconds(out, j->comm_s);
		fputs(" of ", out);
		ct_html_seconds(out, j->iteration_s);
		fprintf(out, ", %llu iterations).</p>\n", (unsigned long long)j->iterations);
		verdict(out, a, j);
		fputs("<table class=\"advice\"><tr><th>class</th><th>on the wire</th>"
		      "<th>bytes / iteration</th><th>Gb/s while on</th><th>of the NIC</th>"
		      "<th>on-time at the NIC rate</th><th class=\"evidence\">receivers in the "
		      "way</th></tr>\n",
		      out);
		for (int c = 0; c < CT_REP_CLASSES; c++)
			if (j->cls[c].present)
				class_row(out, c, &j->cls[c]);
		fputs("</table>\n", out);
	}
	fputs("</section>\n", out);
}
