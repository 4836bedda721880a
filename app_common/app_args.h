/* SPDX-License-Identifier: MIT */
/*
 * One way for every app (commtap's commands, commtap agent, commtap-mirror)
 * to read its command line: its option tables (params.h) and its positional
 * arguments, their count checked here and named in the error.
 */
#ifndef COMMTAP_APP_ARGS_H
#define COMMTAP_APP_ARGS_H

#include <commtap/params.h>

struct ct_app_args {
	const char *prog;  /* "commtap analyze": what errors begin with */
	const char *usage; /* the help before the options: "usage: ...\n  what it does\n" */
	const char *notes; /* the help after them, or NULL */
	/* positional arguments: how many, and what they are ("CAPTURE file") */
	unsigned min_pos, max_pos;
	const char *pos_meaning;
};

/* The whole help: usage, the options' table, the notes. */
void ct_app_help(FILE *out, const struct ct_app_args *a, const struct ct_param_set *sets,
		 unsigned n_sets);

/*
 * Parse argv against sets (ct_params_parse) and count what is left:
 * returns 0 with the positional arguments at argv[*first..argc), 1 after
 * printing the help on stdout (--help: the caller exits with CT_EXIT_OK),
 * or -EINVAL after printing "PROG: reason (try --help)" on stderr: a bad
 * option or value, "missing POS", "more than one POS given" or
 * "unexpected argument 'X'".
 */
int ct_app_parse(const struct ct_app_args *a, const struct ct_param_set *sets, unsigned n_sets,
		 int argc, char **argv, int *first);

#endif
