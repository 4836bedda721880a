// SPDX-License-Identifier: MIT
/*
 * The jobs of this host's processes (job_names.h). A flow is joined to its
 * process by what the kernel says owns it: a TCP socket by its ports
 * (/proc/net/tcp{,6} and /proc/PID/fd, as the GPU join does), a RoCE flow
 * by its queue pair (the RDMA resource dump, which names the QP's process).
 * Only flows from or to an address of this network namespace are named.
 */
#include "job_names.h"

#include "gpu_corr.h"
#ifdef COMMTAP_HAVE_MNL
#include "rdma_qp.h"
#endif

#include <commtap/parse.h>

#include <json-c/json.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENVIRON_MAX (256 * 1024) /* ARG_MAX's order: a process's whole environment */

static const char *env_get(const char *env, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		if ((size_t)(env + len - p) > klen && !strncmp(p, key, klen) && p[klen] == '=')
			return p + klen + 1;
	return NULL;
}

/*
 * The job of a pod's training operator, where the pod's environment names it.
 * Operators name their jobs by labels, which a process reads only where the
 * pod passes them in through the downward API, except PyTorchJob's master:
 *   JobSet: JOBSET_NAME, the jobset.sigs.k8s.io/jobset-name label as JobSet's
 *     users pass it (Kubeflow Trainer's runtimes, XPK, Pathways);
 *   Volcano: VC_JOB_NAME, its volcano.sh/job-name label the same way (its env
 *     plugin itself gives only VK_TASK_INDEX / VC_TASK_INDEX, a rank);
 *   Kubeflow PyTorchJob: the training operator gives every replica
 *     MASTER_ADDR=<job>-master-0 and names its pods <job>-master-N and
 *     <job>-worker-N, so a pod named after its MASTER_ADDR's job is that
 *     job's replica.
 */
static int operator_job(const char *env, size_t len, const struct ct_pod *pod, char *name,
			size_t size)
{
	static const char master[] = "-master-0";
	const char *jobset = env_get(env, len, "JOBSET_NAME");
	const char *volcano = env_get(env, len, "VC_JOB_NAME");
	const char *addr = env_get(env, len, "MASTER_ADDR");
	size_t job_len, addr_len = addr ? strlen(addr) : 0;

	if (jobset && *jobset)
		return snprintf(name, size, "jobset:%s/%s", pod->ns, jobset);
	if (volcano && *volcano)
		return snprintf(name, size, "volcano:%s/%s", pod->ns, volcano);
	if (addr_len <= sizeof(master) - 1 ||
	    strcmp(addr + addr_len - (sizeof(master) - 1), master))
		return -1;
	job_len = addr_len - (sizeof(master) - 1);
	/* the pod <job>-master-N or <job>-worker-N */
	if (strncmp(pod->name, addr, job_len) || (strncmp(pod->name + job_len, "-master-", 8) &&
						  strncmp(pod->name + job_len, "-worker-", 8)))
		return -1;
	return snprintf(name, size, "pytorchjob:%s/%.*s", pod->ns, (int)job_len, addr);
}

int ct_job_name_of_process(const char *env, size_t len, const struct ct_pod *pod, char *name,
			   size_t size)
{
	const char *slurm, *run, *addr, *port;
	int n = -1;

	if (!len || env[len - 1])
		return -ENOENT; /* the last entry unterminated: cut short, not trusted */
	slurm = env_get(env, len, "SLURM_JOB_ID");
	run = env_get(env, len, "TORCHELASTIC_RUN_ID");
	addr = env_get(env, len, "MASTER_ADDR");
	port = env_get(env, len, "MASTER_PORT");
	if (slurm && *slurm)
		n = snprintf(name, size, "slurm:%s", slurm);
	else if (pod) {
		n = operator_job(env, len, pod, name, size);
		/* a pod of no operator's: the pod is the job (one pod, its GPUs) */
		if (n < 0)
			n = snprintf(name, size, "pod:%s/%s", pod->ns, pod->name);
	} else if (run && *run && strcmp(run, "none"))
		n = snprintf(name, size, "torchelastic:%s", run);
	else if (addr && *addr && port && *port)
		n = snprintf(name, size, "torch:%s:%s", addr, port);
	return n > 0 && (size_t)n < size ? 0 : -ENOENT;
}

