// SPDX-License-Identifier: MIT
/*
 * What-if profiles: the loaded profile copied with another mapping, another
 * data-parallel size or another transport, placed the way the loader
 * places it (profile.c), so the one model predicts every variant.
 */
#include "whatif.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *copy_array(const void *src, size_t n, size_t size)
{
	void *dst = calloc(n ? n : 1, size);

	if (dst && src && n)
		memcpy(dst, src, n * size);
	return dst;
}

/* The default address of host h, as the loader gives it (198.18.0.0/15). */
static void default_host_addr(unsigned h, struct ct_addr *a)
{
	char text[32];

	snprintf(text, sizeof(text), "198.18.%u.%u", (h + 1) / 256, (h + 1) % 256);
	ct_addr_parse(text, a);
}

/*
 * Hosts and NICs for out->gpus ranks: the base's addresses for the hosts it
 * has, the loader's defaults beyond them; then rank -> host -> NIC.
 */
static int place(const struct ct_profile *base, struct ct_profile *out)
{
	unsigned N = out->nics_per_host;

	out->hosts = out->gpus / out->gpus_per_host;
	out->nics = out->hosts * N;
	out->rank_host = calloc(out->gpus, sizeof(*out->rank_host));
	out->rank_nic = calloc(out->gpus, sizeof(*out->rank_nic));
	out->host_addr = calloc(out->hosts, sizeof(*out->host_addr));
	out->nic_addr = calloc(out->nics, sizeof(*out->nic_addr));
	if (!out->rank_host || !out->rank_nic || !out->host_addr || !out->nic_addr)
		return -ENOMEM;
	for (unsigned h = 0; h < out->hosts; h++) {
		if (h < base->hosts)
			out->host_addr[h] = base->host_addr[h];
		else
			default_host_addr(h, &out->host_addr[h]);
	}
	for (unsigned i = 0; i < out->nics; i++) {
		if (i < base->nics)
			out->nic_addr[i] = base->nic_addr[i];
		else if (N == 1)
			out->nic_addr[i] = out->host_addr[i];
		else {
			char text[32];

			/* the loader's rails: NIC k of host h at 198.19.k.(h+1) */
			snprintf(text, sizeof(text), "198.19.%u.%u", i % N, i / N + 1);
			ct_addr_parse(text, &out->nic_addr[i]);
		}
	}
	ct_profile_map_ranks(out);
	return ct_profile_map_nics(out);
}

static int refuse(char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return -EINVAL;
}

int ct_whatif_profile(const struct ct_profile *base, const struct ct_whatif *w,
		      struct ct_profile *out, char *why, size_t why_len)
{
	int err;

	*out = *base;
	out->layer_params = NULL;
	out->rank_host = out->rank_nic = NULL;
	out->host_addr = out->nic_addr = NULL;
	if ((w->mapping || w->d) && base->mapping == CT_MAP_EXPLICIT)
		return refuse(why, why_len,
			      "the profile's mapping is \"explicit\" (a host per rank): it has no "
			      "other mapping, and another d would need new hosts for its ranks");
	if (w->mapping)
		out->mapping = w->mapping;
	if (w->d) {
		out->d = w->d;
		out->gpus = base->p * base->t * w->d;
		if (base->kind != CT_MODEL_DDP)
			out->global_batch = base->micro_batch * base->micro_batches * w->d;
		if (base->kind == CT_MODEL_MOE && w->d % base->ep) {
			snprintf(why, why_len, "d = %u is not a multiple of ep = %u", w->d,
				 base->ep);
			return -EINVAL;
		}
		if (out->gpus % base->gpus_per_host) {
			snprintf(why, why_len,
				 "d = %u gives %u GPUs, which do not fill hosts of %u GPUs", w->d,
				 out->gpus, base->gpus_per_host);
			return -EINVAL;
		}
	}
	if (w->transport_set && w->from != w->to) {
		double r = w->to == CT_TRANSPORT_TCP ? 1 / CT_ROCE_OVER_TCP : CT_ROCE_OVER_TCP;

		out->hw.nic_efficiency = base->hw.nic_efficiency * r;
		/* a bandwidth the profile states is its transport's; the model derives
		 * the others from the NIC efficiency */
		out->hw.c_pp *= r;
		out->hw.c_dp *= r;
		out->hw.c_ep *= r;
		/* a TP group of the named mappings is t consecutive ranks: it crosses a
		 * NIC only when it is larger than a host */
		if (base->t > base->gpus_per_host)
			out->hw.c_tp *= r;
	}
	err = 0;
	if (base->n_layer_params) {
		out->layer_params = copy_array(base->layer_params, base->n_layer_params,
					       sizeof(*base->layer_params));
		if (!out->layer_params)
			err = -ENOMEM;
	}
	err = err ?: place(base, out);
	if (err == -ENOMEM)
		snprintf(why, why_len, "out of memory");
	return err;
}

void ct_nic_bytes_per_host(const struct ct_profile *p, const struct ct_prediction *pr, double *out)
{
	const struct ct_pair_bytes *m = &pr->host_pairs;

	memset(out, 0, p->hosts * sizeof(*out));
	for (size_t i = 0; m->keys && i <= m->mask; i++) {
		unsigned c, a, b;
		double bytes;

		if (ct_pair_bytes_at(m, i, &c, &a, &b, &bytes) && a != b && a < p->hosts)
			out[a] += bytes;
	}
}

double ct_prediction_comm_s(const struct ct_prediction *pr)
{
	double t = 0;

	for (int c = 0; c < CT_CLASS_COUNT; c++)
		t += pr->t_class[c];
	return t;
}

double ct_prediction_nic_comm_s(const struct ct_prediction *pr)
{
	double t = 0;

	for (int c = 0; c < CT_CLASS_COUNT; c++)
		if (pr->crosses_nic[c])
			t += pr->t_class[c];
	return t;
}
