// SPDX-License-Identifier: MIT
/*
 * The report sink and its atomic writes (export/report_sink.h,
 * atomic_file.h): the document a report is written from reads back equal
 * (model -> JSON -> model), a link planted where the temporary file would
 * go is never followed, a link at the path is refused, a FIFO is written
 * through (EPIPE when its reader leaves), a failed write leaves the previous file whole, an
 * output that is the input is refused, interval reports are numbered on
 * from what the directory holds; a streamed document (flows printed from
 * the report, in pieces) prints the whole document's bytes and /metrics
 * reads its brief flows as the whole ones; flows past the limit are summed
 * exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "atomic_file.h"
#include "prom.h"
#include "report_doc.h"
#include "report_sink.h"

#include <commtap/analysis.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/commtap-sink-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void add_flow(struct ct_flow_set *set, const char *src, const char *dst, uint32_t qpn,
		     uint64_t packets, uint64_t bytes, uint64_t t0)
{
	struct ct_flow_summary s = {0};

	assert_int_equal(ct_addr_parse(src, &s.key.src), 0);
	assert_int_equal(ct_addr_parse(dst, &s.key.dst), 0);
	s.key.id = qpn;
	s.key.transport = CT_TRANSPORT_ROCE;
	s.packets = packets;
	s.bytes = bytes;
	s.first_ts = t0;
	s.last_ts = t0 + 1000;
	s.messages = 2;
	s.message_bytes = bytes - 64 * packets;
	s.reverse = -1;
	assert_int_equal(ct_flow_set_add_summary(set, &s), 0);
}

/* A small report, analysed as every producer does. */
static void make_report(struct ct_report *r, struct ct_analysis *an, struct ct_knowledge *k,
			struct ct_burst_log *bursts)
{
	memset(r, 0, sizeof(*r));
	ct_flow_set_init(&r->flows);
	add_flow(&r->flows, "198.18.0.1", "198.18.0.2", 17, 10, 40000, 1700000000000000000ull);
	add_flow(&r->flows, "198.18.0.2", "198.18.0.3", 18, 20, 80000, 1700000000000005000ull);
	r->counters.packets = 30;
	r->counters.bytes = 120000;
	r->counters.first_ts = 1700000000000000000ull;
	r->counters.last_ts = 1700000000000006000ull;
	assert_int_equal(ct_analysis_run(k, r, NULL, 0, bursts, 0.001, an), 0);
	r->source = "<test> & \"quotes\"";
	r->source_kind = "pcap";
	r->clock = "test clock";
	r->nic_gbps = 100;
}

static void free_report(struct ct_report *r, struct ct_analysis *an)
{
	ct_analysis_free(an);
	ct_flow_set_free(&r->flows);
}

/* model -> JSON file -> model: what the sink wrote reads back as the document it wrote. */
static void test_round_trip(void **state)
{
	struct ct_report r;
	struct ct_analysis an = {0};
	struct ct_knowledge k = {0};
	struct ct_burst_log bursts = {0};
	struct ct_report_sink_config cfg = {0};
	struct ct_report_sink *sink;
	json_object *extra = json_object_new_object(), *model, *back, *again;
	char path[128], err[256];

	snprintf(path, sizeof(path), "%s/final.json", dir);
	cfg.json_path = path;
	cfg.report_dir = dir;
	assert_int_equal(ct_report_sink_open(&cfg, &sink, err, sizeof(err)), 0);
	make_report(&r, &an, &k, &bursts);
	json_object_object_add(extra, "port", json_object_new_int(3));
	assert_int_equal(ct_report_add_section(&r, "mirror", extra), 0);

	assert_int_equal(ct_report_sink_put(sink, &r, 0), 0); /* interval 0 */
	assert_int_equal(ct_report_sink_put(sink, &r, 1), 0); /* final */
	model = ct_report_document(&r);
	assert_int_equal(ct_doc_load(path, &back, err, sizeof(err)), 0);
	assert_true(json_object_equal(model, back));
	assert_int_equal(json_object_get_int(json_object_object_get(
				 json_object_object_get(back, "mirror"), "port")),
			 3);
	/* the interval report says so, and is no error */
	snprintf(path, sizeof(path), "%s/commtap-report-000000.json", dir);
	assert_int_equal(ct_doc_load(path, &again, err, sizeof(err)), 0);
	assert_string_equal(ct_doc_str(ct_doc_get(again, "report"), "kind"), "interval");
	assert_false(ct_doc_bool(ct_doc_get(again, "capture"), "complete"));
	assert_null(ct_doc_str(ct_doc_get(again, "capture"), "error"));
	assert_null(ct_doc_get(back, "report"));
	assert_true(ct_doc_bool(ct_doc_get(back, "capture"), "complete"));

	json_object_put(model);
	json_object_put(back);
	json_object_put(again);
	json_object_put(extra);
	ct_report_sink_close(sink);
	free_report(&r, &an);
}

