// SPDX-License-Identifier: MIT
/* Wire flows from a capture, their link to communicators, and the labels. */
#include <errno.h>
#include <json-c/json.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_corr.h"

void gc_flows_free(struct gc_flows *f)
{
	free(f->v);
	free(f->pkts);
	memset(f, 0, sizeof(*f));
}

static bool same_flow(const struct gc_flow *fl, const struct ct_pkt *k)
{
	if (memcmp(&fl->dst, &k->dst, sizeof(k->dst)))
		return false;
	if (k->kind == CT_PKT_TCP)
		return fl->tcp && fl->sport == k->tcp.sport && fl->dport == k->tcp.dport;
	return !fl->tcp && fl->qpn == k->roce.dqpn;
}

static int flow_of(struct gc_flows *f, const struct ct_pkt *k, size_t *hint)
{
	if (*hint < f->n && same_flow(&f->v[*hint], k))
		return (int)*hint;
	for (size_t i = 0; i < f->n; i++)
		if (same_flow(&f->v[i], k))
			return (int)(*hint = i);
	if (f->n == f->cap) {
		size_t c = f->cap ? f->cap * 2 : 64;
		void *p = realloc(f->v, c * sizeof(*f->v));

		if (!p)
			return -ENOMEM;
		f->v = p;
		f->cap = c;
	}
	memset(&f->v[f->n], 0, sizeof(f->v[0]));
	f->v[f->n].src = k->src;
	f->v[f->n].dst = k->dst;
	if (k->kind == CT_PKT_TCP) {
		f->v[f->n].tcp = true;
		f->v[f->n].sport = k->tcp.sport;
		f->v[f->n].dport = k->tcp.dport;
	} else {
		f->v[f->n].qpn = k->roce.dqpn;
	}
	f->v[f->n].comm = -1;
	f->v[f->n].qp = -1;
	f->v[f->n].cls = CT_CLASS_OTHER;
	*hint = f->n;
	return (int)f->n++;
}

int gc_flows_read_pcap(struct gc_flows *f, const char *path, const struct ct_addr *local, char *err,
		       size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	size_t hint = 0;
	pcap_t *pc;
	int rc;

	memset(f, 0, sizeof(*f));
	pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!pc) {
		snprintf(err, errlen, "%s: %s", path, ebuf);
		return -EINVAL;
	}
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		struct ct_pkt k;
		enum ct_pkt_kind kind = ct_parse(data, h->caplen, h->len, &k);
		uint32_t payload;
		int fi;

		if ((kind != CT_PKT_ROCE && kind != CT_PKT_TCP) ||
		    memcmp(&k.src, local, sizeof(*local)))
			continue;
		payload = kind == CT_PKT_TCP ? k.tcp.payload_len : k.roce.payload_len;
		fi = flow_of(f, &k, &hint);
		if (fi < 0)
			goto nomem;
		f->v[fi].bytes += payload;
		f->v[fi].packets++;
		if (f->n_pkts == f->cap_pkts) {
			size_t c = f->cap_pkts ? f->cap_pkts * 2 : 4096;
			void *p = realloc(f->pkts, c * sizeof(*f->pkts));

			if (!p)
				goto nomem;
			f->pkts = p;
			f->cap_pkts = c;
		}
		f->pkts[f->n_pkts++] = (struct gc_pkt){
			.flow = (uint32_t)fi,
			.bytes = k.roce.payload_len,
			.ts = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec};
	}
	if (rc == -1) {
		snprintf(err, errlen, "%s: %s", path, pcap_geterr(pc));
		pcap_close(pc);
		return -EIO;
	}
	pcap_close(pc);
	return 0;
nomem:
	pcap_close(pc);
	snprintf(err, errlen, "%s: out of memory", path);
	return -ENOMEM;
}

struct window {
	uint64_t a, b;
};

