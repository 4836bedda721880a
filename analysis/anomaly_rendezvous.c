// SPDX-License-Identifier: MIT
/*
 * The rendezvous: the store every rank connects to before anything else
 * (PyTorch's TCPStore on MASTER_PORT), found on the wire, and what it says
 * of the job: while the ranks talk more to it than to each other, the job
 * is starting (anomaly_internal.h).
 */
#include "anomaly_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The rendezvous: the TCP endpoint (a host's listening port) that every
 * rank connects to before anything else, to learn where the others are
 * (PyTorch's store on MASTER_PORT). A fan-in from this many hosts or more,
 * each of which opened it strictly before any other flow it sends: two
 * would be a pair of peers, and a capture begun mid-run opens its flows at
 * once (ties), so no endpoint is first for every host there.
 */
#define RDV_MIN_CLIENTS 3

static int same_addr(const struct ct_addr *a, const struct ct_addr *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static int is_tcp_to(const struct ct_flow_summary *f, const struct ct_addr *host, uint16_t port)
{
	return f->key.transport == CT_TRANSPORT_TCP && same_addr(&f->key.dst, host) &&
	       (f->key.id & 0xffff) == port;
}

/*
 * Whether (host, port) is the rendezvous: every host with a flow to it
 * opened that flow first, and at least RDV_MIN_CLIENTS hosts did.
 */
static int is_rendezvous(const struct ct_flow_set *set, const struct anom_hosts *senders,
			 const long *first, const struct ct_addr *host, uint16_t port)
{
	size_t clients = 0;

	for (size_t i = 0; i < set->count; i++) {
		long fh;

		if (!is_tcp_to(&set->flows[i], host, port))
			continue;
		fh = first[anom_hosts_find(senders, &set->flows[i].key.src)];
		if (fh == (long)i)
			clients++;
		else if (fh < 0 || !is_tcp_to(&set->flows[fh], host, port))
			return 0; /* its sender opened something else first */
	}
	return clients >= RDV_MIN_CLIENTS;
}

int anom_rendezvous(const struct ct_flow_set *set, unsigned char *rdv, struct ct_addr *host,
		    uint16_t *port)
{
	struct anom_hosts senders = {0};
	long *first = NULL;
	int found = 0, err = 0;

	for (size_t i = 0; i < set->count && !err; i++)
		err = anom_hosts_add(&senders, &set->flows[i].key.src);
	anom_hosts_done(&senders);
	first = malloc((senders.n + 1) * sizeof(*first));
	if (err || !first) {
		err = -ENOMEM;
		goto out;
	}
	/* each sender's first flow; -1 where two opened at the same time */
	for (size_t h = 0; h < senders.n; h++)
		first[h] = -1;
	for (size_t i = 0; i < set->count; i++) {
		long h = anom_hosts_find(&senders, &set->flows[i].key.src), *fh = &first[h];
		const struct ct_flow_summary *f = &set->flows[i];

		if (*fh < 0 || f->first_ts < set->flows[*fh].first_ts)
			*fh = (long)i;
	}
	for (size_t i = 0; i < set->count; i++) {
		long h = anom_hosts_find(&senders, &set->flows[i].key.src);

		if (first[h] >= 0 && (long)i != first[h] &&
		    set->flows[i].first_ts == set->flows[first[h]].first_ts)
			first[h] = -1; /* a tie: no first */
	}
	for (size_t h = 0; h < senders.n && !found; h++) {
		const struct ct_flow_summary *f;
		size_t clients = 0, seen = 0;

		if (first[h] < 0 || set->flows[first[h]].key.transport != CT_TRANSPORT_TCP)
			continue;
		f = &set->flows[first[h]];
		*host = f->key.dst;
		*port = f->key.id & 0xffff;
		/* the full test (every flow to it) once, for an endpoint first of enough */
		for (size_t o = 0; o < senders.n; o++) {
			int to = first[o] >= 0 && is_tcp_to(&set->flows[first[o]], host, *port);

			clients += to;
			seen += to && o < h;
		}
		found = !seen && clients >= RDV_MIN_CLIENTS &&
			is_rendezvous(set, &senders, first, host, *port);
	}
	for (size_t i = 0; i < set->count; i++)
		rdv[i] = found && is_tcp_to(&set->flows[i], host, *port);
out:
	free(first);
	anom_hosts_free(&senders);
	return err;
}

int anom_job_starting(const struct anom_ctx *c)
{
	for (size_t f = 0; f < c->set->count && c->per; f++)
		if (c->rdv[f] && c->per->flows[f].periodic && c->per->flows[f].job == 0)
			return 1;
	return 0;
}
