// SPDX-License-Identifier: MIT
/*
 * The report's "advice" section (docs/report-schema.md, docs/advice.md):
 * what ct_advice_compute found, per job. A figure that needs the NIC rate
 * is null when nobody stated the rate.
 */
#include <commtap/advice.h>

#include <json-c/json.h>
#include <stdio.h>

/* The section being built: set once any allocation failed. */
struct ab {
	int oom;
};

static json_object *made(struct ab *b, json_object *v)
{
	if (!v)
		b->oom = 1;
	return v;
}

/* o.name = v (v NULL: JSON null; a failed allocation was marked by made()). */
static void put(struct ab *b, json_object *o, const char *name, json_object *v)
{
	if (o && !json_object_object_add(o, name, v))
		return;
	json_object_put(v);
	b->oom = 1;
}

static json_object *dbl(struct ab *b, double v)
{
	return made(b, json_object_new_double(v));
}

/* A figure that is unknown when negative: null. */
static json_object *known(struct ab *b, double v)
{
	return v >= 0 ? dbl(b, v) : NULL;
}

static json_object *blocker_json(struct ab *b, const struct ct_advice_blocker *k)
{
	json_object *o = made(b, json_object_new_object());
	char host[64];

	put(b, o, "receiver",
	    made(b, json_object_new_string(ct_addr_format(&k->host, host, sizeof(host)))));
	put(b, o, "ecn_ce_fraction", dbl(b, k->ecn_ce_fraction));
	put(b, o, "cnp_per_s_on", dbl(b, k->cnp_per_s_on));
	put(b, o, "retransmits", made(b, json_object_new_uint64(k->retransmits)));
	put(b, o, "incast_degree", made(b, json_object_new_int((int)k->incast_degree)));
	put(b, o, "peak_over_nic", known(b, k->peak_over_nic));
	return o;
}

static json_object *class_json(struct ab *b, const struct ct_advice_class *k)
{
	json_object *o = made(b, json_object_new_object());
	json_object *list = made(b, json_object_new_array());

	put(b, o, "on_s", dbl(b, k->on_s));
	put(b, o, "comm_ratio", dbl(b, k->comm_ratio));
	put(b, o, "bytes_per_iteration", dbl(b, k->bytes));
	put(b, o, "effective_gbps", dbl(b, k->gbps));
	put(b, o, "bw_utilization", known(b, k->util));
	put(b, o, "on_s_at_nic", known(b, k->on_s_at_nic));
	for (unsigned i = 0; i < k->n_blockers; i++) {
		json_object *e = blocker_json(b, &k->blockers[i]);

		if (!list || !e || json_object_array_add(list, e)) {
			json_object_put(e);
			b->oom = 1;
		}
	}
	put(b, o, "blocking_receivers", list);
	return o;
}

static json_object *scheduling_json(struct ab *b, const struct ct_advice_job *j)
{
	json_object *o = made(b, json_object_new_object());

	put(b, o, "source", made(b, json_object_new_string(j->source)));
	put(b, o, "t_iter", dbl(b, j->t_iter));
	put(b, o, "t_comp", dbl(b, j->t_comp));
	put(b, o, "t_comm", dbl(b, j->t_comm));
	put(b, o, "overlap", dbl(b, j->overlap));
	put(b, o, "best_iteration_s", dbl(b, j->best_s));
	put(b, o, "speedup_bound", dbl(b, j->speedup_bound));
	put(b, o, "comp_to_comm", known(b, j->comp_to_comm));
	put(b, o, "regime", made(b, json_object_new_string(j->regime)));
	if (j->push_pull) {
		json_object *pp = made(b, json_object_new_object());

		put(b, pp, "push_s", dbl(b, j->push_s));
		put(b, pp, "pull_s", dbl(b, j->pull_s));
		put(b, pp, "best_iteration_s", dbl(b, j->best3_s));
		put(b, pp, "speedup_bound", dbl(b, j->speedup_bound3));
		put(b, o, "push_pull", pp);
	}
	return o;
}

static json_object *network_json(struct ab *b, const struct ct_advice_job *j)
{
	json_object *o = made(b, json_object_new_object());

	put(b, o, "comm_s_at_nic", known(b, j->comm_s_at_nic));
	put(b, o, "iteration_s_at_nic", known(b, j->iter_s_at_nic));
	put(b, o, "speedup", known(b, j->network_speedup));
	return o;
}

