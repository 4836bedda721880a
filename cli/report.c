// SPDX-License-Identifier: MIT
/* commtap report: one or more reports as one self-contained HTML page. */
#include "commands.h"

#include <commtap/params.h>
#include "report_input.h"

#include "html.h"
#include "merge.h"
#include "model.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report_opts {
	const char *output;
	const char *profile;
	double scale, time_scale;
	struct ct_html_opts html;
};

/* A profile's prediction in the HTML's terms, scaled like `commtap synth`. */
struct expectation {
	struct ct_profile profile;
	struct ct_prediction pred;
	struct ct_html_expect e;
	char (*addr)[64];
	const char **addr_ptr;
	double *bytes;
	int loaded;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: commtap report REPORT.json [MORE.json ...] -o REPORT.html\n"
		"  Draw one self-contained HTML page (no script, nothing fetched) from a report,\n"
		"  or from several merged into one cluster view (as commtap merge does).\n"
		"  -o, --output FILE        the page ('-' for stdout)\n"
		"  --profile FILE           compare with this job profile's prediction\n"
		"  --scale X                the profile's sizes were scaled by X (synth --scale)\n"
		"  --time-scale X           its times were scaled by X (synth --time-scale)\n"
		"  --title TEXT             the page's title\n"
		"  --iterations N           iterations the timeline shows (default 3)\n"
		"  --top-flows N            busiest flows in the timeline (default 8)\n"
		"  --table-flows N          flows in the periodicity table (default 40)\n");
}

static int positive(const char *flag, const char *text, double max, double *out)
{
	char err[256];
	int rc = ct_parse_number(flag + 2, text, 0, max, 1, out, err, sizeof(err));

	if (rc)
		fprintf(stderr, "commtap report: %s\n", err);
	return rc;
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"profile", required_argument, NULL, 'p'},
		{"scale", required_argument, NULL, 's'},
		{"time-scale", required_argument, NULL, 'S'},
		{"title", required_argument, NULL, 't'},
		{"iterations", required_argument, NULL, 'i'},
		{"top-flows", required_argument, NULL, 'f'},
		{"table-flows", required_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double v;
	int c;

	o->scale = o->time_scale = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'p':
			o->profile = optarg;
			break;
		case 's':
			if (positive("--scale", optarg, 1e3, &o->scale))
				return -EINVAL;
			break;
		case 'S':
			if (positive("--time-scale", optarg, 1e3, &o->time_scale))
				return -EINVAL;
			break;
		case 't':
			o->html.title = optarg;
			break;
		case 'i':
		case 'f':
		case 'F':
			if (positive(c == 'i'	? "--iterations"
				     : c == 'f' ? "--top-flows"
						: "--table-flows",
				     optarg, 100000, &v))
				return -EINVAL;
			*(c == 'i'   ? &o->html.timeline_iterations
			  : c == 'f' ? &o->html.timeline_flows
				     : &o->html.table_flows) = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			exit(CT_EXIT_OK);
		default:
			fprintf(stderr,
				"commtap report: unknown or incomplete option '%s' (try --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind == argc || !o->output) {
		fprintf(stderr, "commtap report: %s (try --help)\n",
			optind == argc ? "no report given" : "no output given (-o FILE)");
		return -EINVAL;
	}
	return 0;
}

static int expectation_load(const struct report_opts *o, struct expectation *x)
{
	char err[768];
	unsigned h;
	int rc = ct_profile_load(o->profile, &x->profile, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "commtap report: --profile %s\n", err);
		return rc;
	}
	x->loaded = 1;
	rc = ct_predict(&x->profile, &x->pred);
	if (rc) {
		fprintf(stderr, "commtap report: --profile %s: cannot predict its traffic: %s\n",
			o->profile, ct_predict_strerror(&x->pred, rc));
		ct_profile_free(&x->profile);
		x->loaded = 0;
		return rc;
	}
	x->loaded = 2;
	h = x->pred.nhosts;
	x->addr = calloc(h + 1, sizeof(*x->addr));
	x->addr_ptr = calloc(h + 1, sizeof(*x->addr_ptr));
	x->bytes = calloc((size_t)CT_HTML_CLASSES * h * h + 1, sizeof(*x->bytes));
	if (!x->addr || !x->addr_ptr || !x->bytes) {
		fprintf(stderr, "commtap report: out of memory\n");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < h && i < x->profile.hosts; i++) {
		ct_addr_format(&x->profile.host_addr[i], x->addr[i], sizeof(x->addr[i]));
		x->addr_ptr[i] = x->addr[i];
	}
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		for (unsigned s = 0; s < h; s++)
			for (unsigned d = 0; d < h; d++)
				x->bytes[((size_t)c * h + s) * h + d] =
					ct_host_bytes(&x->pred, c, s, d) * o->scale;
		x->e.t_class[c] = x->pred.t_class[c] * o->time_scale;
		x->e.on_wire[c] = x->pred.crosses_nic[c];
	}
	x->e.profile = x->profile.name;
	x->e.n_hosts = h;
	x->e.host_addr = x->addr_ptr;
	x->e.bytes = x->bytes;
	x->e.t_iter = x->pred.t_iter * o->time_scale;
	x->e.t_comp = x->pred.t_comp * o->time_scale;
	x->e.t_bubble = x->pred.t_bubble * o->time_scale;
	return 0;
}

static void expectation_free(struct expectation *x)
{
	if (x->loaded > 1)
		ct_prediction_free(&x->pred);
	if (x->loaded)
		ct_profile_free(&x->profile);
	free(x->addr);
	free(x->addr_ptr);
	free(x->bytes);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {0};
	struct expectation x = {0};
	json_object **docs = NULL, *doc = NULL;
	int n, rc, status = CT_EXIT_ERROR;
	FILE *out = NULL;

	if (parse_args(argc, argv, &o))
		return CT_EXIT_ERROR;
	n = argc - optind;
	if (ct_cli_load_reports("report", n, argv + optind, &docs))
		return CT_EXIT_ERROR;
	if (o.profile) {
		if (expectation_load(&o, &x))
			goto out;
		o.html.expect = &x.e;
	}
	if (n > 1) {
		rc = ct_merge_reports(docs, (const char *const *)(argv + optind), (size_t)n, &doc);
		if (rc) {
			fprintf(stderr, "commtap report: merging: %s\n", strerror(-rc));
			goto out;
		}
	} else {
		doc = json_object_get(docs[0]);
	}
	out = strcmp(o.output, "-") ? fopen(o.output, "w") : stdout;
	if (!out) {
		fprintf(stderr, "commtap report: cannot write %s: %s\n", o.output, strerror(errno));
		goto out;
	}
	rc = ct_html_write(doc, &o.html, out);
	if (out == stdout ? fflush(out) : fclose(out))
		rc = rc ? rc : -EIO;
	if (rc)
		fprintf(stderr, "commtap report: writing %s failed: %s\n", o.output, strerror(-rc));
	else
		status = CT_EXIT_OK;
out:
	json_object_put(doc);
	ct_cli_free_reports(docs, n);
	expectation_free(&x);
	return status;
}