/* Many flows, heavy every 7th, each with periodic bursts; limit: the flows kept in detail. */
static void make_big_report(struct ct_report *r, struct ct_analysis *an, struct ct_knowledge *k,
			    struct ct_burst_log *bursts, size_t n, size_t limit)
{
	const uint64_t t0 = 1700000000000000000ull;
	char dst[32];

	memset(r, 0, sizeof(*r));
	ct_flow_set_init(&r->flows);
	ct_flow_set_limit(&r->flows, limit);
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = i % 7 ? 4096 : 1 << 20;
		struct ct_flow_burst b = {.bytes = bytes / 8, .messages = 1, .packets = 2};

		snprintf(dst, sizeof(dst), "198.19.%zu.%zu", i >> 8, i & 255);
		add_flow(&r->flows, "198.18.0.1", dst, (uint32_t)(i + 1), 16, bytes, t0 + i);
		b.key = r->flows.flows[r->flows.count - 1].key;
		for (int k2 = 0; k2 < 8; k2++) {
			b.start = t0 + i + (uint64_t)k2 * 1000000;
			b.end = b.start + 500;
			assert_int_equal(ct_burst_log_add(bursts, &b), 0);
		}
		r->counters.packets += 16;
		r->counters.bytes += bytes;
	}
	r->counters.first_ts = t0;
	r->counters.last_ts = t0 + 8000000;
	assert_int_equal(ct_analysis_run(k, r, NULL, 0, bursts, 0.0001, an), 0);
	r->source = "big";
	r->clock = "test clock";
}

