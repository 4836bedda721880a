// SPDX-License-Identifier: MIT
/*
 * export/ on documents made here: the exposition's label sets stay bounded
 * and escaped whatever the report holds, the merge deduplicates and remaps,
 * odd documents (wrong types, out-of-range references) are drawn without a
 * crash, and the /metrics server refuses bad listen addresses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "html.h"
#include "merge.h"
#include "metrics_server.h"
#include "prom.h"
#include "report_doc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CT_HTML_MAX_HOSTS_DRAWN 64 /* export/html_internal.h */

static json_object *flow(const char *src, const char *dst, unsigned qpn, uint64_t bytes,
			 const char *cls)
{
	json_object *f = json_object_new_object();

	json_object_object_add(f, "transport", json_object_new_string("roce"));
	json_object_object_add(f, "src", json_object_new_string(src));
	json_object_object_add(f, "dst", json_object_new_string(dst));
	json_object_object_add(f, "qpn", json_object_new_uint64(qpn));
	json_object_object_add(f, "packets", json_object_new_uint64(bytes / 1000 + 1));
	json_object_object_add(f, "bytes", json_object_new_uint64(bytes));
	json_object_object_add(f, "messages", json_object_new_uint64(bytes / 4096));
	json_object_object_add(f, "first_ts", json_object_new_uint64(1700000000000000000ull + qpn));
	json_object_object_add(f, "class", json_object_new_string(cls));
	return f;
}

static json_object *report(json_object *flows)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "schema", json_object_new_string("commtap.report/v1"));
	json_object_object_add(r, "flows", flows);
	return r;
}

static size_t series(const char *text, const char *name, uint64_t *sum)
{
	size_t n = 0, len = strlen(name);

	*sum = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, name, len) && (l[len] == '{' || l[len] == ' ')) {
			const char *end = l + strcspn(l, "\n"), *v = end;

			while (v > l && v[-1] != ' ')
				v--;
			n++;
			*sum += strtoull(v, NULL, 10);
		}
	}
	return n;
}

static json_object *job_json(const char *hosts_csv, double period, const char *cls, uint64_t bytes)
{
	json_object *j = json_object_new_object(), *hosts = json_object_new_array();
	json_object *cb = json_object_new_object();
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", hosts_csv);
	for (char *h = strtok_r(buf, ",", &save); h; h = strtok_r(NULL, ",", &save))
		json_object_array_add(hosts, json_object_new_string(h));
	json_object_object_add(j, "hosts", hosts);
	json_object_object_add(j, "iteration_period_s", json_object_new_double(period));
	json_object_object_add(j, "period_confidence", json_object_new_double(0.9));
	json_object_object_add(j, "iterations", json_object_new_uint64(10));
	json_object_object_add(cb, cls, json_object_new_uint64(bytes));
	json_object_object_add(j, "class_bytes", cb);
	return j;
}

/* A report of n_jobs jobs (10.0.J.1, 10.0.J.2) at a vantage, one flow each. */
static json_object *fleet_report(const char *format, const char *file, size_t n_jobs,
				 const char *profile)
{
	json_object *flows = json_object_new_array(), *jobs = json_object_new_array();
	json_object *cap = json_object_new_object(), *doc;

	for (size_t j = 0; j < n_jobs; j++) {
		char a[32], b[32], csv[64];
		json_object *f, *per = json_object_new_object();

		snprintf(a, sizeof(a), "10.0.%zu.1", j);
		snprintf(b, sizeof(b), "10.0.%zu.2", j);
		snprintf(csv, sizeof(csv), "%s,%s", a, b);
		json_object_array_add(jobs, job_json(csv, 0.5 + (double)j, "DP", 1000 + j));
		f = flow(a, b, (unsigned)j, 1000 + j, "DP");
		json_object_object_add(per, "job", json_object_new_int((int)j));
		json_object_object_add(f, "periodicity", per);
		json_object_array_add(flows, f);
	}
	doc = report(flows);
	json_object_object_add(cap, "format", json_object_new_string(format));
	json_object_object_add(cap, "file", json_object_new_string(file));
	json_object_object_add(doc, "capture", cap);
	json_object_object_add(doc, "jobs", jobs);
	if (profile) {
		json_object *c = json_object_new_object();

		json_object_object_add(c, "profile", json_object_new_string(profile));
		json_object_object_add(doc, "classification", c);
	}
	return doc;
}

