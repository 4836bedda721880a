// SPDX-License-Identifier: MIT
/*
 * commtap-mirror [EAL options] -- [options]: EAL, one mempool, the port in
 * promiscuous mode, one engine per worker lcore (RSS on the IP pair when the
 * port offers it, else one RX lcore hashing flows to the workers' rings),
 * cumulative reports, and a final report on SIGINT/SIGTERM or end of replay.
 */
#include "mirror.h"
#include "report_sink.h"

#include <commtap/analysis.h>
#include <commtap/log.h>

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#define RX_DESC	   1024
#define POOL_MBUFS 8191
#define RING_SLOTS 4096
#define POOL_CACHE 256 /* mbufs cached per lcore */
/* room for a 9 KiB jumbo frame in one segment (mirror copies are often truncated) */
#define MBUF_DATA_ROOM (RTE_PKTMBUF_HEADROOM + 9728)

static volatile sig_atomic_t stop_requested;
static volatile int workers_quit;
static volatile int distributor_done; /* nothing more will enter the rings */

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Engine memory on the port's NUMA node. */
static void *socket_alloc(size_t size, size_t align, void *ctx)
{
	return rte_zmalloc_socket("commtap-engine", size, align, (int)(intptr_t)ctx);
}

static void socket_free(void *p, void *ctx)
{
	rte_free(p);
}

static inline uint64_t tsc_to_ns(const struct mirror *m, uint64_t tsc)
{
	return m->ns_base +
	       (uint64_t)((unsigned __int128)(tsc - m->tsc_base) * 1000000000u / m->tsc_hz);
}

/* The NIC clock's line, as the main lcore last wrote it. */
static inline void nic_line_read(const struct mirror *m, struct mirror_clock_line *line)
{
	uint32_t sn;

	do {
		sn = rte_seqlock_read_begin(&m->nic_lock);
		*line = m->nic_line;
	} while (rte_seqlock_read_retry(&m->nic_lock, sn));
}

/* Has this packet been seen within the window (the other end of a mirrored link)? */
static int is_duplicate(const struct mirror *m, struct mirror_worker *w, const uint8_t *d,
			uint32_t len, uint64_t ts)
{
	uint64_t dg = mirror_dedup_digest(d, len);
	uint64_t *slot = &w->dedup[dg & (DEDUP_SLOTS - 1)];
	uint64_t t = ts >> 10; /* ~us, 32 bits kept */
	uint64_t entry = (dg >> 32) << 32 | (t & 0xffffffffu);

	if ((*slot >> 32) == (dg >> 32) &&
	    ((t - *slot) & 0xffffffffu) <= (m->o.dedup_window_ns >> 10) + 1) {
		*slot = 0; /* one copy per packet: the next identical packet is new */
		return 1;
	}
	*slot = entry;
	return 0;
}

static struct mirror app;
static char eal_note[512]; /* what the EAL complained of while starting */

static void process(struct mirror_worker *w, struct rte_mbuf **mb, unsigned n)
{
	const struct mirror *m = &app;
	struct ct_packet pk[MIRROR_BURST];
	uint64_t tsc = rte_rdtsc(), now = 0, bytes = 0, t0;
	struct mirror_clock_line line = {0};
	unsigned k = 0;

	if (!w->first_rx_tsc)
		w->first_rx_tsc = tsc;
	w->last_rx_tsc = tsc;
	for (unsigned i = 0; i < n; i++)
		bytes += mb[i]->pkt_len;
	w->rx_packets += n;
	w->rx_bytes += bytes;
	/*
	 * The frames' headers, while the mbufs are walked again and fed: a
	 * frame the NIC (or the bench's generator) wrote long ago is in memory,
	 * not cache, and the engine's own prefetch, a few frames ahead of its
	 * parse, is too close to hide that (l3fwd prefetches the same way).
	 */
	if (w->engine)
		for (unsigned i = 0; i < n; i++)
			rte_prefetch0(rte_pktmbuf_mtod(mb[i], const void *));
	if (!w->engine) {
		rte_pktmbuf_free_bulk(mb, n);
		return;
	}
	if (m->nic_clock)
		nic_line_read(m, &line);
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *b = mb[i];
		uint64_t ts;

		if (m->ts_dynfield >= 0 && (b->ol_flags & m->ts_dynflag)) {
			ts = *RTE_MBUF_DYNFIELD(b, m->ts_dynfield, uint64_t *);
			ts = m->nic_clock ? mirror_clock_to_ns(&line, ts) : ts * m->ts_mult;
		} else
			ts = now ? now : (now = tsc_to_ns(m, tsc));
		pk[k].data = rte_pktmbuf_mtod(b, const uint8_t *);
		pk[k].cap_len = b->data_len;
		pk[k].wire_len = b->pkt_len;
		pk[k].ts_ns = ts;
		if (w->dedup && is_duplicate(m, w, pk[k].data, pk[k].cap_len, ts)) {
			w->duplicates++;
			continue;
		}
		k++;
	}
	if (m->o.bench) {
		t0 = rte_rdtsc();
		ct_engine_feed(w->engine, pk, k);
		w->feed_cycles += rte_rdtsc() - t0;
		w->fed += k;
	} else {
		ct_engine_feed(w->engine, pk, k);
	}
	rte_pktmbuf_free_bulk(mb, n);
}

