// SPDX-License-Identifier: MIT
/*
 * --bench-ring: the workers fed from mbufs built once, through a ring PMD
 * (rte_eth_from_rings), so that a benchmark measures the mirror and not a
 * replay. net_pcap's infinite_rx copies every packet out of its pool before
 * the engine runs (about 100 ns of misses a packet at 10,000 QPs): its bare
 * figure was mostly that copy. Here a generator lcore enqueues the same
 * mbufs again and again, holding a reference to each (the workers' free
 * drops theirs), so the bare figure is the ring PMD's floor and the
 * engine's figure the engine's cost.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "mirror.h"

#define BENCH_RING_SLOTS 4096 /* per queue: a few bursts of every worker */
#define BENCH_BURST	 32

struct bench_queue {
	struct rte_ring *rx, *tx;
	struct rte_mbuf **mb; /* the queue's packets, built once */
	size_t n, next;
};

struct mirror_bench_ring {
	struct rte_mempool *pool;
	struct bench_queue q[MIRROR_BENCH_QUEUES];
	unsigned n_queues;
	volatile const int *quit;
	uint64_t sent, refused;
};

/* The packets of one capture as mbufs of the pool. */
static int load_pcap(struct mirror_bench_ring *b, struct bench_queue *q, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	size_t cap = 0;
	pcap_t *p = pcap_open_offline(path, errbuf);
	int rc;

	if (!p) {
		fprintf(stderr, "commtap-mirror: --bench-ring %s: %s\n", path, errbuf);
		return -EINVAL;
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		struct rte_mbuf *m;
		char *dst;

		if (q->n == cap) {
			struct rte_mbuf **nm;

			cap = cap ? 2 * cap : 65536;
			nm = realloc(q->mb, cap * sizeof(*nm));
			if (!nm) {
				pcap_close(p);
				return -ENOMEM;
			}
			q->mb = nm;
		}
		m = rte_pktmbuf_alloc(b->pool);
		dst = m ? rte_pktmbuf_append(m, (uint16_t)h->caplen) : NULL;
		if (!dst) {
			rte_pktmbuf_free(m);
			fprintf(stderr,
				"commtap-mirror: --bench-ring %s: no mbuf for packet %zu (give EAL "
				"more memory with -m, or a larger --mbuf-data)\n",
				path, q->n + 1);
			pcap_close(p);
			return -ENOMEM;
		}
		memcpy(dst, data, h->caplen);
		m->pkt_len = h->len; /* the wire length, as a NIC's truncated copy says */
		q->mb[q->n++] = m;
	}
	if (rc == -1)
		fprintf(stderr, "commtap-mirror: --bench-ring %s: %s\n", path, pcap_geterr(p));
	pcap_close(p);
	if (rc == -1)
		return -EINVAL;
	if (!q->n) {
		fprintf(stderr, "commtap-mirror: --bench-ring %s: no packets\n", path);
		return -EINVAL;
	}
	return 0;
}

int mirror_bench_ring_create(const char *files, unsigned mbuf_data, int socket,
			     volatile const int *quit, uint16_t *port,
			     struct mirror_bench_ring **out)
{
	struct rte_ring *rx[MIRROR_BENCH_QUEUES], *tx[MIRROR_BENCH_QUEUES];
	struct mirror_bench_ring *b = calloc(1, sizeof(*b));
	char *list = strdup(files), *save = NULL, *path;
	size_t packets = 0;
	int rc = -ENOMEM;