/* The ct_job label of the n-th commtap_job_period_seconds series ("" if none). */
static void nth_job(const char *text, int n, char *out, size_t len)
{
	const char *key = "commtap_job_period_seconds{ct_job=\"", *at = text;

	out[0] = 0;
	for (int i = 0; i <= n && at; i++) {
		at = strstr(at, key);
		if (at && i < n)
			at += strlen(key);
	}
	if (at)
		snprintf(out, len, "%.*s", (int)strcspn(at + strlen(key), "\""), at + strlen(key));
}

/*
 * ct_job: a job gets the same name at a host agent and at a mirror (its
 * hosts hashed), another job another; the profile names the busiest job;
 * past 8 jobs the rest is _other. vantage names the probe's kind and source.
 */
static void test_prom_fleet_labels(void **state)
{
	json_object *host = fleet_report("ebpf", "eth0", 2, NULL);
	json_object *mirror = fleet_report("dpdk", "net_mlx5", 10, NULL);
	json_object *named = fleet_report("pcap", "/tmp/x/host-a.pcap", 2, "gpt-3b");
	char *t1, *t2, *t3, j0[96], j1[96], m0[96], m1[96], m8[96], n0[96], n1[96];
	size_t len;
	uint64_t sum;

	(void)state;
	assert_int_equal(ct_prom_render(host, NULL, &t1, &len), 0);
	assert_int_equal(ct_prom_render(mirror, NULL, &t2, &len), 0);
	assert_int_equal(ct_prom_render(named, NULL, &t3, &len), 0);
	nth_job(t1, 0, j0, sizeof(j0));
	nth_job(t1, 1, j1, sizeof(j1));
	nth_job(t2, 0, m0, sizeof(m0));
	nth_job(t2, 1, m1, sizeof(m1));
	nth_job(t2, 8, m8, sizeof(m8));
	nth_job(t3, 0, n0, sizeof(n0));
	nth_job(t3, 1, n1, sizeof(n1));
	assert_int_equal(strlen(j0), 9);
	assert_int_equal(j0[0], 'j');
	assert_string_equal(j0, m0);
	assert_string_equal(j1, m1);
	assert_string_not_equal(j0, j1);
	assert_string_equal(m8, ""); /* 8 jobs labelled */
	assert_string_equal(n0, "gpt-3b");
	assert_string_equal(n1, j1);
	assert_non_null(strstr(t1, "vantage=\"host:eth0\""));
	assert_non_null(strstr(t2, "vantage=\"mirror:net_mlx5\""));
	assert_non_null(
		strstr(t3, "commtap_probe_info{vantage=\"pcap:host-a.pcap\",format=\"pcap\""));
	/* every job's bytes are kept: 8 jobs by name, 2 in _other */
	assert_int_equal(series(t2, "commtap_job_class_bytes_total", &sum), 8 + 6);
	assert_true(sum == 10 * 1000 + 45);
	assert_non_null(strstr(t2,
			       "commtap_job_class_bytes_total{ct_job=\"_other\",vantage=\"mirror:"
			       "net_mlx5\",class=\"DP\"} 2017\n"));
	free(t1);
	free(t2);
	free(t3);
	json_object_put(host);
	json_object_put(mirror);
	json_object_put(named);
}

/*
 * A job its labels name (jobs[].name) has that name at every probe, before
 * the profile's and the hosts' hash: two host agents that see different
 * hosts of one ring job, each with a profile, agree; the name is escaped.
 */
