// SPDX-License-Identifier: MIT
/*
 * From flows and bursts to an analysed report, for every producer: sort,
 * pair, periodicity, classification, the cc figures per class.
 */
#include <commtap/analysis.h>
#include <commtap/log.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int ct_knowledge_load(const char *labels_path, const char *profile_path, struct ct_knowledge *k,
		      char *err, size_t errlen)
{
	char why[768];
	int rc;

	if (labels_path) {
		struct stat st;

		if (!stat(labels_path, &st) && S_ISDIR(st.st_mode)) {
			k->labels_dir = labels_path;
			k->labels_mtime = st.st_mtim;
			rc = ct_labels_load_dir(labels_path, &k->labels, why, sizeof(why));
		} else {
			rc = ct_labels_load(labels_path, &k->labels, why, sizeof(why));
		}
		if (rc) {
			snprintf(err, errlen, "--labels %s", why);
			return rc;
		}
	}
	if (!profile_path)
		return 0;
	rc = ct_profile_load(profile_path, &k->profile, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "--profile %s", why);
		return rc;
	}
	k->have_profile = 1;
	rc = ct_predict(&k->profile, &k->prediction);
	if (rc) {
		snprintf(err, errlen, "--profile %s: cannot predict its traffic: %s", profile_path,
			 ct_predict_strerror(&k->prediction, rc));
		return rc;
	}
	k->xfers = calloc(k->prediction.n_xfers + 1, sizeof(*k->xfers));
	if (!k->xfers) {
		snprintf(err, errlen, "--profile %s: out of memory", profile_path);
		return -ENOMEM;
	}
	/* the transfers that cross a NIC, placed in the iteration */
	for (size_t i = 0; i < k->prediction.n_xfers; i++) {
		const struct ct_transfer *x = &k->prediction.xfers[i];
		double t = k->prediction.t_iter;

		if (x->src_host == x->dst_host)
			continue;
		k->xfers[k->expect.n_xfers++] = (struct ct_expect_xfer){
			.src_rank = x->src_rank,
			.dst_rank = x->dst_rank,
			.src_host = x->src_host,
			.dst_host = x->dst_host,
			.cls = x->cls,
			.phase_start = x->start / t,
			.phase_end = (x->start + x->duration) / t,
			.bytes = (double)x->bytes,
		};
	}
	k->expect.profile = k->profile.name;
	k->expect.hosts = k->profile.hosts;
	k->expect.host_addr = k->profile.host_addr;
	k->expect.nic_addr = k->profile.nics_per_host > 1 ? k->profile.nic_addr : NULL;
	k->expect.nics_per_host = k->profile.nics_per_host;
	k->expect.xfers = k->xfers;
	return 0;
}

int ct_knowledge_refresh(struct ct_knowledge *k, char *err, size_t errlen)
{
	struct ct_labels fresh;
	struct stat st;
	char why[768];
	int rc;

	if (!k->labels_dir || stat(k->labels_dir, &st))
		return 0;
	if (st.st_mtim.tv_sec == k->labels_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == k->labels_mtime.tv_nsec)
		return 0;
	rc = ct_labels_load_dir(k->labels_dir, &fresh, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "--labels %s", why);
		return rc;
	}
	ct_labels_free(&k->labels);
	k->labels = fresh;
	k->labels_mtime = st.st_mtim;
	return 0;
}

void ct_knowledge_free(struct ct_knowledge *k)
{
	ct_labels_free(&k->labels);
	free(k->xfers);
	if (k->have_profile) {
		ct_prediction_free(&k->prediction);
		ct_profile_free(&k->profile);
	}
}

uint64_t ct_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether the step about to start may still run; if not, the report says what was left out. */
static int in_time(const struct ct_analysis *a, struct ct_report *r, const char *left_out)
{
	if (!a->deadline_ns || ct_monotonic_ns() < a->deadline_ns)
		return 1;
	if (!r->cut_short)
		r->cut_short = left_out;
	return 0;
}

int ct_analysis_run(const struct ct_knowledge *k, struct ct_report *r, const struct ct_cm_event *cm,
		    unsigned n_cm, const struct ct_burst_log *bursts, double min_period_s,
		    struct ct_analysis *a)
{
	int err = 0;

	ct_flow_set_sort(&r->flows);
	ct_flow_set_pair(&r->flows, cm, n_cm);
	/* the advice's NIC rate: an option the operator gave wins over the profile's */
	if (!r->nic_source && k->have_profile && k->profile.hw.nic_gbps > 0) {
		r->nic_gbps_stated = k->profile.hw.nic_gbps;
		r->nic_source = "profile";
	}
	if (!in_time(a, r,
		     "the shutdown deadline passed before the periodicity: no periodicity, "
		     "jobs, classes or cc figures"))
		return -ETIMEDOUT;
	if (ct_periodicity_compute(&r->flows, bursts, min_period_s, &a->periodicity)) {
		ct_log(CT_LOG_WARN, "out of memory: the report has no periodicity");
		err = -ENOMEM;
	} else {
		r->periodicity = &a->periodicity;
	}
	if (!in_time(a, r, "the shutdown deadline passed before the classification: no classes"))
		return -ETIMEDOUT;
	if (ct_classify(&r->flows, r->periodicity, k->labels.n ? &k->labels : NULL,
			k->have_profile ? &k->expect : NULL, &a->classes)) {
		ct_log(CT_LOG_WARN, "out of memory: the report has no classes");
		err = -ENOMEM;
	} else {
		r->classes = &a->classes;
		/* the receivers' cc figures again for each class alone */
		if (r->periodicity &&
		    !in_time(a, r, "the shutdown deadline passed before the cc figures per class"))
			return -ETIMEDOUT;
		if (r->periodicity &&
		    ct_classification_cc(&a->classes, &r->flows, &a->periodicity)) {
			ct_log(CT_LOG_WARN, "out of memory: the cc section has no classes");
			err = -ENOMEM;
		}
	}
	if (!in_time(a, r, "the shutdown deadline passed before the anomalies"))
		return -ETIMEDOUT;
	if (ct_anomalies_find(&r->flows, r->periodicity, r->classes, &r->counters, &a->anomalies)) {
		ct_log(CT_LOG_WARN, "out of memory: the report has no anomalies");
		err = -ENOMEM;
	} else {
		r->anomalies = &a->anomalies;
	}
	return err;
}

void ct_analysis_free(struct ct_analysis *a)
{
	uint64_t deadline = a->deadline_ns;

	ct_anomalies_free(&a->anomalies);
	ct_classification_free(&a->classes);
	ct_periodicity_free(&a->periodicity);
	memset(a, 0, sizeof(*a));
	a->deadline_ns = deadline;
}

void ct_report_forget_analysis(struct ct_report *r)
{
	r->periodicity = NULL;
	r->classes = NULL;
	r->anomalies = NULL;
	r->cut_short = NULL;
}
