/* SPDX-License-Identifier: MIT */
/*
 * `commtap agent`: the subcommand the commtap binary dispatches to (its
 * table in cli/ names it too; neither folder includes the other's headers).
 */
#ifndef COMMTAP_AGENT_CMD_H
#define COMMTAP_AGENT_CMD_H

#include <commtap/params.h>

#include "app_args.h"

int cmd_agent(int argc, char **argv);
/* its command line, for the command table's help and checks */
extern const struct ct_app_args agent_app_args;
extern const struct ct_param *const agent_options[];

#endif