static void test_prom_job_named_by_labels(void **state)
{
	json_object *a = fleet_report("ebpf", "eth0", 2, "gpt-3b");
	json_object *b = fleet_report("ebpf", "eth1", 2, NULL);
	char *ta, *tb, ja[96], jb[96], ja1[96], jb1[96];
	size_t len;

	(void)state;
	/* b's first job sees other hosts than a's: unnamed, they differ */
	json_object_array_put_idx(ct_doc_get(ct_doc_at(ct_doc_get(b, "jobs"), 0), "hosts"), 0,
				  json_object_new_string("10.0.0.9"));
	assert_int_equal(ct_prom_render(b, NULL, &tb, &len), 0);
	nth_job(tb, 0, jb, sizeof(jb));
	assert_string_not_equal(jb, "");
	assert_int_equal(jb[0], 'j');
	free(tb);
	json_object_object_add(ct_doc_at(ct_doc_get(a, "jobs"), 0), "name",
			       json_object_new_string("slurm:4242 \"a\""));
	json_object_object_add(ct_doc_at(ct_doc_get(b, "jobs"), 0), "name",
			       json_object_new_string("slurm:4242 \"a\""));
	assert_int_equal(ct_prom_render(a, NULL, &ta, &len), 0);
	assert_int_equal(ct_prom_render(b, NULL, &tb, &len), 0);
	nth_job(ta, 0, ja, sizeof(ja));
	nth_job(tb, 0, jb, sizeof(jb));
	nth_job(ta, 1, ja1, sizeof(ja1));
	nth_job(tb, 1, jb1, sizeof(jb1));
	assert_string_equal(ja, "slurm:4242 \\");
	assert_non_null(strstr(ta, "ct_job=\"slurm:4242 \\\"a\\\"\",vantage=\"host:eth0\""));
	assert_non_null(strstr(tb, "ct_job=\"slurm:4242 \\\"a\\\"\",vantage=\"host:eth1\""));
	assert_string_equal(ja1, jb1); /* the unnamed second job: its hosts' hash */
	free(ta);
	free(tb);
	json_object_put(a);
	json_object_put(b);
}

/* A straggler at host, confidence 0.9, 3 ms late, in doc's anomalies section. */
static void add_straggler(json_object *doc, const char *host)
{
	json_object *a = json_object_new_object(), *list = json_object_new_array();
	json_object *f = json_object_new_object();

	json_object_object_add(f, "kind", json_object_new_string("straggler"));
	json_object_object_add(f, "scope", json_object_new_string("host"));
	json_object_object_add(f, "host", json_object_new_string(host));
	json_object_object_add(f, "delay_s", json_object_new_double(0.003));
	json_object_object_add(f, "confidence", json_object_new_double(0.9));
	json_object_array_add(list, f);
	json_object_object_add(a, "findings", list);
	json_object_object_add(a, "straggler_jitter_s", json_object_new_double(0.0001));
	json_object_object_add(doc, "anomalies", a);
}

/*
 * The anomaly series carry the ct_job of the report's busiest job (the one
 * the detectors read), whatever names it (profile, hosts' hash), or "none"
 * without a job, and the probe's vantage, escaped like every label.
 */
