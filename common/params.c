// SPDX-License-Identifier: MIT
/* Typed command-line options (params.h). */
#include <commtap/params.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTIONS 96
#define HELP_COLUMN 21 /* where the help text starts */

int ct_parse_number(const char *option, const char *text, double min, double max, int above_min,
		    double *out, char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || isnan(v) || v < min || v > max ||
	    (above_min && v == min)) {
		snprintf(err, errlen, "--%s: '%s' is not a number in %c%g, %g]", option, text,
			 above_min ? '(' : '[', min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int store(const struct ct_param *p, void *values, const char *text, char *err, size_t errlen)
{
	char *field = (char *)values + p->offset;
	double v, scale = p->scale ? p->scale : 1;

	switch (p->type) {
	case CT_PARAM_FLAG:
		*(int *)field = 1;
		return 0;
	case CT_PARAM_STRING:
		*(const char **)field = text;
		return 0;
	case CT_PARAM_CUSTOM:
		return p->parse(text, field, err, errlen);
	default:
		break;
	}
	if (ct_parse_number(p->name, text, p->min, p->max, p->above_min, &v, err, errlen))
		return -EINVAL;
	v *= scale;
	/* a count is never truncated; a size in larger units rounds down to its bytes */
	if (p->type != CT_PARAM_DOUBLE && scale == 1 && v != floor(v)) {
		snprintf(err, errlen, "--%s: '%s' is not a whole number", p->name, text);
		return -EINVAL;
	}
	switch (p->type) {
	case CT_PARAM_DOUBLE:
		*(double *)field = v;
		break;
	case CT_PARAM_U64:
		*(uint64_t *)field = v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
		break;
	case CT_PARAM_U32:
		*(uint32_t *)field = v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
		break;
	case CT_PARAM_SIZE:
		*(size_t *)field = v >= (double)SIZE_MAX ? SIZE_MAX : (size_t)v;
		break;
	default:
		snprintf(err, errlen, "--%s: unknown option type %d", p->name, p->type);
		return -EINVAL;
	}
	return 0;
}

int ct_params_parse(const struct ct_param_set *sets, unsigned n_sets, int argc, char **argv,
		    int *first_arg, char *err, size_t errlen)
{
	struct option longopts[MAX_OPTIONS + 2];
	const struct ct_param *param[MAX_OPTIONS];
	void *values[MAX_OPTIONS];
	char shorts[2 * MAX_OPTIONS + 2] = "h";
	size_t ns = 1;
	int n = 0, c, idx;

	for (unsigned s = 0; s < n_sets; s++)
		for (const struct ct_param *p = sets[s].params; p->type != CT_PARAM_END; p++) {
			if (n == MAX_OPTIONS) {
				snprintf(err, errlen, "more than %d options", MAX_OPTIONS);
				return -EINVAL;
			}
			longopts[n] = (struct option){
				p->name, p->type == CT_PARAM_FLAG ? no_argument : required_argument,
				NULL, 0};
			param[n] = p;
			values[n++] = sets[s].values;
			if (p->short_name) {
				shorts[ns++] = p->short_name;
				if (p->type != CT_PARAM_FLAG)
					shorts[ns++] = ':';
			}
		}
	shorts[ns] = '\0';
	longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[n + 1] = (struct option){NULL, 0, NULL, 0};
	optind = 1;
	opterr = 0;
	/* arguments that are no option are moved after the options (GNU getopt) */
	while ((c = getopt_long(argc, argv, shorts, longopts, &idx)) != -1) {
		if (c == 'h')
			return 1;
		if (c != 0) /* a short alias ('?' for an unknown option matches none) */
			for (idx = 0; idx < n && param[idx]->short_name != c; idx++)
				;
		if (idx == n) {
			snprintf(err, errlen, "unknown or incomplete option '%s' (try --help)",
				 argv[optind - 1]);
			return -EINVAL;
		}
		if (store(param[idx], values[idx], optarg, err, errlen))
			return -EINVAL;
	}
	*first_arg = optind;
	return 0;
}

static double shown_default(const struct ct_param *p, const void *values)
{
	const char *field = (const char *)values + p->offset;
	double scale = p->scale ? p->scale : 1;

	switch (p->type) {
	case CT_PARAM_DOUBLE:
		return *(const double *)field / scale;
	case CT_PARAM_U64:
		return (double)*(const uint64_t *)field / scale;
	case CT_PARAM_U32:
		return (double)*(const uint32_t *)field / scale;
	case CT_PARAM_SIZE:
		return (double)*(const size_t *)field / scale;
	default:
		return 0;
	}
}

void ct_params_help(FILE *out, const struct ct_param_set *sets, unsigned n_sets)
{
	for (unsigned s = 0; s < n_sets; s++)
		for (const struct ct_param *p = sets[s].params; p->type != CT_PARAM_END; p++) {
			const char *line = p->help, *nl;
			int w = p->short_name
					? fprintf(out, "  -%c, --%s%s%s", p->short_name, p->name,
						  p->arg ? " " : "", p->arg ? p->arg : "")
					: fprintf(out, "  --%s%s%s", p->name, p->arg ? " " : "",
						  p->arg ? p->arg : "");

			do {
				nl = strchr(line, '\n');
				fprintf(out, "%*s%.*s", w < HELP_COLUMN ? HELP_COLUMN - w : 1, "",
					nl ? (int)(nl - line) : (int)strlen(line), line);
				if (!nl && p->show_default)
					fprintf(out, " (default %.15g)",
						shown_default(p, sets[s].values));
				fputc('\n', out);
				w = 0;
				line = nl ? nl + 1 : NULL;
			} while (line);
		}
}
