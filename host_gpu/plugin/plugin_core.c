// SPDX-License-Identifier: MIT
/*
 * NCCL profiler plugin core: the process-wide ring and event pool, the
 * per-communicator contexts, and the event lifecycle common to v4 and v5.
 *
 * Event objects come from a pool allocated at the first init, handed out
 * round-robin: NCCL hands a collective's handle to its proxy and
 * kernel-channel children after the collective has stopped, so a stopped
 * event must stay resolvable for a while; round-robin reuse gives it the
 * whole pool's length of other events. Taking an object is one relaxed
 * exchange (plus one fetch-add per 64 events): it never waits on another
 * thread.
 */
#include "plugin_core.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "commtap/gpu_names.h"
#include "commtap/gpu_ring_dir.h"

#define DEFAULT_SLOTS  65536
#define DEFAULT_EVENTS 16384
#define DEFAULT_LANES  8

int np_disabled;
struct np_event *np_events;
uint32_t np_events_mask;

#define CHUNK	  64 /* pool slots a thread claims at once */
#define ALLOC_TRY 8

static struct {
	pthread_mutex_t lock;
	bool ready;
	bool removed; /* the ring's file went at the last finalize */
	struct ct_gpu_ring ring;
	char ring_path[512];
	struct np_event *events;
	uint32_t n_events;
	uint32_t mask;
	_Alignas(64) uint64_t next; /* next pool position to hand out, in CHUNKs */
	nccl_logger_t logfn;
	int n_ctx;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* This thread's claimed run of pool positions [tl_next, tl_end). */
static __thread uint64_t tl_next __attribute__((tls_model("initial-exec")));
static __thread uint64_t tl_end __attribute__((tls_model("initial-exec")));

static void log_line(int level, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (g.logfn)
		g.logfn(level, NCCL_SUBSYS_INIT, __FILE__, __LINE__, "%s", msg);
	else
		fprintf(stderr, "%s\n", msg);
}

void np_fail(const char *what, int err)
{
	if (__atomic_exchange_n(&np_disabled, 1, __ATOMIC_ACQ_REL))
		return;
	log_line(NCCL_LOG_WARN, "commtap profiler: disabled: %s: %s", what, strerror(-err));
}

/* Round-robin over the pool: a slot is reused only after the whole pool has
 * gone by, so a stopped event stays resolvable by its children until then.
 * The exchange settles the rare race with a thread whose claimed run of
 * positions has gone stale over a whole round of the pool. */
static struct np_event *pool_take(void)
{
	for (int i = 0; i < ALLOC_TRY; i++) {
		struct np_event *ev;

		if (tl_next == tl_end) {
			tl_next = __atomic_fetch_add(&g.next, CHUNK, __ATOMIC_RELAXED);
			tl_end = tl_next + CHUNK;
		}
		ev = &g.events[tl_next++ & g.mask];
		/* The thread's next object, last touched a whole pool ago (out of
		 * cache): fetched while this event is filled. */
		__builtin_prefetch(&g.events[tl_next & g.mask], 1);
		__builtin_prefetch((const char *)&g.events[tl_next & g.mask] + 64, 1);
		if (!__atomic_load_n(&ev->m.busy, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&ev->m.busy, 1, __ATOMIC_ACQUIRE))
			return ev;
	}
	return NULL;
}

static unsigned long env_ulong(const char *name, unsigned long def, unsigned long lo,
			       unsigned long hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < lo || v > hi) {
		log_line(NCCL_LOG_WARN, "commtap profiler: %s=%s is not in [%lu, %lu], using %lu",
			 name, s, lo, hi, def);
		return def;
	}
	return v;
}

static int pool_init(uint32_t n)
{
	uint32_t size = 64;

	while (size < n)
		size <<= 1;
	g.events = mmap(NULL, (size_t)size * sizeof(struct np_event), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.events == MAP_FAILED)
		return -errno;
	g.n_events = size;
	g.mask = size - 1;
	np_events_mask = g.mask;
	/* Published last: np_event_of resolves nothing before. */
	__atomic_store_n(&np_events, g.events, __ATOMIC_RELEASE);
	return 0;
}

