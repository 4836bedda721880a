// SPDX-License-Identifier: MIT
/* The bursts gathered from engines for a report (periodicity.h). */
#include <commtap/grow.h>
#include <commtap/periodicity.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Engines hand bursts over as they end, so the log is in order of their
 * ends to within one drain: its head holds the oldest. A quarter at a time
 * keeps the move's cost at 3 bytes moved per byte appended.
 */
static void drop_oldest(struct ct_burst_log *log)
{
	size_t drop = CT_BURST_LOG_MAX / 4;

	memmove(log->b, log->b + drop, (log->n - drop) * sizeof(*log->b));
	log->n -= drop;
	log->dropped += drop;
}

int ct_burst_log_add(struct ct_burst_log *log, const struct ct_flow_burst *b)
{
	if (log->n >= CT_BURST_LOG_MAX)
		drop_oldest(log);
	if (log->n == log->cap) {
		struct ct_flow_burst *nb = ct_grow(log->b, &log->cap, sizeof(*nb), 4096);

		if (!nb)
			return -ENOMEM;
		log->b = nb;
	}
	log->b[log->n++] = *b;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_flow_key)); /* keys compare as bytes (flow.h) */
}

size_t ct_burst_log_drop(struct ct_burst_log *log, struct ct_flow_key *keys, size_t n)
{
	size_t kept = 0, dropped;

	if (!n)
		return 0;
	qsort(keys, n, sizeof(*keys), key_cmp);
	for (size_t i = 0; i < log->n; i++)
		if (!bsearch(&log->b[i].key, keys, n, sizeof(*keys), key_cmp))
			log->b[kept++] = log->b[i];
	dropped = log->n - kept;
	log->n = kept;
	return dropped;
}

void ct_burst_log_free(struct ct_burst_log *log)
{
	free(log->b);
	memset(log, 0, sizeof(*log));
}
