// SPDX-License-Identifier: MIT
/* Reading the plugin's and CUPTI's rings into communicators, operations and kernels. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commtap/gpu_names.h"
#include "commtap/gpu_ring_dir.h"
#include "gpu_corr.h"

void gc_job_init(struct gc_job *j)
{
	memset(j, 0, sizeof(*j));
}

void gc_job_free(struct gc_job *j)
{
	free(j->comms);
	free(j->ops);
	free(j->kernels);
	free(j->qps);
	free(j->socks);
	memset(j, 0, sizeof(*j));
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 256;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static int comm_index(struct gc_job *j, uint64_t hash, int32_t pid)
{
	for (size_t i = 0; i < j->n_comms; i++)
		if (j->comms[i].hash == hash && j->comms[i].pid == pid)
			return (int)i;
	return -1;
}

static int add_comm(struct gc_job *j, const struct ct_gpu_rec *r, int32_t pid)
{
	struct gc_comm *c;
	void *p;

	if (comm_index(j, r->comm_hash, pid) >= 0)
		return 0;
	p = realloc(j->comms, (j->n_comms + 1) * sizeof(*j->comms));
	if (!p)
		return -ENOMEM;
	j->comms = p;
	c = &j->comms[j->n_comms++];
	memset(c, 0, sizeof(*c));
	c->hash = r->comm_hash;
	c->pid = pid;
	c->rank = r->comm.rank;
	c->nranks = r->comm.n_ranks;
	c->n_nodes = r->comm.n_nodes;
	memcpy(c->name, r->comm.name, sizeof(c->name));
	c->name[sizeof(c->name) - 1] = 0;
	c->cls = CT_CLASS_OTHER;
	c->t_init = r->t_start;
	return 0;
}

/* Operation records and their children, kept until gc_job_finish. */
struct pending_child {
	int32_t pid;
	uint64_t parent;
	uint64_t t_start, t_stop;
};
static struct pending_child *children;
static size_t n_children, cap_children;

int gc_job_add_qp(struct gc_job *j, int32_t pid, uint32_t lqpn, uint32_t rqpn)
{
	if (grow((void **)&j->qps, &j->cap_qps, j->n_qps, sizeof(*j->qps)))
		return -ENOMEM;
	j->qps[j->n_qps++] = (struct gc_qp){
		.pid = pid, .lqpn = lqpn, .rqpn = rqpn, .comm = -1, .valid_to = UINT64_MAX};
	return 0;
}

int gc_job_add_socket(struct gc_job *j, int32_t pid, uint16_t lport, uint16_t rport)
{
	if (grow((void **)&j->socks, &j->cap_socks, j->n_socks, sizeof(*j->socks)))
		return -ENOMEM;
	j->socks[j->n_socks++] = (struct gc_sock){.pid = pid, .lport = lport, .rport = rport};
	return 0;
}

