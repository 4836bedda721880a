// SPDX-License-Identifier: MIT
/* commtap merge: reports of several vantage points into one cluster report. */
#include "commands.h"

#include "merge.h"
#include "report_input.h"
#include "report_doc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: commtap merge REPORT.json [MORE.json ...] -o MERGED.json\n"
		     "  Merge the reports of several vantage points (agents, mirror ports) of the\n"
		     "  same interval into one commtap.report/v1: flows deduplicated by key, the\n"
		     "  host matrix over all hosts, counters summed, the job period of the most\n"
		     "  confident report.\n"
		     "  -o, --output FILE  where the merged report goes ('-' for stdout)\n");
}

/* Load the reports named on the command line; on error, say which and why once. */
int ct_cli_load_reports(const char *cmd, int n, char **paths, json_object ***out)
{
	json_object **docs = calloc((size_t)n + 1, sizeof(*docs));
	char err[512];

	*out = NULL;
	if (!docs)
		return -ENOMEM;
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

static int write_json(json_object *doc, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	const char *text;
	int err = 0;

	if (!f) {
		fprintf(stderr, "commtap merge: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (fputs(text, f) < 0 || fputc('\n', f) < 0)
		err = -EIO;
	if (f == stdout ? fflush(f) : fclose(f))
		err = -EIO;
	if (err)
		fprintf(stderr, "commtap merge: writing %s failed\n", path);
	return err;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *output = NULL;
	json_object **docs, *merged;
	int c, n, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			return CT_EXIT_OK;
		default:
			fprintf(stderr,
				"commtap merge: unknown or incomplete option '%s' (try --help)\n",
				argv[optind - 1]);
			return CT_EXIT_ERROR;
		}
	}
	n = argc - optind;
	if (!n || !output) {
		fprintf(stderr, "commtap merge: %s (try --help)\n",
			!n ? "no report given" : "no output given (-o FILE)");
		return CT_EXIT_ERROR;
	}
	if (ct_cli_load_reports("merge", n, argv + optind, &docs))
		return CT_EXIT_ERROR;
	rc = ct_merge_reports(docs, (const char *const *)(argv + optind), (size_t)n, &merged);
	if (rc) {
		fprintf(stderr, "commtap merge: %s\n", strerror(-rc));
		ct_cli_free_reports(docs, n);
		return CT_EXIT_ERROR;
	}
	rc = write_json(merged, output);
	json_object_put(merged);
	ct_cli_free_reports(docs, n);
	return rc ? CT_EXIT_ERROR : CT_EXIT_OK;
}