	if (!b || !list)
		goto fail;
	b->quit = quit;
	/* the mbufs of every capture: count first, then one pool for them all */
	for (path = strtok_r(list, ",", &save); path; path = strtok_r(NULL, ",", &save)) {
		char errbuf[PCAP_ERRBUF_SIZE];
		struct pcap_pkthdr *h;
		const u_char *data;
		pcap_t *p;

		if (b->n_queues == MIRROR_BENCH_QUEUES) {
			fprintf(stderr, "commtap-mirror: --bench-ring: at most %d captures\n",
				MIRROR_BENCH_QUEUES);
			rc = -EINVAL;
			goto fail;
		}
		p = pcap_open_offline(path, errbuf);
		if (!p) {
			fprintf(stderr, "commtap-mirror: --bench-ring %s: %s\n", path, errbuf);
			rc = -EINVAL;
			goto fail;
		}
		while (pcap_next_ex(p, &h, &data) == 1)
			packets++;
		pcap_close(p);
		b->n_queues++;
	}
	b->pool = rte_pktmbuf_pool_create("commtap-bench-ring", (unsigned)packets + 1024, 256, 0,
					  RTE_PKTMBUF_HEADROOM + mbuf_data, socket);
	if (!b->pool) {
		fprintf(stderr,
			"commtap-mirror: --bench-ring: no pool for %zu packets: %s (give EAL more "
			"memory with -m)\n",
			packets, rte_strerror(rte_errno));
		goto fail;
	}
	free(list);
	list = strdup(files);
	save = NULL;
	if (!list)
		goto fail;
	path = strtok_r(list, ",", &save);
	for (unsigned i = 0; i < b->n_queues; i++, path = strtok_r(NULL, ",", &save)) {
		char name[32];

		rc = load_pcap(b, &b->q[i], path);
		if (rc)
			goto fail;
		snprintf(name, sizeof(name), "ct-bench-rx%u", i);
		rx[i] = b->q[i].rx = rte_ring_create(name, BENCH_RING_SLOTS, socket,
						     RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "ct-bench-tx%u", i);
		tx[i] = b->q[i].tx = rte_ring_create(name, BENCH_RING_SLOTS, socket,
						     RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (!rx[i] || !tx[i]) {
			fprintf(stderr, "commtap-mirror: --bench-ring: ring %s: %s\n", name,
				rte_strerror(rte_errno));
			rc = -ENOMEM;
			goto fail;
		}
	}
	rc = rte_eth_from_rings("ct_bench_ring", rx, b->n_queues, tx, b->n_queues,
				(unsigned)socket);
	if (rc < 0) {
		fprintf(stderr, "commtap-mirror: --bench-ring: a port from the rings: %s\n",
			rte_strerror(rte_errno));
		rc = -ENODEV;
		goto fail;
	}
	*port = (uint16_t)rc;
	free(list);
	*out = b;
	return 0;
fail:
	free(list);
	mirror_bench_ring_free(b);
	return rc;
}

unsigned mirror_bench_ring_queues(const struct mirror_bench_ring *b)
{
	return b->n_queues;
}

/*
 * The generator lcore: each queue's packets in turn, a burst at a time,
 * each mbuf with one more reference (the worker's free takes it back).
 */
int mirror_bench_ring_run(void *arg)
{
	struct mirror_bench_ring *b = arg;

	while (!*b->quit) {
		for (unsigned i = 0; i < b->n_queues; i++) {
			struct bench_queue *q = &b->q[i];
			struct rte_mbuf *burst[BENCH_BURST];
			unsigned n = 0, sent;

			while (n < BENCH_BURST) {
				burst[n] = q->mb[q->next];
				rte_mbuf_refcnt_update(burst[n], 1);
				n++;
				if (++q->next == q->n)
					q->next = 0;
			}
			sent = rte_ring_enqueue_burst(q->rx, (void **)burst, n, NULL);
			/* full: the rest back, and the queue's position with them */
			for (unsigned k = sent; k < n; k++)
				rte_mbuf_refcnt_update(burst[k], -1);
			q->next = (q->next + q->n - (n - sent) % q->n) % q->n;
			b->sent += sent;
			b->refused += n - sent;
		}
	}
	return 0;
}

uint64_t mirror_bench_ring_sent(const struct mirror_bench_ring *b)
{
	return b->sent;
}

void mirror_bench_ring_free(struct mirror_bench_ring *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < MIRROR_BENCH_QUEUES; i++) {
		struct bench_queue *q = &b->q[i];
		void *m;

		/* what the workers did not take, then the generator's own references */
		while (q->rx && rte_ring_dequeue(q->rx, &m) == 0)
			rte_pktmbuf_free(m);
		for (size_t k = 0; k < q->n; k++)
			rte_pktmbuf_free(q->mb[k]);
		free(q->mb);
		rte_ring_free(q->rx);
		rte_ring_free(q->tx);
	}
	rte_mempool_free(b->pool);
	free(b);
}