/* A communicator's operations as disjoint windows, widened by slack. */
static size_t comm_windows(const struct gc_job *j, size_t ci, uint64_t slack, struct window *w)
{
	size_t n = 0;

	for (size_t i = 0; i < j->n_ops; i++) {
		const struct gc_op *o = &j->ops[i];
		uint64_t a = o->t_start > slack ? o->t_start - slack : 0, b = o->t_end + slack;

		if (o->comm != ci)
			continue;
		if (n && a <= w[n - 1].b) {
			if (b > w[n - 1].b)
				w[n - 1].b = b;
		} else {
			w[n++] = (struct window){a, b};
		}
	}
	return n;
}

/* Packets and payload bytes of flow fi inside the windows (packets are in
 * time order). The score counts packets too: acknowledgement flows carry
 * no payload. */
static uint64_t bytes_inside(const struct gc_flows *f, size_t fi, const struct window *w, size_t nw,
			     uint64_t *payload)
{
	uint64_t sum = 0;

	*payload = 0;
	size_t k = 0;

	for (size_t i = 0; i < f->n_pkts && k < nw; i++) {
		const struct gc_pkt *p = &f->pkts[i];

		if (p->flow != fi)
			continue;
		while (k < nw && w[k].b < p->ts)
			k++;
		if (k < nw && p->ts >= w[k].a) {
			sum += (uint64_t)p->bytes + 1;
			*payload += p->bytes;
		}
	}
	return sum;
}

/* The communicator among the flow's process's ones whose operation windows
 * (widened by slack) hold most of the flow's packets; -1 if none holds any. */
static int best_comm(const struct gc_job *j, const struct gc_flows *f, size_t fi, uint64_t slack,
		     struct window *w, uint64_t *payload_out)
{
	const struct gc_flow *fl = &f->v[fi];
	uint64_t best = 0;
	int pick = -1;

	size_t n_owners = fl->tcp ? j->n_socks : j->n_qps;

	for (size_t q = 0; q < n_owners; q++) {
		int32_t pid;

		if (fl->tcp) {
			const struct gc_sock *sk = &j->socks[q];

			if (sk->lport != fl->sport || (sk->rport && sk->rport != fl->dport))
				continue;
			pid = sk->pid;
		} else {
			if (j->qps[q].rqpn != fl->qpn)
				continue;
			pid = j->qps[q].pid;
		}
		for (size_t ci = 0; ci < j->n_comms; ci++) {
			uint64_t b, payload;
			size_t nw;

			/* A flow on the wire goes to another host: a communicator
			 * inside one node never carries it. */
			if (j->comms[ci].pid != pid || j->comms[ci].n_nodes == 1)
				continue;
			nw = comm_windows(j, ci, slack, w);
			b = bytes_inside(f, fi, w, nw, &payload);
			if (b > best) {
				best = b;
				pick = (int)ci;
				*payload_out = payload;
			}
		}
	}
	return pick;
}

/* Each packet of a linked flow goes to the operation of its communicator
 * whose window (± slack) holds it: the bursts each collective caused. */
static void join_ops(struct gc_job *j, struct gc_flows *f, uint64_t slack)
{
	size_t *idx = malloc((j->n_ops + 1) * sizeof(*idx));

	if (!idx)
		return;
	for (size_t ci = 0; ci < j->n_comms; ci++) {
		size_t n = 0;

		for (size_t i = 0; i < j->n_ops; i++)
			if (j->ops[i].comm == ci)
				idx[n++] = i; /* in start order */
		if (!n)
			continue;
		for (size_t p = 0; p < f->n_pkts; p++) {
			const struct gc_pkt *pk = &f->pkts[p];
			size_t lo = 0, hi = n;

			if (f->v[pk->flow].comm != (int)ci)
				continue;
			/* last operation starting at or before ts + slack */
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (j->ops[idx[mid]].t_start <= pk->ts + slack)
					lo = mid + 1;
				else
					hi = mid;
			}
			/* look back a few: windows of one communicator may overlap */
			for (size_t k = lo; k > 0 && k + 8 > lo; k--) {
				struct gc_op *o = &j->ops[idx[k - 1]];

				if (o->t_end + slack >= pk->ts) {
					struct gc_flow *fl = &f->v[pk->flow];

					o->wire_bytes += pk->bytes;
					if (!o->p2p && (!fl->has_seq || o->seq < fl->seq_first))
						fl->seq_first = o->seq;
					if (!o->p2p && (!fl->has_seq || o->seq > fl->seq_last))
						fl->seq_last = o->seq;
					fl->has_seq |= !o->p2p;
					break;
				}
			}
		}
	}
	free(idx);
}

