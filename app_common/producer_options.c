// SPDX-License-Identifier: MIT
/* The options every producer of reports shares (producer_options.h). */
#include "producer_options.h"

#include <commtap/dataplane.h>
#include <commtap/report.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OPT(field) offsetof(struct ct_producer_options, field)

const struct ct_param ct_table_params[] = {
	{.name = "memory",
	 .type = CT_PARAM_SIZE,
	 .arg = "MIB",
	 .offset = OPT(memory_budget),
	 .help = "flow-table memory budget in MiB",
	 .min = 0,
	 .max = 1 << 20,
	 .scale = 1 << 20,
	 .show_default = 1},
	{.name = "idle-timeout",
	 .type = CT_PARAM_U64,
	 .arg = "S",
	 .offset = OPT(idle_timeout_ns),
	 .help = "evict flows idle S seconds (0 never)",
	 .min = 0,
	 .max = 1e9,
	 .scale = 1e9,
	 .show_default = 1},
	CT_PARAM_TABLE_END,
};

const struct ct_param ct_gap_params[] = {
	{.name = "tcp-gap",
	 .type = CT_PARAM_U64,
	 .arg = "MS",
	 .offset = OPT(tcp_msg_gap_ns),
	 .help = "idle gap that ends a TCP message, ms",
	 .min = 0,
	 .max = 1e9,
	 .scale = 1e6,
	 .show_default = 1},
	{.name = "burst-gap",
	 .type = CT_PARAM_U64,
	 .arg = "MS",
	 .offset = OPT(burst_gap_ns),
	 .help = "shortest idle gap that ends a burst, ms",
	 .min = 0,
	 .max = 1e9,
	 .scale = 1e6,
	 .show_default = 1},
	CT_PARAM_TABLE_END,
};

const struct ct_param ct_report_params[] = {
	{.name = "interval",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "S",
	 .offset = OPT(interval_s),
	 .help = "a report every S seconds into --report-dir (cumulative flows,\n"
		 "periodicity over --window; at least 0.001)",
	 .min = CT_MIN_INTERVAL_S,
	 .max = 1e6},
	{.name = "window",
	 .type = CT_PARAM_U64,
	 .arg = "S",
	 .offset = OPT(window_ns),
	 .help = "span of bursts the interval reports' periodicity uses\n"
		 "(default 10 intervals)",
	 .min = 0,
	 .max = 1e6,
	 .scale = 1e9},
	{.name = "report-dir",
	 .type = CT_PARAM_STRING,
	 .arg = "DIR",
	 .offset = OPT(report_dir),
	 .help = "where reports go (commtap-report-NNNNNN.json)"},
	{.name = "listen",
	 .type = CT_PARAM_STRING,
	 .arg = "ADDR:PORT",
	 .offset = OPT(listen),
	 .help = "serve Prometheus /metrics from each report (ADDR alone:\n"
		 "port 9464; :PORT: 127.0.0.1)"},
	{.name = "profile",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = OPT(profile_path),
	 .help = "classify flows by this job profile's hosts and traffic"},
	{.name = "labels",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = OPT(labels_path),
	 .help = "classify flows by agent labels (commtap.labels/v1 JSON)"},
	{.name = "min-period",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "S",
	 .offset = OPT(min_period_s),
	 .help = "shortest iteration claimed (default 10 burst gaps)",
	 .min = 0,
	 .max = 1e6},
	{.name = "nic-gbps",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "G",
	 .offset = OPT(nic_gbps),
	 .help = "receivers' NIC rate: the cc section's (default 100)\n"
		 "and the advice's (without it or a profile: unknown)",
	 .min = 0,
	 .above_min = 1,
	 .max = 1e6},
	{.name = "shutdown-deadline",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "S",
	 .offset = OPT(shutdown_deadline_s),
	 .min = 0,
	 .max = 3600,
	 .show_default = 1,
	 .help = "on SIGINT/SIGTERM the final report of flows and counters is\n"
		 "written at once; the whole analysis then has S seconds to\n"
		 "replace it (0: none, the first report stands)"},
	CT_PARAM_TABLE_END,
};

void ct_producer_options_init(struct ct_producer_options *o)
{
	memset(o, 0, sizeof(*o));
	o->memory_budget = CT_DEFAULT_MEMORY_BUDGET;
	o->idle_timeout_ns = CT_DEFAULT_IDLE_TIMEOUT_NS;
	o->tcp_msg_gap_ns = CT_DEFAULT_TCP_MSG_GAP_NS;
	o->burst_gap_ns = CT_DEFAULT_BURST_GAP_NS;
	o->shutdown_deadline_s = 10;
}

int ct_producer_options_finish(struct ct_producer_options *o, char *err, size_t errlen)
{
	struct stat st;

	if (!o->burst_gap_ns)
		o->burst_gap_ns = 1; /* a gap of 0 would end a burst at every packet */
	if (o->report_dir) {
		if (stat(o->report_dir, &st) || access(o->report_dir, W_OK)) {
			snprintf(err, errlen, "--report-dir %s: %s", o->report_dir,
				 strerror(errno));
			return -EINVAL;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "--report-dir %s: not a directory", o->report_dir);
			return -EINVAL;
		}
	}
	if (o->interval_s && !o->report_dir) {
		snprintf(err, errlen, "--interval needs --report-dir");
		return -EINVAL;
	}
	if (o->interval_s && !o->window_ns)
		o->window_ns = (uint64_t)(10 * o->interval_s * 1e9);
	if (!o->min_period_s)
		o->min_period_s = 10 * (double)o->burst_gap_ns / 1e9;
	o->nic_gbps_given = o->nic_gbps > 0;
	if (!o->nic_gbps_given)
		o->nic_gbps = CT_DEFAULT_NIC_GBPS;
	return 0;
}

void ct_producer_options_nic(const struct ct_producer_options *o, struct ct_report *r)
{
	r->nic_gbps = o->nic_gbps;
	if (o->nic_gbps_given) {
		r->nic_gbps_stated = o->nic_gbps;
		r->nic_source = "option";
	}
}
