// SPDX-License-Identifier: MIT
/* A flow's identity as text (report_model.h), the same text report_doc.c gives a JSON flow. */
#include "report_model.h"

#include <stdio.h>
#include <string.h>

void ct_rep_flow_key(const struct ct_rep_flow *f, char *buf, size_t len)
{
	const char *t = f->transport, *src = f->src ? f->src : "?", *dst = f->dst ? f->dst : "?";

	if (t && !strcmp(t, "tcp"))
		snprintf(buf, len, "tcp %s %s %llu %llu", src, dst, (unsigned long long)f->sport,
			 (unsigned long long)f->dport);
	else if (f->qpn_cut)
		snprintf(buf, len, "%s %s %s cut:%s", t ? t : "?", src, dst, f->qpn_cut);
	else
		snprintf(buf, len, "%s %s %s %llu", t ? t : "?", src, dst,
			 (unsigned long long)f->qpn);
}
