// SPDX-License-Identifier: MIT
/* commtap trace: one or more reports as a timeline (Trace Event Format JSON). */
#include "commands.h"

#include <commtap/params.h>
#include "report_input.h"

#include "atomic_file.h"
#include "merge.h"
#include "trace.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trace_job {
	json_object *doc;
	struct ct_trace_opts opts;
	char err[512];
};

struct trace_args {
	const char *output;
	uint32_t flows, bins;
};

static const struct ct_param trace_params[] = {
	{.name = "output",
	 .short_name = 'o',
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct trace_args, output),
	 .help = "the trace ('-' for stdout)"},
	{.name = "flows",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct trace_args, flows),
	 .help = "busiest flows drawn as tracks; the rest are only in\n"
		 "their class's counter",
	 .min = 1,
	 .max = 100000,
	 .show_default = 1},
	{.name = "bins",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct trace_args, bins),
	 .help = "most counter bins over the time span",
	 .min = 1,
	 .max = 1000000,
	 .show_default = 1},
	CT_PARAM_TABLE_END,
};

const struct ct_app_args trace_app_args = {
	.prog = "commtap trace",
	.usage = "usage: commtap trace REPORT.json [MORE.json ...] -o TRACE.json\n"
		 "  Write the report as a timeline in the Trace Event Format (JSON) for\n"
		 "  ui.perfetto.dev or chrome://tracing: a process per sending host, a track per\n"
		 "  busy flow with its bursts, bytes on the wire per class as counters, the\n"
		 "  iterations, and the GPU section's iterations when the report has one.\n"
		 "  Several reports are merged into one cluster view first (as commtap merge).\n",
	.min_pos = 1,
	.max_pos = UINT_MAX,
	.pos_meaning = "REPORT.json",
};

const struct ct_param *const trace_options[] = {trace_params, NULL};

/* Options into o; the first report at argv[*first]. */
static int parse_args(int argc, char **argv, const char **output, struct ct_trace_opts *o,
		      int *first)
{
	struct trace_args a = {.flows = CT_TRACE_DEFAULT_FLOWS, .bins = CT_TRACE_DEFAULT_BINS};
	const struct ct_param_set set = {trace_params, &a};
	int rc = ct_app_parse(&trace_app_args, &set, 1, argc, argv, first);

	if (rc == 1)
		exit(CT_EXIT_OK);
	if (rc)
		return rc;
	if (!a.output) {
		fprintf(stderr, "commtap trace: no output given (-o FILE) (try --help)\n");
		return -EINVAL;
	}
	*output = a.output;
	o->flows = a.flows;
	o->bins = a.bins;
	return 0;
}

static int write_trace(FILE *out, void *ctx)
{
	struct trace_job *job = ctx;

	return ct_trace_write(job->doc, &job->opts, out, job->err, sizeof(job->err));
}

int cmd_trace(int argc, char **argv)
{
	struct trace_job job = {0};
	json_object **docs = NULL;
	const char *output = NULL;
	int n, rc, first, status = CT_EXIT_ERROR;

	if (parse_args(argc, argv, &output, &job.opts, &first))
		return CT_EXIT_ERROR;
	n = argc - first;
	for (int i = 0; i < n; i++)
		if (ct_same_file(argv[first + i], output)) {
			fprintf(stderr, "commtap trace: the output %s is the input report\n",
				output);
			return CT_EXIT_ERROR;
		}
	if (ct_cli_load_reports("trace", n, argv + first, &docs))
		return CT_EXIT_ERROR;
	if (n > 1) {
		rc = ct_merge_reports(docs, (const char *const *)(argv + first), (size_t)n,
				      &job.doc);
		if (rc) {
			fprintf(stderr, "commtap trace: merging: %s\n",
				rc == -ENOMEM ? "out of memory" : strerror(-rc));
			goto out;
		}
	} else {
		job.doc = json_object_get(docs[0]);
	}
	rc = ct_write_file_atomic(output, write_trace, &job);
	if (rc)
		fprintf(stderr,
			job.err[0] ? "commtap trace: %s: %s\n"
				   : "commtap trace: cannot write %s: %s\n",
			job.err[0] ? argv[first] : output,
			job.err[0] ? job.err : ct_output_strerror(rc));
	else
		status = CT_EXIT_OK;
out:
	json_object_put(job.doc);
	ct_cli_free_reports(docs, n);
	return status;
}