int ct_job_name_from_environ(const char *env, size_t len, char *name, size_t size)
{
	return ct_job_name_of_process(env, len, NULL, name, size);
}

/* A process's job, read once per report. */
struct pid_job {
	int32_t pid;
	int named; /* 1: name holds it; 0: the process has none (or is gone) */
	char name[CT_JOB_NAME_LEN];
};

struct namer {
	struct pid_job *pids;
	size_t n_pids, cap_pids;
	struct ct_addr *local;
	size_t n_local;
	const struct ct_labels *known; /* named before: not looked up again */
	struct ct_labels *out;
	size_t cap;
	const char *pod_root; /* the node's pod log root, or NULL */
	int err;
};

#define CGROUP_TEXT_MAX 4096 /* /proc/PID/cgroup: a line per v1 hierarchy, paths of ~200 */

/* The pod pid runs in: 0, or -ENOENT (in none, gone, or its pod not on the node's list). */
static int pod_of_pid(const char *pod_root, int32_t pid, struct ct_pod *pod)
{
	char path[64], text[CGROUP_TEXT_MAX], uid[37];
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	if (ct_pod_uid_of_cgroup(text, uid))
		return -ENOENT;
	return ct_pod_find(pod_root, uid, pod) ? -ENOENT : 0;
}

static const char *job_of_pid(struct namer *m, int32_t pid)
{
	char path[64], *env;
	struct pid_job *p;
	ssize_t len = 0, got;
	int fd;

	for (size_t i = 0; i < m->n_pids; i++)
		if (m->pids[i].pid == pid)
			return m->pids[i].named ? m->pids[i].name : NULL;
	if (m->n_pids == m->cap_pids) {
		size_t cap = m->cap_pids ? 2 * m->cap_pids : 16;
		void *grown = realloc(m->pids, cap * sizeof(*m->pids));

		if (!grown) {
			m->err = -ENOMEM;
			return NULL;
		}
		m->pids = grown;
		m->cap_pids = cap;
	}
	p = &m->pids[m->n_pids++];
	p->pid = pid;
	p->named = 0;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	env = malloc(ENVIRON_MAX);
	fd = env ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	while (fd >= 0 && len < ENVIRON_MAX && (got = read(fd, env + len, ENVIRON_MAX - len)) > 0)
		len += got;
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && len < ENVIRON_MAX) {
		struct ct_pod pod;
		int in_pod = m->pod_root && !pod_of_pid(m->pod_root, pid, &pod);

		p->named = !ct_job_name_of_process(env, (size_t)len, in_pod ? &pod : NULL, p->name,
						   sizeof(p->name));
	}
	free(env);
	return p->named ? p->name : NULL;
}

static int is_local(const struct namer *m, const struct ct_addr *a)
{
	for (size_t i = 0; i < m->n_local; i++)
		if (!memcmp(&m->local[i], a, sizeof(*a)))
			return 1;
	return 0;
}

/* A flow of this host, of transport, not named before. */
static int wanted(const struct namer *m, const struct ct_flow_key *k, uint8_t transport)
{
	return k->transport == transport && (is_local(m, &k->src) || is_local(m, &k->dst)) &&
	       !ct_labels_find(m->known, k);
}

/* Whether any flow of set is wanted: else the lookup (/proc, netlink) is skipped. */
static int any_wanted(const struct namer *m, const struct ct_flow_set *set, uint8_t transport)
{
	for (size_t i = 0; i < set->count; i++)
		if (wanted(m, &set->flows[i].key, transport))
			return 1;
	return 0;
}

