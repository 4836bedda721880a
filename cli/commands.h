/* SPDX-License-Identifier: MIT */
/*
 * The `commtap` subcommands. Each returns the process exit status, and
 * describes its command line as a ct_app_args (usage, positional arguments)
 * and its option tables: the command table (command_table.c) lists them,
 * and the help and argument checks come from there.
 */
#ifndef COMMTAP_COMMANDS_H
#define COMMTAP_COMMANDS_H

#include <stddef.h>

#include <commtap/exit_status.h>
#include <commtap/params.h>

#include "app_args.h"

struct cli_command {
	const char *name;
	const char *summary;
	const struct ct_app_args *args;	       /* usage, positional arguments: count and meaning */
	const struct ct_param *const *options; /* its option tables, NULL-terminated */
	int (*run)(int argc, char **argv);
};

/* The command table: every subcommand of this build. */
extern const struct cli_command cli_commands[];
extern const size_t cli_n_commands;

#define CLI_COMMAND_DECLARE(name)                                                                  \
	int cmd_##name(int argc, char **argv);                                                     \
	extern const struct ct_app_args name##_app_args;                                           \
	extern const struct ct_param *const name##_options[]

CLI_COMMAND_DECLARE(agent); /* agent/agent.c (agent_cmd.h) */
CLI_COMMAND_DECLARE(analyze);
CLI_COMMAND_DECLARE(bench);
CLI_COMMAND_DECLARE(predict);
CLI_COMMAND_DECLARE(synth);
CLI_COMMAND_DECLARE(merge);
CLI_COMMAND_DECLARE(report);
CLI_COMMAND_DECLARE(trace);

#endif
