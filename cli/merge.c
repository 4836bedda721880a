// SPDX-License-Identifier: MIT
/* commtap merge: reports of several vantage points into one cluster report. */
#include "commands.h"

#include "atomic_file.h"
#include "merge.h"
#include "report_input.h"
#include "report_doc.h"

#include <commtap/params.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct merge_args {
	const char *output;
};

static const struct ct_param merge_params[] = {
	{.name = "output",
	 .short_name = 'o',
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct merge_args, output),
	 .help = "where the merged report goes ('-' for stdout)"},
	CT_PARAM_TABLE_END,
};

const struct ct_app_args merge_app_args = {
	.prog = "commtap merge",
	.usage = "usage: commtap merge REPORT.json [MORE.json ...] -o MERGED.json\n"
		 "  Merge the reports of several vantage points (agents, mirror ports) of the\n"
		 "  same interval into one commtap.report/v1: flows deduplicated by key, the\n"
		 "  host matrix over all hosts, counters summed, the job period of the most\n"
		 "  confident report, the anomalies all found, one per anomaly.\n",
	.min_pos = 1,
	.max_pos = UINT_MAX,
	.pos_meaning = "REPORT.json",
};

const struct ct_param *const merge_options[] = {merge_params, NULL};

/* Load the reports named on the command line; on error, say which and why once. */
int ct_cli_load_reports(const char *cmd, int n, char **paths, json_object ***out)
{
	json_object **docs = calloc((size_t)n + 1, sizeof(*docs));
	char err[512];

	*out = NULL;
	if (!docs) {
		fprintf(stderr, "commtap %s: out of memory\n", cmd);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		int rc = ct_doc_load(paths[i], &docs[i], err, sizeof(err));

		if (rc) {
			fprintf(stderr, "commtap %s: %s\n", cmd, err);
			ct_cli_free_reports(docs, n);
			return rc;
		}
	}
	*out = docs;
	return 0;
}

void ct_cli_free_reports(json_object **docs, int n)
{
	if (!docs)
		return;
	for (int i = 0; i < n; i++)
		json_object_put(docs[i]);
	free(docs);
}

static int print_json(FILE *out, void *ctx)
{
	const char *text = json_object_to_json_string_ext(
		ctx, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!text)
		return -ENOMEM;
	return fputs(text, out) < 0 || fputc('\n', out) < 0 ? -EIO : 0;
}

/* Written whole or not at all, as every output (atomic_file.h). */
static int write_json(json_object *doc, const char *path)
{
	int rc = ct_write_file_atomic(path, print_json, doc);

	if (rc)
		fprintf(stderr, "commtap merge: cannot write %s: %s\n", path,
			ct_output_strerror(rc));
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_args a = {0};
	const struct ct_param_set set = {merge_params, &a};
	json_object **docs, *merged;
	int first, n, rc = ct_app_parse(&merge_app_args, &set, 1, argc, argv, &first);

	if (rc)
		return rc == 1 ? CT_EXIT_OK : CT_EXIT_ERROR;
	n = argc - first;
	if (!a.output) {
		fprintf(stderr, "commtap merge: no output given (-o FILE) (try --help)\n");
		return CT_EXIT_ERROR;
	}
	if (ct_cli_load_reports("merge", n, argv + first, &docs))
		return CT_EXIT_ERROR;
	rc = ct_merge_reports(docs, (const char *const *)(argv + first), (size_t)n, &merged);
	if (rc) {
		fprintf(stderr, "commtap merge: %s\n",
			rc == -ENOMEM ? "out of memory" : strerror(-rc));
		ct_cli_free_reports(docs, n);
		return CT_EXIT_ERROR;
	}
	rc = write_json(merged, a.output);
	json_object_put(merged);
	ct_cli_free_reports(docs, n);
	return rc ? CT_EXIT_ERROR : CT_EXIT_OK;
}