/*
 * The ring, in the ring directory (gpu_ring_dir.h): the rings of ended
 * processes are removed first while this one would not fit its bound.
 */
static int ring_create(void)
{
	uint32_t slots = (uint32_t)env_ulong("COMMTAP_GPU_RING_SLOTS", DEFAULT_SLOTS, 64, 1u << 26);
	uint32_t lanes = (uint32_t)env_ulong("COMMTAP_GPU_RING_LANES", DEFAULT_LANES, 1,
					     CT_GPU_RING_MAX_LANES);
	char name[64];
	int dirfd, err;
	size_t n;

	dirfd = ct_gpu_ring_dir_open(g.ring_path, sizeof(g.ring_path));
	if (dirfd < 0)
		return dirfd;
	snprintf(name, sizeof(name), "commtap-nccl.%d", (int)getpid());
	n = strlen(g.ring_path);
	snprintf(g.ring_path + n, sizeof(g.ring_path) - n, "/%s", name);
	err = ct_gpu_ring_dir_prune(dirfd, ct_gpu_ring_bytes(slots, lanes), ct_gpu_ring_dir_max(),
				    true);
	if (!err) {
		err = ct_gpu_ring_create_at(&g.ring, dirfd, name, slots, lanes,
					    CT_GPU_SRC_NCCL_PLUGIN);
		ct_gpu_ring_dir_unlock(dirfd);
	}
	close(dirfd);
	return err;
}

int np_global_init(nccl_logger_t logfn)
{
	int err = 0;

	pthread_mutex_lock(&g.lock);
	if (logfn && !g.logfn)
		g.logfn = logfn;
	if ((g.ready && !g.removed) || np_disabled)
		goto out;
	if (g.removed) {
		/* A communicator after the last one finalized: a new ring (no
		 * event of the old one is pending: every communicator ended). */
		ct_gpu_ring_close(&g.ring);
		g.removed = false;
		err = ring_create();
		if (err)
			goto fail_ring;
		goto out;
	}
	err = ring_create();
	if (err)
		goto fail_ring;
	err = pool_init((uint32_t)env_ulong("COMMTAP_NCCL_EVENTS", DEFAULT_EVENTS, 64, 1u << 24));
	if (err) {
		pthread_mutex_unlock(&g.lock);
		np_fail("allocating the event pool", err);
		return err;
	}
	np_clock_init();
	g.ready = true;
	log_line(NCCL_LOG_INFO,
		 "commtap profiler: ring %s (%u lanes of %u slots), %u event objects", g.ring_path,
		 g.ring.hdr->lanes, g.ring.hdr->lane_slots, g.n_events);
out:
	pthread_mutex_unlock(&g.lock);
	return np_disabled ? -ENODEV : err;
fail_ring:
	g.ready = false;
	pthread_mutex_unlock(&g.lock);
	{
		char what[600];

		snprintf(what, sizeof(what), "creating the event ring %s", g.ring_path);
		np_fail(what, err);
	}
	return err;
}

static void push(const struct ct_gpu_rec *rec)
{
	ct_gpu_ring_push(&g.ring, rec);
}