static void test_prom_anomaly_labels(void **state)
{
	json_object *named = fleet_report("pcap", "/tmp/x/host-a.pcap", 2, "gpt \"3b\"");
	json_object *hashed = fleet_report("dpdk", "net_mlx5", 3, NULL);
	json_object *nojob = fleet_report("ebpf", "eth0", 0, NULL);
	char *t1, *t2, *t3, j0[96], want[256];
	size_t len;
	uint64_t sum;

	(void)state;
	add_straggler(named, "10.0.0.2");
	add_straggler(hashed, "10.0.0.2");
	add_straggler(nojob, "10.0.0.2");
	assert_int_equal(ct_prom_render(named, NULL, &t1, &len), 0);
	assert_int_equal(ct_prom_render(hashed, NULL, &t2, &len), 0);
	assert_int_equal(ct_prom_render(nojob, NULL, &t3, &len), 0);
	assert_non_null(strstr(t1, "commtap_anomalies{ct_job=\"gpt \\\"3b\\\"\",vantage=\"pcap:"
				   "host-a.pcap\",kind=\"straggler\"} 1\n"));
	assert_non_null(strstr(t1, "commtap_anomaly_value{ct_job=\"gpt \\\"3b\\\"\",vantage=\"pcap:"
				   "host-a.pcap\",kind=\"straggler\",where=\"10.0.0.2\",unit="
				   "\"delay_s\"} 0.0030000000000000001\n"));
	nth_job(t2, 0, j0, sizeof(j0));
	assert_int_equal(j0[0], 'j');
	snprintf(want, sizeof(want),
		 "commtap_anomaly_confidence{ct_job=\"%s\",vantage=\"mirror:net_mlx5\","
		 "kind=\"straggler\",where=\"10.0.0.2\"} 0.90000000000000002\n",
		 j0);
	assert_non_null(strstr(t2, want));
	snprintf(want, sizeof(want),
		 "commtap_straggler_jitter_seconds{ct_job=\"%s\",vantage=\"mirror:net_mlx5\"} "
		 "0.0001\n",
		 j0);
	assert_non_null(strstr(t2, want));
	assert_non_null(strstr(t3, "commtap_anomalies{ct_job=\"none\",vantage=\"host:eth0\","
				   "kind=\"straggler\"} 1\n"));
	/* one series per kind, and one per finding, whatever the labels */
	assert_int_equal(series(t2, "commtap_anomalies", &sum), CT_ANOMALY_KINDS);
	assert_int_equal(series(t2, "commtap_anomaly_value", &sum), 1);
	free(t1);
	free(t2);
	free(t3);
	json_object_put(named);
	json_object_put(hashed);
	json_object_put(nojob);
}

