/* SPDX-License-Identifier: MIT */
/* Reading the reports named on a command line (merge, report). */
#ifndef COMMTAP_CLI_REPORT_INPUT_H
#define COMMTAP_CLI_REPORT_INPUT_H

#include <json-c/json.h>

/* Load n reports; on error says which file and why on stderr, once. */
int ct_cli_load_reports(const char *cmd, int n, char **paths, json_object ***out);
void ct_cli_free_reports(json_object **docs, int n);

#endif
