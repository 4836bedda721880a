// SPDX-License-Identifier: MIT
/* commtap: one binary, one subcommand per job. */
#include "commands.h"

#include <commtap/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef COMMTAP_VERSION
#define COMMTAP_VERSION "0.0.0"
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"analyze", cmd_analyze, "analyze a pcap/pcapng capture and report its flows"},
	{"predict", cmd_predict, "predict a job's traffic from its profile"},
	{"synth", cmd_synth, "render a profile's traffic as a capture with its ground truth"},
	{"report", cmd_report, "draw reports as one self-contained HTML page"},
	{"merge", cmd_merge, "merge the reports of several vantage points into one"},
	{"trace", cmd_trace, "write reports as a timeline for Perfetto / chrome://tracing"},
#ifdef COMMTAP_HAVE_AGENT
	{"agent", cmd_agent, "attach the eBPF host probe to interfaces and report their flows"},
#endif
#ifndef COMMTAP_NO_BENCH
	{"bench", cmd_bench, "measure the engine's per-packet cost on synthetic RoCEv2 traffic"},
#endif
};

/* -v/--verbose anywhere before "--": the libraries' debug messages too. Removed from argv. */
static int take_verbose(int argc, char **argv)
{
	int out = 1, verbose = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			verbose = 1;
		else
			argv[out++] = argv[i];
	}
	argv[out] = NULL;
	ct_set_log_level(verbose ? CT_LOG_DEBUG : CT_LOG_INFO);
	return out;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: commtap [-v|--verbose] COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'commtap COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	argc = take_verbose(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return CT_EXIT_ERROR;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("commtap %s\n", COMMTAP_VERSION);
		return CT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			char prefix[64];

			/* the libraries' messages, one line each, named after the subcommand */
			snprintf(prefix, sizeof(prefix), "commtap %s", commands[i].name);
			ct_log_to_stderr(prefix);
			return commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "commtap: unknown command '%s' (try 'commtap --help')\n", argv[1]);
	return CT_EXIT_ERROR;
}
