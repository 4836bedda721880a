/* SPDX-License-Identifier: MIT */
/*
 * Typed command-line options: every program describes its options in
 * tables (name, argument, help, type, range, where the value goes); one
 * parser reads them, one number parser checks them, and --help is
 * generated from the same tables. Programs share tables (the engine and
 * report options of analyze, agent and mirror) by listing them together.
 */
#ifndef COMMTAP_PARAMS_H
#define COMMTAP_PARAMS_H

#include <stddef.h>
#include <stdio.h>

enum ct_param_type {
	CT_PARAM_END,	 /* ends a table */
	CT_PARAM_FLAG,	 /* int, set to 1 */
	CT_PARAM_STRING, /* const char *, the argument itself */
	CT_PARAM_DOUBLE, /* double: the number times scale */
	CT_PARAM_U64,	 /* uint64_t: a whole number, or times scale rounded down */
	CT_PARAM_U32,	 /* uint32_t: likewise */
	CT_PARAM_SIZE,	 /* size_t: likewise */
	CT_PARAM_CUSTOM, /* parse(): anything else (lists, enumerations) */
};

struct ct_param {
	const char *name; /* the long option, without "--" */
	char short_name;  /* its one-letter alias ("-o"), 0 for none */
	enum ct_param_type type;
	const char *arg;  /* what the argument is, in the help ("S", "MIB"); NULL for flags */
	const char *help; /* one or more lines; "\n" starts another */
	size_t offset;	  /* of the value in the options structure */
	double min, max;  /* numbers: the accepted range of the text's number */
	double scale;	  /* numbers: the stored value is the number times this (0: 1) */
	int above_min;	  /* numbers: min itself is refused (an interval of 0) */
	/* CT_PARAM_CUSTOM: 0 or -EINVAL with the reason in err */
	int (*parse)(const char *text, void *value, char *err, size_t errlen);
	/* numbers: the default is shown in the help as the stored value over scale */
	int show_default;
};

#define CT_PARAM_TABLE_END                                                                         \
	{                                                                                          \
		.name = NULL, .type = CT_PARAM_END                                                 \
	}

/* One table and the structure its offsets point into. */
struct ct_param_set {
	const struct ct_param *params;
	void *values;
};

/*
 * Parse a number for option (named in the error) in [min, max] (or
 * (min, max] when above_min): 0, or -EINVAL with the one-line reason in err.
 */
int ct_parse_number(const char *option, const char *text, double min, double max, int above_min,
		    double *out, char *err, size_t errlen);

/*
 * Parse argv against the sets, getopt_long style ("--name VALUE",
 * "--name=VALUE", "-h"/"--help" returns 1 so the caller prints help).
 * Arguments that are no option are left, in order, at argv[*first_arg..].
 * Returns 0, 1 for help, or -EINVAL with the reason in err (naming the
 * option and the bad value).
 */
int ct_params_parse(const struct ct_param_set *sets, unsigned n_sets, int argc, char **argv,
		    int *first_arg, char *err, size_t errlen);

/* The options' help, two columns, generated from the tables (defaults from the values). */
void ct_params_help(FILE *out, const struct ct_param_set *sets, unsigned n_sets);

#endif