static int add_rec(struct gc_job *j, const struct ct_gpu_rec *r, int32_t pid)
{
	int ci;

	switch (r->type) {
	case CT_GPU_REC_COMM:
		return add_comm(j, r, pid);
	case CT_GPU_REC_COLL:
	case CT_GPU_REC_P2P: {
		struct gc_op *o;

		ci = comm_index(j, r->comm_hash, pid);
		if (ci < 0)
			return 0; /* its communicator's record was lost */
		if (grow((void **)&j->ops, &j->cap_ops, j->n_ops, sizeof(*j->ops)))
			return -ENOMEM;
		o = &j->ops[j->n_ops++];
		memset(o, 0, sizeof(*o));
		o->id = r->id;
		o->pid = pid;
		o->comm = (uint32_t)ci;
		o->t_enqueue = r->t_start;
		o->t_start = 0;
		o->t_end = r->t_stop;
		o->bytes = r->op.bytes;
		o->func = r->op.func;
		o->p2p = r->type == CT_GPU_REC_P2P;
		o->peer = r->op.peer;
		o->seq = r->op.seq;
		return 0;
	}
	case CT_GPU_REC_KERNEL_CH:
	case CT_GPU_REC_PROXY_OP:
		if (!r->parent_id)
			return 0;
		if (grow((void **)&children, &cap_children, n_children, sizeof(*children)))
			return -ENOMEM;
		children[n_children++] =
			(struct pending_child){pid, r->parent_id, r->t_start, r->t_stop};
		return 0;
	case CT_GPU_REC_NET_QP: {
		/* The plugin saw the QP itself (NCCL built with network events):
		 * it belongs to this record's communicator, for as long as its
		 * events last (the netlink table may widen that). */
		struct gc_qp *q = NULL;

		ci = comm_index(j, r->comm_hash, pid);
		for (size_t i = 0; i < j->n_qps && !q; i++)
			if (j->qps[i].pid == pid && j->qps[i].lqpn == r->net.qpn &&
			    j->qps[i].source == GC_QP_NET_EVENT && j->qps[i].comm == ci)
				q = &j->qps[i];
		if (!q) {
			if (gc_job_add_qp(j, pid, r->net.qpn, UINT32_MAX))
				return -ENOMEM;
			q = &j->qps[j->n_qps - 1];
			q->comm = ci;
			q->source = ci >= 0 ? GC_QP_NET_EVENT : GC_QP_PROCESS;
			q->valid_from = r->t_start;
			q->valid_to = r->t_stop + 1;
		}
		if (r->t_start < q->valid_from)
			q->valid_from = r->t_start;
		if (r->t_stop + 1 > q->valid_to)
			q->valid_to = r->t_stop + 1;
		return 0;
	}
	case CT_GPU_REC_CUPTI_KERNEL:
		if (grow((void **)&j->kernels, &j->cap_kernels, j->n_kernels, sizeof(*j->kernels)))
			return -ENOMEM;
		j->kernels[j->n_kernels++] = (struct gc_kernel){.pid = pid,
								.t_start = r->t_start,
								.t_end = r->t_stop,
								.kclass = r->cupti.kclass};
		return 0;
	default:
		return 0;
	}
}

/*
 * A ring speaks for the process its header names: any local user can write
 * a shared ring directory such as /dev/shm, so a file is read only when it
 * belongs to root, to this reader, to the directory's owner, or to the user
 * that process runs as.
 */
static int ring_owner_ok(const struct ct_gpu_ring *ring, uid_t dir_uid)
{
	struct stat file, proc;
	char path[32];

	if (fstat(ring->fd, &file))
		return -errno;
	if (file.st_uid == 0 || file.st_uid == geteuid() || file.st_uid == dir_uid)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d", (int)ring->hdr->pid);
	if (ring->hdr->pid > 0 && !stat(path, &proc) && proc.st_uid == file.st_uid)
		return 0;
	return -EPERM;
}

/* *gone: whether the ring's writer has ended (the ring can go once read). */
static int read_ring(struct gc_job *j, const char *path, uid_t dir_uid, bool *gone)
{
	struct ct_gpu_ring ring;
	struct ct_gpu_rec r;
	int err = ct_gpu_ring_open(&ring, path);

	if (err)
		return err;
	/* before reading: a writer that ended after this wrote nothing more */
	*gone = ct_gpu_ring_writer_gone(ring.hdr);
	err = ring_owner_ok(&ring, dir_uid);
	if (err) {
		ct_gpu_ring_close(&ring);
		return err;
	}
	while (ct_gpu_ring_pop(&ring, &r) == 1) {
		err = add_rec(j, &r, ring.hdr->pid);
		if (err)
			break;
	}
	j->dropped += ct_gpu_ring_dropped(&ring);
	j->errors += ct_gpu_ring_errors(&ring);
	j->rings++;
	ct_gpu_ring_close(&ring);
	return err;
}

int gc_job_read_ring(struct gc_job *j, const char *path)
{
	bool gone;

	return read_ring(j, path, (uid_t)-1, &gone);
}

