/* SPDX-License-Identifier: MIT */
/* What the anomaly detectors share (anomaly.c): the report's data, the job's iterations, helpers.
 */
#ifndef COMMTAP_ANOMALY_INTERNAL_H
#define COMMTAP_ANOMALY_INTERNAL_H

#include <commtap/anomaly.h>

#include <stdio.h>

struct anom_ctx {
	const struct ct_flow_set *set;
	const struct ct_periodicity *per;	   /* NULL: no periodicity */
	const struct ct_classification *classes;   /* NULL: no classes */
	const struct ct_engine_counters *counters; /* NULL: none */
	/* the first job's iterations: bounds[i] .. bounds[i + 1], n_iter of them (0: none) */
	uint64_t *bounds;
	size_t n_iter;
	double period_s;
	/* the rendezvous (anom_rendezvous): rdv[f] for each flow of set, its endpoint */
	unsigned char *rdv;
	struct ct_addr rdv_host;
	uint16_t rdv_port;
	int starting; /* the job is starting (anom_job_starting) */
	/* the straggler's: flows a link meters (anom_metered_flows), NULL: none looked for */
	const unsigned char *metered;
	struct ct_anomalies *out;
};

/* One detector: looks, adds its findings (anom_add); 0 or -ENOMEM. */
struct anom_detector {
	enum ct_anomaly_kind kind;
	int (*run)(struct anom_ctx *c);
};

int anom_straggler(struct anom_ctx *c);
int anom_straggler_pairs(struct anom_ctx *c); /* groups of two */
int anom_slow_link(struct anom_ctx *c);
int anom_loss(struct anom_ctx *c);
int anom_congestion(struct anom_ctx *c);
int anom_rhythm(struct anom_ctx *c);
int anom_hang(struct anom_ctx *c);

/* A report's order of findings: by kind, then confidence (highest first). */
int anom_finding_cmp(const void *a, const void *b);
/* Keep a finding (its iters are taken over, freed on failure). 0 or -ENOMEM. */
int anom_add(struct anom_ctx *c, struct ct_anomaly *a);
/*
 * A per-iteration finding seen in iteration it of ni, with its figure: the
 * first one allocates the list and sets the onset. Returns 0 or -ENOMEM.
 */
int anom_seen_in(const struct anom_ctx *c, struct ct_anomaly *an, size_t *seen, size_t ni,
		 size_t it, double value);
/* A detector that could not look says why (a static string). */
void anom_not_looked(struct anom_ctx *c, enum ct_anomaly_kind k, const char *why);

/* The flow's class (enum ct_class), CT_CLASS_OTHER without classes. */
int anom_class(const struct anom_ctx *c, size_t flow);
/*
 * A flow of the job's periodic collective traffic: periodic in the first
 * job, of a class, and carrying data (not only the acknowledgements of its
 * reverse direction).
 */
int anom_job_data_flow(const struct anom_ctx *c, size_t flow);
/*
 * The bursts of the job's data flows (data) or of all the first job's
 * flows, whatever their class, by start: *out (the caller frees it), *n.
 * 0 or -ENOMEM.
 */
int anom_job_bursts(const struct anom_ctx *c, int data, struct ct_burst **out, size_t *n);
/* Bursts by start (qsort). */
int anom_burst_start_cmp(const void *a, const void *b);
/* A class whose groups run collectives (DP, TP, EP, EmbTableSyn; a pipeline's are sends). */
int anom_collective_class(int cls);
/* Union-find: the root of i's set, halving the path on the way. */
size_t anom_find_root(size_t *parent, size_t i);
/*
 * A burst of acknowledgements only, by its bytes a packet (one with no
 * packets counted is not).
 */
int anom_acks_only(const struct ct_burst *b);
/*
 * A burst that carries a message: a new one begun in it, or more than
 * acknowledgements a packet (gloo's 48-byte ready message, a 114-byte
 * frame, is one: how a member says it entered).
 */
int anom_carries_message(const struct ct_burst *b);
/*
 * Bursts of this many packets or more can be timed: a link's rate shows in
 * them (fewer, and a packet's own serialization is all there is).
 */
#define ANOM_TIMED_PACKETS 3
/*
 * A link that meters what it carries lets a flow's bytes through as single
 * packets or pairs spaced at its rate, bursts too short to time, where its
 * peers' move in timed bursts. A flow (a pair, in the slow-link detector)
 * that moves under this share of its peers' timed share is metered: tbf at
 * 50 Mbit/s on one real rank's link moved 4% of its bytes timed against
 * its peers' 100% (0.04 of theirs); of the 910 pairs with peers in the 67
 * clean real recordings none moved under 0.69 of its peers' share (pp4's
 * misread EP link), nor under 59% of its bytes (a pipeline pair's).
 */