struct np_ctx *np_ctx_init(int version, uint64_t comm_hash, const char *name, int n_nodes,
			   int nranks, int rank, int *mask, nccl_logger_t logfn)
{
	/* Events NCCL can emit under each version; ProxyCtrl is never asked for. */
	const int supported = (version >= 6   ? 0x7fff
			       : version >= 5 ? 0xfff
					      : 0xff) &
			      ~NP_PROXY_CTRL;
	const int v5_def = NP_GROUP_API | NP_COLL_API | NP_P2P_API | NP_KERNEL_LAUNCH | NP_COLL |
			   NP_P2P | NP_PROXY_OP | NP_PROXY_STEP | NP_KERNEL_CH | NP_NET_PLUGIN;
	const int def = version >= 6   ? v5_def | NP_CE_COLL | NP_CE_SYNC | NP_CE_BATCH
			: version >= 5 ? v5_def
				       : NP_GROUP | NP_COLL | NP_P2P | NP_PROXY_OP | NP_PROXY_STEP |
						 NP_KERNEL_CH | NP_NET_PLUGIN;
	struct ct_gpu_rec rec;
	struct np_ctx *ctx;

	/* NCCL hands every init the same process-wide mask: it is written
	 * once, with the final value, never zeroed on the way (a communicator
	 * starting in another thread would read the zero). */
	if (!mask)
		return NULL;
	if (np_global_init(logfn) < 0) {
		*mask = 0;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		np_fail("allocating a communicator context", -ENOMEM);
		*mask = 0;
		return NULL;
	}
	ctx->comm_hash = comm_hash;
	ctx->rank = rank;
	ctx->version = version;
	ctx->mask = (int)env_ulong("COMMTAP_NCCL_MASK", (unsigned long)def, 0, 0xffff) & supported;
	*mask = ctx->mask;

	memset(&rec, 0, sizeof(rec));
	rec.type = CT_GPU_REC_COMM;
	rec.rank = rank;
	rec.comm_hash = comm_hash;
	rec.t_start = rec.t_stop = np_now();
	if (name)
		strncpy(rec.comm.name, name, sizeof(rec.comm.name) - 1);
	rec.comm.n_nodes = n_nodes;
	rec.comm.n_ranks = nranks;
	rec.comm.rank = rank;
	rec.comm.version = (uint32_t)version;
	push(&rec);
	pthread_mutex_lock(&g.lock);
	g.n_ctx++;
	pthread_mutex_unlock(&g.lock);
	return ctx;
}

void np_ctx_finalize(struct np_ctx *ctx)
{
	struct ct_gpu_rec rec;

	if (!ctx)
		return;
	if (!np_disabled && g.ready) {
		memset(&rec, 0, sizeof(rec));
		rec.type = CT_GPU_REC_COMM_END;
		rec.rank = ctx->rank;
		rec.comm_hash = ctx->comm_hash;
		rec.t_start = rec.t_stop = np_now();
		push(&rec);
	}
	pthread_mutex_lock(&g.lock);
	/* The last communicator: the ring goes unless a reader attached (it
	 * removes it once read) or COMMTAP_GPU_RING_KEEP=1 keeps it for a
	 * correlation after the job. The mapping stays until the next ring. */
	if (!--g.n_ctx && g.ready && !g.removed && !ct_gpu_ring_attached(&g.ring) &&
	    !env_ulong("COMMTAP_GPU_RING_KEEP", 0, 0, 1)) {
		unlink(g.ring_path);
		g.removed = true;
	}
	pthread_mutex_unlock(&g.lock);
	free(ctx);
}

/*
 * One clock read for calls NCCL makes back to back. NCCL emits some events
 * from one code path with no work between the calls (NCCL 2.28 source):
 *   - ncclGroupStart / an implicit group: start GroupApi, its
 *     GroupStartApiStop state, start CollApi / P2pApi (enqueue.cc);
 *   - hostStreamPlanTask: start Group, then each task's Coll / P2p start in
 *     one loop; each task's stop in one loop, then stop Group (enqueue.cc,
 *     plugin/profiler.cc);
 *   - the proxy: isend / irecv starts the net plugin's QP event and returns,
 *     and the step's SendWait state follows; test() stops the QP event on
 *     its completion and the step stops when test() says done (net.cc).
 * A call that follows such a partner as the thread's very previous plugin
 * call takes the partner's time instead of reading the clock (a read is
 * 16-30 ns on a VM, half of the plugin's cost per event): the difference is
 * NCCL's few instructions between the calls. Every call on a thread
 * replaces the record, so nothing older than the previous call is reused.
 */
enum { PREV_NONE, PREV_START, PREV_STOP, PREV_STATE };

