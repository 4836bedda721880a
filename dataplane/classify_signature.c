// SPDX-License-Identifier: MIT
/*
 * Classification by traffic signatures alone, the way a person reads a
 * heatmap of a training job:
 *   - traffic that does not recur every iteration is Other (storage,
 *     checkpoints, control);
 *   - a volume that changes from iteration to iteration is expert
 *     all-to-all (EP): token routing moves different bytes each time, every
 *     other class moves the same tensors;
 *   - data both ways between two hosts, several bursts an iteration, is a
 *     pipeline (PP: activations forward, gradients back, per micro-batch);
 *   - with a pipeline present, data both ways between two hosts that are
 *     not neighbours in it is EmbTableSyn (first and last stage);
 *   - the rest repeats once an iteration around a ring: DP.
 */
#include "classify_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EP_VOLUME_CV   0.05 /* per-iteration volume variation of all-to-all */
#define PP_MIN_BURSTS  3.0  /* bursts per iteration of a pipeline flow, at least */

enum pair_flag {
	PAIR_DATA = 1, /* a periodic, steady flow s -> d */
	PAIR_PP = 2,
};

struct pair {
	struct ct_addr src, dst;
	unsigned flags;
};

static int pair_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 2 * sizeof(struct ct_addr));
}

static struct pair *pair_find(struct pair *p, size_t n, const struct ct_addr *src,
			      const struct ct_addr *dst)
{
	struct pair probe = {*src, *dst, 0};

	return bsearch(&probe, p, n, sizeof(*p), pair_cmp);
}

static int addr_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_addr));
}

/* Hosts named in the classified flows of class cls (-1: any but Other), once each. */
static unsigned count_hosts(const struct ct_flow_set *set, const struct ct_classification *out,
			    const uint8_t *todo, int cls, struct ct_addr *scratch)
{
	size_t n = 0;
	unsigned distinct = 0;

	for (size_t i = 0; i < set->count; i++) {
		if (!todo[i])
			continue;
		if (cls < 0 ? out->flows[i].cls == CT_CLASS_OTHER : out->flows[i].cls != cls)
			continue;
		scratch[n++] = set->flows[i].key.src;
		scratch[n++] = set->flows[i].key.dst;
	}
	qsort(scratch, n, sizeof(*scratch), addr_cmp);
	for (size_t i = 0; i < n; i++)
		distinct += !i || addr_cmp(&scratch[i], &scratch[i - 1]);
	return distinct;
}

int ct_classify_by_signature(const struct ct_flow_set *set, const struct ct_periodicity *per,
			     const uint8_t *todo, struct ct_classification *out)
{
	const struct ct_period *job = per ? &per->job : NULL;
	struct pair *pairs = malloc((set->count ? set->count : 1) * sizeof(*pairs));
	struct ct_addr *scratch = malloc((2 * set->count + 1) * sizeof(*scratch));
	uint8_t *steady = calloc(set->count ? set->count : 1, 1);
	size_t np = 0, w = 0;
	int pipeline = 0;

	if (!pairs || !scratch || !steady) {
		free(pairs);
		free(scratch);
		free(steady);
		return -ENOMEM;
	}
	/* Other and EP first; the rest are steady periodic flows */
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_periodicity *fp;
		struct ct_flow_class *fc = &out->flows[i];

		if (!todo[i])
			continue;
		if (!job || !job->periodic) {
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE, 0.5,
				     "no iteration period in the capture (%s)",
				     job && job->reason ? job->reason : "no bursts");
			continue;
		}
		fp = &per->flows[i];
		if (!fp->periodic) {
			ct_class_set(fc, CT_CLASS_OTHER, CT_CLASS_BY_SIGNATURE, 0.8,
				     "its %zu bursts do not recur every iteration", fp->n_bursts);
			continue;
		}
		if (fp->volumes.iterations >= 3 && fp->volumes.bytes_cv >= EP_VOLUME_CV) {
			ct_class_set(fc, CT_CLASS_EP, CT_CLASS_BY_SIGNATURE,
				     0.6 + fp->volumes.bytes_cv, "its bytes per iteration vary "
				     "(CV %.2f), as token routing makes all-to-all do",
				     fp->volumes.bytes_cv);
			continue;
		}
		steady[i] = 1;
		pairs[np++] = (struct pair){set->flows[i].key.src, set->flows[i].key.dst, PAIR_DATA};
	}
	qsort(pairs, np, sizeof(*pairs), pair_cmp);
	for (size_t i = 0; i < np; i++) /* one entry per pair */
		if (!w || pair_cmp(&pairs[i], &pairs[w - 1]))
			pairs[w++] = pairs[i];
	np = w;

	/* pipelines: steady data both ways, several bursts an iteration */
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];
		double per_iter;

		if (!steady[i])
			continue;
		per_iter = (double)per->flows[i].n_bursts / (double)job->iterations;
		if (per_iter >= PP_MIN_BURSTS && pair_find(pairs, np, &f->key.dst, &f->key.src)) {
			ct_class_set(&out->flows[i], CT_CLASS_PP, CT_CLASS_BY_SIGNATURE, 0.8,
				     "data both ways between its hosts, %.1f bursts an iteration: "
				     "activations forward, gradients back",
				     per_iter);
			pair_find(pairs, np, &f->key.src, &f->key.dst)->flags |= PAIR_PP;
			pipeline = 1;
			steady[i] = 2;
		}
	}
	/* EmbTableSyn beside a pipeline; DP otherwise */
	for (size_t i = 0; i < set->count; i++) {
		const struct ct_flow_summary *f = &set->flows[i];
		const struct pair *back;
		double per_iter;

		if (steady[i] != 1)
			continue;
		per_iter = (double)per->flows[i].n_bursts / (double)job->iterations;
		back = pair_find(pairs, np, &f->key.dst, &f->key.src);
		if (pipeline && back && !(back->flags & PAIR_PP) &&
		    !(pair_find(pairs, np, &f->key.src, &f->key.dst)->flags & PAIR_PP))
			ct_class_set(&out->flows[i], CT_CLASS_EMB, CT_CLASS_BY_SIGNATURE, 0.7,
				     "beside a pipeline, data both ways between two hosts that are "
				     "not its neighbours, %.1f bursts an iteration: the first and "
				     "last stage",
				     per_iter);
		else
			ct_class_set(&out->flows[i], CT_CLASS_DP, CT_CLASS_BY_SIGNATURE, 0.7,
				     "steady bytes every iteration, %.1f bursts an iteration, %s",
				     per_iter,
				     back ? "data both ways (a ring of two)" : "one way (a ring)");
	}
	out->layout.hosts = count_hosts(set, out, todo, -1, scratch);
	out->layout.pp_stages = count_hosts(set, out, todo, CT_CLASS_PP, scratch);
	out->layout.dp_ring = count_hosts(set, out, todo, CT_CLASS_DP, scratch);
	out->layout.ep_group = count_hosts(set, out, todo, CT_CLASS_EP, scratch);
	free(pairs);
	free(scratch);
	free(steady);
	return 0;
}