/* One RX queue hashed to the ring workers (workers[1..]). */
static void distribute(struct mirror_worker *w, struct rte_mbuf **mb, unsigned n)
{
	const struct mirror *m = &app;
	unsigned targets = m->n_workers - 1;
	struct rte_mbuf *out[MIRROR_WORKERS_DIST][MIRROR_BURST];
	unsigned cnt[MIRROR_WORKERS_DIST] = {0};

	w->last_rx_tsc = rte_rdtsc();
	w->rx_packets += n;
	for (unsigned i = 0; i < n; i++) {
		uint32_t h =
			mirror_flow_hash(rte_pktmbuf_mtod(mb[i], const uint8_t *), mb[i]->data_len);
		unsigned t = h % targets;

		out[t][cnt[t]++] = mb[i];
	}
	for (unsigned t = 0; t < targets; t++) {
		unsigned sent;

		if (!cnt[t])
			continue;
		sent = rte_ring_enqueue_burst(m->workers[t + 1].ring, (void **)out[t], cnt[t],
					      NULL);
		while (m->o.wait_on_full && sent < cnt[t] && !workers_quit)
			sent += rte_ring_enqueue_burst(m->workers[t + 1].ring,
						       (void **)out[t] + sent, cnt[t] - sent, NULL);
		if (sent < cnt[t]) {
			w->ring_drops += cnt[t] - sent;
			rte_pktmbuf_free_bulk(out[t] + sent, cnt[t] - sent);
		}
	}
}

/* A snapshot asked for by the main lcore: taken here, on the engine's own lcore. */
static void answer(struct mirror_worker *w)
{
	uint32_t req = w->snap_req;

	if (req == w->snap_done)
		return;
	rte_smp_rmb();
	if (w->engine) {
		if (w->finish)
			ct_snapshot_finish(w->engine, &w->snap);
		else
			ct_snapshot_take(w->engine, &w->snap);
	}
	rte_smp_wmb();
	w->snap_done = req;
}

/*
 * The mbufs this lcore can take: the pool's common store and its own
 * cache. rte_mempool_avail_count also counts the other lcores' caches,
 * where a ring worker's frees wait out of this lcore's reach.
 */
static unsigned pool_free_here(void)
{
	unsigned n = rte_mempool_avail_count(app.pool), self = rte_lcore_id(), lc;

	RTE_LCORE_FOREACH(lc)
	{
		struct rte_mempool_cache *cache = rte_mempool_default_cache(app.pool, lc);

		if (lc != self && cache)
			n -= cache->len < n ? cache->len : n;
	}
	return n;
}

