// SPDX-License-Identifier: MIT
/*
 * QP → communicator on stock NCCL. Builds that emit the IB QP network
 * events name the QP in the plugin's ring; stock builds do not, but a
 * communicator creates its QPs while it connects, between the plugin's init
 * for it and its first operation. Snapshots of the host's QPs (netlink RDMA
 * resource tracking, `commtap-rdma-qp`) taken over that time bound when each
 * QP appeared and went away; the communicator of its process that connected
 * meanwhile is its owner. QP numbers are reused, so every mapping carries the
 * window in which it holds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_corr.h"

/* One QP line: "link DEV/PORT lqpn N [rqpn N] type T state S [pid P] comm C". */
static int parse_qp_line(const char *line, uint32_t *lqpn, uint32_t *rqpn, int32_t *pid)
{
	const char *p;
	char *end;

	*rqpn = UINT32_MAX;
	*pid = -1;
	if (strncmp(line, "link ", 5) || !(p = strstr(line, " lqpn ")))
		return -EINVAL;
	*lqpn = (uint32_t)strtoul(p + 6, &end, 10);
	if (end == p + 6)
		return -EINVAL;
	if ((p = strstr(line, " rqpn ")))
		*rqpn = (uint32_t)strtoul(p + 6, NULL, 10);
	if ((p = strstr(line, " pid ")))
		*pid = (int32_t)strtol(p + 5, NULL, 10);
	return 0;
}

struct seen {
	int32_t pid;
	uint32_t lqpn, rqpn;
	uint64_t before;    /* last snapshot without it before it appeared, 0: none */
	uint64_t first;	    /* first snapshot holding it */
	uint64_t last;	    /* last snapshot holding it */
	uint64_t after;	    /* first snapshot without it after, UINT64_MAX: none */
	unsigned last_snap; /* index of the last snapshot holding it */
};

int gc_job_read_qp_table(struct gc_job *j, FILE *in, const char *name, char *err, size_t errlen)
{
	struct seen *v = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	uint64_t snap_t = 0, prev_t = 0;
	unsigned snap = 0; /* snapshots so far; QPs of snapshot `snap` are current */
	char line[512];
	int added = 0;

	while (fgets(line, sizeof(line), in)) {
		uint32_t lqpn, rqpn;
		int32_t pid;
		size_t i;

		lineno++;
		if (!strncmp(line, "# at ", 5)) {
			char *end;
			uint64_t t = strtoull(line + 5, &end, 10);

			if (end == line + 5 || t < snap_t) {
				snprintf(
					err, errlen,
					"%s:%zu: \"# at NS\" needs a time no earlier than the last",
					name, lineno);
				free(v);
				return -EINVAL;
			}
			/* QPs of the snapshot before, missing from the one just
			 * ended, went away before that one. */
			for (i = 0; i < n; i++)
				if (snap && v[i].last_snap + 2 == snap && v[i].after == UINT64_MAX)
					v[i].after = snap_t;
			prev_t = snap_t;
			snap_t = t;
			snap++;
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (!snap) {
			snprintf(err, errlen, "%s:%zu: a QP before the first \"# at NS\" line",
				 name, lineno);
			free(v);
			return -EINVAL;
		}
		if (parse_qp_line(line, &lqpn, &rqpn, &pid)) {
			snprintf(err, errlen, "%s:%zu: not a commtap-rdma-qp line", name, lineno);
			free(v);
			return -EINVAL;
		}
		/* The same QP as in the previous snapshot, or a new one (a reused
		 * number is a new QP). */
		for (i = 0; i < n; i++)
			if (v[i].pid == pid && v[i].lqpn == lqpn && v[i].rqpn == rqpn &&
			    v[i].last_snap + 2 >= snap && v[i].after == UINT64_MAX)
				break;
		if (i == n) {
			if (n == cap) {
				size_t c = cap ? cap * 2 : 64;
				void *p = realloc(v, c * sizeof(*v));

				if (!p) {
					free(v);
					snprintf(err, errlen, "%s: out of memory", name);
					return -ENOMEM;
				}
				v = p;
				cap = c;
			}
			v[n++] = (struct seen){.pid = pid,
					       .lqpn = lqpn,
					       .rqpn = rqpn,
					       .before = snap > 1 ? prev_t : 0,
					       .first = snap_t,
					       .after = UINT64_MAX};
		}
		v[i].last = snap_t;
		v[i].last_snap = snap - 1;
	}
	/* A QP gone in the last snapshot went away before it. */
	for (size_t i = 0; i < n; i++)
		if (snap && v[i].last_snap + 1 < snap && v[i].after == UINT64_MAX)
			v[i].after = snap_t;
	for (size_t i = 0; i < n; i++) {
		struct gc_qp *q;

		if (v[i].rqpn == UINT32_MAX)
			continue; /* not connected: no flow carries it */
		if (gc_job_add_qp(j, v[i].pid, v[i].lqpn, v[i].rqpn)) {
			free(v);
			snprintf(err, errlen, "%s: out of memory", name);
			return -ENOMEM;
		}
		q = &j->qps[j->n_qps - 1];
		q->valid_from = v[i].before;
		q->seen_first = v[i].first;
		q->valid_to = v[i].after;
		added++;
	}
	free(v);
	return added;
}

size_t gc_assign_qps(struct gc_job *j)
{
	size_t assigned = 0;

	for (size_t q = 0; q < j->n_qps; q++) {
		struct gc_qp *qp = &j->qps[q];
		int pick = -1, n = 0;

		if (qp->comm >= 0 || qp->rqpn == UINT32_MAX)
			continue;
		/* The plugin's QP events name it: their communicator. */
		for (size_t e = 0; e < j->n_qps; e++) {
			const struct gc_qp *ev = &j->qps[e];

			if (ev->source == GC_QP_NET_EVENT && ev->pid == qp->pid &&
			    ev->lqpn == qp->lqpn && ev->valid_from >= qp->valid_from &&
			    ev->valid_to <= qp->valid_to) {
				qp->comm = ev->comm;
				qp->source = GC_QP_NET_EVENT;
				break;
			}
		}
		if (qp->comm >= 0) {
			assigned++;
			continue;
		}
		if (!qp->seen_first)
			continue; /* one dump: no time to go by */
		/* Else the communicator of its process that connected while the
		 * QP may have been created: (valid_from, first seen]. Its
		 * connection ran from its init to its first operation. */
		for (size_t ci = 0; ci < j->n_comms; ci++) {
			const struct gc_comm *c = &j->comms[ci];
			uint64_t end = c->t_first_op ? c->t_first_op : UINT64_MAX;

			if (c->pid != qp->pid || c->n_nodes == 1)
				continue;
			/* Created in (valid_from, seen_first]: the connection
			 * overlaps that. */
			if (c->t_init <= qp->seen_first && end > qp->valid_from) {
				pick = (int)ci;
				n++;
			}
		}
		if (n == 1) {
			qp->comm = pick;
			qp->source = GC_QP_CONNECT;
			assigned++;
		}
	}
	return assigned;
}
