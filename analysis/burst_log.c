// SPDX-License-Identifier: MIT
/* The bursts gathered from engines for a report (periodicity.h). */
#include <commtap/grow.h>
#include <commtap/periodicity.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ct_burst_log_add(struct ct_burst_log *log, const struct ct_flow_burst *b)
{
	if (log->n == log->cap) {
		struct ct_flow_burst *nb = ct_grow(log->b, &log->cap, sizeof(*nb), 4096);

		if (!nb)
			return -ENOMEM;
		log->b = nb;
	}
	log->b[log->n++] = *b;
	return 0;
}

void ct_burst_log_free(struct ct_burst_log *log)
{
	free(log->b);
	memset(log, 0, sizeof(*log));
}
