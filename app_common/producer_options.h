/* SPDX-License-Identifier: MIT */
/*
 * The options every producer of reports shares (commtap analyze, commtap
 * agent, commtap-mirror), as typed tables (params.h): each producer lists
 * the ones it takes beside its own, so the three parse, check and describe
 * them the same way.
 */
#ifndef COMMTAP_APP_PRODUCER_OPTIONS_H
#define COMMTAP_APP_PRODUCER_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/params.h>

struct ct_producer_options {
	/* the flow table (the engine's producers: analyze, mirror) */
	size_t memory_budget;
	uint64_t idle_timeout_ns;
	/* where messages and bursts end (the agent hands them to its probe) */
	uint64_t tcp_msg_gap_ns;
	uint64_t burst_gap_ns;
	/* the reports */
	double interval_s; /* 0: one report at the end */
	uint64_t window_ns;
	const char *report_dir;
	const char *listen;
	const char *profile_path;
	const char *labels_path;
	double min_period_s;
	double nic_gbps;      /* CT_DEFAULT_NIC_GBPS where not given */
	int nic_gbps_given;   /* --nic-gbps was given: the advice may measure against it */
	double shutdown_deadline_s; /* the final report's analysis after SIGTERM */
};

/* The shortest --interval: a report costs a whole analysis, so no storm of them. */
#define CT_MIN_INTERVAL_S 0.001

extern const struct ct_param ct_table_params[];	 /* --memory, --idle-timeout */
extern const struct ct_param ct_gap_params[];	 /* --tcp-gap, --burst-gap */
extern const struct ct_param ct_report_params[]; /* --interval ... --nic-gbps */

/* The cc section's NIC rate where --nic-gbps is not given (not stated: the advice says unknown) */
#define CT_DEFAULT_NIC_GBPS 100

struct ct_report;
/* The report's NIC rate and, where the operator gave it, the advice's (report.h). */
void ct_producer_options_nic(const struct ct_producer_options *o, struct ct_report *r);

/* The defaults (a producer may change some before parsing). */
void ct_producer_options_init(struct ct_producer_options *o);

/*
 * After parsing: the defaults that follow from other options (--window: 10
 * intervals; --min-period: 10 burst gaps) and the checks between options.
 * Returns 0, or -EINVAL with a one-line reason in err.
 */
int ct_producer_options_finish(struct ct_producer_options *o, char *err, size_t errlen);

#endif
