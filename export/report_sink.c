// SPDX-License-Identifier: MIT
/*
 * The report sink (report_sink.h). Where a report goes: ct_report_document_ext
 * -> ct_prom_render -> the /metrics server; the same document -> the JSON
 * file through ct_write_file_atomic, its flows streamed from the report
 * (no tree of every flow in memory).
 */
#include "report_sink.h"

#include "atomic_file.h"
#include "metrics_server.h"
#include "prom.h"

#include <commtap/log.h>
#include <commtap/snapshot.h>

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ct_report_sink {
	struct ct_report_sink_config cfg;
	struct ct_metrics_server *metrics;
	unsigned seq;		  /* the next interval report's number */
	unsigned written, failed; /* files, every report */
	int first_err;		  /* the first failed write's negative errno */
	/* the last final report's files: --json, --lines, the table, the directory's (1: none) */
	int final_out[4];
	int final_put;
	/* the last report's alarms, carried while they last (ct_anomalies_carry) */
	struct ct_anomalies earlier;
};

/* Interval reports go on from the highest number already in the directory. */
static unsigned next_seq_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned seq = 0, n;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "commtap-report-%6u.json", &n) == 1 && n + 1 > seq)
			seq = n + 1;
	closedir(d);
	return seq;
}

int ct_report_sink_open(const struct ct_report_sink_config *cfg, struct ct_report_sink **out,
			char *err, size_t errlen)
{
	const char *outputs[] = {cfg->json_path, cfg->lines_path};
	struct ct_report_sink *s;
	int rc;

	*out = NULL;
	for (unsigned i = 0; i < 2; i++)
		if (ct_same_file(outputs[i], cfg->input_path)) {
			snprintf(err, errlen, "--%s %s is the input: it would be overwritten",
				 i ? "lines" : "json", outputs[i]);
			return -EINVAL;
		}
	if (cfg->report_dir && access(cfg->report_dir, W_OK)) {
		snprintf(err, errlen, "--report-dir %s: %s", cfg->report_dir, strerror(errno));
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->cfg = *cfg;
	if (cfg->report_dir && cfg->resume_numbering)
		s->seq = next_seq_in(cfg->report_dir);
	if (cfg->listen) {
		char why[512];

		rc = ct_metrics_server_start(cfg->listen, &s->metrics, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "--listen %s", why);
			free(s);
			return rc;
		}
	}
	*out = s;
	return 0;
}

uint16_t ct_report_sink_port(const struct ct_report_sink *s)
{
	return s && s->metrics ? ct_metrics_server_port(s->metrics) : 0;
}

static int publish(struct ct_report_sink *s, json_object *doc)
{
	char *text = NULL;
	size_t len = 0;
	int rc = ct_prom_render(doc, NULL, &text, &len);

	if (!rc)
		rc = ct_metrics_server_publish(s->metrics, text, len);
	free(text);
	return rc;
}

static int write_document(FILE *out, void *ctx)
{
	return ct_report_document_write(ctx, out);
}

static int write_lines(FILE *out, void *ctx)
{
	ct_report_write_lines(ctx, out);
	return 0;
}

static int write_table(FILE *out, void *ctx)
{
	ct_report_write_table(ctx, out);
	return 0;
}

/* One destination; a failure is said here, once, counted and returned. */
static int put_file(struct ct_report_sink *s, const char *path, ct_file_writer_fn write, void *ctx)
{
	int rc = ct_write_file_atomic(path, write, ctx);

	if (rc) {
		ct_log(CT_LOG_WARN, "cannot write %s: %s",
		       strcmp(path, "-") ? path : "the standard output", ct_output_strerror(rc));
		s->failed++;
		s->first_err = s->first_err ?: rc;
	} else {
		s->written++;
	}
	return rc;
}

