// SPDX-License-Identifier: MIT
/*
 * Communicator → parallel group. The plugin gives each communicator's size,
 * node count and operations, not its members: with a profile the classes
 * whose group size matches are the candidates and the one whose predicted
 * message size is nearest (in log) to the communicator's mean operation
 * wins; without one, point-to-point communicators are PP (one or two peers)
 * or EP (more), collective ones TP inside a node and DP across nodes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commtap/gpu_names.h"
#include "gpu_corr.h"

static unsigned distinct_peers(const struct gc_job *j, size_t ci)
{
	int32_t seen[8];
	unsigned n = 0;

	for (size_t i = 0; i < j->n_ops && n < 8; i++) {
		const struct gc_op *o = &j->ops[i];
		unsigned k;

		if (o->comm != ci || !o->p2p)
			continue;
		for (k = 0; k < n && seen[k] != o->peer; k++)
			;
		if (k == n)
			seen[n++] = o->peer;
	}
	return n;
}

static double predicted_msg(const struct ct_prediction *pr, int cls)
{
	double best = 0;

	for (unsigned r = 0; r < pr->nranks; r++) {
		double m = ct_rank_traffic(pr, r, (enum ct_class)cls)->msg_bytes;

		if (m > best)
			best = m;
	}
	return best;
}

static void by_profile(const struct gc_job *j, size_t ci, struct gc_comm *c,
		       const struct ct_profile *p, const struct ct_prediction *pr)
{
	unsigned nops = c->n_coll + c->n_p2p;
	double mean = nops ? (double)c->bytes / nops : 0, best = INFINITY;
	bool cand[CT_CLASS_COUNT] = {0};
	int pick = CT_CLASS_OTHER;

	if (c->n_p2p >= c->n_coll) {
		cand[CT_CLASS_PP] = p->p > 1;
		cand[CT_CLASS_EP] = p->ep > 1;
	} else {
		cand[CT_CLASS_TP] = p->t > 1 && (unsigned)c->nranks == p->t;
		cand[CT_CLASS_DP] = p->d > 1 && (unsigned)c->nranks == p->d;
		cand[CT_CLASS_EMB] = p->p > 1 && c->nranks == 2;
		cand[CT_CLASS_EP] = p->ep > 1 && (unsigned)c->nranks == p->ep;
	}
	for (int k = 0; k < CT_CLASS_COUNT; k++) {
		double m = cand[k] ? predicted_msg(pr, k) : 0, d;

		if (m <= 0)
			continue;
		d = mean > 0 ? fabs(log(mean / m)) : 0;
		if (d < best) {
			best = d;
			pick = k;
		}
	}
	c->cls = pick;
	if (pick == CT_CLASS_OTHER)
		snprintf(c->why, sizeof(c->why), "profile: no group of %d ranks doing %s",
			 c->nranks, c->n_p2p >= c->n_coll ? "send/recv" : "collectives");
	else
		snprintf(c->why, sizeof(c->why),
			 "profile: %d ranks, mean op %.3g B vs predicted %.3g B", c->nranks, mean,
			 predicted_msg(pr, pick));
	(void)j;
	(void)ci;
}

static void by_shape(const struct gc_job *j, size_t ci, struct gc_comm *c)
{
	if (c->n_p2p >= c->n_coll && c->n_p2p) {
		unsigned peers = distinct_peers(j, ci);

		c->cls = peers > 2 ? CT_CLASS_EP : CT_CLASS_PP;
		snprintf(c->why, sizeof(c->why), "send/recv with %u peer%s", peers,
			 peers == 1 ? "" : "s");
	} else if (c->n_coll) {
		c->cls = c->n_nodes <= 1 ? CT_CLASS_TP : CT_CLASS_DP;
		snprintf(c->why, sizeof(c->why), "collectives of %d ranks on %d node%s", c->nranks,
			 c->n_nodes, c->n_nodes == 1 ? "" : "s");
	} else {
		c->cls = CT_CLASS_OTHER;
		snprintf(c->why, sizeof(c->why), "no operations");
	}
}

void gc_classify(struct gc_job *j, const struct ct_profile *p, const struct ct_prediction *pr)
{
	for (size_t i = 0; i < j->n_comms; i++) {
		struct gc_comm *c = &j->comms[i];

		if (p && pr && c->n_coll + c->n_p2p)
			by_profile(j, i, c, p, pr);
		else
			by_shape(j, i, c);
	}
}
