// SPDX-License-Identifier: MIT
/*
 * Agent labels (analysis/labels.c): loading commtap.labels/v1 files, errors
 * that name the file and the JSON path, the lookup by flow key, and labels
 * overriding a profile in ct_classify.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <commtap/classify.h>

#include "flow_builder.h"

#include <commtap/analysis.h>

#define A "198.18.0.1"
#define B "198.18.0.2"

static char dir[64], file[96];

static int make_dir(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/ct-labels-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(file, sizeof(file), "%s/labels.json", dir);
	return 0;
}

static int remove_dir(void **state)
{
	(void)state;
	unlink(file);
	return rmdir(dir);
}

static void write_file(const char *text)
{
	FILE *f = fopen(file, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Loading text must fail with -EINVAL and an error starting with want. */
static void assert_load_error(const char *text, const char *want)
{
	struct ct_labels l;
	char err[512] = "";

	write_file(text);
	assert_int_equal(ct_labels_load(file, &l, err, sizeof(err)), -EINVAL);
	if (strncmp(err, want, strlen(want)))
		fail_msg("error \"%s\", expected it to start with \"%s\"", err, want);
	assert_null(l.l);
	assert_int_equal(l.n, 0);
}

/*
 * Three labels, out of key order: the RoCE flow A -> B QP 0x11 is PP of
 * communicator "pp0", the TCP flow B:40000 -> A:5201 DP, A -> B QP 0x12
 * EP. Each is found by its key; A -> B QP 0x13, B -> A QP 0x11 (the
 * reverse addresses) and the TCP flow's other direction are not labelled.
 */