/*
 * No process is known for the flow (no QP map, no socket: a host without
 * RDMA resource tracking, traffic seen from a mirror port): the
 * communicator spanning nodes whose operation windows hold most of its
 * packets, if they hold at least half of them. Weaker than the owner's
 * link, so only where that is missing.
 */
static int best_comm_by_time(const struct gc_job *j, const struct gc_flows *f, size_t fi,
			     uint64_t slack, struct window *w, uint64_t *payload_out)
{
	uint64_t best = 0, total = 0;
	int pick = -1;

	for (size_t i = 0; i < f->n_pkts; i++)
		if (f->pkts[i].flow == fi)
			total += (uint64_t)f->pkts[i].bytes + 1;
	for (size_t ci = 0; ci < j->n_comms && total; ci++) {
		uint64_t b, payload;
		size_t nw;

		if (j->comms[ci].n_nodes == 1)
			continue;
		nw = comm_windows(j, ci, slack, w);
		b = bytes_inside(f, fi, w, nw, &payload);
		if (b > best) {
			best = b;
			pick = (int)ci;
			*payload_out = payload;
		}
	}
	return 2 * best >= total ? pick : -1;
}

/* Whether the job knows the process of the flow's traffic (a QP or a socket). */
static bool flow_has_owner(const struct gc_job *j, const struct gc_flow *fl)
{
	for (size_t q = 0; q < (fl->tcp ? j->n_socks : j->n_qps); q++)
		if (fl->tcp ? j->socks[q].lport == fl->sport &&
				      (!j->socks[q].rport || j->socks[q].rport == fl->dport)
			    : j->qps[q].rqpn == fl->qpn)
			return true;
	return false;
}

/* The local QP whose communicator is known (network events or its
 * connection, gc_assign_qps) and whose mapping holds over all of the flow's
 * packets: the flow goes to that communicator without weighing windows. */
static int qp_of_flow(const struct gc_job *j, const struct gc_flows *f, size_t fi)
{
	const struct gc_flow *fl = &f->v[fi];
	uint64_t first = UINT64_MAX, last = 0;

	if (fl->tcp)
		return -1;
	for (size_t i = 0; i < f->n_pkts; i++) {
		if (f->pkts[i].flow != fi)
			continue;
		if (f->pkts[i].ts < first)
			first = f->pkts[i].ts;
		if (f->pkts[i].ts > last)
			last = f->pkts[i].ts;
	}
	for (size_t q = 0; q < j->n_qps; q++) {
		const struct gc_qp *qp = &j->qps[q];

		if (qp->rqpn == fl->qpn && qp->comm >= 0 && qp->valid_from <= first &&
		    last < qp->valid_to)
			return (int)q;
	}
	return -1;
}

