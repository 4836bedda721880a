// SPDX-License-Identifier: MIT
/*
 * Findings carried from one interval report to the next. Each report judges
 * its window alone (--window, 10 intervals): a fault that lasts longer than
 * the window leaves its onset behind, and the window then reads it as there
 * from its first iteration — a slow link with no step of its own, loss or
 * marking at a steady rate, a straggler late with no change — which the
 * detectors say below an alarm, since a host or link that is so by make
 * reads the same. A finding an earlier report gave an alarm's confidence,
 * with its onset inside that report's window, keeps that confidence while
 * the same finding (kind, place, class) is still there; when the fault
 * ends, the finding goes and nothing is carried.
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kinds judged against what came before in the window: their alarm can outlive it. */
static int carried_kind(int kind)
{
	return kind == CT_ANOMALY_STRAGGLER || kind == CT_ANOMALY_SLOW_LINK ||
	       kind == CT_ANOMALY_LOSS || kind == CT_ANOMALY_CONGESTION;
}

static int same_place(const struct ct_anomaly *a, const struct ct_anomaly *b)
{
	return a->kind == b->kind && a->scope == b->scope && a->priority == b->priority &&
	       a->cls == b->cls && !memcmp(&a->host, &b->host, sizeof(a->host)) &&
	       !memcmp(&a->peer, &b->peer, sizeof(a->peer));
}

int ct_anomalies_keep_alarms(const struct ct_anomalies *from, struct ct_anomalies *kept)
{
	struct ct_anomaly *list = NULL;
	size_t n = 0;

	for (size_t i = 0; i < from->n; i++)
		n += carried_kind(from->list[i].kind) &&
		     from->list[i].confidence >= CT_ANOMALY_ALARM;
	if (n && !(list = malloc(n * sizeof(*list))))
		return -ENOMEM;
	ct_anomalies_free(kept);
	n = 0;
	for (size_t i = 0; i < from->n; i++)
		if (carried_kind(from->list[i].kind) &&
		    from->list[i].confidence >= CT_ANOMALY_ALARM) {
			list[n] = from->list[i];
			list[n].iters = NULL; /* the report's own; not needed to carry */
			list[n++].seen = 0;
		}
	kept->list = list;
	kept->n = n;
	return 0;
}

void ct_anomalies_carry(const struct ct_anomalies *earlier, struct ct_anomalies *now)
{
	int raised = 0;

	for (size_t i = 0; i < now->n; i++) {
		struct ct_anomaly *a = &now->list[i];
		size_t at;

		if (!carried_kind(a->kind) || a->confidence >= CT_ANOMALY_ALARM)
			continue;
		for (size_t k = 0; k < earlier->n; k++) {
			const struct ct_anomaly *e = &earlier->list[k];

			if (!same_place(a, e) || e->confidence <= a->confidence)
				continue;
			a->confidence = e->confidence;
			raised = 1;
			at = strlen(a->evidence);
			if (at < sizeof(a->evidence))
				snprintf(a->evidence + at, sizeof(a->evidence) - at,
					 "; at %.2f since a report whose window held its onset: "
					 "still there",
					 e->confidence);
			break;
		}
	}
	if (raised)
		qsort(now->list, now->n, sizeof(*now->list), anom_finding_cmp);
}
