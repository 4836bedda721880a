/* SPDX-License-Identifier: MIT */
/* The `commtap` subcommands. Each returns the process exit status. */
#ifndef COMMTAP_COMMANDS_H
#define COMMTAP_COMMANDS_H

int cmd_agent(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Exit statuses shared by the subcommands. */
#define CT_EXIT_OK	   0
#define CT_EXIT_ERROR	   1 /* bad flags, unreadable input: nothing written */
#define CT_EXIT_INCOMPLETE 2 /* input broke off: the report covers what was read */

#endif