static __thread struct {
	uint8_t op;	    /* PREV_* */
	uint8_t state;	    /* the state, for PREV_STATE */
	uint16_t type;	    /* record type of the event */
	uint64_t id;	    /* its id */
	uint64_t parent_id; /* its parent's id */
	uint64_t t;	    /* the time it carried; 0: none */
} tl_prev __attribute__((tls_model("initial-exec")));

static inline void prev_set(int op, int state, const struct np_event *ev, uint64_t t)
{
	tl_prev.op = (uint8_t)op;
	tl_prev.state = (uint8_t)state;
	tl_prev.type = ev->rec.type;
	tl_prev.id = ev->rec.id;
	tl_prev.parent_id = ev->rec.parent_id;
	tl_prev.t = t;
}

static inline bool is_task(uint16_t type)
{
	return type == CT_GPU_REC_COLL || type == CT_GPU_REC_P2P;
}

static inline bool is_net(uint16_t type)
{
	return type == CT_GPU_REC_NET_QP || type == CT_GPU_REC_NET_OTHER;
}

static inline bool is_net_state(int state)
{
	return state == NS_STEP_SEND_WAIT || state == NS_STEP_RECV_FLUSH_WAIT;
}

/* The start time of `ev` (type, parent_id set): its partner's or a read. */
static inline uint64_t start_time(const struct np_event *ev)
{
	uint16_t type = ev->rec.type;

	if (tl_prev.t) {
		/* A task after its group's start or the previous task's. */
		if (is_task(type) && tl_prev.op == PREV_START &&
		    (tl_prev.type == CT_GPU_REC_GROUP || is_task(tl_prev.type)))
			return tl_prev.t;
		/* The API event right after its group API's GroupStartApiStop. */
		if ((type == CT_GPU_REC_COLL_API || type == CT_GPU_REC_P2P_API) &&
		    tl_prev.op == PREV_STATE && tl_prev.state == NS_GROUP_START_API_STOP &&
		    ev->rec.parent_id == tl_prev.id)
			return tl_prev.t;
		/* A QP event right after its step went on the wire. */
		if (is_net(type) && tl_prev.op == PREV_STATE && is_net_state(tl_prev.state) &&
		    ev->rec.parent_id == tl_prev.id)
			return tl_prev.t;
	}
	return np_now();
}

static inline uint64_t stop_time(const struct np_event *ev)
{
	uint16_t type = ev->rec.type;

	if (tl_prev.t && tl_prev.op == PREV_STOP) {
		/* The group or a task after a task's stop (one loop). */
		if ((is_task(type) || type == CT_GPU_REC_GROUP) && is_task(tl_prev.type))
			return tl_prev.t;
		/* A step after its QP event completed. */
		if (type == CT_GPU_REC_PROXY_STEP && is_net(tl_prev.type) &&
		    tl_prev.parent_id == ev->rec.id)
			return tl_prev.t;
	}
	return np_now();
}

/* A state's time: its partner's or a read. */
static inline uint64_t state_time(const struct np_event *ev, int state)
{
	if (tl_prev.t) {
		/* GroupStartApiStop right after the group API's start. */
		if (state == NS_GROUP_START_API_STOP && tl_prev.op == PREV_START &&
		    tl_prev.id == ev->rec.id)
			return tl_prev.t;
		/* The step on the wire right after its QP event started. */
		if (is_net_state(state) && tl_prev.op == PREV_START && is_net(tl_prev.type) &&
		    tl_prev.parent_id == ev->rec.id)
			return tl_prev.t;
	}
	return np_now();
}

void *np_event_handle(const struct np_event *ev)
{
	return ev ? (void *)(uintptr_t)ev->rec.id : NULL;
}

struct np_event *np_event_start(const struct np_ctx *ctx, uint16_t type, int rank, void *parent)
{
	struct np_event *ev, *par;
	uint64_t id, index;

