// SPDX-License-Identifier: MIT
/*
 * The advice in the exports: the typed report's loader (report_load.c),
 * the gauges of /metrics (prom_advice.c) and the page's "What would help"
 * panel (html_advice.c), on a document with two jobs: one with every
 * figure, the NIC's rate known; one with too few iterations to say anything.
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

#include "html.h"
#include "prom.h"
#include "report_model.h"

static const char doc_text[] =
	"{\"schema\":\"commtap.report/v1\",\"generator\":\"test\","
	"\"jobs\":[{\"name\":\"bert\",\"hosts\":[\"198.18.0.1\",\"198.18.0.2\"]},"
	"{\"hosts\":[\"198.18.0.3\"]}],"
	"\"advice\":{\"nic_gbps\":100,\"nic_source\":\"option\",\"jobs\":["
	"{\"job\":0,\"iterations\":11,\"iteration_s\":0.1,\"comm_s\":0.0375,\"comm_ratio\":0.375,"
	"\"classes\":{\"DP\":{\"on_s\":0.03,\"comm_ratio\":0.3,\"bytes_per_iteration\":3.75e8,"
	"\"effective_gbps\":50,\"bw_utilization\":0.5,\"on_s_at_nic\":0.015,"
	"\"blocking_receivers\":[{\"receiver\":\"198.18.0.2\",\"ecn_ce_fraction\":0.05,"
	"\"cnp_per_s_on\":0,\"retransmits\":0,\"incast_degree\":1,\"peak_over_nic\":0.5}]},"
	"\"PP\":{\"on_s\":0.015,\"comm_ratio\":0.15,\"bytes_per_iteration\":1.875e8,"
	"\"effective_gbps\":100,\"bw_utilization\":1,\"on_s_at_nic\":0.015,"
	"\"blocking_receivers\":[]}},"
	"\"scheduling\":{\"source\":\"wire\",\"t_iter\":0.1,\"t_comp\":0.055,\"t_comm\":0.045,"
	"\"overlap\":0,\"best_iteration_s\":0.055,\"speedup_bound\":1.8181818,"
	"\"comp_to_comm\":1.2222,\"regime\":\"balanced\",\"push_pull\":{\"push_s\":0.033,"
	"\"pull_s\":0.033,\"best_iteration_s\":0.034,\"speedup_bound\":2.9411}},"
	"\"network\":{\"comm_s_at_nic\":0.03,\"iteration_s_at_nic\":0.085,\"speedup\":1.17647}},"
	"{\"job\":1,\"reason\":\"fewer than two iteration starts\"}]}}";

static json_object *doc(void)
{
	json_object *d = json_tokener_parse(doc_text);

	assert_non_null(d);
	return d;
}

static void test_load(void **state)
{
	json_object *d = doc();
	struct ct_rep rep;
	char err[256];
	const struct ct_rep_advice_job *j;

	(void)state;
	assert_int_equal(ct_rep_read(d, "t", &rep, err, sizeof(err)), 0);
	assert_true(rep.advice.present && rep.advice.has_nic);
	assert_string_equal(rep.advice.nic_source, "option");
	assert_int_equal(rep.advice.n_jobs, 2);
	j = &rep.advice.jobs[0];
	assert_true(j->has_network && j->has_comp_to_comm);
	assert_true(j->cls[CT_CLASS_DP].present && j->cls[CT_CLASS_PP].present);
	assert_false(j->cls[CT_CLASS_TP].present);
	assert_int_equal(j->cls[CT_CLASS_DP].n_blockers, 1);
	assert_string_equal(j->cls[CT_CLASS_DP].blockers[0].receiver, "198.18.0.2");
	assert_true(j->speedup_bound > 1.81 && j->speedup_bound < 1.82);
	assert_true(j->has_push_pull && j->speedup_bound3 > 2.94 && j->speedup_bound3 < 2.95);
	assert_non_null(rep.advice.jobs[1].reason);
	ct_rep_free(&rep);
	/* a figure of the wrong type is an error naming it */
	json_object_object_add(
		json_object_object_get(
			json_object_array_get_idx(
				json_object_object_get(json_object_object_get(d, "advice"), "jobs"),
				0),
			"scheduling"),
		"speedup_bound", json_object_new_string("fast"));
	assert_int_not_equal(ct_rep_read(d, "t", &rep, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "advice.jobs[0].scheduling.speedup_bound"));
	json_object_put(d);
}

static void test_metrics(void **state)
{
	json_object *d = doc();
	char *text;
	size_t len;

	(void)state;
	assert_int_equal(ct_prom_render(d, NULL, &text, &len), 0);
	assert_non_null(strstr(text, "# TYPE commtap_advice_scheduling_speedup_bound gauge\n"));
	assert_non_null(strstr(text, "commtap_advice_scheduling_speedup_bound{ct_job=\"bert\","));
	assert_non_null(strstr(text, "commtap_advice_network_speedup{ct_job=\"bert\","));
	assert_non_null(strstr(text, ",class=\"DP\"} 0.5\n"));	  /* bw_utilization */
	assert_non_null(strstr(text, ",class=\"all\"} 0.375\n")); /* comm_ratio */
	assert_non_null(strstr(text, "commtap_advice_blocking_receivers{ct_job=\"bert\","));
	assert_non_null(strstr(text, "commtap_advice_push_pull_speedup_bound{ct_job=\"bert\","));
	/* the job that says nothing has no series */
	assert_null(strstr(text, "commtap_advice_comm_ratio{ct_job=\"198.18.0.3"));
	free(text);
	json_object_put(d);
}

static void test_page(void **state)
{
	json_object *d = doc();
	char *page = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&page, &len);

	(void)state;
	assert_non_null(out);
	assert_int_equal(ct_html_write(d, NULL, out), 0);
	fclose(out);
	assert_non_null(strstr(page, "<h2>What would help</h2>"));
	assert_non_null(strstr(page, "<b>1.82&times;</b>"));
	assert_non_null(strstr(page, "<b>1.18&times;</b>"));
	assert_non_null(strstr(page, "Parameter server: pushes and pulls"));
	assert_non_null(strstr(page, "<b>2.94&times;</b>"));
	assert_non_null(strstr(
		page,
		"198.18.0.2 (CE 5.0%, 0 CNP/s on, 0 retransmits, senders at once: 1, peak 50%"));
	assert_non_null(strstr(page, "fewer than two iteration starts"));
	free(page);
	json_object_put(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
