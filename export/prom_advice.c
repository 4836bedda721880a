// SPDX-License-Identifier: MIT
/*
 * The advice as Prometheus gauges (docs/metrics.md, docs/advice.md): per
 * job the scheduling and network bounds, per job and class the share of
 * the iteration on the wire, the share of the NIC while on, and how many
 * receivers stand in the way. A figure the report has not (the NIC's rate
 * unknown) has no series.
 */
#include "prom_advice.h"

#define CLASS_ALL "all" /* the job's classes together */

static void family(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void job_gauge(FILE *out, const char *name, const char *labels, double v)
{
	fprintf(out, "%s{%s} %.17g\n", name, labels, v);
}

static void class_gauge(FILE *out, const char *name, const char *labels, const char *cls, double v)
{
	fprintf(out, "%s{%s,class=\"%s\"} %.17g\n", name, labels, cls, v);
}

/* The jobs with figures (not left out for too few iterations) that have a label. */
static size_t jobs_of(const struct ct_rep_advice *a, size_t n_labels)
{
	return a->n_jobs < n_labels ? a->n_jobs : n_labels;
}

static void per_job(FILE *out, const struct ct_rep_advice *a, char *const *labels, size_t n)
{
	static const struct {
		const char *name, *help;
		size_t off;
		int needs_nic;
	} gauges[] = {
		{"commtap_advice_comm_seconds",
		 "Time per iteration some class of the job is on the wire.",
		 offsetof(struct ct_rep_advice_job, comm_s), 0},
		{"commtap_advice_scheduling_speedup_bound",
		 "Most perfect overlap of computation and communication could speed the "
		 "iteration up (two resources: at most 2).",
		 offsetof(struct ct_rep_advice_job, speedup_bound), 0},
		{"commtap_advice_best_iteration_seconds",
		 "The iteration under perfect overlap: max(computation, communication).",
		 offsetof(struct ct_rep_advice_job, best_iteration_s), 0},
		{"commtap_advice_network_speedup",
		 "Most running every class at the NIC's rate could speed the iteration up.",
		 offsetof(struct ct_rep_advice_job, network_speedup), 1},
		{"commtap_advice_iteration_at_nic_seconds",
		 "The iteration with every class at the NIC's rate.",
		 offsetof(struct ct_rep_advice_job, iteration_s_at_nic), 1},
	};

	for (size_t g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++) {
		family(out, gauges[g].name, gauges[g].help);
		for (size_t j = 0; j < n; j++) {
			const struct ct_rep_advice_job *aj = &a->jobs[j];

			if (aj->reason || (gauges[g].needs_nic && !aj->has_network))
				continue;
			job_gauge(out, gauges[g].name, labels[j],
				  *(const double *)((const char *)aj + gauges[g].off));
		}
	}
	family(out, "commtap_advice_push_pull_speedup_bound",
	       "A parameter server's bound: push, pull and computation as three resources "
	       "(at most 3).");
	for (size_t j = 0; j < n; j++)
		if (!a->jobs[j].reason && a->jobs[j].has_push_pull)
			job_gauge(out, "commtap_advice_push_pull_speedup_bound", labels[j],
				  a->jobs[j].speedup_bound3);
	family(out, "commtap_advice_comp_to_comm_ratio",
	       "Computation over communication per iteration: where the job sits on the "
	       "scheduling curve (1: most to gain from overlap).");
	for (size_t j = 0; j < n; j++)
		if (!a->jobs[j].reason && a->jobs[j].has_comp_to_comm)
			job_gauge(out, "commtap_advice_comp_to_comm_ratio", labels[j],
				  a->jobs[j].comp_to_comm);
}

static void per_class(FILE *out, const struct ct_rep_advice *a, char *const *labels, size_t n)
{
	family(out, "commtap_advice_comm_ratio",
	       "Share of the iteration a class is on the wire (class \"all\": any class).");
	for (size_t j = 0; j < n; j++) {
		if (a->jobs[j].reason)
			continue;
		for (int c = 0; c < CT_REP_CLASSES; c++)
			if (a->jobs[j].cls[c].present)
				class_gauge(out, "commtap_advice_comm_ratio", labels[j],
					    ct_class_name(c), a->jobs[j].cls[c].comm_ratio);
		class_gauge(out, "commtap_advice_comm_ratio", labels[j], CLASS_ALL,
			    a->jobs[j].comm_ratio);
	}
	family(out, "commtap_advice_bw_utilization",
	       "A class's effective bandwidth while on, over the NIC's rate.");
	for (size_t j = 0; j < n; j++)
		for (int c = 0; c < CT_REP_CLASSES && !a->jobs[j].reason; c++)
			if (a->jobs[j].cls[c].present && a->jobs[j].cls[c].has_util)
				class_gauge(out, "commtap_advice_bw_utilization", labels[j],
					    ct_class_name(c), a->jobs[j].cls[c].bw_utilization);
	family(out, "commtap_advice_blocking_receivers",
	       "Receivers whose congestion figures stand in the way of a class's rate "
	       "(at most 4 named in the report).");
	for (size_t j = 0; j < n; j++)
		for (int c = 0; c < CT_REP_CLASSES && !a->jobs[j].reason; c++)
			if (a->jobs[j].cls[c].present)
				class_gauge(out, "commtap_advice_blocking_receivers", labels[j],
					    ct_class_name(c), (double)a->jobs[j].cls[c].n_blockers);
}

void ct_prom_advice(FILE *out, const struct ct_rep_advice *a, char *const *labels, size_t n_labels)
{
	size_t n = jobs_of(a, n_labels);

	if (!a->present || !n)
		return;
	per_job(out, a, labels, n);
	per_class(out, a, labels, n);
}