size_t gc_join(struct gc_job *j, struct gc_flows *f, uint64_t slack_ns)
{
	struct window *w = malloc((j->n_ops + 1) * sizeof(*w));
	size_t linked = 0;

	if (!w)
		return 0;
	for (size_t i = 0; i < j->n_ops; i++)
		j->ops[i].wire_bytes = 0;
	for (size_t fi = 0; fi < f->n; fi++) {
		struct gc_flow *fl = &f->v[fi];
		uint64_t payload = 0;

		/* Queueing at the NIC can push a transfer's packets past its
		 * operation's end: widen the windows tenfold, twice, before
		 * giving up on a flow. */
		fl->comm = -1;
		fl->has_seq = false;
		fl->qp = qp_of_flow(j, f, fi);
		if (fl->qp >= 0) {
			fl->comm = j->qps[fl->qp].comm;
			bytes_inside(f, fi, w, comm_windows(j, (size_t)fl->comm, slack_ns, w),
				     &payload);
		}
		for (uint64_t s = slack_ns, k = 0; k < 3 && fl->comm < 0; k++, s *= 10)
			fl->comm = best_comm(j, f, fi, s, w, &payload);
		if (fl->comm < 0 && !flow_has_owner(j, fl))
			fl->comm = best_comm_by_time(j, f, fi, slack_ns, w, &payload);
		if (fl->comm >= 0) {
			fl->cls = j->comms[fl->comm].cls;
			fl->joined_bytes = payload;
			linked++;
		}
	}
	free(w);
	join_ops(j, f, slack_ns);
	return linked;
}

/* What the join knows beyond the class: the communicator's name and this
 * host's rank in it, the collectives the flow's packets fell in, and for a
 * RoCE flow linked by its QP, how and for which window. */
static void add_comm_fields(json_object *o, const struct gc_job *j, const struct gc_flows *f,
			    const struct gc_flow *fl)
{
	static const char *const source[] = {"process", "net_event", "connect"};
	const struct gc_comm *c = &j->comms[fl->comm];

	(void)f;
	if (c->name[0])
		json_object_object_add(o, "comm_name", json_object_new_string(c->name));
	json_object_object_add(o, "rank", json_object_new_int(c->rank));
	json_object_object_add(o, "nranks", json_object_new_int(c->nranks));
	if (fl->has_seq) {
		json_object_object_add(o, "seq_first",
				       json_object_new_int64((int64_t)fl->seq_first));
		json_object_object_add(o, "seq_last", json_object_new_int64((int64_t)fl->seq_last));
	}
	if (fl->qp >= 0) {
		const struct gc_qp *q = &j->qps[fl->qp];

		json_object_object_add(o, "lqpn", json_object_new_int64(q->lqpn));
		json_object_object_add(o, "qp_from", json_object_new_string(source[q->source % 3]));
		json_object_object_add(o, "valid_from_ns",
				       json_object_new_int64((int64_t)q->valid_from));
		if (q->valid_to != UINT64_MAX)
			json_object_object_add(o, "valid_to_ns",
					       json_object_new_int64((int64_t)q->valid_to));
	}
}

int gc_write_labels(const struct gc_job *j, const struct gc_flows *f, FILE *out)
{
	json_object *root = json_object_new_object(), *flows = json_object_new_array();
	char a[64], b[64], h[24];

	json_object_object_add(root, "schema", json_object_new_string("commtap.labels/v1"));
	for (size_t i = 0; i < f->n; i++) {
		const struct gc_flow *fl = &f->v[i];
		json_object *o;

		if (fl->comm < 0)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "transport",
				       json_object_new_string(fl->tcp ? "tcp" : "roce"));
		json_object_object_add(
			o, "src", json_object_new_string(ct_addr_format(&fl->src, a, sizeof(a))));
		json_object_object_add(
			o, "dst", json_object_new_string(ct_addr_format(&fl->dst, b, sizeof(b))));
		if (fl->tcp) {
			json_object_object_add(o, "sport", json_object_new_int(fl->sport));
			json_object_object_add(o, "dport", json_object_new_int(fl->dport));
		} else {
			json_object_object_add(o, "qpn", json_object_new_int64(fl->qpn));
		}
		json_object_object_add(
			o, "class", json_object_new_string(ct_class_name((enum ct_class)fl->cls)));
		snprintf(h, sizeof(h), "0x%llx", (unsigned long long)j->comms[fl->comm].hash);
		json_object_object_add(o, "comm", json_object_new_string(h));
		add_comm_fields(o, j, f, fl);
		json_object_array_add(flows, o);
	}
	json_object_object_add(root, "flows", flows);
	fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY));
	json_object_put(root);
	return ferror(out) ? -EIO : 0;
}