static json_object *job_json(struct ab *b, const struct ct_advice_job *j, size_t index)
{
	json_object *o = made(b, json_object_new_object());
	json_object *classes;

	put(b, o, "job", made(b, json_object_new_uint64(index)));
	if (!j->present) {
		put(b, o, "reason",
		    made(b, json_object_new_string("fewer than two iteration starts: "
						   "no whole iteration to measure")));
		return o;
	}
	put(b, o, "iterations", made(b, json_object_new_uint64(j->iterations)));
	put(b, o, "iteration_s", dbl(b, j->period_s));
	put(b, o, "comm_s", dbl(b, j->comm_s));
	put(b, o, "comm_ratio", dbl(b, j->comm_ratio));
	classes = made(b, json_object_new_object());
	for (int c = 0; c < CT_ADVICE_CLASSES; c++)
		if (j->cls[c].present)
			put(b, classes, ct_class_name((enum ct_class)c), class_json(b, &j->cls[c]));
	put(b, o, "classes", classes);
	put(b, o, "scheduling", scheduling_json(b, j));
	put(b, o, "network", network_json(b, j));
	return o;
}

/* Append v to array a (NULL v: the failed allocation was marked). */
static void add(struct ab *b, json_object *a, json_object *v)
{
	if (a && v && !json_object_array_add(a, v))
		return;
	json_object_put(v);
	b->oom = 1;
}

static json_object *interleave_json(struct ab *b, const struct ct_advice_interleave *il)
{
	json_object *o = made(b, json_object_new_object());
	json_object *jobs, *links;

	if (il->reason) {
		put(b, o, "reason", made(b, json_object_new_string(il->reason)));
		return o;
	}
	jobs = made(b, json_object_new_array());
	for (size_t j = 0; j < il->n_jobs; j++) {
		json_object *e = made(b, json_object_new_object());

		put(b, e, "job", made(b, json_object_new_uint64(j)));
		put(b, e, "shift_s", dbl(b, il->shift_s[j]));
		put(b, e, "cycle_s", j && il->cycle_s[j] > 0 ? dbl(b, il->cycle_s[j]) : NULL);
		add(b, jobs, e);
	}
	links = made(b, json_object_new_array());
	for (size_t i = 0; i < il->n_links; i++) {
		const struct ct_interleave_link *l = &il->links[i];
		json_object *e = made(b, json_object_new_object()), *pair;
		char addr[64];

		put(b, e, "address",
		    made(b, json_object_new_string(ct_addr_format(&l->addr, addr, sizeof(addr)))));
		put(b, e, "direction", made(b, json_object_new_string(l->rx ? "rx" : "tx")));
		pair = made(b, json_object_new_array());
		add(b, pair, made(b, json_object_new_uint64(l->job_a)));
		add(b, pair, made(b, json_object_new_uint64(l->job_b)));
		put(b, e, "jobs", pair);
		put(b, e, "overlap_now", dbl(b, l->now));
		put(b, e, "overlap_now_model", dbl(b, l->now_model));
		put(b, e, "overlap_after", dbl(b, l->after));
		add(b, links, e);
	}
	put(b, o, "jobs", jobs);
	put(b, o, "links", links);
	put(b, o, "overlap_now", dbl(b, il->now));
	put(b, o, "overlap_now_model", dbl(b, il->now_model));
	put(b, o, "overlap_after", dbl(b, il->after));
	return o;
}

json_object *ct_advice_json(const struct ct_advice *a)
{
	struct ab ab = {0}, *b = &ab;
	json_object *o = made(b, json_object_new_object());
	json_object *jobs = made(b, json_object_new_array());

	put(b, o, "nic_gbps", a->nic_gbps > 0 ? dbl(b, a->nic_gbps) : NULL);
	put(b, o, "nic_source",
	    a->nic_source ? made(b, json_object_new_string(a->nic_source)) : NULL);
	for (size_t j = 0; j < a->n_jobs; j++) {
		json_object *e = job_json(b, &a->jobs[j], j);

		if (!jobs || !e || json_object_array_add(jobs, e)) {
			json_object_put(e);
			b->oom = 1;
		}
	}
	put(b, o, "jobs", jobs);
	/* only where the fabric carries several jobs: one job has no one to interleave with */
	if (a->n_jobs > 1)
		put(b, o, "interleave", interleave_json(b, &a->interleave));
	if (ab.oom) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *ct_report_advice_json(const struct ct_report *r)
{
	struct ct_advice a;
	json_object *o;

	if (ct_advice_compute(r, &a))
		return NULL;
	o = ct_advice_json(&a);
	ct_advice_free(&a);
	return o;
}
