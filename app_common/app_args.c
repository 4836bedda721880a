// SPDX-License-Identifier: MIT
#include "app_args.h"

#include <errno.h>
#include <stdio.h>

void ct_app_help(FILE *out, const struct ct_app_args *a, const struct ct_param_set *sets,
		 unsigned n_sets)
{
	fputs(a->usage, out);
	ct_params_help(out, sets, n_sets);
	if (a->notes)
		fputs(a->notes, out);
}

int ct_app_parse(const struct ct_app_args *a, const struct ct_param_set *sets, unsigned n_sets,
		 int argc, char **argv, int *first)
{
	char err[512];
	int rc = ct_params_parse(sets, n_sets, argc, argv, first, err, sizeof(err));
	unsigned n;

	if (rc == 1) {
		ct_app_help(stdout, a, sets, n_sets);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "%s: %s\n", a->prog, err);
		return rc;
	}
	n = (unsigned)(argc - *first);
	if (n < a->min_pos)
		snprintf(err, sizeof(err), "missing %s", a->pos_meaning);
	else if (n > a->max_pos && a->max_pos == 0)
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[*first]);
	else if (n > a->max_pos && a->max_pos == 1)
		snprintf(err, sizeof(err), "more than one %s given", a->pos_meaning);
	else if (n > a->max_pos)
		snprintf(err, sizeof(err), "more than %u %ss given", a->max_pos, a->pos_meaning);
	else
		return 0;
	fprintf(stderr, "%s: %s (try --help)\n", a->prog, err);
	return -EINVAL;
}