static unsigned poll_once(struct mirror_worker *w)
{
	struct rte_mbuf *mb[MIRROR_BURST];
	unsigned n;

	if (w->role == ROLE_RING)
		n = rte_ring_dequeue_burst(w->ring, (void **)mb, MIRROR_BURST, NULL);
	else
		n = rte_eth_rx_burst(app.port, w->queue, mb, MIRROR_BURST);
	if (n) {
		if (w->role == ROLE_DISTRIBUTOR)
			distribute(w, mb, n);
		else
			process(w, mb, n);
	}
	answer(w);
	if (!n && w->role != ROLE_RING && pool_free_here() < MIRROR_BURST)
		/*
		 * Nothing received because every mbuf waits in a ring worker's
		 * queue (a worker descheduled on a shared CPU): starved, not idle;
		 * --exit-on-idle must not end a replay with the file half read.
		 */
		w->last_starved_tsc = rte_rdtsc();
	else if (!n)
		w->last_poll_tsc = rte_rdtsc();
	return n;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int worker_main(void *arg)
{
	struct mirror_worker *w = arg;
	uint64_t cpu0 = thread_cpu_ns();

	while (!workers_quit)
		poll_once(w);
	/* --bench: the CPU time this lcore got, on a machine shared with other work */
	w->cpu_ns = thread_cpu_ns() - cpu0;
	if (w->role == ROLE_DISTRIBUTOR) {
		rte_smp_wmb();
		distributor_done = 1;
	}
	/* a ring worker empties its ring before it goes */
	while (w->role == ROLE_RING) {
		int done = distributor_done;

		if (!poll_once(w) && done)
			break;
	}
	answer(w);
	return 0;
}

/* Ask every worker for a snapshot and wait for the answers (inline: take it here). */
static void snapshot_all(struct mirror *m, int finish, int inline_worker)
{
	for (unsigned i = 0; i < m->n_workers; i++) {
		m->workers[i].finish = finish;
		rte_smp_wmb();
		m->workers[i].snap_req++;
	}
	for (unsigned i = 0; i < m->n_workers; i++) {
		struct mirror_worker *w = &m->workers[i];

		while (w->snap_done != w->snap_req) {
			if (inline_worker)
				answer(w);
			else
				rte_pause();
		}
	}
	rte_smp_rmb();
}

/* EAL messages go to a buffer during init: on failure the one that says why is shown. */
static int eal_init(int argc, char **argv)
{
	char *log = NULL, *line, *why = NULL, *save;
	int best = -1;
	size_t len = 0;
	FILE *mem = open_memstream(&log, &len);
	int rc, saved_stdout, saved_stderr, devnull;

	/* on bad arguments the EAL prints its whole usage to stdout: keep it quiet */
	fflush(stdout);
	saved_stdout = dup(STDOUT_FILENO);
	saved_stderr = dup(STDERR_FILENO);
	devnull = open("/dev/null", O_WRONLY);
	if (saved_stdout >= 0 && saved_stderr >= 0 && devnull >= 0) {
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
	}
	if (mem)
		rte_openlog_stream(mem);
	rc = rte_eal_init(argc, argv);
	fflush(stdout);
	fflush(stderr);
	if (saved_stdout >= 0 && saved_stderr >= 0 && devnull >= 0) {
		dup2(saved_stdout, STDOUT_FILENO);
		dup2(saved_stderr, STDERR_FILENO);
	}
	if (saved_stdout >= 0)
		close(saved_stdout);
	if (saved_stderr >= 0)
		close(saved_stderr);
	if (devnull >= 0)
		close(devnull);
	if (mem) {
		rte_openlog_stream(NULL);
		fclose(mem);
	}
	/* the line that says most: a failure over a mere complaint over anything */
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int score = strcasestr(line, "fail") || strcasestr(line, "invalid") ||
					    strcasestr(line, "cannot") ||
					    strcasestr(line, "no such")
				    ? 2
			    : strcasestr(line, "error") ? 1
							: 0;

		if (score > best || (!why && rc < 0)) {
			why = line;
			best = score;
		}
	}
	if (why && best)
		snprintf(eal_note, sizeof(eal_note), "; %s", why);
	if (rc < 0)
		fprintf(stderr, "commtap-mirror: EAL init failed (%s): %s\n", strerror(rte_errno),
			why ? why : "no reason given");
	free(log);
	return rc;
}

/*
 * The NIC's clock against CLOCK_REALTIME: two readings 50 ms apart give the
 * first line; nic_clock_update refines it every second.
 */