/* The document's text as ct_report_document_write prints it. */
static char *doc_text(json_object *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(ct_report_document_write(doc, out), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

/*
 * 3,000 flows (some 6 MB of text: the print buffer goes out in several
 * pieces): the streamed document prints the whole document's bytes,
 * written in pieces or printed whole, and /metrics from its brief flows
 * is /metrics from the whole ones.
 */
static void test_streamed_document(void **state)
{
	struct ct_report r;
	struct ct_analysis an = {0};
	struct ct_knowledge k = {0};
	struct ct_burst_log bursts = {0};
	json_object *whole, *streamed, *brief;
	char *t_whole, *t_streamed, *p_whole, *p_brief;
	const int print_flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE;
	const char *printed;
	size_t len;

	make_big_report(&r, &an, &k, &bursts, 3000, 0);
	whole = ct_report_document(&r);
	streamed = ct_report_document_ext(&r, CT_REPORT_DOC_STREAM_FLOWS);
	brief = ct_report_document_ext(&r, CT_REPORT_DOC_STREAM_FLOWS | CT_REPORT_DOC_BRIEF_FLOWS);
	assert_non_null(whole);
	assert_non_null(streamed);
	assert_non_null(brief);
	assert_int_equal(json_object_array_length(json_object_object_get(streamed, "flows")), 0);
	assert_int_equal(json_object_array_length(json_object_object_get(brief, "flows")), 3000);

	t_whole = doc_text(whole);
	t_streamed = doc_text(streamed);
	assert_true(strlen(t_whole) > 4u << 20);
	assert_string_equal(t_streamed, t_whole);
	free(t_streamed);
	t_streamed = doc_text(brief);
	assert_string_equal(t_streamed, t_whole);
	/* printed whole, with no file to write to */
	printed = json_object_to_json_string_ext(streamed, print_flags);
	assert_int_equal(strncmp(printed, t_whole, strlen(t_whole) - 1), 0);

	assert_int_equal(ct_prom_render(whole, NULL, &p_whole, &len), 0);
	assert_int_equal(ct_prom_render(brief, NULL, &p_brief, &len), 0);
	assert_string_equal(p_brief, p_whole);

	free(p_whole);
	free(p_brief);
	free(t_whole);
	free(t_streamed);
	json_object_put(whole);
	json_object_put(streamed);
	json_object_put(brief);
	ct_burst_log_free(&bursts);
	free_report(&r, &an);
}

/* 3,000 flows, 1,000 in detail: the heavy ones kept, the rest summed exactly. */
static void test_flows_summed(void **state)
{
	struct ct_report r;
	struct ct_analysis an = {0};
	struct ct_knowledge k = {0};
	struct ct_burst_log bursts = {0};
	json_object *doc, *flows, *summed;
	uint64_t bytes = 0, packets = 0, heavy = 0;
	char *text, line[96];
	size_t len;

	make_big_report(&r, &an, &k, &bursts, 3000, 1000);
	doc = ct_report_document(&r);
	assert_non_null(doc);
	flows = json_object_object_get(doc, "flows");
	summed = json_object_object_get(doc, "flows_summed");
	assert_non_null(summed);
	assert_true(json_object_array_length(flows) <= 1000);
	for (size_t i = 0; i < json_object_array_length(flows); i++) {
		json_object *f = json_object_array_get_idx(flows, i);

		bytes += ct_doc_u64(f, "bytes");
		packets += ct_doc_u64(f, "packets");
		heavy += ct_doc_u64(f, "bytes") == 1 << 20;
	}
	assert_int_equal(heavy, (3000 + 6) / 7); /* every heavy flow in detail */
	assert_int_equal(ct_doc_u64(summed, "limit"), 1000);
	assert_int_equal(json_object_array_length(flows) + ct_doc_u64(summed, "flows"), 3000);
	assert_int_equal(packets + ct_doc_u64(summed, "packets"), r.counters.packets);
	assert_int_equal(bytes + ct_doc_u64(summed, "bytes"), r.counters.bytes);
	/* /metrics says how many flows and bytes are in no per-flow or class series */
	assert_int_equal(ct_prom_render(doc, NULL, &text, &len), 0);
	snprintf(line, sizeof(line), "\ncommtap_flows_summed_total %llu\n",
		 (unsigned long long)ct_doc_u64(summed, "flows"));
	assert_non_null(strstr(text, line));
	snprintf(line, sizeof(line), "\ncommtap_flows_summed_bytes_total %llu\n",
		 (unsigned long long)ct_doc_u64(summed, "bytes"));
	assert_non_null(strstr(text, line));
	free(text);
	json_object_put(doc);
	ct_burst_log_free(&bursts);
	free_report(&r, &an);
}

static int write_text(FILE *out, void *ctx)
{
	return fputs(ctx, out) < 0 ? -EIO : 0;
}

static int write_then_fail(FILE *out, void *ctx)
{
	fputs("half a rep", out);
	return -ENOSPC;
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* Nothing but the target and its victim: no temporary file left behind. */
static unsigned entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The last landed commit wrote REPORT_DIR/x.json.tmp with fopen("w"): the
 * directory's owner could plant a link there and have a root writer clobber
 * any file. The temporary name is now random and created O_EXCL, and a
 * link at the path itself is refused (it was replaced by the report).
 */
static void test_planted_link(void **state)
{
	char victim[128], target[128], tmp[160], buf[64];

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(target, sizeof(target), "%s/report.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", target);
	assert_int_equal(ct_write_file_atomic(victim, write_text, "precious"), 0);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(symlink(victim, target), 0);
	/* a link at the path itself is refused, the link and its target kept (issue 33) */
	assert_int_equal(ct_write_file_atomic(target, write_text, "report"), -ELOOP);
	assert_int_equal(readlink(target, buf, sizeof(buf)), (ssize_t)strlen(victim));
	unlink(target);
	assert_int_equal(ct_write_file_atomic(target, write_text, "report"), 0);
	slurp(victim, buf, sizeof(buf));
	assert_string_equal(buf, "precious");
	slurp(target, buf, sizeof(buf));
	assert_string_equal(buf, "report");
	unlink(tmp);
	assert_int_equal(entries(), 2);
}

/*
 * A FIFO at the output path is written through, not replaced (issue 33: the
 * rename put a regular file in its place and its reader got nothing).
 */
static void test_fifo_written_through(void **state)
{
	char fifo[128];
	struct stat st;
	int status;
	pid_t pid;

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) { /* the reader: exit 0 when it got the whole report, killed after 10 s */
		char buf[64] = "";
		FILE *f;
		size_t n;

		alarm(10); /* a FIFO replaced by a file has no writer: the open would wait */
		f = fopen(fifo, "r");
		n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		_exit(n == 6 && !memcmp(buf, "report", 6) ? 0 : 1);
	}
	assert_int_equal(ct_write_file_atomic(fifo, write_text, "report"), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static int write_big(FILE *out, void *ctx)
{
	for (int i = 0; i < 1 << 14; i++)
		if (fputs(ctx, out) < 0)
			return -EIO;
	return 0;
}

/*
 * A FIFO whose reader goes away: the write fails with EPIPE (the writer's
 * -EIO replaced by the errno write(2) gave) and SIGPIPE does not kill the
 * producer, nor stays pending.
 */
static void test_fifo_reader_gone(void **state)
{
	char fifo[128], line[65];
	sigset_t pending;
	int status;
	pid_t pid;

	memset(line, 'x', 64);
	line[64] = 0;
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) { /* opens, then leaves without reading (killed after 10 s) */
		int fd;

		alarm(10);
		fd = open(fifo, O_RDONLY);
		_exit(fd < 0);
	}
	/* 1 MiB: more than a pipe holds, so some write meets the closed end */
	assert_int_equal(ct_write_file_atomic(fifo, write_big, line), -EPIPE);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(sigpending(&pending), 0);
	assert_false(sigismember(&pending, SIGPIPE));
}

static void test_failed_write_keeps_previous(void **state)
{
	char target[128], buf[64];

	snprintf(target, sizeof(target), "%s/report.json", dir);
	assert_int_equal(ct_write_file_atomic(target, write_text, "whole"), 0);
	assert_int_equal(ct_write_file_atomic(target, write_then_fail, NULL), -ENOSPC);
	slurp(target, buf, sizeof(buf));
	assert_string_equal(buf, "whole");
	assert_int_equal(entries(), 1);
}

static void test_output_is_input(void **state)
{
	struct ct_report_sink_config cfg = {0};
	struct ct_report_sink *sink = NULL;
	char input[128], alias[128], err[256];

	snprintf(input, sizeof(input), "%s/capture.pcap", dir);
	snprintf(alias, sizeof(alias), "%s/./capture.pcap", dir);
	assert_int_equal(ct_write_file_atomic(input, write_text, "pcap"), 0);
	cfg.input_path = input;
	cfg.json_path = alias;
	assert_int_equal(ct_report_sink_open(&cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_null(sink);
	assert_non_null(strstr(err, "is the input"));
}

static void test_numbering_resumes(void **state)
{
	struct ct_report r;
	struct ct_analysis an = {0};
	struct ct_knowledge k = {0};
	struct ct_burst_log bursts = {0};
	struct ct_report_sink_config cfg = {0};
	struct ct_report_sink *sink;
	char path[128], err[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/commtap-report-000007.json", dir);
	assert_int_equal(ct_write_file_atomic(path, write_text, "{}"), 0);
	cfg.report_dir = dir;
	cfg.resume_numbering = 1;
	cfg.final_in_dir = 1;
	assert_int_equal(ct_report_sink_open(&cfg, &sink, err, sizeof(err)), 0);
	make_report(&r, &an, &k, &bursts);
	assert_int_equal(ct_report_sink_put(sink, &r, 0), 0);
	assert_int_equal(r.seq, 8);
	assert_int_equal(ct_report_sink_put(sink, &r, 1), 0);
	snprintf(path, sizeof(path), "%s/commtap-report-000008.json", dir);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/commtap-report-final.json", dir);
	assert_int_equal(stat(path, &st), 0);
	ct_report_sink_close(sink);
	free_report(&r, &an);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_written_through, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_reader_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_write_keeps_previous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_is_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numbering_resumes, setup, teardown),
		cmocka_unit_test(test_streamed_document),
		cmocka_unit_test(test_flows_summed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