/* Where the final report went, after some file failed. */
static void say_written(const struct ct_report_sink *s)
{
	const struct ct_report_sink_config *c = &s->cfg;
	const char *names[] = {"--json", "--lines", "the table", "--report-dir"};
	const char *paths[] = {c->json_path, c->lines_path, "on stdout", c->report_dir};
	char list[1024] = "";
	size_t len = 0;

	if (!s->final_put)
		return;
	for (unsigned i = 0; i < 4; i++)
		if (s->final_out[i] == 0 && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s %s",
						len ? ", " : "", names[i], paths[i]);
	ct_log(CT_LOG_WARN, "the final report was written %s%s", len ? "to " : "nowhere", list);
}

int ct_report_sink_put(struct ct_report_sink *s, struct ct_report *r, int final)
{
	const struct ct_report_sink_config *c = &s->cfg;
	char path[PATH_MAX];
	json_object *doc;
	int rc, first = 0;
	int *out = s->final_out;

	r->interval = !final;
	r->seq = s->seq;
	/* flows printed from r as each file is written; /metrics keeps a brief of each */
	doc = ct_report_document_ext(r, CT_REPORT_DOC_STREAM_FLOWS |
						(s->metrics ? CT_REPORT_DOC_BRIEF_FLOWS : 0));
	if (!doc) {
		ct_log(CT_LOG_WARN, "out of memory: report %u is not written", s->seq);
		s->failed++;
		s->first_err = s->first_err ?: -ENOMEM;
		return -ENOMEM;
	}
	if (s->metrics) {
		rc = publish(s, doc);
		if (rc)
			ct_log(CT_LOG_WARN, "report %u: /metrics not updated: %s", s->seq,
			       strerror(-rc));
		first = first ?: rc;
	}
	if (!final && c->report_dir) {
		snprintf(path, sizeof(path), "%s/commtap-report-%06u.json", c->report_dir, s->seq);
		rc = put_file(s, path, write_document, doc);
		first = first ?: rc;
	}
	if (final) {
		s->final_put = 1;
		for (unsigned i = 0; i < 4; i++)
			out[i] = 1;
	}
	if (final && c->report_dir && c->final_in_dir) {
		snprintf(path, sizeof(path), "%s/commtap-report-final.json", c->report_dir);
		out[3] = put_file(s, path, write_document, doc);
	}
	if (final && c->json_path)
		out[0] = put_file(s, c->json_path, write_document, doc);
	if (final && c->lines_path)
		out[1] = put_file(s, c->lines_path, write_lines, r);
	if (final && c->table)
		out[2] = put_file(s, "-", write_table, r);
	for (unsigned i = 0; final && i < 4; i++)
		first = first ?: out[i] < 0 ? out[i] : 0;
	if (!final)
		s->seq++;
	json_object_put(doc);
	return first;
}

/* replacing: a report already stands; one whose analysis ran out of time
 * is not written over it. */
static int analyse_and_put(struct ct_report_sink *s, const struct ct_report_input *in,
			   struct ct_report *r, int final, uint64_t deadline_ns, int replacing)
{
	struct ct_analysis an = {.deadline_ns = deadline_ns};
	int rc;

	rc = ct_analysis_run(in->know, r, in->cm, in->n_cm, in->bursts, in->min_period_s, &an);
	if (r->anomalies) {
		ct_anomalies_carry(&s->earlier, &an.anomalies);
		if (ct_anomalies_keep_alarms(&an.anomalies, &s->earlier))
			ct_log(CT_LOG_WARN, "out of memory: this report's alarms are not carried");
	}
	if (rc != -ETIMEDOUT && in->analysed)
		in->analysed(r, in->ctx);
	if (rc == -ETIMEDOUT && replacing) {
		ct_log(CT_LOG_INFO, "stopping: the whole analysis did not end by the deadline; "
				    "the final report of flows and counters stands");
		rc = 0;
	} else {
		rc = ct_report_sink_put(s, r, final);
	}
	ct_analysis_free(&an);
	ct_report_forget_analysis(r);
	return rc;
}

/*
 * The knowledge of one report: in->know, with the producer's own labels
 * joined to its labels in joined (whose labels the caller frees) when there
 * are any.
 */
static struct ct_knowledge *knowledge_of(const struct ct_report_input *in,
					 struct ct_knowledge *joined)
{
	static int warned;
	char err[256];

