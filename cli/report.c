// SPDX-License-Identifier: MIT
/* commtap report: one or more reports as one self-contained HTML page. */
#include "commands.h"

#include <commtap/params.h>
#include "report_input.h"

#include "atomic_file.h"
#include "html.h"
#include "merge.h"
#include "model.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
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

_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "the page's counts are stored as U32");

static const struct ct_param report_params[] = {
	{.name = "output",
	 .short_name = 'o',
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct report_opts, output),
	 .help = "the page ('-' for stdout)"},
	{.name = "profile",
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct report_opts, profile),
	 .help = "compare with this job profile's prediction"},
	{.name = "scale",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "X",
	 .offset = offsetof(struct report_opts, scale),
	 .help = "the profile's sizes were scaled by X (synth --scale)",
	 .max = 1e3,
	 .above_min = 1,
	 .show_default = 1},
	{.name = "time-scale",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "X",
	 .offset = offsetof(struct report_opts, time_scale),
	 .help = "its times were scaled by X (synth --time-scale)",
	 .max = 1e3,
	 .above_min = 1,
	 .show_default = 1},
	{.name = "title",
	 .type = CT_PARAM_STRING,
	 .arg = "TEXT",
	 .offset = offsetof(struct report_opts, html.title),
	 .help = "the page's title"},
	{.name = "iterations",
	 .type = CT_PARAM_U32, /* the page's unsigned counts (uint32_t here) */
	 .arg = "N",
	 .offset = offsetof(struct report_opts, html.timeline_iterations),
	 .min = 1,
	 .max = 100000,
	 .help = "iterations the timeline shows (default 3)"},
	{.name = "top-flows",
	 .type = CT_PARAM_U32, /* the page's unsigned counts (uint32_t here) */
	 .arg = "N",
	 .offset = offsetof(struct report_opts, html.timeline_flows),
	 .min = 1,
	 .max = 100000,
	 .help = "busiest flows in the timeline (default 8)"},
	{.name = "table-flows",
	 .type = CT_PARAM_U32, /* the page's unsigned counts (uint32_t here) */
	 .arg = "N",
	 .offset = offsetof(struct report_opts, html.table_flows),
	 .min = 1,
	 .max = 100000,
	 .help = "flows in the periodicity table (default 40)"},
	CT_PARAM_TABLE_END,
};

const struct ct_app_args report_app_args = {
	.prog = "commtap report",
	.usage = "usage: commtap report REPORT.json [MORE.json ...] -o REPORT.html\n"
		 "  Draw one self-contained HTML page (no script, nothing fetched) from a report,\n"
		 "  or from several merged into one cluster view (as commtap merge does).\n",
	.min_pos = 1,
	.max_pos = UINT_MAX,
	.pos_meaning = "REPORT.json",
};

const struct ct_param *const report_options[] = {report_params, NULL};

/* Options into o; the first report at argv[*first]. */
static int parse_args(int argc, char **argv, struct report_opts *o, int *first)
{
	const struct ct_param_set set = {report_params, o};
	char err[512];
	int rc;

	o->scale = o->time_scale = 1;
	rc = ct_app_parse(&report_app_args, &set, 1, argc, argv, first);
	if (rc == 1)
		exit(CT_EXIT_OK);
	if (rc)
		return rc;
	if (!o->output) {
		snprintf(err, sizeof(err), "no output given (-o FILE) (try --help)");
		rc = -EINVAL;
	}
	for (int i = *first; !rc && i < argc; i++)
		if (ct_same_file(argv[i], o->output)) {
			snprintf(err, sizeof(err), "the output %s is the input report", o->output);
			rc = -EINVAL;
		}
	if (rc) {
		fprintf(stderr, "commtap report: %s\n", err);
		return rc;
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

struct page_job {
	const struct ct_rep *rep;
	const struct ct_html_opts *html;
};

static int write_page(FILE *out, void *ctx)
{
	const struct page_job *job = ctx;

	return ct_html_write_report(job->rep, job->html, out);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {0};
	struct expectation x = {0};
	json_object **docs = NULL, *doc = NULL;
	struct ct_rep rep = {0};
	char err[512];
	int n = 0, rc, first, status = CT_EXIT_ERROR;

	if (parse_args(argc, argv, &o, &first))
		return CT_EXIT_ERROR;
	n = argc - first;
	if (ct_cli_load_reports("report", n, argv + first, &docs))
		return CT_EXIT_ERROR;
	if (o.profile) {
		if (expectation_load(&o, &x))
			goto out;
		o.html.expect = &x.e;
	}
	if (n > 1) {
		rc = ct_merge_reports(docs, (const char *const *)(argv + first), (size_t)n, &doc);
		if (rc) {
			fprintf(stderr, "commtap report: merging: %s\n",
				rc == -ENOMEM ? "out of memory" : strerror(-rc));
			goto out;
		}
	} else {
		doc = json_object_get(docs[0]);
	}
	rc = ct_rep_read(doc, n > 1 ? "the merged report" : argv[first], &rep, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap report: %s\n", err);
		goto out;
	}
	/* the page whole or not at all: a failure leaves the previous page */
	rc = ct_write_file_atomic(o.output, write_page, &(struct page_job){&rep, &o.html});
	if (rc)
		fprintf(stderr, "commtap report: cannot write %s: %s\n", o.output,
			ct_output_strerror(rc));
	else
		status = CT_EXIT_OK;
out:
	ct_rep_free(&rep);
	json_object_put(doc);
	ct_cli_free_reports(docs, n);
	expectation_free(&x);
	return status;
}