static void test_load_and_find(void **state)
{
	struct ct_flow_key pp = roce_key(A, B, 0x11), ep = roce_key(A, B, 0x12);
	struct ct_flow_key dp = tcp_key(B, A, 40000, 5201);
	struct ct_flow_key none[] = {roce_key(A, B, 0x13), roce_key(B, A, 0x11),
				     tcp_key(A, B, 5201, 40000)};
	const struct ct_label *l;
	struct ct_labels labels;
	char err[256] = "";

	(void)state;
	write_file("{\"schema\": \"commtap.labels/v1\", \"flows\": [\n"
		   " {\"transport\": \"tcp\", \"src\": \"" B "\", \"dst\": \"" A "\","
		   "  \"sport\": 40000, \"dport\": 5201, \"class\": \"DP\"},\n"
		   " {\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B "\","
		   "  \"qpn\": 18, \"class\": \"EP\"},\n"
		   " {\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B "\","
		   "  \"qpn\": 17, \"class\": \"PP\", \"comm\": \"pp0\"}]}\n");
	assert_int_equal(ct_labels_load(file, &labels, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(labels.n, 3);
	l = ct_labels_find(&labels, &pp);
	assert_non_null(l);
	assert_int_equal(l->cls, CT_CLASS_PP);
	assert_string_equal(l->comm, "pp0");
	l = ct_labels_find(&labels, &ep);
	assert_non_null(l);
	assert_int_equal(l->cls, CT_CLASS_EP);
	assert_string_equal(l->comm, "");
	l = ct_labels_find(&labels, &dp);
	assert_non_null(l);
	assert_int_equal(l->cls, CT_CLASS_DP);
	for (int i = 0; i < 3; i++)
		assert_null(ct_labels_find(&labels, &none[i]));
	ct_labels_free(&labels);
	assert_null(ct_labels_find(&labels, &pp)); /* none left */
	assert_null(ct_labels_find(NULL, &pp));
}

/* A synth truth file has the same list of flows and loads too; the same label twice is one. */
static void test_truth_schema_and_repeats(void **state)
{
	struct ct_flow_key k = roce_key(A, B, 7);
	struct ct_labels labels;
	char err[256] = "";

	(void)state;
	write_file("{\"schema\": \"commtap.truth/v1\", \"flows\": [\n"
		   " {\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B "\", \"qpn\": 7,"
		   "  \"class\": \"EmbTableSyn\"},\n"
		   " {\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B "\", \"qpn\": 7,"
		   "  \"class\": \"EmbTableSyn\"}]}\n");
	assert_int_equal(ct_labels_load(file, &labels, err, sizeof(err)), 0);
	assert_non_null(ct_labels_find(&labels, &k));
	assert_int_equal(ct_labels_find(&labels, &k)->cls, CT_CLASS_EMB);
	ct_labels_free(&labels);
}

#define FLOW(fields) "{\"schema\": \"commtap.labels/v1\", \"flows\": [" fields "]}"
#define GOOD                                                                                       \
	"{\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B                              \
	"\", \"qpn\": 1, \"class\": \"PP\"}"

/* Each error names the file, the JSON path and what is wrong there. */
static void test_errors_name_the_path(void **state)
{
	(void)state;
	assert_load_error("[1, 2]", "labels.json: $: expected a JSON object");
	assert_load_error("{\"schema\": \"commtap.report/v1\", \"flows\": []}",
			  "labels.json: $.schema: expected \"commtap.labels/v1\"");
	assert_load_error("{\"schema\": \"commtap.labels/v1\", \"flows\": {}}",
			  "labels.json: $.flows: expected a list of flows");
	assert_load_error(FLOW(GOOD ", 7"), "labels.json: $.flows[1]: expected an object");
	assert_load_error(FLOW(GOOD ", {\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B
				    "\", \"qpn\": 2, \"class\": \"XP\"}"),
			  "labels.json: $.flows[1]: \"class\": \"XP\" is not one of");
	assert_load_error(FLOW("{\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B
			       "\", \"class\": \"PP\"}"),
			  "labels.json: $.flows[0]: \"qpn\": missing");
	assert_load_error(FLOW("{\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B
			       "\", \"qpn\": 16777216, \"class\": \"PP\"}"),
			  "labels.json: $.flows[0]: \"qpn\": expected an integer in [0, 16777215]");
	assert_load_error(FLOW(GOOD ", " GOOD ", {\"transport\": \"tcp\", \"src\": \"" A
				    "\", \"dst\": \"" B "\", \"sport\": 1, \"class\": \"DP\"}"),
			  "labels.json: $.flows[2]: \"sport\" and \"dport\": both needed");
	assert_load_error(FLOW("{\"transport\": \"udp\", \"src\": \"" A "\", \"dst\": \"" B
			       "\", \"class\": \"DP\"}"),
			  "labels.json: $.flows[0]: \"transport\": \"udp\" is not");
	assert_load_error(FLOW("{\"transport\": \"roce\", \"src\": \"198.18.0.300\", \"dst\": \"" B
			       "\", \"qpn\": 1, \"class\": \"DP\"}"),
			  "labels.json: $.flows[0]: \"src\": \"198.18.0.300\" is not an IPv4");
	assert_load_error(FLOW("{\"transport\": \"roce\", \"dst\": \"" B
			       "\", \"qpn\": 1, \"class\": \"DP\"}"),
			  "labels.json: $.flows[0]: \"src\": expected a string");
	assert_load_error(FLOW(GOOD ", {\"transport\": \"roce\", \"src\": \"" A "\", \"dst\": \"" B
				    "\", \"qpn\": 1, \"class\": \"DP\"}"),
			  "labels.json: $.flows: one flow labelled both PP and DP");
}

/* Not JSON, and no file: the whole path then, and -ENOENT for the missing one. */
static void test_unreadable(void **state)
{
	struct ct_labels l;
	char err[512] = "", want[160];

	(void)state;
	write_file("{\"schema\": ");
	assert_int_equal(ct_labels_load(file, &l, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not valid JSON", file);
	assert_int_equal(strncmp(err, want, strlen(want)), 0);
	assert_int_not_equal(err[strlen(err) - 1], '\n');
	unlink(file);
	assert_int_equal(ct_labels_load(file, &l, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open", file);
	assert_int_equal(strncmp(err, want, strlen(want)), 0);
}

/* Labels an agent builds in memory are found once sorted. */
static void test_in_memory_sorted(void **state)
{
	struct ct_label l[3] = {
		{.key = roce_key(B, A, 3), .cls = CT_CLASS_TP},
		{.key = roce_key(A, B, 9), .cls = CT_CLASS_DP},
		{.key = roce_key(A, B, 2), .cls = CT_CLASS_PP},
	};
	struct ct_labels labels = {l, 3};
	struct ct_flow_key k = roce_key(A, B, 2);

	(void)state;
	ct_labels_sort(&labels);
	assert_non_null(ct_labels_find(&labels, &k));
	assert_int_equal(ct_labels_find(&labels, &k)->cls, CT_CLASS_PP);
	k = roce_key(B, A, 3);
	assert_int_equal(ct_labels_find(&labels, &k)->cls, CT_CLASS_TP);
	k = roce_key(A, B, 9);
	assert_int_equal(ct_labels_find(&labels, &k)->cls, CT_CLASS_DP);
}

/*
 * A profile says host A -> host B carries PP only; the agent labelled the
 * connection's data direction A -> B/0x11 DP: the label wins (DP, by label,
 * confidence 1). Its reverse B -> A/0x22 (paired by its PSNs, fewer
 * bytes) has no label and takes its data direction's class: DP, by
 * connection. A -> B/0x12, unlabelled, is PP by the profile.
 */
static void test_labels_override_profile(void **state)
{
	struct ct_flow_key data = roce_key(A, B, 0x11), back = roce_key(B, A, 0x22);
	struct ct_flow_key other = roce_key(A, B, 0x12);
	struct ct_flow_summary s[3] = {
		summary_of(&data, 1 << 20, T0, T0 + 10 * MS),
		summary_of(&back, 6400, T0, T0 + 10 * MS),
		summary_of(&other, 1 << 20, T0, T0 + 10 * MS),
	};
	struct ct_label label = {.key = data, .cls = CT_CLASS_DP};
	struct ct_labels labels = {&label, 1};
	const struct ct_addr hosts[2] = {addr_of(A), addr_of(B)};
	const struct ct_expect_xfer xfer = {
		.src_host = 0, .dst_host = 1, .cls = CT_CLASS_PP, .phase_end = 0.5, .bytes = 1e6};
	const struct ct_class_expect expect = {"test", 2, hosts, &xfer, 1};
	struct ct_classification c;
	struct ct_flow_set set;
	size_t i;

	(void)state;
	s[0].seen |= CT_SEEN_REQ_PSN;
	s[0].req_first_psn = 100;
	s[0].req_last_psn = 199;
	s[1].seen |= CT_SEEN_RESP_PSN;
	s[1].resp_first_psn = 100;
	s[1].resp_last_psn = 199;
	ct_flow_set_init(&set);
	for (int k = 0; k < 3; k++)
		set_add(&set, &s[k]);
	ct_flow_set_sort(&set);
	ct_flow_set_pair(&set, NULL, 0);
	assert_int_equal(ct_classify(&set, NULL, &labels, &expect, &c), 0);
	assert_string_equal(c.method, "labels");
	i = set_index(&set, &data);
	assert_int_equal(c.flows[i].cls, CT_CLASS_DP);
	assert_int_equal(c.flows[i].source, CT_CLASS_BY_LABEL);
	assert_near(c.flows[i].confidence, 1, 0);
	i = set_index(&set, &back);
	assert_int_equal(c.flows[i].cls, CT_CLASS_DP);
	assert_int_equal(c.flows[i].source, CT_CLASS_BY_CONNECTION);
	i = set_index(&set, &other);
	assert_int_equal(c.flows[i].cls, CT_CLASS_PP);
	assert_int_equal(c.flows[i].source, CT_CLASS_BY_PROFILE);
	ct_classification_free(&c);
	ct_flow_set_free(&set);
}

#define JOB_LABEL(src, dst, qpn, fields)                                                           \
	"{\"transport\": \"roce\", \"src\": \"" src "\", \"dst\": \"" dst "\", \"qpn\": " #qpn     \
	", " fields "}"

/*
 * A label may name the flow's job alone (the class then comes from the
 * traffic); the same flow's class from another label joins it. One flow in
 * two jobs is an error, and so is a job name that is empty, not a string or
 * longer than CT_JOB_NAME_LEN - 1.
 */
static void test_job_labels(void **state)
{
	struct ct_flow_key ab = roce_key(A, B, 7), ba = roce_key(B, A, 8);
	const struct ct_label *l;
	struct ct_labels labels;
	char err[256] = "", long_name[CT_JOB_NAME_LEN + 1], text[512];

	(void)state;
	write_file(FLOW(JOB_LABEL(A, B, 7, "\"job\": \"slurm:4242\"") ", " JOB_LABEL(
		A, B, 7,
		"\"class\": \"PP\", \"comm\": \"pp0\"") ", " JOB_LABEL(B, A, 8,
								       "\"job\": \"slurm:4242\"")));
	assert_int_equal(ct_labels_load(file, &labels, err, sizeof(err)), 0);
	assert_int_equal(labels.n, 2);
	l = ct_labels_find(&labels, &ab);
	assert_non_null(l);
	assert_int_equal(l->no_class, 0);
	assert_int_equal(l->cls, CT_CLASS_PP);
	assert_string_equal(l->comm, "pp0");
	assert_string_equal(l->job, "slurm:4242");
	l = ct_labels_find(&labels, &ba);
	assert_non_null(l);
	assert_int_equal(l->no_class, 1);
	assert_string_equal(l->job, "slurm:4242");
	ct_labels_free(&labels);

	assert_load_error(FLOW(JOB_LABEL(A, B, 7, "\"job\": \"a\"") ", " JOB_LABEL(
				  A, B, 7, "\"job\": \"b\", \"class\": \"DP\"")),
			  "labels.json: $.flows: one flow labelled with two jobs, \"a\" and \"b\"");
	assert_load_error(
		FLOW(JOB_LABEL(A, B, 7, "\"job\": \"\"")),
		"labels.json: $.flows[0]: \"job\": expected a name of 1 to 63 characters");
	assert_load_error(FLOW(JOB_LABEL(A, B, 7, "\"job\": \"none\"")),
			  "labels.json: $.flows[0]: \"job\": \"none\" is reserved");
	assert_load_error(FLOW(JOB_LABEL(A, B, 7, "\"job\": 4242")),
			  "labels.json: $.flows[0]: \"job\": expected a name");
	memset(long_name, 'j', CT_JOB_NAME_LEN);
	long_name[CT_JOB_NAME_LEN] = 0;
	snprintf(text, sizeof(text), FLOW(JOB_LABEL(A, B, 7, "\"job\": \"%s\"")), long_name);
	assert_load_error(text, "labels.json: $.flows[0]: \"job\": expected a name");
	/* neither a class nor a job: the class is what is missing */
	assert_load_error(FLOW(JOB_LABEL(A, B, 7, "\"comm\": \"x\"")),
			  "labels.json: $.flows[0]: \"class\": expected a string");
}

/*
 * Two periodicity jobs; the labels name flows of the first "torch:a" (2 MB)
 * and one of its flows "torch:b" (1 MB, a flow joined to the wrong job),
 * and no flow of the second. The first job is "torch:a", the second has no
 * name; labels that give no class leave the method at the signatures.
 */
static void test_jobs_named_by_labels(void **state)
{
	struct ct_flow_key k[4] = {roce_key(A, B, 1), roce_key(B, A, 2), roce_key(A, B, 3),
				   roce_key("198.18.0.3", "198.18.0.4", 4)};
	struct ct_label l[3] = {
		{.key = k[0], .no_class = 1, .job = "torch:a"},
		{.key = k[1], .no_class = 1, .job = "torch:a"},
		{.key = k[2], .no_class = 1, .job = "torch:b"},
	};
	struct ct_labels labels = {l, 3};
	struct ct_flow_periodicity fp[4];
	struct ct_job jobs[2] = {{.flows = 3}, {.flows = 1}};
	struct ct_periodicity per;
	struct ct_classification c;
	struct ct_flow_set set;

	(void)state;
	ct_flow_set_init(&set);
	for (int i = 0; i < 4; i++) {
		struct ct_flow_summary s = summary_of(&k[i], 1000000, T0, T0 + 10 * MS);

		set_add(&set, &s);
	}
	ct_flow_set_sort(&set);
	ct_flow_set_pair(&set, NULL, 0);
	ct_labels_sort(&labels);
	memset(&per, 0, sizeof(per));
	memset(fp, 0, sizeof(fp));
	for (int i = 0; i < 4; i++)
		fp[set_index(&set, &k[i])].job = i == 3 ? 1 : 0;
	per.flows = fp;
	per.n_flows = 4;
	per.jobs = jobs;
	per.n_jobs = 2;
	assert_int_equal(ct_classify(&set, &per, &labels, NULL, &c), 0);
	assert_string_equal(c.method, "signatures");
	assert_int_equal(c.n_job_names, 2);
	assert_string_equal(c.job_names[0], "torch:a");
	assert_string_equal(c.job_names[1], "");
	ct_classification_free(&c);
	assert_null(c.job_names);
	ct_flow_set_free(&set);
}

/*
 * Two sets joined (an agent's own job names beside the labels it was
 * given): one flow's class from one and job from the other make one label;
 * neither set changes; two jobs for one flow is -EINVAL with the reason.
 */
static void test_join(void **state)
{
	struct ct_flow_key ab = roce_key(A, B, 1), ba = roce_key(B, A, 2);
	struct ct_label given[1] = {{.key = ab, .cls = CT_CLASS_DP}};
	struct ct_label named[2] = {{.key = ab, .no_class = 1, .job = "slurm:7"},
				    {.key = ba, .no_class = 1, .job = "slurm:7"}};
	struct ct_label other[1] = {{.key = ab, .no_class = 1, .job = "slurm:8"}};
	struct ct_labels a = {given, 1}, b = {named, 2}, c = {other, 1}, out;
	const struct ct_label *l;
	char err[256] = "";

	(void)state;
	assert_int_equal(ct_labels_join(&a, &b, &out, err, sizeof(err)), 0);
	assert_int_equal(out.n, 2);
	l = ct_labels_find(&out, &ab);
	assert_non_null(l);
	assert_int_equal(l->no_class, 0);
	assert_int_equal(l->cls, CT_CLASS_DP);
	assert_string_equal(l->job, "slurm:7");
	l = ct_labels_find(&out, &ba);
	assert_non_null(l);
	assert_int_equal(l->no_class, 1);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 2);
	assert_string_equal(given[0].job, "");
	ct_labels_free(&out);
	assert_int_equal(ct_labels_join(&b, &c, &out, err, sizeof(err)), -EINVAL);
	/* in either order: the sort does not keep one */
	assert_non_null(strstr(err, "one flow labelled with two jobs"));
	assert_non_null(strstr(err, "\"slurm:7\""));
	assert_non_null(strstr(err, "\"slurm:8\""));
	assert_null(out.l);
}

static void write_named(const char *name, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void remove_named(const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

#define ONE_LABEL(src, dst, qpn, cls)                                                              \
	"{\"schema\": \"commtap.labels/v1\", \"flows\": [{\"transport\": \"roce\", \"src\": "      \
	"\"" src "\", \"dst\": \"" dst "\", \"qpn\": " #qpn ", \"class\": \"" cls "\"}]}\n"

/*
 * A directory of two hosts' label files (host A's says A -> B QP 17 is PP,
 * host B's says B -> A QP 18 is DP; a note that is no .json is not read)
 * loads as one set of 2 labels. When a third host's file comes in (renamed
 * into the directory, as an agent writes it), ct_knowledge_refresh reads
 * it: 3 labels. A fourth file labelling A -> B QP 17 EP contradicts host
 * A's: the refresh fails, names the directory, and the 3 labels stay.
 */
static void test_directory_of_hosts(void **state)
{
	struct ct_knowledge k = {0};
	struct ct_flow_key ab = roce_key(A, B, 17);
	char err[512] = "", from[160], to[160];
	const struct ct_label *l;

	(void)state;
	write_named("host-a.json", ONE_LABEL(A, B, 17, "PP"));
	write_named("host-b.json", ONE_LABEL(B, A, 18, "DP"));
	write_named("README", "not labels");
	assert_int_equal(ct_knowledge_load(dir, NULL, &k, err, sizeof(err)), 0);
	assert_int_equal(k.labels.n, 2);
	l = ct_labels_find(&k.labels, &ab);
	assert_non_null(l);
	assert_int_equal(l->cls, CT_CLASS_PP);

	/* no change: nothing read again */
	assert_int_equal(ct_knowledge_refresh(&k, err, sizeof(err)), 0);
	assert_int_equal(k.labels.n, 2);
	/* a third host's file renamed in; the directory's time moves on */
	usleep(20000);
	write_named("host-c.tmp", ONE_LABEL("198.18.0.3", A, 19, "EP"));
	snprintf(from, sizeof(from), "%s/host-c.tmp", dir);
	snprintf(to, sizeof(to), "%s/host-c.json", dir);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(ct_knowledge_refresh(&k, err, sizeof(err)), 0);
	assert_int_equal(k.labels.n, 3);

	usleep(20000);
	write_named("host-d.json", ONE_LABEL(A, B, 17, "EP"));
	assert_int_equal(ct_knowledge_refresh(&k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "two files label one flow"));
	assert_non_null(strstr(err, dir));
	assert_int_equal(k.labels.n, 3);

	ct_knowledge_free(&k);
	remove_named("host-a.json");
	remove_named("host-b.json");
	remove_named("host-c.json");
	remove_named("host-d.json");
	remove_named("README");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_and_find),
		cmocka_unit_test(test_truth_schema_and_repeats),
		cmocka_unit_test(test_errors_name_the_path),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_in_memory_sorted),
		cmocka_unit_test(test_labels_override_profile),
		cmocka_unit_test(test_directory_of_hosts),
		cmocka_unit_test(test_job_labels),
		cmocka_unit_test(test_jobs_named_by_labels),
		cmocka_unit_test(test_join),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
