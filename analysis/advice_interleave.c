// SPDX-License-Identifier: MIT
/*
 * Interleaving for shared links (CASSINI, NSDI'24; docs/advice.md). Two
 * jobs share a link when flows of both leave one address (its uplink) or
 * reach one (its downlink). Each job's on-periods on the link are folded
 * onto its iteration (a phase profile); two jobs' profiles repeat together
 * over their common cycle (q_a iterations of one, q_b of the other), on
 * which the overlap is a function of their relative phase alone. The first
 * job keeps its phase; each further job, in the report's order, takes the
 * delay that minimises its overlap with those placed before it over every
 * link they share (greedy, as CASSINI's affinity graph does job by job).
 *
 * Measured now: the time both jobs' bursts are on, on each shared link,
 * over the window both are seen in. The profiles give the same at the
 * jobs' phases now (to check the folding against it) and after the shifts.
 */
#include <commtap/advice.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two periods whose multiples agree within this share of the shorter
 * iteration share a cycle: their phase relation drifts by 1% of an
 * iteration per cycle at most, so a shift holds for tens of cycles before
 * it needs setting again (a job's own period jitters more than that). */
#define CYCLE_TOLERANCE 0.01
/* Steps of the overlap's integral per bin of the longer profile: the
 * shorter one is sampled at least as finely as it was folded. */
#define STEPS_PER_BIN 2
/*
 * Links a delay is searched on, per job: those with the most overlap now.
 * One link costs 1,024 delays x 2,048 steps per iteration of the common
 * cycle (up to 16): some 30 M products; a fabric of many shared hosts
 * would otherwise take minutes. The others are still reported, with the
 * overlap the chosen delays leave them.
 */
#define SEARCH_LINKS 8

double ct_interleave_cycle(double ta, double tb)
{
	if (ta <= 0 || tb <= 0)
		return 0;
	for (unsigned qa = 1; qa <= CT_INTERLEAVE_MAX_CYCLE; qa++) {
		double qb = round(qa * ta / tb);

		if (qb >= 1 && qb <= CT_INTERLEAVE_MAX_CYCLE &&
		    fabs(qa * ta - qb * tb) <= CYCLE_TOLERANCE * fmin(ta, tb))
			return qa * ta;
	}
	return 0;
}

static double mean_on(const struct ct_interleave_profile *p)
{
	double m = 0;

	for (unsigned b = 0; b < CT_INTERLEAVE_BINS; b++)
		m += p->on[b];
	return m / CT_INTERLEAVE_BINS;
}

/* The bin of time t (seconds from the profile's phase 0). */
static unsigned bin_at(const struct ct_interleave_profile *p, double t)
{
	double ph = t / p->period_s;
	unsigned b;

	ph -= floor(ph);
	b = (unsigned)(ph * CT_INTERLEAVE_BINS);
	return b < CT_INTERLEAVE_BINS ? b : CT_INTERLEAVE_BINS - 1;
}

double ct_interleave_overlap(const struct ct_interleave_profile *a,
			     const struct ct_interleave_profile *b, double cycle_s, double shift_s)
{
	double shorter = fmin(a->period_s, b->period_s), sum = 0;
	size_t steps;

	if (cycle_s <= 0)
		return mean_on(a) * mean_on(b);
	steps = (size_t)ceil(cycle_s / shorter) * CT_INTERLEAVE_BINS * STEPS_PER_BIN;
	for (size_t i = 0; i < steps; i++) {
		double t = (i + 0.5) * cycle_s / (double)steps;

		sum += a->on[bin_at(a, t)] * b->on[bin_at(b, t - shift_s)];
	}
	return sum / (double)steps;
}

/* ---- the report's jobs on their links ------------------------------------ */

struct span {
	uint64_t a, e;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *p = x, *q = y;

	return p->a < q->a ? -1 : p->a > q->a;
}

/*
 * A flow that carries this share of its reverse's bytes or less is that
 * connection's acknowledgements (RoCE ACKs, TCP's pure ACKs: well under 1%
 * of the data): they ride the data's own on-periods and would mark the
 * other direction's link on while it carries next to nothing.
 */
#define ACK_SHARE 0.1

/* Whether flow f carries job j's data (not only acknowledgements). */
static int job_data(const struct ct_report *r, size_t f, size_t j)
{
	const struct ct_flow_summary *s = &r->flows.flows[f];
	const struct ct_flow_periodicity *fp = &r->periodicity->flows[f];

	if (fp->job != (int)j || !fp->n_bursts)
		return 0;
	if (s->reverse >= 0 && (size_t)s->reverse < r->flows.count &&
	    (double)s->bytes <= ACK_SHARE * (double)r->flows.flows[s->reverse].bytes)
		return 0;
	return 1;
}

/* Whether flow f is job j's data on the link (addr, rx). */
static int on_link(const struct ct_report *r, size_t f, size_t j, const struct ct_addr *addr,
		   int rx)
{
	const struct ct_flow_summary *s = &r->flows.flows[f];

	return job_data(r, f, j) && !memcmp(rx ? &s->key.dst : &s->key.src, addr, sizeof(*addr));
}

/* The window of job j's whole iterations, [w0, w1) in ns; 0 without two starts. */
static int job_window(const struct ct_periodicity *p, size_t j, uint64_t *w0, uint64_t *w1)
{
	const struct ct_period *per = ct_periodicity_job_period(p, j);

	if (!per->periodic || per->iterations < 2 || per->period_s <= 0)
		return 0;
	*w0 = per->starts[0];
	*w1 = per->starts[per->iterations - 1];
	return *w1 > *w0;
}

/* Job j's bursts on the link inside [w0, w1), merged into their union, by start. */
static int link_union(const struct ct_report *r, size_t j, const struct ct_addr *addr, int rx,
		      uint64_t w0, uint64_t w1, struct span **out, size_t *n_out)
{
	const struct ct_periodicity *p = r->periodicity;
	size_t n = 0, k = 0;
	struct span *s;

	for (size_t f = 0; f < p->n_flows && f < r->flows.count; f++)
		if (on_link(r, f, j, addr, rx))
			n += p->flows[f].n_bursts;
	s = malloc((n ? n : 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t f = 0; f < p->n_flows && f < r->flows.count; f++) {
		if (!on_link(r, f, j, addr, rx))
			continue;
		for (size_t i = 0; i < p->flows[f].n_bursts; i++) {
			const struct ct_burst *b = &p->flows[f].bursts[i];
			uint64_t a = b->start > w0 ? b->start : w0, e = b->end < w1 ? b->end : w1;

			if (e > a)
				s[k++] = (struct span){a, e};
		}
	}
	qsort(s, k, sizeof(*s), span_cmp);
	n = 0;
	for (size_t i = 0; i < k; i++) {
		if (n && s[i].a <= s[n - 1].e) {
			if (s[i].e > s[n - 1].e)
				s[n - 1].e = s[i].e;
		} else {
			s[n++] = s[i];
		}
	}
	*out = s;
	*n_out = n;
	return 0;
}

/* Length of the intersection of two unions (each by start, disjoint). */
static uint64_t intersect(const struct span *x, size_t nx, const struct span *y, size_t ny)
{
	uint64_t total = 0;

	for (size_t i = 0, k = 0; i < nx && k < ny;) {
		uint64_t a = x[i].a > y[k].a ? x[i].a : y[k].a;
		uint64_t e = x[i].e < y[k].e ? x[i].e : y[k].e;

		if (e > a)
			total += e - a;
		if (x[i].e < y[k].e)
			i++;
		else
			k++;
	}
	return total;
}

/*
 * Job j's union on the link folded onto its iteration: each bin's on-time
 * over the job's whole iterations, as a share of the bin's time in them.
 */
static void fold(const struct ct_periodicity *p, size_t j, const struct span *u, size_t n,
		 uint64_t w0, uint64_t w1, struct ct_interleave_profile *out)
{
	const struct ct_period *per = ct_periodicity_job_period(p, j);
	double T = per->period_s * 1e9, bin = T / CT_INTERLEAVE_BINS;
	double iters = (double)(w1 - w0) / T;

	memset(out, 0, sizeof(*out));
	out->period_s = per->period_s;
	for (size_t i = 0; i < n; i++) {
		double a = (double)(u[i].a - w0), e = (double)(u[i].e - w0);
		uint64_t k0 = (uint64_t)(a / bin), k1 = (uint64_t)(e / bin);

		/* bin by bin, each its own share: whole bins counted, so a rounding
		 * at a bin's edge can never stall the walk */
		for (uint64_t k = k0; k <= k1; k++) {
			double lo = fmax(a, (double)k * bin), hi = fmin(e, (double)(k + 1) * bin);

			if (hi > lo)
				out->on[k % CT_INTERLEAVE_BINS] += (hi - lo) / (bin * iters);
		}
	}
	for (unsigned b = 0; b < CT_INTERLEAVE_BINS; b++)
		if (out->on[b] > 1)
			out->on[b] = 1;
}

/* A link the pair (a, b) shares, with both profiles. */
struct shared {
	struct ct_interleave_link link;
	struct ct_interleave_profile pa, pb;
	double cycle_s;
};

/* Every address that sends (rx 0) or receives (rx 1) data of job j: a mark per host rank. */
static int job_addrs(const struct ct_report *r, size_t j, int rx, struct ct_addr **out, size_t *n)
{
	const struct ct_periodicity *p = r->periodicity;
	struct ct_addr *a = malloc((r->flows.count + 1) * sizeof(*a));
	size_t k = 0;

	if (!a)
		return -ENOMEM;
	for (size_t f = 0; f < p->n_flows && f < r->flows.count; f++) {
		const struct ct_flow_summary *s = &r->flows.flows[f];
		const struct ct_addr *x = rx ? &s->key.dst : &s->key.src;
		size_t i;

		if (!job_data(r, f, j))
			continue;
		for (i = 0; i < k && memcmp(&a[i], x, sizeof(*x)); i++)
			;
		if (i == k)
			a[k++] = *x;
	}
	*out = a;
	*n = k;
	return 0;
}

/* The links jobs a and b share, appended to *sh. */
static int pair_links(const struct ct_report *r, size_t ja, size_t jb, struct shared **sh,
		      size_t *n, size_t *cap)
{
	const struct ct_periodicity *p = r->periodicity;
	uint64_t a0, a1, b0, b1;
	int err = 0;

	if (!job_window(p, ja, &a0, &a1) || !job_window(p, jb, &b0, &b1))
		return 0;
	for (int rx = 0; rx < 2 && !err; rx++) {
		struct ct_addr *xa = NULL, *xb = NULL;
		size_t na = 0, nb = 0;

		err = job_addrs(r, ja, rx, &xa, &na) ?: job_addrs(r, jb, rx, &xb, &nb);
		for (size_t i = 0; i < na && !err; i++) {
			struct span *ua = NULL, *ub = NULL, *ca = NULL, *cb = NULL;
			size_t nua, nub, nca, ncb, k;
			uint64_t c0 = a0 > b0 ? a0 : b0, c1 = a1 < b1 ? a1 : b1;
			struct shared *s;

			for (k = 0; k < nb && memcmp(&xa[i], &xb[k], sizeof(xa[i])); k++)
				;
			if (k == nb)
				continue;
			if (*n == *cap) {
				size_t c = *cap ? 2 * *cap : 8;
				struct shared *g = realloc(*sh, c * sizeof(*g));

				if (!g) {
					err = -ENOMEM;
					break;
				}
				*sh = g;
				*cap = c;
			}
			s = &(*sh)[*n];
			memset(s, 0, sizeof(*s));
			s->link = (struct ct_interleave_link){
				.addr = xa[i], .rx = rx, .job_a = ja, .job_b = jb};
			err = link_union(r, ja, &xa[i], rx, a0, a1, &ua, &nua)
				      ?: link_union(r, jb, &xa[i], rx, b0, b1, &ub, &nub);
			if (!err && c1 > c0)
				err = link_union(r, ja, &xa[i], rx, c0, c1, &ca, &nca)
					      ?: link_union(r, jb, &xa[i], rx, c0, c1, &cb, &ncb);
			if (!err) {
				fold(p, ja, ua, nua, a0, a1, &s->pa);
				fold(p, jb, ub, nub, b0, b1, &s->pb);
				s->cycle_s = ct_interleave_cycle(s->pa.period_s, s->pb.period_s);
				s->link.now = c1 > c0 && ca && cb
						      ? (double)intersect(ca, nca, cb, ncb) /
								(double)(c1 - c0)
						      : 0;
				(*n)++;
			}
			free(ua);
			free(ub);
			free(ca);
			free(cb);
		}
		free(xa);
		free(xb);
	}
	return err;
}

static int by_overlap_now(const void *x, const void *y)
{
	const struct shared *a = x, *b = y;

	return a->link.now > b->link.now ? -1 : a->link.now < b->link.now;
}

/* Job j's phase 0 now: its first iteration start, seconds. */
static double ref_s(const struct ct_periodicity *p, size_t j)
{
	return (double)ct_periodicity_job_period(p, j)->starts[0] / 1e9;
}

/*
 * The overlap of link s with job b shifted by delta_b and a by delta_a:
 * b's phase 0 lies (ref_b + delta_b) - (ref_a + delta_a) after a's.
 */
static double link_overlap(const struct ct_periodicity *p, const struct shared *s, double delta_a,
			   double delta_b)
{
	double rel = ref_s(p, s->link.job_b) + delta_b - ref_s(p, s->link.job_a) - delta_a;

	return ct_interleave_overlap(&s->pa, &s->pb, s->cycle_s, rel);
}

int ct_advice_interleave(const struct ct_report *r, struct ct_advice_interleave *out)
{
	const struct ct_periodicity *p = r->periodicity;
	struct shared *sh = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!p || p->n_jobs < 2) {
		out->reason = "one job on the fabric: nothing to interleave";
		return 0;
	}
	out->n_jobs = p->n_jobs;
	out->shift_s = calloc(p->n_jobs, sizeof(*out->shift_s));
	out->cycle_s = calloc(p->n_jobs, sizeof(*out->cycle_s));
	if (!out->shift_s || !out->cycle_s)
		return -ENOMEM;
	for (size_t a = 0; a < p->n_jobs && !err; a++)
		for (size_t b = a + 1; b < p->n_jobs && !err; b++)
			err = pair_links(r, a, b, &sh, &n, &cap);
	if (err) {
		free(sh);
		return err;
	}
	for (size_t j = 1; j < p->n_jobs; j++) {
		const struct ct_period *pj = ct_periodicity_job_period(p, j);

		out->cycle_s[j] = ct_interleave_cycle(ct_periodicity_job_period(p, 0)->period_s,
						      pj->period_s);
	}
	if (!n) {
		out->reason = "the jobs share no link (no address sends or receives data of two "
			      "jobs)";
		free(sh);
		return 0;
	}
	/* job by job, the delay in [0, its period) that leaves the least overlap
	 * with the jobs placed before it, on its links with the most overlap now */
	qsort(sh, n, sizeof(*sh), by_overlap_now);
	for (size_t j = 1; j < p->n_jobs; j++) {
		double T = ct_periodicity_job_period(p, j)->period_s, best = -1;

		for (unsigned k = 0; k < CT_INTERLEAVE_BINS; k++) {
			double d = k * T / CT_INTERLEAVE_BINS, cost = 0;
			unsigned used = 0;

			for (size_t i = 0; i < n && used < SEARCH_LINKS; i++)
				if (sh[i].link.job_b == j) {
					cost += link_overlap(p, &sh[i],
							     out->shift_s[sh[i].link.job_a], d);
					used++;
				}
			if (best < 0 || cost < best - 1e-12) {
				best = cost;
				out->shift_s[j] = d;
			}
		}
	}
	out->links = calloc(n, sizeof(*out->links));
	if (!out->links) {
		free(sh);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct ct_interleave_link *l = &out->links[i];

		*l = sh[i].link;
		l->now_model = link_overlap(p, &sh[i], 0, 0);
		l->after = link_overlap(p, &sh[i], out->shift_s[l->job_a], out->shift_s[l->job_b]);
		out->now += l->now;
		out->now_model += l->now_model;
		out->after += l->after;
	}
	out->n_links = n;
	free(sh);
	return 0;
}

void ct_advice_interleave_free(struct ct_advice_interleave *il)
{
	free(il->links);
	free(il->shift_s);
	free(il->cycle_s);
	memset(il, 0, sizeof(*il));
}
