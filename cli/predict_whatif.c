// SPDX-License-Identifier: MIT
/*
 * commtap predict --what-if: every scenario is the profile changed in one
 * setting (profiles/whatif.c) and predicted by the one model; with
 * --report, the job as the wire saw it: its transport, its layout where the
 * signatures read one, and its NIC bytes per host per iteration, whose
 * ratio to the model's for the same layout (headers, a profile's sizes off
 * by a factor) carries over to the other scenarios ("calibrated").
 */
#include "predict_whatif.h"

#include "model.h"
#include "report_model.h"
#include "whatif.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB	      (1024.0 * 1024.0)
#define MAX_SCENARIOS 4 /* as profiled (or fitted), other mapping, --d, other transport */

/*
 * The wire's bytes over the model's for the same layout: headers add 1.4%
 * on a 4096-byte RoCE MTU (58 of 4154 bytes) and ACKs a little more; a
 * ratio beyond this band says the report is not of this profile's job, or
 * its iterations were miscounted (the period estimate off).
 */
#define WIRE_OVER_MODEL_LOW  0.95
#define WIRE_OVER_MODEL_HIGH 1.10

struct scenario {
	char name[32];
	struct ct_profile prof;
	struct ct_prediction pred;
	enum ct_transport transport;
	double *nic_bytes; /* per host, per iteration */
	bool done;
};

struct measured {
	bool have;
	double iterations, iteration_s;
	double *nic_bytes; /* per profile host, per iteration */
	double ratio;	   /* wire / model, the first scenario's layout */
	enum ct_transport transport;
	bool layout_from_wire;
	unsigned wire_d;  /* 0: the wire does not tell */
	const char *note; /* why the ratio is not trusted, or NULL */
};

static const char *mapping_name(enum ct_mapping m)
{
	return m == CT_MAP_CUSTOM     ? "custom"
	       : m == CT_MAP_EXPLICIT ? "explicit"
				      : "deepspeed-default";
}

static const char *transport_name(enum ct_transport t)
{
	return t == CT_TRANSPORT_TCP ? "tcp" : "roce";
}

/* The profile host whose NIC (or host) address is text; -1 for none. */
static int host_of(const struct ct_profile *p, const char *text)
{
	struct ct_addr a;

	if (!text || ct_addr_parse(text, &a))
		return -1;
	for (unsigned i = 0; i < p->nics; i++)
		if (!memcmp(&p->nic_addr[i], &a, sizeof(a)))
			return (int)(i / p->nics_per_host);
	for (unsigned h = 0; h < p->hosts; h++)
		if (!memcmp(&p->host_addr[h], &a, sizeof(a)))
			return (int)h;
	return -1;
}

/*
 * The report's view: bytes each profile host sent to the others (data and
 * the acknowledgements it returns: all a NIC sends) over the first job's
 * iterations; traffic to or from addresses outside the profile (storage)
 * is not the job's. The transport is the one carrying most bytes.
 */
static int read_report(const struct ct_profile *p, const char *path, struct measured *m)
{
	struct ct_rep rep;
	char err[512];
	double roce = 0, tcp = 0;
	int rc = ct_rep_load(path, &rep, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "commtap predict: --report %s\n", err);
		return rc;
	}
	m->iterations = rep.n_jobs ? rep.jobs[0].iterations : (double)rep.job.iterations;
	m->iteration_s = rep.n_jobs ? rep.jobs[0].iteration_period_s : rep.job.iteration_period_s;
	if (m->iterations < 1) {
		fprintf(stderr,
			"commtap predict: --report %s: no iterations found (%s): no bytes "
			"per iteration to fit\n",
			path, rep.job.reason ? rep.job.reason : "no period");
		ct_rep_free(&rep);
		return -EINVAL;
	}
	m->nic_bytes = calloc(p->hosts, sizeof(*m->nic_bytes));
	if (!m->nic_bytes) {
		ct_rep_free(&rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rep.n_flows; i++) {
		const struct ct_rep_flow *f = &rep.flows[i];
		int s = host_of(p, f->src), d = host_of(p, f->dst);

		if (s < 0 || d < 0 || s == d)
			continue;
		m->nic_bytes[s] += (double)f->bytes;
		*(f->transport && !strcmp(f->transport, "tcp") ? &tcp : &roce) += (double)f->bytes;
	}
	for (unsigned h = 0; h < p->hosts; h++)
		m->nic_bytes[h] /= m->iterations;
	m->transport = tcp > roce ? CT_TRANSPORT_TCP : CT_TRANSPORT_ROCE;
	/* the signatures' layout (a report made without the profile): d is the
	 * hosts of a data-parallel ring, when it crosses NICs with one replica a
	 * host (the custom mapping) */
	if (rep.has_layout && !rep.has_layout_check && p->mapping == CT_MAP_CUSTOM &&
	    p->p * p->t == p->gpus_per_host)
		m->wire_d = rep.layout_degree_has & 4u ? (unsigned)rep.layout_degree[2] : 0;
	m->have = true;
	ct_rep_free(&rep);
	return 0;
}