#define ANOM_METERED_SHARE 0.5
/*
 * The job's data flows whose bytes a link meters (metered[f] = 1): their
 * timed share (bytes in bursts of ANOM_TIMED_PACKETS or more, in the job's
 * iterations) under ANOM_METERED_SHARE of the median of their class's
 * data flows' (two or more). metered: set->count. 0 or -ENOMEM.
 */
int anom_metered_flows(const struct anom_ctx *c, unsigned char *metered);
/*
 * The rendezvous's flows (rdv[i] = 1, set->count of them), if the capture
 * has one: the TCP endpoint (*host, *port) that each of its clients, three
 * hosts or more, connected to before any other flow it sends. Its traffic
 * is the ranks polling the store while they start (in ptd it beats at
 * 103 ms from 1.1 s to 3 s, read as the job's iterations until the real
 * ones begin at 3.4 s), not the collectives'. 0 or -ENOMEM
 * (anomaly_rendezvous.c).
 */
int anom_rendezvous(const struct ct_flow_set *set, unsigned char *rdv, struct ct_addr *host,
		    uint16_t *port);
/*
 * Whether the job is starting: the rendezvous (c->rdv)'s flows beat at
 * its period, the job's iterations being the ranks' polling of the store.
 * A window of a run's first seconds reads that polling as iterations, and
 * the few bytes the ranks send each other while they connect as
 * collectives (clean real ptd-2, pp4-1: a straggler at 0.5-0.56 in the
 * first interval report, which ends before the ranks' first iteration).
 * Once they train they do not poll the store (none of the 73 clean real
 * recordings past its first 2 s); an agent's keep-alive every few seconds
 * does not beat at a training period.
 */
int anom_job_starting(const struct anom_ctx *c);
/* The iteration t falls in, or -1. */
long anom_iteration(const struct anom_ctx *c, uint64_t t);

/*
 * Onsets of capture-total findings (anomaly_onset.c). anom_burst_series:
 * per iteration of the job (per_iter, n_iter entries), a count the flows'
 * bursts carry, each flow's counted flow_weight[flow] times (0: not the
 * finding's); *cut: the part of it from counts saturated at 255. -ENOENT without
 * iterations. anom_change_point: where a rate rises in x, per exposure
 * (the packets of each iteration; NULL: per iteration) (0: steady, no
 * rise beyond a scan's bar; -1: no signal). anom_onset_of_series: the finding's onset, the
 * iterations it recurs in and their counts, where the series holds at
 * least half of finding_total or is mostly cut (else it stays of the whole
 * capture); the onset from events where given (NULL: from x).
 * ANOM_BURST_LOSS_EVENTS: bursts with a loss signal, one each.
 * anom_onset_at_first_signal: the onset's time moved from its iteration's
 * start to the first burst in it that carries the field (flows weighed as
 * in the series).
 */
enum anom_burst_field {
	ANOM_BURST_LOSS,
	ANOM_BURST_LOSS_EVENTS,
	ANOM_BURST_MARKS,
	ANOM_BURST_PACKETS
};
int anom_burst_series(const struct anom_ctx *c, const double *flow_weight,
		      enum anom_burst_field field, double *per_iter, double *cut);
long anom_change_point(const double *x, const double *exposure, size_t n);
void anom_onset_at_first_signal(const struct anom_ctx *c, struct ct_anomaly *an,
				const double *flow_weight, enum anom_burst_field field);
int anom_onset_of_series(const struct anom_ctx *c, struct ct_anomaly *an, const double *x,
			 const double *events, const double *exposure, double cut,
			 double finding_total);

/* Median of v (reordered); 0 for n == 0. */
double anom_median(double *v, size_t n);

/* Distinct addresses, sorted, for indexing hosts. */
struct anom_hosts {
	struct ct_addr *a;
	size_t n, cap;
};
int anom_hosts_add(struct anom_hosts *h, const struct ct_addr *a); /* before anom_hosts_done */
void anom_hosts_done(struct anom_hosts *h);			   /* sort, drop repeats */
long anom_hosts_find(const struct anom_hosts *h, const struct ct_addr *a);
void anom_hosts_free(struct anom_hosts *h);

const char *anom_addr(const struct ct_addr *a, char *buf); /* buf: 64 bytes */

#endif