	if (__builtin_expect(np_disabled || !g.ready, 0))
		return NULL;
	ev = pool_take();
	if (!ev) {
		tl_prev.op = PREV_NONE;
		ct_gpu_ring_count_error(&g.ring);
		return NULL;
	}
	/* The next generation of this slot: the old id holds the old one. */
	index = (uint64_t)(ev - g.events);
	id = ev->rec.id ? (((ev->rec.id - 1) >> 24) + 1) << 24 | index : index;
	ev->rec.type = type;
	ev->rec.flags = 0;
	ev->rec.rank = rank;
	ev->rec.comm_hash = ctx->comm_hash;
	__atomic_store_n(&ev->rec.id, id + 1, __ATOMIC_RELAXED);
	ev->rec.t_stop = 0;
	memset(ev->rec.raw, 0, sizeof(ev->rec.raw));
	par = np_event_of(parent);
	ev->rec.parent_id = par ? (uint64_t)(uintptr_t)parent : 0;
	if (type == CT_GPU_REC_PROXY_STEP) {
		/* A step sends or receives on its proxy op's channel, to its peer. */
		if (par && par->rec.type == CT_GPU_REC_PROXY_OP) {
			ev->rec.proxy.is_send = par->rec.proxy.is_send;
			ev->rec.proxy.channel = par->rec.proxy.channel;
			ev->rec.proxy.peer = par->rec.proxy.peer;
		} else {
			ev->rec.proxy.peer = -1;
		}
	}
	ev->rec.t_start = start_time(ev);
	prev_set(PREV_START, 0, ev, ev->rec.t_start);
	return ev;
}

void np_event_stop(struct np_event *ev)
{
	if (!ev || np_disabled || !__atomic_load_n(&ev->m.busy, __ATOMIC_RELAXED)) {
		tl_prev.op = PREV_NONE;
		return;
	}
	ev->rec.t_stop = stop_time(ev);
	prev_set(PREV_STOP, 0, ev, ev->rec.t_stop);
	ct_gpu_ring_push(&g.ring, &ev->rec);
	/* The id stays: children that start later still find their parent. */
	__atomic_store_n(&ev->m.busy, 0, __ATOMIC_RELEASE);
}

void np_event_state(struct np_event *ev, int state, const union np_state_args *a)
{
	uint64_t t = 0;

	if (!ev || np_disabled) {
		tl_prev.op = PREV_NONE;
		return;
	}
	switch (ev->rec.type) {
	case CT_GPU_REC_PROXY_STEP:
		/* NCCL enters the first wait state in the call path that posts the
		 * step, nanoseconds after its start: the start time stands for it
		 * and saves a clock read (one read is 25-35 ns on a VM). */
		if (state == NS_STEP_SEND_GPU_WAIT || state == NS_STEP_RECV_WAIT) {
			if (!ev->rec.proxy.t_wait)
				ev->rec.proxy.t_wait = ev->rec.t_start;
		} else if (is_net_state(state)) {
			ev->rec.proxy.t_net = t = state_time(ev, state);
		} else if (state == NS_STEP_RECV_GPU_WAIT) {
			ev->rec.proxy.t_done = t = np_now();
		} else if (state != NS_STEP_SEND_PEER_WAIT) {
			break;
		}
		if (a)
			ev->rec.proxy.trans_size = a->proxy_step.trans_size;
		break;
	case CT_GPU_REC_KERNEL_CH:
		if (state == NS_KERNEL_CH_STOP && a)
			ev->rec.kch.gpu_stop = a->kernel_ch.p_timer;
		break;
	case CT_GPU_REC_GROUP_API:
		if (state == NS_GROUP_START_API_STOP)
			ev->rec.op.t_mark1 = t = state_time(ev, state);
		else if (state == NS_GROUP_END_API_START)
			ev->rec.op.t_mark2 = t = np_now();
		break;
	default:
		break;
	}
	prev_set(PREV_STATE, state, ev, t);
}

/* NCCL passes the same static strings every time: a per-thread cache from
 * string address to id saves the string compares. */
enum { NAME_FUNC, NAME_DTYPE, NAME_ALGO, NAME_PROTO, NAME_KINDS };
#define NAME_CACHE 16

static __thread struct {
	const char *ptr;
	uint8_t id;
} tl_names[NAME_KINDS][NAME_CACHE] __attribute__((tls_model("initial-exec")));

