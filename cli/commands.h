/* SPDX-License-Identifier: MIT */
/* The `commtap` subcommands. Each returns the process exit status. */
#ifndef COMMTAP_COMMANDS_H
#define COMMTAP_COMMANDS_H

#include <commtap/exit_status.h>

int cmd_agent(int argc, char **argv); /* agent/agent.c (agent_cmd.h) */
int cmd_analyze(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