static int nic_clock_start(struct mirror *m)
{
	struct mirror_clock_sample later;
	int rc;

	rc = mirror_clock_sample(m->port, &m->nic_first);
	if (rc)
		return rc;
	rte_delay_ms(50);
	rc = mirror_clock_sample(m->port, &later);
	if (rc)
		return rc;
	rc = mirror_clock_fit(&m->nic_first, &later, &m->nic_line);
	if (rc)
		return rc;
	rte_seqlock_init(&m->nic_lock);
	m->nic_clock = 1;
	m->nic_next_tsc = rte_rdtsc() + rte_get_tsc_hz();
	snprintf(m->clock_note, sizeof(m->clock_note),
		 "NIC hardware clock, %.3f MHz by rte_eth_read_clock against CLOCK_REALTIME, "
		 "recalibrated every second; TSC->ns when absent",
		 1e3 / m->nic_line.ns_per_tick);
	m->clock = m->clock_note;
	return 0;
}

/* A new reading: the slope from the first one, the origin at this one. */
static void nic_clock_update(struct mirror *m)
{
	struct mirror_clock_sample now;
	struct mirror_clock_line line;

	m->nic_next_tsc = rte_rdtsc() + rte_get_tsc_hz();
	if (mirror_clock_sample(m->port, &now) || mirror_clock_fit(&m->nic_first, &now, &line)) {
		m->nic_clock_errors++; /* the last line stands */
		return;
	}
	rte_seqlock_write_lock(&m->nic_lock);
	m->nic_line = line;
	rte_seqlock_write_unlock(&m->nic_lock);
}