static uint8_t name_id(int kind, const char *s)
{
	unsigned slot = (unsigned)((uintptr_t)s >> 3) % NAME_CACHE;
	uint8_t id;

	if (!s)
		return 0;
	if (tl_names[kind][slot].ptr == s)
		return tl_names[kind][slot].id;
	switch (kind) {
	case NAME_FUNC:
		id = ct_gpu_func_id(s);
		break;
	case NAME_DTYPE:
		id = ct_gpu_dtype_id(s);
		break;
	case NAME_ALGO:
		id = ct_gpu_algo_id(s);
		break;
	default:
		id = ct_gpu_proto_id(s);
		break;
	}
	tl_names[kind][slot].ptr = s;
	tl_names[kind][slot].id = id;
	return id;
}

uint8_t np_func_id(const char *s)
{
	return name_id(NAME_FUNC, s);
}

uint8_t np_dtype_id(const char *s)
{
	return name_id(NAME_DTYPE, s);
}

static uint64_t op_bytes(uint64_t count, uint8_t dtype)
{
	unsigned sz = ct_gpu_dtype_size(dtype);

	return sz && count <= UINT64_MAX / sz ? count * sz : 0;
}

void np_fill_coll(struct np_event *ev, const struct np_coll *c)
{
	struct ct_gpu_op_info *o = &ev->rec.op;

	o->seq = c->seq_number;
	o->count = c->count;
	o->func = name_id(NAME_FUNC, c->func);
	o->datatype = name_id(NAME_DTYPE, c->datatype);
	o->algo = name_id(NAME_ALGO, c->algo);
	o->proto = name_id(NAME_PROTO, c->proto);
	o->n_channels = c->n_channels;
	o->n_warps = c->n_warps;
	o->root = c->root;
	o->peer = -1;
	o->bytes = op_bytes(c->count, o->datatype);
}

void np_fill_p2p(struct np_event *ev, const struct np_p2p *p)
{
	struct ct_gpu_op_info *o = &ev->rec.op;

	o->count = p->count;
	o->func = name_id(NAME_FUNC, p->func);
	o->datatype = name_id(NAME_DTYPE, p->datatype);
	o->n_channels = p->n_channels;
	o->root = -1;
	o->peer = p->peer;
	o->bytes = op_bytes(p->count, o->datatype);
}

void np_fill_proxy_op(struct np_event *ev, const struct np_proxy_op *p)
{
	ev->rec.proxy.pid = p->pid;
	ev->rec.proxy.n_steps = p->n_steps;
	ev->rec.proxy.chunk_size = p->chunk_size;
	ev->rec.proxy.step = -1;
	ev->rec.proxy.is_send = p->is_send ? 1 : 0;
	ev->rec.proxy.channel = p->channel_id;
	ev->rec.proxy.peer = p->peer;
}

void np_fill_proxy_step(struct np_event *ev, int step)
{
	ev->rec.proxy.step = step;
}

void np_fill_kernel_ch(struct np_event *ev, const struct np_kernel_ch *k)
{
	ev->rec.kch.channel = k->channel_id;
	ev->rec.kch.gpu_start = k->p_timer;
}

void np_fill_net(struct np_event *ev, const struct np_net_plugin *n)
{
	const struct np_net_ib_descr_v1 *ib = n->data;
	uint32_t id = (uint32_t)n->id;

	ev->rec.net.plugin_id = id;
	if ((id & NP_NET_TYPE_MASK) == NP_NET_TYPE_IB && (id & 0xffff) == 1 && ib &&
	    ib->type == NP_NET_IB_QP) {
		ev->rec.type = CT_GPU_REC_NET_QP;
		ev->rec.net.device = ib->qp.device;
		ev->rec.net.wr_id = ib->qp.wr_id;
		ev->rec.net.opcode = ib->qp.opcode;
		ev->rec.net.qpn = (uint32_t)ib->qp.qp_num;
		ev->rec.net.length = ib->qp.length;
	} else {
		ev->rec.type = CT_GPU_REC_NET_OTHER;
	}
}
