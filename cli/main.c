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
	for (size_t i = 0; i < cli_n_commands; i++)
		fprintf(out, "  %-10s %s\n", cli_commands[i].name, cli_commands[i].summary);
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
	for (size_t i = 0; i < cli_n_commands; i++)
		if (!strcmp(argv[1], cli_commands[i].name)) {
			char prefix[64];

			/* the libraries' messages, one line each, named after the subcommand */
			snprintf(prefix, sizeof(prefix), "commtap %s", cli_commands[i].name);
			ct_log_to_stderr(prefix);
			return cli_commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "commtap: unknown command '%s' (try 'commtap --help')\n", argv[1]);
	return CT_EXIT_ERROR;
}