static int local_addresses(struct namer *m)
{
	struct ifaddrs *all, *i;
	size_t n = 0;

	if (getifaddrs(&all))
		return -errno;
	for (i = all; i; i = i->ifa_next)
		n += i->ifa_addr &&
		     (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6);
	m->local = calloc(n + 1, sizeof(*m->local));
	if (!m->local) {
		freeifaddrs(all);
		return -ENOMEM;
	}
	for (i = all; i; i = i->ifa_next) {
		struct ct_addr *a = &m->local[m->n_local];

		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			memset(a->b, 0, 10);
			a->b[10] = a->b[11] = 0xff;
			memcpy(a->b + 12, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr,
			       4);
			m->n_local++;
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			memcpy(a->b, &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, 16);
			m->n_local++;
		}
	}
	freeifaddrs(all);
	return 0;
}

static void add_label(struct namer *m, const struct ct_flow_key *key, const char *job)
{
	struct ct_label *l;

	if (m->out->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		void *grown = realloc(m->out->l, cap * sizeof(*m->out->l));

		if (!grown) {
			m->err = -ENOMEM;
			return;
		}
		m->out->l = grown;
		m->cap = cap;
	}
	l = &m->out->l[m->out->n++];
	memset(l, 0, sizeof(*l));
	l->key = *key;
	l->no_class = 1;
	snprintf(l->job, sizeof(l->job), "%s", job);
}

static int sock_cmp(const void *pa, const void *pb)
{
	const struct gc_sock *a = pa, *b = pb;

	if (a->lport != b->lport)
		return a->lport < b->lport ? -1 : 1;
	return a->rport < b->rport ? -1 : a->rport > b->rport;
}

static const struct gc_sock *find_sock(const struct gc_job *socks, uint16_t lport, uint16_t rport)
{
	struct gc_sock key = {.lport = lport, .rport = rport};

	return bsearch(&key, socks->socks, socks->n_socks, sizeof(key), sock_cmp);
}

/* TCP: a socket's (local port, remote port) names the flows both ways. */
static void name_tcp(struct namer *m, const struct ct_flow_set *set, struct gc_job *socks)
{
	qsort(socks->socks, socks->n_socks, sizeof(*socks->socks), sock_cmp);
	for (size_t i = 0; i < set->count && !m->err; i++) {
		const struct ct_flow_key *k = &set->flows[i].key;
		uint16_t sport = (uint16_t)(k->id >> 16), dport = (uint16_t)k->id;
		const struct gc_sock *so = NULL;
		const char *job;

		if (!wanted(m, k, CT_TRANSPORT_TCP))
			continue;
		if (is_local(m, &k->src))
			so = find_sock(socks, sport, dport);
		if (!so && is_local(m, &k->dst))
			so = find_sock(socks, dport, sport);
		job = so ? job_of_pid(m, so->pid) : NULL;
		if (job)
			add_label(m, k, job);
	}
}

#ifdef COMMTAP_HAVE_MNL
struct qp_list {
	struct ct_rdma_qp *v;
	size_t n, cap;
};

static void keep_qp(void *arg, const struct ct_rdma_qp *qp)
{
	struct qp_list *l = arg;

	if (!qp->has_pid)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		void *grown = realloc(l->v, cap * sizeof(*l->v));

		if (!grown)
			return;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = *qp;
}

/*
 * RoCE: a flow is named by its destination QP. Sent from here, that is a
 * local QP's remote QPN; received here, the local QP itself.
 */
static void name_roce(struct namer *m, const struct ct_flow_set *set)
{
	struct qp_list qps = {0};

	if (ct_rdma_qp_dump(keep_qp, &qps) <= 0) {
		free(qps.v);
		return;
	}
	for (size_t i = 0; i < set->count && !m->err; i++) {
		const struct ct_flow_key *k = &set->flows[i].key;
		int out = is_local(m, &k->src), in = is_local(m, &k->dst);

		if (!wanted(m, k, CT_TRANSPORT_ROCE))
			continue;
		for (size_t q = 0; q < qps.n; q++) {
			const struct ct_rdma_qp *qp = &qps.v[q];
			const char *job;

			if (!((in && qp->lqpn == k->id) ||
			      (out && qp->has_rqpn && qp->rqpn == k->id)))
				continue;
			job = job_of_pid(m, (int32_t)qp->pid);
			if (job)
				add_label(m, k, job);
			break;
		}
	}
	free(qps.v);
}
#endif