static int setup_port(struct mirror *m, unsigned n_lcores_for_work)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	static uint8_t key[128];
	int socket, rc;
	uint16_t q;

	if (!rte_eth_dev_is_valid_port(m->port)) {
		fprintf(stderr,
			"commtap-mirror: port %u: no such port (%u available; attach one with "
			"--vdev "
			"or a PCI address)%s\n",
			m->port, rte_eth_dev_count_avail(), eal_note);
		return -ENODEV;
	}
	rc = rte_eth_dev_info_get(m->port, &info);
	if (rc) {
		fprintf(stderr, "commtap-mirror: port %u: %s\n", m->port, strerror(-rc));
		return rc;
	}
	snprintf(m->driver, sizeof(m->driver), "%s", info.driver_name);
	socket = rte_eth_dev_socket_id(m->port);
	if (socket < 0)
		socket = (int)rte_socket_id();
	memset(&conf, 0, sizeof(conf));
	/* RSS on the IP pair, symmetric key: both directions on one queue */
	if (n_lcores_for_work > 1 && !m->o.no_rss &&
	    (info.flow_type_rss_offloads & RTE_ETH_RSS_IP) &&
	    info.max_rx_queues >= n_lcores_for_work) {
		memset(key, 0, sizeof(key));
		for (unsigned i = 0; i + 1 < sizeof(key); i += 2) {
			key[i] = 0x6d;
			key[i + 1] = 0x5a;
		}
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_key = key;
		conf.rx_adv_conf.rss_conf.rss_key_len =
			info.hash_key_size ? info.hash_key_size : 40;
		conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads & RTE_ETH_RSS_IP;
		m->n_queues = (uint16_t)n_lcores_for_work;
		m->mode = "rss";
	} else if (n_lcores_for_work > 1 &&
		   (!strcmp(m->driver, "net_pcap") || !strcmp(m->driver, "net_ring")) &&
		   info.max_rx_queues >= n_lcores_for_work) {
		/* net_pcap: each rx_pcap= file is a queue of its own, as one RSS queue
		 * would be; --bench-ring's rings likewise */
		m->n_queues = (uint16_t)n_lcores_for_work;
		m->mode = "queue per worker";
	} else {
		m->n_queues = 1;
		m->mode = n_lcores_for_work > 2 ? "software distribution" : "single queue";
	}
	/*
	 * RX timestamps: net_pcap's are the capture's, in microseconds; a NIC's
	 * are ticks of its own clock, converted by calibration (nic_clock_start)
	 */
	m->ts_dynfield = -1;
	if ((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) &&
	    (!strcmp(m->driver, "net_pcap") || !m->o.no_hw_timestamp))
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	rc = rte_eth_dev_configure(m->port, m->n_queues, 0, &conf);
	if (rc) {
		fprintf(stderr, "commtap-mirror: port %u (%s): configure with %u RX queues: %s\n",
			m->port, m->driver, m->n_queues, strerror(-rc));
		return rc;
	}
	m->pool = rte_pktmbuf_pool_create(
		"commtap-mbufs", m->o.mbufs ? m->o.mbufs : POOL_MBUFS, POOL_CACHE, 0,
		m->o.mbuf_data ? RTE_PKTMBUF_HEADROOM + m->o.mbuf_data : MBUF_DATA_ROOM, socket);
	if (!m->pool) {
		fprintf(stderr,
			"commtap-mirror: cannot create the mbuf pool on socket %d: %s (give EAL "
			"more memory with -m or hugepages)\n",
			socket, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	for (q = 0; q < m->n_queues; q++) {
		rc = rte_eth_rx_queue_setup(m->port, q, RX_DESC, (unsigned)socket, NULL, m->pool);
		if (rc) {
			fprintf(stderr, "commtap-mirror: port %u: RX queue %u: %s\n", m->port, q,
				strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(m->port);
	if (rc) {
		fprintf(stderr, "commtap-mirror: port %u (%s): start: %s\n", m->port, m->driver,
			strerror(-rc));
		return rc;
	}
	m->started = 1;
	rc = rte_eth_promiscuous_enable(m->port);
	if (rc && rc != -ENOTSUP)
		fprintf(stderr, "commtap-mirror: port %u: promiscuous mode: %s (going on)\n",
			m->port, strerror(-rc));
	/*
	 * The driver registers the field and fills it: a NIC once the offload
	 * is on, net_pcap always (it does not list the offload; not in infinite_rx)
	 */
	m->clock = "TSC converted to ns since the Unix epoch at start";
	if (strcmp(m->driver, "net_pcap") && !(conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
		return socket;
	m->ts_dynfield = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	rc = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
	if (m->ts_dynfield < 0 || rc < 0) {
		m->ts_dynfield = -1;
		return socket;
	}
	m->ts_dynflag = 1ull << rc;
	if (!strcmp(m->driver, "net_pcap")) {
		m->ts_mult = 1000;
		m->clock =
			"net_pcap RX timestamps (capture file, microseconds); TSC->ns when absent";
		return socket;
	}
	rc = nic_clock_start(m);
	if (rc) {
		fprintf(stderr,
			"commtap-mirror: port %u (%s): its RX timestamps cannot be converted "
			"(reading its clock: %s); TSC at arrival instead\n",
			m->port, m->driver, strerror(-rc));
		m->ts_dynfield = -1;
	}
	return socket;
}

/*
 * The slots of each engine lcore's ring in software distribution: the rings
 * together must not be able to hold every mbuf, or the RX lcore starves
 * and the port drops what it cannot store (rx_nombuf; a replay loses
 * packets even with --wait-on-full). Leave the RX descriptors, every
 * lcore's mempool cache (up to 1.5 times its size) and a burst, share the
 * rest: the largest power of two under each ring's share, RING_SLOTS at most.
 */
static unsigned ring_slots(const struct mirror *m)
{
	unsigned pool = m->o.mbufs ? m->o.mbufs : POOL_MBUFS, rings = m->n_workers - 1;
	unsigned held = RX_DESC + rte_lcore_count() * (POOL_CACHE * 3 / 2) + MIRROR_BURST;
	unsigned share = pool > held && rings ? (pool - held) / rings : 0, slots = RING_SLOTS;

	while (slots > 64 && slots - 1 > share)
		slots /= 2;
	return slots;
}

static int setup_workers(struct mirror *m, int socket)
{
	struct ct_allocator alloc = {socket_alloc, socket_free, (void *)(intptr_t)socket};
	struct ct_engine_config cfg = {
		.memory_budget = m->o.common.memory_budget,
		.idle_timeout_ns = m->o.common.idle_timeout_ns,
		.tcp_msg_gap_ns = m->o.common.tcp_msg_gap_ns,
		.burst_gap_ns = m->o.common.burst_gap_ns,
		.alloc = &alloc,
	};
	unsigned lcore, i = 0;
	int rc;

	m->workers = rte_zmalloc_socket("commtap-workers", m->n_workers * sizeof(*m->workers), 64,
					socket);
	if (!m->workers)
		return -ENOMEM;
	lcore = rte_get_main_lcore();
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		if (i < m->n_workers)
			m->workers[i++].lcore = lcore;
	}
	for (i = 0; i < m->n_workers; i++) {
		struct mirror_worker *w = &m->workers[i];
		char name[32];

		ct_snapshot_init(&w->snap);
		if (!strcmp(m->mode, "rss") || !strcmp(m->mode, "queue per worker")) {
			w->role = ROLE_QUEUE;
			w->queue = (uint16_t)i;
		} else if (!strcmp(m->mode, "software distribution")) {
			w->role = i ? ROLE_RING : ROLE_DISTRIBUTOR;
		} else {
			w->role = ROLE_QUEUE;
		}
		if (w->role == ROLE_RING) {
			snprintf(name, sizeof(name), "commtap-ring-%u", i);
			w->ring = rte_ring_create(name, ring_slots(m), socket,
						  RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (!w->ring) {
				fprintf(stderr, "commtap-mirror: cannot create ring %s: %s\n", name,
					rte_strerror(rte_errno));
				return -ENOMEM;
			}
		}
		if (w->role == ROLE_DISTRIBUTOR || m->o.bare)
			continue;
		rc = ct_engine_create(&cfg, &w->engine);
		if (rc) {
			fprintf(stderr,
				"commtap-mirror: cannot create an engine of %zu bytes on socket "
				"%d: %s "
				"(give EAL more memory with -m, or a smaller --memory)\n",
				m->o.common.memory_budget, socket, strerror(-rc));
			return rc;
		}
		if (m->o.dedup_window_ns) {
			w->dedup = rte_zmalloc_socket("commtap-dedup",
						      DEDUP_SLOTS * sizeof(uint64_t), 64, socket);
			if (!w->dedup)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Cycles each interval report took (--bench prints their median). */
#define REPORT_TIMES 1024
static uint64_t report_cycles[REPORT_TIMES];
static unsigned n_report_times;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void print_report_times(const struct mirror *m)
{
	if (!n_report_times)
		return;
	qsort(report_cycles, n_report_times, sizeof(report_cycles[0]), cmp_u64);
	printf("reports: %u interval reports, %.3f ms each (median; min %.3f, max %.3f)\n",
	       n_report_times, (double)report_cycles[n_report_times / 2] * 1e3 / (double)m->tsc_hz,
	       (double)report_cycles[0] * 1e3 / (double)m->tsc_hz,
	       (double)report_cycles[n_report_times - 1] * 1e3 / (double)m->tsc_hz);
}

static void print_bench(const struct mirror *m)
{
	uint64_t end = rte_rdtsc();
	struct ct_engine_counters c;
	size_t per_flow = ct_flow_table_bytes_per_flow();

	for (unsigned i = 0; i < m->n_workers; i++) {
		const struct mirror_worker *w = &m->workers[i];
		double secs = w->first_rx_tsc ? (double)(w->last_rx_tsc - w->first_rx_tsc) /
							(double)m->tsc_hz
					      : 0;

		printf("worker %u (lcore %u): %s: %llu packets in %.3f s: %.2f Mpps", i, w->lcore,
		       m->o.bare ? "bare" : "engine", (unsigned long long)w->rx_packets, secs,
		       secs > 0 ? (double)w->rx_packets / secs / 1e6 : 0.0);
		if (w->engine && w->fed)
			printf(", engine %.1f ns/packet",
			       (double)w->feed_cycles * 1e9 / (double)m->tsc_hz / (double)w->fed);
		if (w->cpu_ns)
			printf(", CPU %.3f s: %.2f Mpps per CPU second", (double)w->cpu_ns / 1e9,
			       (double)w->rx_packets * 1e3 / (double)w->cpu_ns);
		printf("\n");
		if (w->engine) {
			ct_engine_get_counters(w->engine, &c);
			printf("worker %u: flows %llu, state %zu bytes/flow, flow table %zu "
			       "bytes\n",
			       i, (unsigned long long)c.table.inserts, per_flow,
			       (size_t)c.table.memory_bytes);
		}
	}
	printf("memory: mbuf pool %zu bytes, engines %zu bytes each (budget)\n",
	       (size_t)m->pool->size *
		       (m->pool->elt_size + m->pool->header_size + m->pool->trailer_size),
	       m->o.bare ? (size_t)0 : m->o.common.memory_budget);
	print_report_times(m);
	(void)end;
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct mirror *m = &app;
	struct ct_knowledge know = {0};
	struct ct_report_sink_config sink_cfg = {0};
	char err[768];
	int sep = argc, rc, socket, status = 1, inline_worker;
	uint64_t next_report = 0, now, last;
	struct mirror_bench_ring *bench = NULL;
	unsigned gen_lcore = 0, lcore, bench_lcores = 0;
	int idle;
	struct timespec rt;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			break;
		}
	/* our options first: they fail before the EAL starts */
	{
		char **sub = calloc((size_t)(argc - sep + 1), sizeof(*sub));
		int n = 0;

		if (!sub)
			return 1;
		sub[n++] = argv[0];
		for (int i = sep + 1; i < argc; i++)
			sub[n++] = argv[i];
		sub[n] = NULL;
		rc = mirror_parse_opts(n, sub, &m->o);
		free(sub);
		if (rc)
			return 1;
	}
	ct_log_to_stderr("commtap-mirror");
	if (ct_knowledge_load(m->o.common.labels_path, m->o.common.profile_path, &know, err,
			      sizeof(err))) {
		fprintf(stderr, "commtap-mirror: %s\n", err);
		return 1;
	}
	m->know = &know;
	sink_cfg = (struct ct_report_sink_config){
		.json_path = m->o.json_path,
		.report_dir = m->o.common.report_dir,
		.final_in_dir = 1,
		.listen = m->o.common.listen,
		.shutdown_deadline_s = m->o.common.shutdown_deadline_s,
	};
	if (ct_report_sink_open(&sink_cfg, &m->sink, err, sizeof(err))) {
		fprintf(stderr, "commtap-mirror: %s\n", err);
		ct_knowledge_free(&know);
		return 1;
	}
	if (m->o.common.listen)
		fprintf(stderr, "commtap-mirror: serving /metrics on port %u\n",
			ct_report_sink_port(m->sink));
	m->port = m->o.port;
	rc = eal_init(sep, argv);
	if (rc < 0)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (m->o.bench_ring) {
		/* the generator takes the last lcore */
		RTE_LCORE_FOREACH_WORKER(gen_lcore)
		bench_lcores++;
		if (!bench_lcores) {
			fprintf(stderr, "commtap-mirror: --bench-ring needs an lcore for its "
					"generator (two or more in --lcores)\n");
			goto out;
		}
		RTE_LCORE_FOREACH_WORKER(lcore)
		gen_lcore = lcore;
		if (mirror_bench_ring_create(m->o.bench_ring,
					     m->o.mbuf_data ? m->o.mbuf_data
							    : MBUF_DATA_ROOM - RTE_PKTMBUF_HEADROOM,
					     (int)rte_socket_id(), &workers_quit, &m->port, &bench))
			goto out;
	}
	inline_worker = rte_lcore_count() - (bench ? 1 : 0) == 1;
	m->n_workers = inline_worker ? 1 : rte_lcore_count() - 1 - (bench ? 1 : 0);
	if (m->n_workers > MIRROR_WORKERS_DIST)
		m->n_workers = MIRROR_WORKERS_DIST;
	socket = setup_port(m, m->n_workers);
	if (socket < 0)
		goto out;
	if (setup_workers(m, socket))
		goto out;
	m->tsc_hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &rt);
	m->tsc_base = rte_rdtsc();
	m->ns_base = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	m->start_tsc = m->prev_tsc = m->tsc_base;
	mirror_telemetry_register(m);
	if (bench)
		rte_eal_remote_launch(mirror_bench_ring_run, bench, gen_lcore);
	if (!inline_worker)
		for (unsigned i = 0; i < m->n_workers; i++)
			rte_eal_remote_launch(worker_main, &m->workers[i], m->workers[i].lcore);
	fprintf(stderr, "commtap-mirror: port %u (%s): %u worker(s), %s, %s\n", m->port, m->driver,
		m->n_workers, m->mode, m->o.bare ? "bare (no engine)" : "engine");

	if (m->o.common.interval_s)
		next_report = m->start_tsc + (uint64_t)(m->o.common.interval_s * (double)m->tsc_hz);
	while (!stop_requested) {
		if (inline_worker)
			for (int i = 0; i < 64; i++)
				poll_once(&m->workers[0]);
		else
			usleep(5000);
		now = rte_rdtsc();
		if (m->nic_clock && now >= m->nic_next_tsc)
			nic_clock_update(m);
		if (next_report && now >= next_report && !m->o.bare) {
			snapshot_all(m, 0, inline_worker);
			{
				uint64_t t0 = rte_rdtsc();

				mirror_put_report(m, 0, 0);
				if (n_report_times < REPORT_TIMES)
					report_cycles[n_report_times++] = rte_rdtsc() - t0;
			}
			/* a report that took longer than the interval skips, not stacks, the next
			 */
			while (next_report <= now)
				next_report +=
					(uint64_t)(m->o.common.interval_s * (double)m->tsc_hz);
		} else if (m->watch.due && tsc_to_ns(m, now) >= m->watch.due && !m->o.bare) {
			/*
			 * The job silent as long as a hang pages, by the packets
			 * that came since: said now, not at the interval's end.
			 */
			uint64_t seen = 0, wire = 0;

			snapshot_all(m, 0, inline_worker);
			for (unsigned i = 0; i < m->n_workers; i++)
				hang_watch_snapshot(&m->watch, &m->workers[i].snap, &seen, &wire);
			if (hang_watch_judge(&m->watch, seen, wire))
				mirror_put_report(m, 0, 0);
		}
		/*
		 * Idle: every worker polled without a packet for the whole span, by
		 * its own clock readings, so a descheduled worker is not idle (nor
		 * one starved of mbufs).
		 */
		idle = m->o.exit_on_idle_s > 0;
		for (unsigned i = 0; i < m->n_workers && idle; i++) {
			const struct mirror_worker *w = &m->workers[i];

			last = w->last_rx_tsc > m->start_tsc ? w->last_rx_tsc : m->start_tsc;
			last = w->last_starved_tsc > last ? w->last_starved_tsc : last;
			if (w->role == ROLE_RING)
				continue; /* its queue is the distributor's */
			idle = w->last_poll_tsc > last &&
			       w->last_poll_tsc - last >
				       (uint64_t)(m->o.exit_on_idle_s * (double)m->tsc_hz);
		}
		if (idle)
			break;
		if (m->o.duration_s &&
		    now - m->start_tsc > (uint64_t)(m->o.duration_s * (double)m->tsc_hz))
			break;
	}
	workers_quit = 1;
	rte_eal_mp_wait_lcore();
	status = 0;
	if (!m->o.bare) {
		snapshot_all(m, 1, 1);
		if (m->o.common.report_dir || m->o.json_path)
			status |= mirror_put_report(m, 1, stop_requested) ? 1 : 0;
		/* every failed write, interval reports included, is the exit status's */
		status |= ct_report_sink_failures(m->sink) ? 1 : 0;
	}
	if (m->o.bench)
		print_bench(m);
	if (bench)
		printf("generator (lcore %u): %llu packets enqueued from %u capture(s)\n",
		       gen_lcore, (unsigned long long)mirror_bench_ring_sent(bench),
		       mirror_bench_ring_queues(bench));
out:
	if (m->started)
		rte_eth_dev_stop(m->port);
	if (rte_eth_dev_is_valid_port(m->port))
		rte_eth_dev_close(m->port);
	for (unsigned i = 0; m->workers && i < m->n_workers; i++) {
		ct_engine_destroy(m->workers[i].engine);
		ct_snapshot_free(&m->workers[i].snap);
		rte_ring_free(m->workers[i].ring);
		rte_free(m->workers[i].dedup);
	}
	rte_free(m->workers);
	mirror_bench_ring_free(bench); /* after the port that carried its rings */
	rte_mempool_free(m->pool);
	hang_watch_free(&m->watch);
	ct_report_sink_close(m->sink);
	ct_knowledge_free(&know);
	rte_eal_cleanup();
	return status;
}