/* 3000 flows between 600 hosts: a few dozen series, sums kept, values escaped. */
static void test_prom_bounded(void **state)
{
	static const char *const classes[] = {"TP", "PP", "DP", "EP", "EmbTableSyn", "Other"};
	json_object *flows = json_object_new_array(), *doc;
	uint64_t total = 0, sum;
	char src[64], dst[64], *text;
	size_t len;

	(void)state;
	for (unsigned i = 0; i < 3000; i++) {
		snprintf(src, sizeof(src), "10.%u.%u.1", i % 600 / 256, i % 600 % 256);
		snprintf(dst, sizeof(dst), "10.9.%u.2", (i * 7) % 600 % 256);
		json_object_array_add(flows, flow(src, dst, i, 1000 + i * 13, classes[i % 6]));
		total += 1000 + i * 13;
	}
	json_object_array_add(flows, flow("a\"b\\c\nd", "x", 1, 5000000, "made-up class"));
	total += 5000000;
	doc = report(flows);
	assert_int_equal(ct_prom_render(doc, NULL, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_int_equal(series(text, "commtap_flow_bytes_total", &sum), CT_PROM_TOP_FLOWS + 1);
	assert_true(sum == total);
	assert_true(series(text, "commtap_host_pair_bytes_total", &sum) <= CT_PROM_TOP_PAIRS + 6);
	assert_true(sum == total);
	assert_int_equal(series(text, "commtap_class_bytes_total", &sum), 6);
	assert_true(sum == total);
	/* the odd address is the busiest flow: escaped, on one line, class Other */
	assert_non_null(strstr(text,
			       "src=\"a\\\"b\\\\c\\nd\",dst=\"x\",id=\"qp1\",class=\"Other\"} "
			       "5000000\n"));
	free(text);
	json_object_put(doc);
}

/* 600 hosts: the heatmap draws the busiest 63 and one row for the rest. */
static void test_html_many_hosts(void **state)
{
	json_object *flows = json_object_new_array(), *doc;
	char src[64], dst[64], *page, *at;
	size_t len, cells = 0;
	FILE *f;

	(void)state;
	for (unsigned i = 0; i < 600; i++) {
		snprintf(src, sizeof(src), "10.0.%u.%u", i / 256, i % 256);
		snprintf(dst, sizeof(dst), "10.0.%u.%u", (i + 1) % 600 / 256, (i + 1) % 600 % 256);
		json_object_array_add(flows, flow(src, dst, i, 1000 + i, "DP"));
	}
	doc = report(flows);
	f = open_memstream(&page, &len);
	assert_int_equal(ct_html_write(doc, NULL, f), 0);
	fclose(f);
	for (at = page; (at = strstr(at, "<rect class=\"cell\"")); at++)
		cells++;
	assert_int_equal(cells, CT_HTML_MAX_HOSTS_DRAWN * (CT_HTML_MAX_HOSTS_DRAWN - 1));
	assert_non_null(strstr(page, "other hosts (537)"));
	free(page);
	json_object_put(doc);
}

/* GPU data in the report: one bar group per iteration, one segment per class. */
static void test_html_gpu_bars(void **state)
{
	static const char *const doc_text =
		"{\"schema\":\"commtap.report/v1\",\"flows\":[],\"gpu\":{\"iterations\":["
		"{\"t_comp\":0.03,\"t_PP\":0.002,\"t_DP\":0.004,\"overlap\":0.001,"
		"\"bubble\":0.01},{\"t_comp\":0.031,\"t_PP\":0.002,\"bubble\":0."
		"01},"
		"{\"t_comp\":0.029,\"t_TP\":0.005,\"bubble\":0.012}]}}";
	json_object *doc = json_tokener_parse(doc_text);
	char *page, *at;
	size_t len, groups = 0, comm = 0;
	FILE *f;

	(void)state;
	assert_non_null(doc);
	f = open_memstream(&page, &len);
	assert_int_equal(ct_html_write(doc, NULL, f), 0);
	fclose(f);
	for (at = page; (at = strstr(at, "<g class=\"gpu-iter\"")); at++)
		groups++;
	for (at = page; (at = strstr(at, "class=\"gpu-comm\"")); at++)
		comm++;
	assert_int_equal(groups, 3);
	assert_int_equal(comm, 4);
	assert_null(strstr(page, "No GPU data"));
	free(page);
	json_object_put(doc);
}

/* Two vantage points share a connection: one copy of each flow, ids and reverse remapped. */
static void test_merge_dedup(void **state)
{
	json_object *a = json_object_new_array(), *b = json_object_new_array();
	json_object *docs[2], *m, *fl;
	const char *names[2] = {"a.json", "b.json"};
	char key[160];

	(void)state;
	json_object_array_add(a, flow("10.0.0.1", "10.0.0.2", 7, 900, "DP"));
	json_object_array_add(a, flow("10.0.0.2", "10.0.0.1", 8, 50, "DP"));
	json_object_object_add(json_object_array_get_idx(a, 0), "reverse", json_object_new_int(1));
	json_object_object_add(json_object_array_get_idx(a, 1), "reverse", json_object_new_int(0));
	json_object_array_add(b, flow("10.0.0.3", "10.0.0.4", 9, 100, "PP"));
	json_object_array_add(b, flow("10.0.0.1", "10.0.0.2", 7, 1000, "DP")); /* saw more */
	docs[0] = report(a);
	docs[1] = report(b);
	assert_int_equal(ct_merge_reports(docs, names, 2, &m), 0);
	fl = ct_doc_get(m, "flows");
	assert_int_equal(ct_doc_len(fl), 3);
	for (size_t i = 0; i < 3; i++) {
		json_object *f = ct_doc_at(fl, i);

		assert_int_equal(ct_doc_u64(f, "id"), i);
		ct_doc_flow_key(f, key, sizeof(key));
		if (!strcmp(key, "roce 10.0.0.1 10.0.0.2 7")) {
			assert_int_equal(ct_doc_u64(f, "bytes"), 1000);
			/* b's copy has no reverse: the pair is not invented */
			assert_null(ct_doc_get(f, "reverse"));
		} else if (!strcmp(key, "roce 10.0.0.2 10.0.0.1 8")) {
			json_object *rev = ct_doc_at(fl, ct_doc_u64(f, "reverse"));

			ct_doc_flow_key(rev, key, sizeof(key));
			assert_string_equal(key, "roce 10.0.0.1 10.0.0.2 7");
		}
	}
	assert_int_equal(ct_doc_len(ct_doc_get(ct_doc_get(m, "capture"), "vantage_points")), 2);
	json_object_put(m);
	json_object_put(docs[0]);
	json_object_put(docs[1]);
}

/* An address pair's flow of copies cut before their QPN (qpn null, qpn_cut the reason). */
static json_object *cut_flow(const char *src, const char *dst, const char *reason, uint64_t bytes)
{
	json_object *f = flow(src, dst, 0, bytes, "Other");

	json_object_object_add(f, "qpn", NULL);
	json_object_object_add(f, "qpn_cut", json_object_new_string(reason));
	return f;
}

/*
 * Cut copies' flows merge by address pair and reason: not with QP 0 nor with
 * the same pair cut elsewhere.
 */
static void test_merge_keeps_cut_flows_apart(void **state)
{
	json_object *a = json_object_new_array(), *b = json_object_new_array();
	json_object *docs[2], *m, *fl;
	const char *names[2] = {"a.json", "b.json"};
	char key[160];
	unsigned seen = 0;

	(void)state;
	json_object_array_add(a, cut_flow("2001:db8::1", "2001:db8::2", "bth_truncated", 1500));
	json_object_array_add(a, flow("2001:db8::1", "2001:db8::2", 0, 700, "Other"));
	json_object_array_add(b, cut_flow("2001:db8::1", "2001:db8::2", "bth_truncated", 2900));
	json_object_array_add(b, cut_flow("2001:db8::1", "2001:db8::2", "udp_truncated", 300));
	docs[0] = report(a);
	docs[1] = report(b);
	assert_int_equal(ct_merge_reports(docs, names, 2, &m), 0);
	fl = ct_doc_get(m, "flows");
	assert_int_equal(ct_doc_len(fl), 3);
	for (size_t i = 0; i < 3; i++) {
		json_object *f = ct_doc_at(fl, i);

		ct_doc_flow_key(f, key, sizeof(key));
		if (!strcmp(key, "roce 2001:db8::1 2001:db8::2 cut:bth_truncated")) {
			/* the copy with more packets */
			assert_int_equal(ct_doc_u64(f, "bytes"), 2900);
			seen |= 1;
		} else if (!strcmp(key, "roce 2001:db8::1 2001:db8::2 cut:udp_truncated")) {
			assert_int_equal(ct_doc_u64(f, "bytes"), 300);
			seen |= 2;
		} else if (!strcmp(key, "roce 2001:db8::1 2001:db8::2 0")) {
			assert_int_equal(ct_doc_u64(f, "bytes"), 700);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	json_object_put(m);
	json_object_put(docs[0]);
	json_object_put(docs[1]);
}

/*
 * Wrong types: merged; the exposition and the page refuse them with the
 * field named. References that point nowhere: drawn, merged, exposed. No
 * crash.
 */
static void test_odd_documents(void **state)
{
	static const char *const odd =
		"{\"schema\":\"commtap.report/v1\",\"capture\":5,\"job\":[1],\"engine\":\"x\","
		"\"cc\":{\"receivers\":[1,{\"receiver\":7}]},\"pfc\":{\"priorities\":[3]},"
		"\"flows\":[1,\"x\",{},{\"transport\":5,\"reverse\":-3,\"src\":\"10.0.0.1\","
		"\"periodicity\":{\"first_bursts\":[1,[1],[\"a\",2]],\"period_s\":\"q\"},"
		"\"msg_size_hist\":{\"zz\":3,\"18446744073709551615\":1,\"64\":-4}},"
		"{\"transport\":\"roce\",\"src\":\"::1\",\"dst\":\"10.0.0.1\",\"reverse\":99,"
		"\"class\":\"PP\",\"bytes\":1e30}],\"gpu\":{\"iterations\":[{},{\"t_PP\":{\"ZZ\":"
		"1}}]}}";
	static const char *const odd_refs =
		"{\"schema\":\"commtap.report/v1\",\"job\":{\"periodic\":true,"
		"\"iteration_period_s\":1e300,\"iteration_starts\":[9,3]},\"flows\":[{},"
		"{\"transport\":\"roce\",\"src\":\"::1\",\"dst\":\"10.0.0.1\",\"reverse\":99,"
		"\"class\":\"made-up\",\"operation\":\"Juggle\",\"bytes\":1e30,"
		"\"periodicity\":{\"first_bursts\":[[5,1,3],[1,2,3,4]],\"job\":7},"
		"\"msg_size_hist\":{\"zz\":3,\"18446744073709551615\":1}}],"
		"\"cc\":{\"receivers\":[{\"receiver\":\"::1\",\"class\":\"all\"}]},"
		"\"gpu\":{\"iterations\":[{},{\"t_PP\":1,\"t_iter\":-1}],\"communicators\":[{}]},"
		"\"anomalies\":{\"findings\":[{\"kind\":\"rhythm\",\"scope\":\"job\","
		"\"per_iteration\":[{\"iteration\":99}]}]}}";
	json_object *docs[2], *m;
	const char *names[2] = {"odd", "odd2"};
	char err[256], *text, *page;
	struct ct_rep rep;
	size_t len;
	FILE *f;

	(void)state;
	for (int i = 0; i < 2; i++) {
		docs[i] = json_tokener_parse(odd);
		assert_non_null(docs[i]);
		assert_int_equal(ct_doc_check(docs[i], names[i], err, sizeof(err)), 0);
	}
	assert_int_equal(ct_merge_reports(docs, names, 2, &m), 0);
	/* the typed reader refuses them, naming the file and the field */
	assert_int_equal(ct_prom_render(m, NULL, &text, &len), -EINVAL);
	assert_null(text);
	assert_int_equal(ct_prom_render(docs[0], NULL, &text, &len), -EINVAL);
	assert_int_equal(ct_rep_read(docs[0], "odd", &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "odd: capture: not an object");
	assert_int_equal(ct_rep_read(m, "merged", &rep, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "merged: flows[1].transport: not a string");
	for (int i = 0; i < 2; i++) {
		f = open_memstream(&page, &len);
		assert_int_equal(ct_html_write(i ? m : docs[0], NULL, f), -EINVAL);
		fclose(f);
		assert_int_equal(len, 0);
		free(page);
	}
	json_object_put(m);
	json_object_put(docs[0]);
	json_object_put(docs[1]);
	/* of the right types, pointing nowhere: drawn, merged, exposed */
	for (int i = 0; i < 2; i++) {
		docs[i] = json_tokener_parse(odd_refs);
		assert_non_null(docs[i]);
	}
	assert_int_equal(ct_merge_reports(docs, names, 2, &m), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(ct_prom_render(i ? m : docs[0], NULL, &text, &len), 0);
		free(text);
		f = open_memstream(&page, &len);
		assert_int_equal(ct_html_write(i ? m : docs[0], NULL, f), 0);
		fclose(f);
		assert_non_null(strstr(page, "</html>"));
		free(page);
	}
	json_object_put(m);
	json_object_put(docs[0]);
	json_object_put(docs[1]);
	docs[0] = json_tokener_parse("[1]");
	assert_int_not_equal(ct_doc_check(docs[0], "arr", err, sizeof(err)), 0);
	json_object_put(docs[0]);
}

/* A report whose one finding is a straggler at host from onset_s on, for 2 iterations of 0.1 s. */
static json_object *straggler_at(const char *host, double onset_s, double confidence)
{
	json_object *doc = json_object_new_object(), *a = json_object_new_object();
	json_object *list = json_object_new_array(), *f = json_object_new_object();

	json_object_object_add(f, "kind", json_object_new_string("straggler"));
	json_object_object_add(f, "scope", json_object_new_string("host"));
	json_object_object_add(f, "host", json_object_new_string(host));
	json_object_object_add(f, "delay_s", json_object_new_double(0.003));
	json_object_object_add(f, "confidence", json_object_new_double(confidence));
	json_object_object_add(f, "onset_iteration", json_object_new_int(1));
	json_object_object_add(f, "onset_ns", json_object_new_uint64((uint64_t)(onset_s * 1e9)));
	json_object_object_add(f, "iterations_since_onset", json_object_new_int(2));
	json_object_array_add(list, f);
	json_object_object_add(a, "period_s", json_object_new_double(0.1));
	json_object_object_add(a, "findings", list);
	json_object_object_add(doc, "anomalies", a);
	json_object_object_add(doc, "flows", json_object_new_array());
	return doc;
}

/*
 * Findings of several reports: one per kind, place and overlapping window
 * (in time), the most confident copy kept, its sources named; a report
 * whose section does not read is named with the field.
 */
static void test_merge_findings(void **state)
{
	json_object *docs[5] = {
		straggler_at("198.18.0.1", 1.0, 0.6),  /* 1.0 .. 1.2 s */
		straggler_at("198.18.0.1", 1.15, 0.8), /* overlaps: the same, more confident */
		straggler_at("198.18.0.1", 5.0, 0.7),  /* later: another */
		straggler_at("198.18.0.2", 1.0, 0.5),  /* elsewhere: another */
		json_tokener_parse("{\"anomalies\":{\"findings\":[{\"confidence\":\"high\"}]}}"),
	};
	const char *names[5] = {"a", "b", "c", "d", "e"};
	json_object *m, *list, *f;

	(void)state;
	assert_int_equal(ct_merge_anomalies(docs, names, 5, 0, &m), 0);
	list = ct_doc_get(m, "findings");
	assert_int_equal(ct_doc_len(list), 3);
	/* by confidence: b's copy (a, b), c's, d's */
	f = ct_doc_at(list, 0);
	assert_float_equal(ct_doc_num(f, "confidence"), 0.8, 1e-12);
	assert_string_equal(json_object_to_json_string(ct_doc_get(f, "sources")),
			    "[ \"a\", \"b\" ]");
	assert_string_equal(json_object_to_json_string(ct_doc_get(ct_doc_at(list, 1), "sources")),
			    "[ \"c\" ]");
	assert_string_equal(ct_doc_str(ct_doc_at(list, 2), "host"), "198.18.0.2");
	assert_string_equal(json_object_get_string(ct_doc_at(ct_doc_get(m, "unread"), 0)),
			    "e: anomalies.findings[0].confidence: not a number");
	json_object_put(m);
	/* none has the section: none in the merge */
	assert_int_equal(ct_merge_anomalies(&docs[4], names, 0, 0, &m), 0);
	assert_null(m);
	for (int i = 0; i < 5; i++)
		json_object_put(docs[i]);
}

static void test_listen_addresses(void **state)
{
	static const char *const bad[] = {"",	      "nowhere:80", "1.2.3.4:", "1.2.3.4:65536",
					  "[::1",     "[::1]x",	    "::1:80",	"127.0.0.1:-1",
					  "localhost"};
	struct ct_metrics_server *s;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ct_metrics_server_start(bad[i], &s, err, sizeof(err)), -EINVAL);
		assert_null(s);
		assert_non_null(strstr(err, "is not ADDR:PORT"));
	}
	assert_int_equal(ct_metrics_server_start("127.0.0.1:0", &s, err, sizeof(err)), 0);
	assert_int_not_equal(ct_metrics_server_port(s), 0);
	assert_int_equal(ct_metrics_server_publish(s, "a 1\n", 4), 0);
	ct_metrics_server_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prom_bounded),
		cmocka_unit_test(test_prom_fleet_labels),
		cmocka_unit_test(test_prom_anomaly_labels),
		cmocka_unit_test(test_prom_job_named_by_labels),
		cmocka_unit_test(test_html_many_hosts),
		cmocka_unit_test(test_html_gpu_bars),
		cmocka_unit_test(test_merge_dedup),
		cmocka_unit_test(test_merge_keeps_cut_flows_apart),
		cmocka_unit_test(test_odd_documents),
		cmocka_unit_test(test_merge_findings),
		cmocka_unit_test(test_listen_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