	memset(&joined->labels, 0, sizeof(joined->labels));
	if (!in->more_labels || !in->more_labels->n)
		return in->know;
	*joined = *in->know;
	joined->labels_dir = NULL; /* a copy: only in->know is read again */
	if (ct_labels_join(&in->know->labels, in->more_labels, &joined->labels, err, sizeof(err))) {
		if (!warned++)
			ct_log(CT_LOG_WARN, "the producer's own labels are left out: %s", err);
		memset(&joined->labels, 0, sizeof(joined->labels));
		return in->know;
	}
	return joined;
}

/*
 * The final report on a stop, within the deadline counted from the stop: at
 * once the flows and counters, then, if it fits, the whole analysis over
 * it. Writing the whole report takes at least what the first took (the
 * same flows, more sections): the analysis must end that long before the
 * deadline, and is not started when that leaves no time.
 */
static int analyse(struct ct_report_sink *s, const struct ct_report_input *in, struct ct_report *r,
		   int final, int stopping)
{
	double deadline_s = s->cfg.shutdown_deadline_s;
	uint64_t start, end, wrote, now;
	int rc;

	if (!final || !stopping)
		return analyse_and_put(s, in, r, final, 0, 0);
	/* a deadline already passed: flows and counters only, written at once */
	start = ct_monotonic_ns();
	rc = analyse_and_put(s, in, r, final, 1, 0);
	if (rc || deadline_s <= 0)
		return rc;
	now = ct_monotonic_ns();
	wrote = now - start;
	end = (in->stopped_ns && in->stopped_ns < start ? in->stopped_ns : start) +
	      (uint64_t)(deadline_s * 1e9);
	if (now + wrote >= end) {
		ct_log(CT_LOG_INFO,
		       "stopping: the final report of flows and counters stands (writing it "
		       "took %.1f s; the %g s deadline leaves no time to analyse and write it "
		       "again)",
		       wrote / 1e9, deadline_s);
		return 0;
	}
	ct_log(CT_LOG_INFO,
	       "stopping: the final report of flows and counters is written; "
	       "the whole analysis has %g s to replace it",
	       deadline_s);
	return analyse_and_put(s, in, r, final, end - wrote, 1);
}

int ct_report_of_snapshot(const struct ct_snapshot *all, struct ct_report *r,
			  struct ct_burst_log *bursts, struct ct_report_input *in)
{
	int err = 0;

	for (size_t i = 0; i < all->n_flows && !err; i++)
		err = ct_flow_set_add(&r->flows, &all->flows[i]);
	for (size_t i = 0; i < all->n_bursts && !err; i++)
		err = ct_burst_log_add(bursts, &all->bursts[i]);
	if (err)
		return err;
	r->counters = all->counters;
	in->cm = all->cm;
	in->n_cm = (unsigned)all->n_cm;
	in->bursts = bursts;
	return 0;
}

int ct_report_sink_analyse(struct ct_report_sink *s, const struct ct_report_input *in,
			   struct ct_report *r, int final, int stopping)
{
	struct ct_report_input with = *in;
	struct ct_knowledge joined;
	char err[1024];
	int rc;

	if (ct_knowledge_refresh(in->know, err, sizeof(err)))
		ct_log(CT_LOG_WARN, "%s; the labels read before stay", err);
	with.know = knowledge_of(in, &joined);
	rc = analyse(s, &with, r, final, stopping);
	ct_labels_free(&joined.labels);
	return rc;
}

int ct_report_sink_failures(const struct ct_report_sink *s)
{
	if (!s || !s->failed)
		return 0;
	if (s->failed + s->written == 1) /* its one line said it all */
		return s->first_err;
	ct_log(CT_LOG_WARN, "%u of %u report files were not written (the first: %s)", s->failed,
	       s->failed + s->written, ct_output_strerror(s->first_err));
	say_written(s);
	return s->first_err;
}

void ct_report_sink_close(struct ct_report_sink *s)
{
	if (!s)
		return;
	ct_metrics_server_stop(s->metrics);
	ct_anomalies_free(&s->earlier);
	free(s);
}
