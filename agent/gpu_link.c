// SPDX-License-Identifier: MIT
/*
 * The GPU side in the agent's final report. The rings the NCCL profiler
 * plugin and the CUPTI library write (host_gpu/, docs/gpu.md) are read; the
 * communicators are mapped to parallel groups (by the profile, else by
 * their size and peers); the probe's flows are linked to them (RDMA QPs
 * from the kernel's resource tracking, TCP sockets from /proc, else by time:
 * the flows' bursts inside a communicator's operations); and per iteration
 * the compute and communication times come out (commtap.gpu/v1), with the
 * agent labels written beside the report for `commtap analyze --labels`.
 */
#include "gpu_link.h"

#include "atomic_file.h"

#include <json-c/json.h>

#include "gpu_corr.h"
#include "commtap/gpu_ring_dir.h"
#ifdef COMMTAP_HAVE_MNL
#include "rdma_qp.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOIN_SLACK_NS 1000000 /* 1 ms: the clocks of the plugin and the probe, and queueing */

#ifdef COMMTAP_HAVE_MNL
static void add_live_qp(void *arg, const struct ct_rdma_qp *qp)
{
	if (qp->has_pid && qp->has_rqpn)
		(void)gc_job_add_qp(arg, (int32_t)qp->pid, qp->lqpn, qp->rqpn);
}
#endif

/* One gc flow per report flow; each burst stands for its packets in the join. */
static int flows_of_report(const struct ct_report *r, const struct ct_burst_log *bursts,
			   struct gc_flows *f)
{
	memset(f, 0, sizeof(*f));
	f->v = calloc(r->flows.count + 1, sizeof(*f->v));
	f->pkts = calloc(bursts->n + 1, sizeof(*f->pkts));
	if (!f->v || !f->pkts)
		return -ENOMEM;
	f->cap = r->flows.count;
	f->cap_pkts = bursts->n;
	for (size_t i = 0; i < r->flows.count; i++) {
		const struct ct_flow_summary *s = &r->flows.flows[i];
		struct gc_flow *g = &f->v[f->n++];

		g->src = s->key.src;
		g->dst = s->key.dst;
		g->tcp = s->key.transport == CT_TRANSPORT_TCP;
		if (g->tcp) {
			g->sport = (uint16_t)(s->key.id >> 16);
			g->dport = (uint16_t)s->key.id;
		} else {
			g->qpn = s->key.id;
		}
		g->bytes = s->bytes;
		g->packets = s->packets;
		g->comm = -1;
		g->cls = CT_CLASS_OTHER;
	}
	for (size_t i = 0; i < bursts->n; i++) {
		const struct ct_flow_burst *b = &bursts->b[i];
		int64_t fi = ct_flow_set_find(&r->flows, &b->key);

		if (fi < 0)
			continue;
		f->pkts[f->n_pkts++] = (struct gc_pkt){
			.flow = (uint32_t)fi,
			.bytes = b->bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)b->bytes,
			.ts = b->start,
		};
	}
	return 0;
}

/*
 * The correlation's section. gc_write_report (host_gpu/, shared with
 * commtap-gpu) prints it, so it is read back here: once per final report,
 * never per scrape.
 */
static int gpu_json_of(const struct gc_job *j, const struct gc_flows *f,
		       const struct ct_knowledge *k, double nic_gbps, json_object **out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int err;

	if (!m)
		return -ENOMEM;
	err = gc_write_report(j, f, j->n_comms ? j->comms[0].pid : 0,
			      k->have_profile ? &k->prediction : NULL, nic_gbps, m);
	if (fclose(m) && !err)
		err = -EIO;
	if (!err) {
		*out = json_tokener_parse(text);
		err = *out ? 0 : -EINVAL;
	}
	free(text);
	return err;
}

struct labels_ctx {
	const struct gc_job *job;
	const struct gc_flows *flows;
};

static int write_labels(FILE *out, void *ctx)
{
	const struct labels_ctx *l = ctx;

	return gc_write_labels(l->job, l->flows, out);
}

static int labels_write(const struct gc_job *j, const struct gc_flows *f, const char *path)
{
	struct labels_ctx l = {j, f};

	return ct_write_file_atomic(path, write_labels, &l);
}

void ct_gpu_attach(const char *ring_dir)
{
	(void)gc_rings_attach(ring_dir); /* none there yet, or no directory: later */
}

const char *ct_gpu_ring_dir_of(const char *dir, char *buf, size_t len)
{
	if (dir)
		return dir;
	return ct_gpu_ring_dir_path(buf, len) ? "/dev/shm/commtap" : buf;
}

int ct_gpu_link(const char *ring_dir, const struct ct_knowledge *k, const struct ct_report *r,
		const struct ct_burst_log *bursts, double nic_gbps, const char *labels_path,
		json_object **gpu_json, char *err, size_t errlen)
{
	struct gc_job job;
	struct gc_flows flows = {0};
	int rc;

	*gpu_json = NULL;
	gc_job_init(&job);
	job.reap = true;
	rc = gc_job_read_dir(&job, ring_dir);
	if (job.rings_skipped)
		fprintf(stderr,
			"commtap agent: warning: %s: %u GPU ring file(s) skipped, first %s\n",
			ring_dir, job.rings_skipped, job.skip_note);
	if (job.rings_removed)
		fprintf(stderr, "commtap agent: %s: %u ring(s) of ended processes read and removed\n",
			ring_dir, job.rings_removed);
	if (rc <= 0) { /* no ring, or no such directory: nothing to join */
		if (rc < 0 && rc != -ENOENT)
			snprintf(err, errlen, "%s: %s", ring_dir, strerror(-rc));
		gc_job_free(&job);
		return rc == -ENOENT ? 0 : rc;
	}
#ifdef COMMTAP_HAVE_MNL
	/* where the host has RDMA devices: which process owns which QP */
	(void)ct_rdma_qp_dump(add_live_qp, &job);
#endif
	(void)gc_job_add_proc_sockets(&job); /* NCCL's socket transport */
	gc_job_finish(&job);
	gc_classify(&job, k->have_profile ? &k->profile : NULL,
		    k->have_profile ? &k->prediction : NULL);
	rc = flows_of_report(r, bursts, &flows);
	if (!rc) {
		gc_join(&job, &flows, JOIN_SLACK_NS);
		rc = gpu_json_of(&job, &flows, k, nic_gbps, gpu_json);
	}
	if (!rc && labels_path) {
		rc = labels_write(&job, &flows, labels_path);
		if (rc)
			snprintf(err, errlen, "%s: %s", labels_path, strerror(-rc));
	} else if (rc) {
		snprintf(err, errlen, "%s: %s", ring_dir, strerror(-rc));
	}
	gc_flows_free(&flows);
	gc_job_free(&job);
	return rc ? rc : 1;
}
