/* SPDX-License-Identifier: MIT */
/*
 * Anomalies read from the wire (slow path, after periodicity and
 * classification): a straggler, a slow link, a loss hot spot, congestion
 * concentrated on a receiver or a priority, and iterations much longer than
 * the period. Each detector is its own file, registered in one table
 * (anomaly.c); each finding names where it is (a host, a link, a receiver,
 * a priority, the job), since when, by how much, its evidence in words and
 * a confidence. docs/anomalies.md explains each.
 */
#ifndef COMMTAP_ANOMALY_H
#define COMMTAP_ANOMALY_H

#include <stddef.h>
#include <stdint.h>

#include <commtap/classify.h>
#include <commtap/dataplane.h>
#include <commtap/flow_set.h>
#include <commtap/periodicity.h>

struct json_object;

enum ct_anomaly_kind {
	CT_ANOMALY_STRAGGLER = 0,
	CT_ANOMALY_SLOW_LINK,
	CT_ANOMALY_LOSS,
	CT_ANOMALY_CONGESTION,
	CT_ANOMALY_RHYTHM,
	CT_ANOMALY_HANG, /* the job's traffic stopped while the capture went on */
	CT_ANOMALY_KINDS,
};

/* Where a finding is: what .host and .peer mean. */
enum ct_anomaly_scope {
	CT_ANOMALY_AT_HOST = 0, /* .host */
	CT_ANOMALY_AT_LINK,	/* .host -> .peer */
	CT_ANOMALY_AT_RECEIVER, /* .host, whatever sends to it */
	CT_ANOMALY_AT_PRIORITY, /* .priority (PFC) */
	CT_ANOMALY_AT_JOB,	/* the job's iterations */
};

#define CT_ANOMALY_EVIDENCE_LEN 320
/* the confidence an operator is paged from (export/prometheus/commtap.rules.yml) */
#define CT_ANOMALY_ALARM 0.5
#define CT_ANOMALY_MAX	 64 /* findings kept per report; the rest are counted */

/* One iteration a finding was seen in, and its figure there (kind's unit). */
struct ct_anomaly_iter {
	uint32_t iteration; /* index into the job's iteration starts */
	double value;
	/*
	 * Straggler: when the host entered there (its first message, or its
	 * send that ended the wait), capture ns; 0: not said. A late entry
	 * may lie either side of where its iteration starts on the wire.
	 */
	uint64_t at_ns;
};

struct ct_anomaly {
	uint8_t kind;	 /* enum ct_anomaly_kind */
	uint8_t scope;	 /* enum ct_anomaly_scope */
	int8_t priority; /* PFC priority, -1 none */
	int8_t cls;	 /* enum ct_class of the traffic it was seen in, -1 all */
	struct ct_addr host, peer;
	/*
	 * Straggler: how late, s; slow link: its rate over its peers'; loss:
	 * loss events; congestion: marked share of the packets (or PFC pause
	 * frames); rhythm: the iteration's excess over the period, s; hang: how
	 * long the job has been silent, s.
	 */
	double value;
	double share;	   /* straggler, rhythm: value as a share of the period; else 0 */
	double confidence; /* 0..1 */
	long onset;	   /* first iteration it was seen in, -1: the whole capture */
	uint64_t onset_ns; /* its start, 0 with onset -1 */
	unsigned seen;	   /* iterations it was seen in (0: not per iteration) */
	unsigned of;	   /* iterations it could have been seen in, from the onset on */
	struct ct_anomaly_iter *iters; /* seen entries (owned; NULL when not per iteration) */
	char evidence[CT_ANOMALY_EVIDENCE_LEN];
};

struct ct_anomalies {
	struct ct_anomaly *list; /* by kind, then confidence (highest first) */
	size_t n;
	size_t dropped;		      /* findings past CT_ANOMALY_MAX */
	size_t iterations;	      /* of the job looked at, 0: none */
	double period_s;	      /* its period, 0: none */
	double straggler_jitter_s;    /* the job's own lateness spread (the noise floor), -1 n/a */
	double straggler_threshold_s; /* lateness flagged from, -1 n/a */
	const char *not_looked[CT_ANOMALY_KINDS]; /* why a detector did not look, NULL: it did */
	/*
	 * The hang watch, for a producer that reports a hang as it comes
	 * rather than at its next interval: the silence of the job's data
	 * flows from which the hang detector pages (0: no job to watch), and
	 * those flows (owned).
	 */
	double hang_after_s;
	struct ct_flow_key *hang_flows;
	size_t n_hang_flows;
};

/*
 * Look for anomalies in an analysed report's flows. per and classes may be
 * NULL (only the capture-wide detectors look then); counters may be NULL.
 * Returns 0 or -ENOMEM.
 */
int ct_anomalies_find(const struct ct_flow_set *set, const struct ct_periodicity *per,
		      const struct ct_classification *classes,
		      const struct ct_engine_counters *counters, struct ct_anomalies *out);
void ct_anomalies_free(struct ct_anomalies *a);

/*
 * Interval reports (anomaly_carry.c): keep a report's alarms of the kinds
 * judged against what came before in its window (replacing what kept held;
 * 0 or -ENOMEM), and in the next report raise such a finding, still there
 * below an alarm once its onset has left the window, to the confidence the
 * earlier report gave it.
 */
int ct_anomalies_keep_alarms(const struct ct_anomalies *from, struct ct_anomalies *kept);
void ct_anomalies_carry(const struct ct_anomalies *earlier, struct ct_anomalies *now);

const char *ct_anomaly_kind_name(enum ct_anomaly_kind k);
const char *ct_anomaly_scope_name(enum ct_anomaly_scope s);

/* The report's "anomalies" section (docs/report-schema.md); NULL when out of memory. */
struct json_object *ct_anomalies_json(const struct ct_anomalies *a);

#endif