static int run_scenario(const struct ct_profile *base, const struct ct_whatif *w,
			struct scenario *s)
{
	char why[256];
	int rc = ct_whatif_profile(base, w, &s->prof, why, sizeof(why));

	if (rc) {
		fprintf(stderr, "commtap predict: --what-if %s: %s\n", s->name, why);
		ct_profile_free(&s->prof);
		return rc;
	}
	rc = ct_predict(&s->prof, &s->pred);
	if (rc) {
		fprintf(stderr, "commtap predict: --what-if %s: %s\n", s->name,
			ct_predict_strerror(&s->pred, rc));
		ct_prediction_free(&s->pred);
		ct_profile_free(&s->prof);
		return rc;
	}
	s->nic_bytes = calloc(s->prof.hosts, sizeof(*s->nic_bytes));
	if (!s->nic_bytes) {
		ct_prediction_free(&s->pred);
		ct_profile_free(&s->prof);
		return -ENOMEM;
	}
	ct_nic_bytes_per_host(&s->prof, &s->pred, s->nic_bytes);
	s->done = true;
	return 0;
}

static double sum(const double *v, unsigned n)
{
	double t = 0;

	for (unsigned i = 0; i < n; i++)
		t += v[i];
	return t;
}

static double max_of(const double *v, unsigned n)
{
	double t = 0;

	for (unsigned i = 0; i < n; i++)
		t = fmax(t, v[i]);
	return t;
}

static void print_table(const struct scenario *sc, unsigned n, const struct measured *m,
			const char *report)
{
	unsigned hosts = 0;

	printf("what-if of %s (%s)\n", sc[0].prof.name, sc[0].name);
	if (m->have) {
		printf("fitted to %s: %.0f iterations of %.4g s, transport %s", report,
		       m->iterations, m->iteration_s, transport_name(m->transport));
		if (m->layout_from_wire)
			printf(", layout from the wire (p %u, d %u)", sc[0].prof.p, sc[0].prof.d);
		printf("\n  NIC bytes per iteration, wire / model for this layout: %.4f%s%s\n",
		       m->ratio, m->note ? ": " : "", m->note ? m->note : "");
	}
	printf("\n%-22s %-17s %5s %4s %9s %14s %14s %10s %10s %10s\n", "scenario", "mapping", "d",
	       "tx", "hosts", "NIC MiB/iter", "per host max", "T_comm s", "T_NIC s", "T_iter s");
	for (unsigned i = 0; i < n; i++) {
		const struct scenario *s = &sc[i];

		printf("%-22s %-17s %5u %4s %9u %14.1f %14.1f %10.4f %10.4f %10.4f\n", s->name,
		       mapping_name(s->prof.mapping), s->prof.d, transport_name(s->transport),
		       s->prof.hosts, sum(s->nic_bytes, s->prof.hosts) / MIB,
		       max_of(s->nic_bytes, s->prof.hosts) / MIB, ct_prediction_comm_s(&s->pred),
		       ct_prediction_nic_comm_s(&s->pred), s->pred.t_iter);
		if (s->prof.hosts > hosts)
			hosts = s->prof.hosts;
	}
	printf("\nNIC MiB sent per host per iteration (model%s)\n",
	       m->have ? "; calibrated: times the wire / model ratio" : "");
	printf("%5s", "host");
	if (m->have)
		printf(" %14s", "measured");
	for (unsigned i = 0; i < n; i++)
		printf(" %22s", sc[i].name);
	printf("\n");
	for (unsigned h = 0; h < hosts && h < 64; h++) {
		printf("%5u", h);
		if (m->have)
			printf(" %14.2f", h < sc[0].prof.hosts ? m->nic_bytes[h] / MIB : 0);
		for (unsigned i = 0; i < n; i++) {
			char cell[48] = "-";

			if (h < sc[i].prof.hosts && m->have)
				snprintf(cell, sizeof(cell), "%.2f (cal %.2f)",
					 sc[i].nic_bytes[h] / MIB,
					 sc[i].nic_bytes[h] * m->ratio / MIB);
			else if (h < sc[i].prof.hosts)
				snprintf(cell, sizeof(cell), "%.2f", sc[i].nic_bytes[h] / MIB);
			printf(" %22s", cell);
		}
		printf("\n");
	}
	if (hosts > 64)
		printf("  (more than 64 hosts: see --json)\n");
}

