// SPDX-License-Identifier: MIT
/*
 * The anomalies as Prometheus series (export/prom_anomaly.c): counted per
 * kind, the CT_PROM_TOP_ANOMALIES most confident with their own series,
 * each series led by the caller's labels (the fleet's ct_job and vantage).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "prom_anomaly.h"

static size_t lines_with(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, what)); p++)
		if (p == text || p[-1] == '\n')
			n++;
	return n;
}

/* 20 stragglers of rising confidence and one loss on a link (the most confident). */
static json_object *report(void)
{
	json_object *doc = json_object_new_object(), *a = json_object_new_object();
	json_object *list = json_object_new_array(), *f;

	for (int i = 0; i < 20; i++) {
		char host[32];

		f = json_object_new_object();
		snprintf(host, sizeof(host), "198.18.0.%d", i + 1);
		json_object_object_add(f, "kind", json_object_new_string("straggler"));
		json_object_object_add(f, "scope", json_object_new_string("host"));
		json_object_object_add(f, "host", json_object_new_string(host));
		json_object_object_add(f, "delay_s", json_object_new_double(0.001 * (i + 1)));
		json_object_object_add(f, "confidence", json_object_new_double(0.04 * (i + 1)));
		json_object_array_add(list, f);
	}
	f = json_object_new_object();
	json_object_object_add(f, "kind", json_object_new_string("loss"));
	json_object_object_add(f, "scope", json_object_new_string("link"));
	json_object_object_add(f, "src", json_object_new_string("198.18.0.1"));
	json_object_object_add(f, "dst", json_object_new_string("198.18.0.2"));
	json_object_object_add(f, "loss_signals", json_object_new_double(42));
	json_object_object_add(f, "confidence", json_object_new_double(0.99));
	json_object_array_add(list, f);
	json_object_object_add(a, "findings", list);
	json_object_object_add(a, "straggler_jitter_s", json_object_new_double(0.0002));
	json_object_object_add(doc, "anomalies", a);
	return doc;
}

/* The document read as the exporters read it (report_model.h), then rendered. */
static void render(FILE *out, json_object *doc, const char *labels)
{
	struct ct_rep rep;
	char err[256];

	assert_int_equal(ct_rep_read(doc, "test", &rep, err, sizeof(err)), 0);
	ct_prom_anomalies(out, &rep.anomalies, labels);
	ct_rep_free(&rep);
}

#define FLEET "ct_job=\"gpt-3b\",vantage=\"pcap:a.pcap\""

static void test_bounded_top(void **state)
{
	json_object *doc = report();
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	assert_non_null(out);
	render(out, doc, FLEET);
	assert_int_equal(fclose(out), 0);
	assert_non_null(strstr(text, "commtap_anomalies{" FLEET ",kind=\"straggler\"} 20\n"));
	assert_non_null(strstr(text, "commtap_anomalies{" FLEET ",kind=\"loss\"} 1\n"));
	assert_non_null(strstr(text, "commtap_anomalies{" FLEET ",kind=\"rhythm\"} 0\n"));
	assert_int_equal(lines_with(text, "commtap_anomalies{" FLEET ","), CT_ANOMALY_KINDS);
	assert_int_equal(lines_with(text, "commtap_anomaly_confidence{" FLEET ","),
			 CT_PROM_TOP_ANOMALIES);
	assert_int_equal(lines_with(text, "commtap_anomaly_value{" FLEET ","),
			 CT_PROM_TOP_ANOMALIES);
	/* the most confident first: the loss, then the latest stragglers; the least left out */
	assert_non_null(strstr(text, "commtap_anomaly_confidence{" FLEET
				     ",kind=\"loss\",where=\"198.18.0.1>"
				     "198.18.0.2\"} 0.98999999999999999\n"));
	assert_non_null(strstr(text, "commtap_anomaly_value{" FLEET
				     ",kind=\"straggler\",where=\"198.18.0.20\","
				     "unit=\"delay_s\"} 0.02"));
	assert_null(strstr(text, "where=\"198.18.0.1\""));
	assert_non_null(strstr(text, "commtap_straggler_jitter_seconds{" FLEET "} 0.0002"));
	free(text);
	json_object_put(doc);
}

/* No labels given: the series as they read without a fleet (no empty braces). */
static void test_no_labels(void **state)
{
	json_object *doc = report();
	char *text = NULL;
	size_t len = 0;

	(void)state;
	for (int empty = 0; empty < 2; empty++) {
		FILE *out = open_memstream(&text, &len);

		assert_non_null(out);
		render(out, doc, empty ? "" : NULL);
		assert_int_equal(fclose(out), 0);
		assert_non_null(strstr(text, "commtap_anomalies{kind=\"straggler\"} 20\n"));
		assert_non_null(strstr(text, "commtap_anomaly_confidence{kind=\"loss\",where="));
		assert_non_null(strstr(text, "commtap_anomaly_value{kind=\"straggler\",where="));
		assert_non_null(strstr(text, "\ncommtap_straggler_jitter_seconds 0.0002"));
		assert_null(strstr(text, "{}"));
		assert_null(strstr(text, "{,"));
		free(text);
	}
	json_object_put(doc);
}

static void test_no_section(void **state)
{
	json_object *doc = json_object_new_object();
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	render(out, doc, FLEET);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(len, 0);
	free(text);
	json_object_put(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded_top),
		cmocka_unit_test(test_no_labels),
		cmocka_unit_test(test_no_section),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
