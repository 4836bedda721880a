/* SPDX-License-Identifier: MIT */
/* Exit statuses of every commtap program (commtap, its subcommands, commtap-mirror). */
#ifndef COMMTAP_EXIT_STATUS_H
#define COMMTAP_EXIT_STATUS_H

#define CT_EXIT_OK	   0
#define CT_EXIT_ERROR	   1 /* bad flags, unreadable input: nothing written */
#define CT_EXIT_INCOMPLETE 2 /* input broke off: the report covers what was read */

#endif
