// SPDX-License-Identifier: MIT
/* commtap-mirror's own options (after the EAL's and "--"). */
#include "mirror.h"

#include "app_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#define MIRROR(field) offsetof(struct mirror_opts, field)

static const struct ct_param mirror_params[] = {
	{.name = "port",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = MIRROR(port),
	 .min = 0,
	 .max = 65535,
	 .show_default = 1,
	 .help = "port id"},
	{.name = "json",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = MIRROR(json_path),
	 .help = "also write the final report here"},
	{.name = "dedup",
	 .type = CT_PARAM_U64,
	 .arg = "US",
	 .offset = MIRROR(dedup_window_ns),
	 .min = 0,
	 .max = 1e6,
	 .scale = 1e3,
	 .help = "drop a packet seen again within US microseconds\n"
		 "(a session mirroring both ends of a link)"},
	{.name = "exit-on-idle",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "S",
	 .offset = MIRROR(exit_on_idle_s),
	 .min = 0,
	 .max = 1e6,
	 .help = "stop after S seconds without a packet (end of a replay)"},
	{.name = "duration",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "S",
	 .offset = MIRROR(duration_s),
	 .min = 0,
	 .max = 1e6,
	 .help = "stop after S seconds"},
	{.name = "no-rss",
	 .type = CT_PARAM_FLAG,
	 .offset = MIRROR(no_rss),
	 .help = "one RX core hashing flows to worker rings even with RSS"},
	{.name = "no-hw-timestamp",
	 .type = CT_PARAM_FLAG,
	 .offset = MIRROR(no_hw_timestamp),
	 .help = "TSC at arrival even where the NIC timestamps RX"},
	{.name = "wait-on-full",
	 .type = CT_PARAM_FLAG,
	 .offset = MIRROR(wait_on_full),
	 .help = "that core waits for room in a full ring instead of dropping\n"
		 "(replays, where nothing is lost upstream)"},
	{.name = "mbufs",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = MIRROR(mbufs),
	 .min = 1023,
	 .max = 10000000,
	 .help = "mbufs in the pool (default 8191); net_pcap's infinite_rx holds\n"
		 "every packet of its capture in one"},
	{.name = "mbuf-data",
	 .type = CT_PARAM_U32,
	 .arg = "BYTES",
	 .offset = MIRROR(mbuf_data),
	 .min = 128,
	 .max = 65000,
	 .help = "frame bytes an mbuf holds (default 9728, a jumbo frame); copies\n"
		 "truncated by the mirror session need no more than their length"},
	{.name = "bare",
	 .type = CT_PARAM_FLAG,
	 .offset = MIRROR(bare),
	 .help = "receive and free without the engine (benchmark baseline)"},
	{.name = "bench",
	 .type = CT_PARAM_FLAG,
	 .offset = MIRROR(bench),
	 .help = "print Mpps per core and the engine's ns/packet at the end"},
	{.name = "bench-ring",
	 .type = CT_PARAM_STRING,
	 .arg = "FILES",
	 .offset = MIRROR(bench_ring),
	 .help = "feed the workers these captures (comma separated, a queue\n"
		 "each) from mbufs built once, through a ring PMD and a\n"
		 "generator lcore (the last one): the mirror's cost without\n"
		 "a replay's copies (benchmarks; no port needed)"},
	CT_PARAM_TABLE_END,
};

static const struct ct_app_args mirror_args = {
	.prog = "commtap-mirror",
	.usage = "usage: commtap-mirror [EAL options] -- [options]\n"
		 "  Analyze the traffic of a DPDK port (a switch's mirror session): reports\n"
		 "  every --interval and a final one (commtap-report-final.json) in\n"
		 "  --report-dir.\n",
};

int mirror_parse_opts(int argc, char **argv, struct mirror_opts *o)
{
	const struct ct_param_set sets[] = {
		{mirror_params, o},
		{ct_table_params, &o->common},
		{ct_gap_params, &o->common},
		{ct_report_params, &o->common},
	};
	char err[512];
	int first, rc;

	memset(o, 0, sizeof(*o));
	ct_producer_options_init(&o->common);
	rc = ct_app_parse(&mirror_args, sets, sizeof(sets) / sizeof(sets[0]), argc, argv, &first);
	if (rc == 1)
		exit(0);
	if (rc)
		return rc;
	rc = ct_producer_options_finish(&o->common, err, sizeof(err));
	if (rc)
		fprintf(stderr, "commtap-mirror: %s\n", err);
	return rc;
}