static json_object *number_array(const double *v, unsigned n, double scale)
{
	json_object *a = json_object_new_array();

	for (unsigned i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_double(v[i] * scale));
	return a;
}

static int print_json(const struct scenario *sc, unsigned n, const struct measured *m,
		      const char *report)
{
	json_object *root = json_object_new_object(), *list = json_object_new_array();
	const char *text;
	int err = 0;

	if (!root || !list) {
		json_object_put(list);
		json_object_put(root);
		return -ENOMEM;
	}
	json_object_object_add(root, "schema", json_object_new_string("commtap.whatif/v1"));
	json_object_object_add(root, "profile", json_object_new_string(sc[0].prof.name));
	if (m->have) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "path", json_object_new_string(report));
		json_object_object_add(r, "iterations", json_object_new_double(m->iterations));
		json_object_object_add(r, "iteration_s", json_object_new_double(m->iteration_s));
		json_object_object_add(r, "transport",
				       json_object_new_string(transport_name(m->transport)));
		json_object_object_add(r, "layout_from_wire",
				       json_object_new_boolean(m->layout_from_wire));
		json_object_object_add(r, "nic_bytes_per_host",
				       number_array(m->nic_bytes, sc[0].prof.hosts, 1));
		json_object_object_add(r, "wire_over_model", json_object_new_double(m->ratio));
		json_object_object_add(r, "note", m->note ? json_object_new_string(m->note) : NULL);
		json_object_object_add(root, "report", r);
	} else {
		json_object_object_add(root, "report", NULL);
	}
	for (unsigned i = 0; i < n; i++) {
		const struct scenario *s = &sc[i];
		json_object *o = json_object_new_object();
		unsigned H = s->prof.hosts;

		json_object_object_add(o, "name", json_object_new_string(s->name));
		json_object_object_add(o, "mapping",
				       json_object_new_string(mapping_name(s->prof.mapping)));
		json_object_object_add(o, "p", json_object_new_int((int)s->prof.p));
		json_object_object_add(o, "t", json_object_new_int((int)s->prof.t));
		json_object_object_add(o, "d", json_object_new_int((int)s->prof.d));
		json_object_object_add(o, "transport",
				       json_object_new_string(transport_name(s->transport)));
		json_object_object_add(o, "gpus", json_object_new_int((int)s->prof.gpus));
		json_object_object_add(o, "hosts", json_object_new_int((int)H));
		json_object_object_add(o, "nic_bytes_per_host", number_array(s->nic_bytes, H, 1));
		json_object_object_add(o, "nic_bytes_per_host_calibrated",
				       m->have ? number_array(s->nic_bytes, H, m->ratio) : NULL);
		json_object_object_add(o, "nic_bytes_per_iteration",
				       json_object_new_double(sum(s->nic_bytes, H)));
		json_object_object_add(o, "comm_s",
				       json_object_new_double(ct_prediction_comm_s(&s->pred)));
		json_object_object_add(o, "nic_comm_s",
				       json_object_new_double(ct_prediction_nic_comm_s(&s->pred)));
		json_object_object_add(o, "iteration_s", json_object_new_double(s->pred.t_iter));
		json_object_object_add(o, "r_comm", json_object_new_double(s->pred.r_comm));
		json_object_array_add(list, o);
	}
	json_object_object_add(root, "scenarios", list);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	if (!text)
		err = -ENOMEM;
	else
		printf("%s\n", text);
	json_object_put(root);
	return err;
}

