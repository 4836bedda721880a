// SPDX-License-Identifier: MIT
/* commtap trace: one or more reports as a timeline (Trace Event Format JSON). */
#include "commands.h"

#include <commtap/params.h>
#include "report_input.h"

#include "atomic_file.h"
#include "merge.h"
#include "trace.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trace_job {
	json_object *doc;
	struct ct_trace_opts opts;
	char err[512];
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: commtap trace REPORT.json [MORE.json ...] -o TRACE.json\n"
		"  Write the report as a timeline in the Trace Event Format (JSON) for\n"
		"  ui.perfetto.dev or chrome://tracing: a process per sending host, a track per\n"
		"  busy flow with its bursts, bytes on the wire per class as counters, the\n"
		"  iterations, and the GPU section's iterations when the report has one.\n"
		"  Several reports are merged into one cluster view first (as commtap merge).\n"
		"  -o, --output FILE   the trace ('-' for stdout)\n"
		"  --flows N           busiest flows drawn as tracks (default %d); the rest are\n"
		"                      only in their class's counter\n"
		"  --bins N            most counter bins over the time span (default %d)\n",
		CT_TRACE_DEFAULT_FLOWS, CT_TRACE_DEFAULT_BINS);
}

static int count(const char *flag, const char *text, double max, unsigned *out)
{
	char err[256];
	double v;
	int rc = ct_parse_number(flag + 2, text, 1, max, 0, &v, err, sizeof(err));

	if (!rc && v != floor(v)) {
		snprintf(err, sizeof(err), "%s: expected a whole number, got '%s'", flag, text);
		rc = -EINVAL;
	}
	if (rc)
		fprintf(stderr, "commtap trace: %s\n", err);
	else
		*out = (unsigned)v;
	return rc;
}

static int parse_args(int argc, char **argv, const char **output, struct ct_trace_opts *o)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"flows", required_argument, NULL, 'f'},
		{"bins", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			*output = optarg;
			break;
		case 'f':
			if (count("--flows", optarg, 100000, &o->flows))
				return -EINVAL;
			break;
		case 'b':
			if (count("--bins", optarg, 1000000, &o->bins))
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			exit(CT_EXIT_OK);
		default:
			fprintf(stderr,
				"commtap trace: unknown or incomplete option '%s' (try --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind == argc || !*output) {
		fprintf(stderr, "commtap trace: %s (try --help)\n",
			optind == argc ? "no report given" : "no output given (-o FILE)");
		return -EINVAL;
	}
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
	int n, rc, status = CT_EXIT_ERROR;

	if (parse_args(argc, argv, &output, &job.opts))
		return CT_EXIT_ERROR;
	n = argc - optind;
	for (int i = 0; i < n; i++)
		if (ct_same_file(argv[optind + i], output)) {
			fprintf(stderr, "commtap trace: the output %s is the input report\n",
				output);
			return CT_EXIT_ERROR;
		}
	if (ct_cli_load_reports("trace", n, argv + optind, &docs))
		return CT_EXIT_ERROR;
	if (n > 1) {
		rc = ct_merge_reports(docs, (const char *const *)(argv + optind), (size_t)n,
				      &job.doc);
		if (rc) {
			fprintf(stderr, "commtap trace: merging: %s\n", strerror(-rc));
			goto out;
		}
	} else {
		job.doc = json_object_get(docs[0]);
	}
	rc = ct_write_file_atomic(output, write_trace, &job);
	if (rc)
		fprintf(stderr, "commtap trace: %s: %s\n", job.err[0] ? argv[optind] : output,
			job.err[0] ? job.err : strerror(-rc));
	else
		status = CT_EXIT_OK;
out:
	json_object_put(job.doc);
	ct_cli_free_reports(docs, n);
	return status;
}