static bool is_ring_name(const char *name)
{
	return !strncmp(name, "commtap-nccl.", 13) || !strncmp(name, "commtap-cupti.", 14);
}

int gc_rings_attach(const char *dir)
{
	DIR *d = opendir(dir);
	struct ct_gpu_ring ring;
	struct dirent *e;
	char path[1024];
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!is_ring_name(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (ct_gpu_ring_open(&ring, path))
			continue; /* counted when the rings are read */
		ct_gpu_ring_attach(&ring);
		ct_gpu_ring_close(&ring);
		n++;
	}
	closedir(d);
	return n;
}

static const char *skip_reason(int err, char *buf, size_t len)
{
	switch (err) {
	case -ELOOP:
		return "a symbolic link";
	case -EINVAL:
		return "not a regular file, or shorter than a ring header";
	case -EPROTO:
		return "not a commtap ring (magic, version or sizes)";
	case -EPERM:
		return "owned by another user than root, the directory's owner or its writer";
	default:
		snprintf(buf, len, "%s", strerror(-err));
		return buf;
	}
}

int gc_job_read_dir(struct gc_job *j, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char path[1024], why[64];
	int n = 0, err = 0;

	if (!d)
		return -errno;
	if (fstat(dirfd(d), &st)) {
		err = -errno;
		closedir(d);
		return err;
	}
	while ((e = readdir(d))) {
		bool gone = false;

		if (!is_ring_name(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		err = read_ring(j, path, st.st_uid, &gone);
		if (err == -ENOMEM)
			break;
		if (!err && j->reap && gone && !unlinkat(dirfd(d), e->d_name, 0))
			j->rings_removed++;
		if (err) {
			if (!j->rings_skipped++)
				snprintf(j->skip_note, sizeof(j->skip_note), "%.240s: %s",
					 e->d_name, skip_reason(err, why, sizeof(why)));
			err = 0;
			continue;
		}
		n++;
	}
	closedir(d);
	return err ? err : n;
}

static int cmp_op_id(const void *a, const void *b)
{
	const struct gc_op *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_op_start(const void *a, const void *b)
{
	const struct gc_op *x = a, *y = b;

	return x->t_start < y->t_start ? -1 : x->t_start > y->t_start;
}

/* An operation runs from its first child's start to its last child's stop
 * (the collective's own stop only says it was enqueued). Ids are unique
 * within a process: operations are keyed by (pid, id). */
void gc_job_finish(struct gc_job *j)
{
	/* qsort and bsearch take no NULL array, even for no elements (a ring
	 * without operations) */
	if (j->n_ops)
		qsort(j->ops, j->n_ops, sizeof(*j->ops), cmp_op_id);
	for (size_t i = 0; i < n_children && j->n_ops; i++) {
		struct gc_op key = {.pid = children[i].pid, .id = children[i].parent};
		struct gc_op *o = bsearch(&key, j->ops, j->n_ops, sizeof(*j->ops), cmp_op_id);

		if (!o)
			continue;
		if (!o->t_start || children[i].t_start < o->t_start)
			o->t_start = children[i].t_start;
		if (children[i].t_stop > o->t_end)
			o->t_end = children[i].t_stop;
	}
	for (size_t i = 0; i < j->n_ops; i++) {
		struct gc_op *o = &j->ops[i];
		struct gc_comm *c = &j->comms[o->comm];

		if (!o->t_start)
			o->t_start = o->t_enqueue;
		if (!c->t_first_op || o->t_enqueue < c->t_first_op)
			c->t_first_op = o->t_enqueue;
		if (o->p2p)
			c->n_p2p++;
		else
			c->n_coll++;
		c->bytes += o->bytes;
		c->main_func = o->func; /* refined in gc_classify */
	}
	if (j->n_ops)
		qsort(j->ops, j->n_ops, sizeof(*j->ops), cmp_op_start);
	free(children);
	children = NULL;
	n_children = cap_children = 0;
}