static int parse_transport(const char *text, enum ct_transport *t)
{
	if (!strcmp(text, "roce"))
		*t = CT_TRANSPORT_ROCE;
	else if (!strcmp(text, "tcp"))
		*t = CT_TRANSPORT_TCP;
	else
		return -EINVAL;
	return 0;
}

int predict_whatif(const struct ct_profile *p, const struct whatif_args *a)
{
	struct scenario sc[MAX_SCENARIOS] = {0};
	struct measured m = {0};
	enum ct_transport own = CT_TRANSPORT_ROCE;
	struct ct_whatif fit = {0};
	unsigned n = 0;
	int rc = 0;

	if (a->transport && parse_transport(a->transport, &own)) {
		fprintf(stderr, "commtap predict: --transport %s: expected roce or tcp\n",
			a->transport);
		return -EINVAL;
	}
	if (a->report) {
		rc = read_report(p, a->report, &m);
		if (rc)
			goto out;
		if (!a->transport)
			own = m.transport;
		/* the wire's d (and p: its stages across hosts) stand for the job
		 * when it read them and they differ from the profile's */
		if (m.wire_d && m.wire_d != p->d)
			fit.d = m.wire_d;
		m.layout_from_wire = fit.d != 0;
	}

	snprintf(sc[0].name, sizeof(sc[0].name), "%s",
		 m.layout_from_wire ? "fitted" : "as profiled");
	sc[0].transport = own;
	if ((rc = run_scenario(p, &fit, &sc[n++])))
		goto out;
	if (m.have) {
		double model = sum(sc[0].nic_bytes, sc[0].prof.hosts);
		double wire = sum(m.nic_bytes, p->hosts);

		m.ratio = model > 0 ? wire / model : 0;
		if (model <= 0)
			m.note = "the model puts no traffic on a NIC for this layout";
		else if (m.ratio < WIRE_OVER_MODEL_LOW || m.ratio > WIRE_OVER_MODEL_HIGH)
			m.note = "beyond the headers' share: the report's iterations (its period) "
				 "or the profile's sizes are not this job's";
	}
	if (p->mapping != CT_MAP_EXPLICIT && p->kind != CT_MODEL_DDP) {
		struct ct_whatif w = fit;

		w.mapping = p->mapping == CT_MAP_CUSTOM ? CT_MAP_DEEPSPEED_DEFAULT : CT_MAP_CUSTOM;
		snprintf(sc[n].name, sizeof(sc[n].name), "other mapping");
		sc[n].transport = own;
		if ((rc = run_scenario(p, &w, &sc[n++])))
			goto out;
	}
	if (a->d) {
		struct ct_whatif w = fit;

		w.d = a->d;
		snprintf(sc[n].name, sizeof(sc[n].name), "d=%u", a->d);
		sc[n].transport = own;
		if ((rc = run_scenario(p, &w, &sc[n++])))
			goto out;
	}
	{
		struct ct_whatif w = fit;

		w.transport_set = 1;
		w.from = own;
		w.to = own == CT_TRANSPORT_ROCE ? CT_TRANSPORT_TCP : CT_TRANSPORT_ROCE;
		snprintf(sc[n].name, sizeof(sc[n].name), "%s", transport_name(w.to));
		sc[n].transport = w.to;
		if ((rc = run_scenario(p, &w, &sc[n++])))
			goto out;
	}
	rc = a->json ? print_json(sc, n, &m, a->report) : (print_table(sc, n, &m, a->report), 0);
	if (rc)
		fprintf(stderr, "commtap predict: writing the what-if: %s\n", strerror(-rc));
out:
	for (unsigned i = 0; i < MAX_SCENARIOS; i++)
		if (sc[i].done) {
			free(sc[i].nic_bytes);
			ct_prediction_free(&sc[i].pred);
			ct_profile_free(&sc[i].prof);
		}
	free(m.nic_bytes);
	return rc;
}