/* Labels for the flows of set that known does not name yet. */
static int name_flows(const struct ct_flow_set *set, const struct ct_labels *known,
		      const char *pod_root, struct ct_labels *out)
{
	struct namer m = {.known = known, .out = out, .pod_root = pod_root};
	struct gc_job socks;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = local_addresses(&m);
	if (rc)
		return rc;
	gc_job_init(&socks);
	if (any_wanted(&m, set, CT_TRANSPORT_TCP) && gc_job_add_proc_sockets(&socks) > 0)
		name_tcp(&m, set, &socks);
	gc_job_free(&socks);
#ifdef COMMTAP_HAVE_MNL
	if (!m.err && any_wanted(&m, set, CT_TRANSPORT_ROCE))
		name_roce(&m, set);
#endif
	free(m.pids);
	free(m.local);
	if (m.err) {
		ct_labels_free(out);
		return m.err;
	}
	ct_labels_sort(out);
	return (int)out->n;
}

int ct_job_labels(const struct ct_flow_set *set, const char *pod_root, struct ct_labels *out)
{
	return name_flows(set, NULL, pod_root, out);
}

static int flow_key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_flow_key));
}

int ct_job_labels_update(struct ct_labels *known, const struct ct_flow_set *set,
			 const char *pod_root)
{
	struct ct_flow_key *keys;
	struct ct_labels fresh;
	struct ct_label *all;
	size_t n;
	int rc;

	/* fresh names only flows known does not name */
	rc = name_flows(set, known, pod_root, &fresh);
	if (rc < 0)
		return rc;
	all = realloc(fresh.l, (fresh.n + known->n + 1) * sizeof(*all));
	keys = malloc((set->count + 1) * sizeof(*keys));
	if (!all || !keys) {
		free(keys);
		free(all ? all : fresh.l);
		return -ENOMEM;
	}
	for (size_t i = 0; i < set->count; i++)
		keys[i] = set->flows[i].key;
	qsort(keys, set->count, sizeof(*keys), flow_key_cmp);
	n = fresh.n;
	/* what was learnt before, for flows still reported */
	for (size_t i = 0; i < known->n; i++)
		if (bsearch(&known->l[i].key, keys, set->count, sizeof(*keys), flow_key_cmp))
			all[n++] = known->l[i];
	free(keys);
	rc = fresh.n || n != known->n; /* named afresh, or some forgotten */
	ct_labels_free(known);
	known->l = all;
	known->n = n;
	ct_labels_sort(known);
	return rc;
}

int ct_job_labels_print(FILE *out, const struct ct_labels *l)
{
	char a[64], b[64];

	fputs("{\"schema\": \"commtap.labels/v1\", \"flows\": [", out);
	for (size_t i = 0; i < l->n; i++) {
		const struct ct_flow_key *k = &l->l[i].key;
		json_object *job = json_object_new_string(l->l[i].job);

		fprintf(out, "%s\n {\"transport\": \"%s\", \"src\": \"%s\", \"dst\": \"%s\", ",
			i ? "," : "", k->transport == CT_TRANSPORT_TCP ? "tcp" : "roce",
			ct_addr_format(&k->src, a, sizeof(a)),
			ct_addr_format(&k->dst, b, sizeof(b)));
		if (k->transport == CT_TRANSPORT_TCP)
			fprintf(out, "\"sport\": %u, \"dport\": %u", (unsigned)(k->id >> 16),
				(unsigned)(k->id & 0xffff));
		else
			fprintf(out, "\"qpn\": %u", (unsigned)k->id);
		/* json-c escapes the name as JSON wants it */
		fprintf(out, ", \"job\": %s}", job ? json_object_to_json_string(job) : "\"\"");
		json_object_put(job);
	}
	fputs("\n]}\n", out);
	return ferror(out) ? -EIO : 0;
}
