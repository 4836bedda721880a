// SPDX-License-Identifier: MIT
/* commtap's command table: each subcommand, its summary, its command line and its run function. */
#include "commands.h"

/* clang-format off */
#define COMMAND(name, summary) {#name, summary, &name##_app_args, name##_options, cmd_##name}
/* clang-format on */

const struct cli_command cli_commands[] = {
	COMMAND(analyze, "analyze a pcap/pcapng capture and report its flows"),
	COMMAND(predict, "predict a job's traffic from its profile"),
	COMMAND(synth, "render a profile's traffic as a capture with its ground truth"),
	COMMAND(report, "draw reports as one self-contained HTML page"),
	COMMAND(merge, "merge the reports of several vantage points into one"),
	COMMAND(trace, "write reports as a timeline for Perfetto / chrome://tracing"),
#ifdef COMMTAP_HAVE_AGENT
	COMMAND(agent, "attach the eBPF host probe to interfaces and report their flows"),
#endif
#ifndef COMMTAP_NO_BENCH
	COMMAND(bench, "measure the engine's per-packet cost on synthetic RoCEv2 traffic"),
#endif
};

const size_t cli_n_commands = sizeof(cli_commands) / sizeof(cli_commands[0]);
