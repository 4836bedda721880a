/* SPDX-License-Identifier: MIT */
/*
 * `commtap agent`: the subcommand the commtap binary dispatches to (its
 * table in cli/ names it too; neither folder includes the other's headers).
 */
#ifndef COMMTAP_AGENT_CMD_H
#define COMMTAP_AGENT_CMD_H

int cmd_agent(int argc, char **argv);

#endif
