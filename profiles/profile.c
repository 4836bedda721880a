// SPDX-License-Identifier: MIT
/*
 * Profile loading. Every field is checked as it is read; an error names the
 * file, the JSON path of the field and what was expected, e.g.
 *   gpt.json: $.parallelism.p: expected an integer in [1, 4096], got "four"
 */
#include "profile.h"

#include <commtap/error.h>

#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *shown(json_object *v)
{
	return v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "nothing";
}

/* Reject keys that are not in allowed (a NULL-terminated list). */
static int check_keys(struct ct_load_err *L, json_object *obj, const char *path,
		      const char *const *allowed)
{
	json_object_object_foreach(obj, key, val)
	{
		const char *const *a;

		(void)val;
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a) {
			char expected[384] = "";

			for (a = allowed; *a; a++) {
				strncat(expected, *a, sizeof(expected) - strlen(expected) - 3);
				if (a[1])
					strncat(expected, ", ", sizeof(expected) - strlen(expected) - 1);
			}
			return ct_load_fail(L, path, "unknown key \"%s\" (expected one of: %s)",
					    key, expected);
		}
	}
	return 0;
}

static int get_object(struct ct_load_err *L, json_object *parent, const char *path, const char *key,
		      bool required, json_object **out, char *subpath, size_t sublen)
{
	json_object *v;

	snprintf(subpath, sublen, "%s.%s", path, key);
	*out = NULL;
	if (!json_object_object_get_ex(parent, key, &v)) {
		if (required)
			return ct_load_fail(L, subpath, "missing (expected an object)");
		return 0;
	}
	if (!json_object_is_type(v, json_type_object))
		return ct_load_fail(L, subpath, "expected an object, got %s", shown(v));
	*out = v;
	return 0;
}

/* An integer field in [min, max]; absent and not required leaves *out. */
static int get_uint(struct ct_load_err *L, json_object *obj, const char *path, const char *key,
		    bool required, uint64_t min, uint64_t max, uint64_t *out)
{
	char p[256];
	json_object *v;
	int64_t x;

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!json_object_object_get_ex(obj, key, &v)) {
		if (required)
			return ct_load_fail(L, p, "missing (expected an integer in [%llu, %llu])",
					    (unsigned long long)min, (unsigned long long)max);
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return ct_load_fail(L, p, "expected an integer in [%llu, %llu], got %s",
				    (unsigned long long)min, (unsigned long long)max, shown(v));
	x = json_object_get_int64(v);
	if (x < 0 || (uint64_t)x < min || (uint64_t)x > max)
		return ct_load_fail(L, p, "expected an integer in [%llu, %llu], got %s",
				    (unsigned long long)min, (unsigned long long)max, shown(v));
	*out = (uint64_t)x;
	return 0;
}

static int get_unsigned(struct ct_load_err *L, json_object *obj, const char *path, const char *key,
			bool required, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v = *out;
	int err = get_uint(L, obj, path, key, required, min, max, &v);

	*out = (unsigned)v;
	return err;
}

static int get_double(struct ct_load_err *L, json_object *obj, const char *path, const char *key,
		      bool required, double min, double max, double *out)
{
	char p[256];
	json_object *v;
	double x;

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!json_object_object_get_ex(obj, key, &v)) {
		if (required)
			return ct_load_fail(L, p, "missing (expected a number in [%g, %g])", min,
					    max);
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return ct_load_fail(L, p, "expected a number in [%g, %g], got %s", min, max,
				    shown(v));
	x = json_object_get_double(v);
	if (!(x >= min && x <= max))
		return ct_load_fail(L, p, "expected a number in [%g, %g], got %s", min, max,
				    shown(v));
	*out = x;
	return 0;
}

static int get_bool(struct ct_load_err *L, json_object *obj, const char *path, const char *key,
		    bool *out)
{
	char p[256];
	json_object *v;

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!json_object_object_get_ex(obj, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return ct_load_fail(L, p, "expected true or false, got %s", shown(v));
	*out = json_object_get_boolean(v);
	return 0;
}

/* A string field; with choices, it must be one of them (its index in *choice). */
static int get_string(struct ct_load_err *L, json_object *obj, const char *path, const char *key,
		      bool required, const char *const *choices, char *out, size_t outlen,
		      int *choice)
{
	char p[256];
	json_object *v;
	const char *s;

	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (!json_object_object_get_ex(obj, key, &v)) {
		if (required)
			return ct_load_fail(L, p, "missing (expected a string)");
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return ct_load_fail(L, p, "expected a string, got %s", shown(v));
	s = json_object_get_string(v);
	if (strlen(s) >= outlen)
		return ct_load_fail(L, p, "longer than %zu characters", outlen - 1);
	if (choices) {
		char expected[256] = "";
		int i;

		for (i = 0; choices[i]; i++)
			if (!strcmp(choices[i], s))
				break;
		if (!choices[i]) {
			for (int j = 0; choices[j]; j++) {
				strncat(expected, choices[j], sizeof(expected) - strlen(expected) - 3);
				if (choices[j + 1])
					strncat(expected, ", ", sizeof(expected) - strlen(expected) - 1);
			}
			return ct_load_fail(L, p, "expected one of %s, got %s", expected, shown(v));
		}
		if (choice)
			*choice = i;
	}
	snprintf(out, outlen, "%s", s);
	return 0;
}

static int precision_bytes(struct ct_load_err *L, json_object *m, const char *path, unsigned dflt,
			   unsigned *out)
{
	static const char *const names[] = {"fp16", "bf16", "fp32", NULL};
	static const unsigned bytes[] = {2, 2, 4};
	char buf[8];
	int choice = -1;
	int err = get_string(L, m, path, "precision", false, names, buf, sizeof(buf), &choice);

	if (err)
		return err;
	*out = choice >= 0 ? bytes[choice] : dflt;
	return 0;
}

static int load_transformer(struct ct_load_err *L, json_object *m, struct ct_profile *p)
{
	static const char *const gpt_keys[] = {"kind", "layers", "hidden", "seq_len", "vocab",
					       "global_batch", "micro_batch", "micro_batches",
					       "precision", "partition_pipeline_sends", NULL};
	static const char *const moe_keys[] = {"kind", "layers", "hidden", "seq_len", "vocab",
					       "global_batch", "micro_batch", "micro_batches",
					       "precision", "partition_pipeline_sends", "experts",
					       "top_k", "moe_interval", NULL};
	const char *path = "$.model";
	int err;

	p->vocab = 50257;
	err = check_keys(L, m, path, p->kind == CT_MODEL_MOE ? moe_keys : gpt_keys);
	err = err ?: get_unsigned(L, m, path, "layers", true, 1, 100000, &p->layers);
	err = err ?: get_unsigned(L, m, path, "hidden", true, 1, 1 << 20, &p->hidden);
	err = err ?: get_unsigned(L, m, path, "seq_len", true, 1, 1 << 24, &p->seq_len);
	err = err ?: get_unsigned(L, m, path, "vocab", false, 1, 1 << 26, &p->vocab);
	err = err ?: get_unsigned(L, m, path, "global_batch", true, 1, 1 << 24, &p->global_batch);
	err = err ?: get_unsigned(L, m, path, "micro_batch", true, 1, 1 << 20, &p->micro_batch);
	err = err ?: get_unsigned(L, m, path, "micro_batches", true, 1, 1 << 20, &p->micro_batches);
	err = err ?: precision_bytes(L, m, path, 2, &p->bytes_per_elem);
	err = err ?: get_bool(L, m, path, "partition_pipeline_sends", &p->partition_pipeline_sends);
	if (err || p->kind != CT_MODEL_MOE)
		return err;
	p->top_k = 1;
	p->moe_interval = 2;
	err = get_unsigned(L, m, path, "experts", true, 1, 1 << 16, &p->experts);
	err = err ?: get_unsigned(L, m, path, "top_k", false, 1, 2, &p->top_k);
	err = err ?: get_unsigned(L, m, path, "moe_interval", false, 1, 1000, &p->moe_interval);
	return err;
}

static int load_ddp(struct ct_load_err *L, json_object *m, struct ct_profile *p)
{
	static const char *const keys[] = {"kind", "architecture", "layer_params", "seq_len",
					   "batch_per_gpu", "precision", "bucket_mb",
					   "first_bucket_mb", NULL};
	const char *path = "$.model";
	double bucket_mb = 25, first_mb = 1;
	json_object *list;
	int err;

	err = check_keys(L, m, path, keys);
	err = err ?: get_string(L, m, path, "architecture", false, NULL, p->arch, sizeof(p->arch),
				NULL);
	err = err ?: get_unsigned(L, m, path, "seq_len", false, 1, 1 << 20, &p->seq_len);
	err = err ?: get_unsigned(L, m, path, "batch_per_gpu", true, 1, 1 << 20, &p->batch_per_gpu);
	err = err ?: precision_bytes(L, m, path, 4, &p->bytes_per_elem);
	err = err ?: get_double(L, m, path, "bucket_mb", false, 0.001, 1 << 20, &bucket_mb);
	err = err ?: get_double(L, m, path, "first_bucket_mb", false, 0.001, 1 << 20, &first_mb);
	if (err)
		return err;
	/* PyTorch's bucket_cap_mb is in MiB. */
	p->bucket_bytes = (uint64_t)(bucket_mb * 1048576.0);
	p->first_bucket_bytes = (uint64_t)(first_mb * 1048576.0);

	if (json_object_object_get_ex(m, "layer_params", &list)) {
		if (p->arch[0])
			return ct_load_fail(L, "$.model",
					    "give either \"architecture\" or "
					    "\"layer_params\", not both");
		if (!json_object_is_type(list, json_type_array) || !json_object_array_length(list))
			return ct_load_fail(
				L, "$.model.layer_params",
				"expected a non-empty array of parameter counts, got %s",
				shown(list));
		p->n_layer_params = json_object_array_length(list);
		p->layer_params = calloc(p->n_layer_params, sizeof(*p->layer_params));
		if (!p->layer_params)
			return -ENOMEM;
		for (size_t i = 0; i < p->n_layer_params; i++) {
			json_object *v = json_object_array_get_idx(list, i);
			char ip[64];

			snprintf(ip, sizeof(ip), "$.model.layer_params[%zu]", i);
			if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0)
				return ct_load_fail(L, ip, "expected a positive integer, got %s",
						    shown(v));
			p->layer_params[i] = (uint64_t)json_object_get_int64(v);
		}
	} else if (!p->arch[0]) {
		return ct_load_fail(L, "$.model",
				    "missing \"architecture\" (a named model) or "
				    "\"layer_params\" (parameter counts in registration order)");
	}
	return 0;
}

static int load_model(struct ct_load_err *L, json_object *root, struct ct_profile *p)
{
	static const char *const kinds[] = {"gpt", "ddp", "moe", NULL};
	static const enum ct_model_kind kind_of[] = {CT_MODEL_GPT, CT_MODEL_DDP, CT_MODEL_MOE};
	char sub[64], kind[8];
	json_object *m;
	int choice = -1;
	int err = get_object(L, root, "$", "model", true, &m, sub, sizeof(sub));

	err = err ?: get_string(L, m, "$.model", "kind", true, kinds, kind, sizeof(kind), &choice);
	if (err)
		return err;
	p->kind = kind_of[choice];
	return p->kind == CT_MODEL_DDP ? load_ddp(L, m, p) : load_transformer(L, m, p);
}

static int load_parallelism(struct ct_load_err *L, json_object *root, struct ct_profile *p)
{
	static const char *const keys[] = {"p",		"t",	    "d",
					   "ep",	"schedule", "virtual_stages",
					   "recompute", "zero",	    "zero_overlap",
					   NULL};
	static const char *const schedules[] = {"1f1b", "interleaved-1f1b", NULL};
	char sub[64], sched[24];
	int interleaved = 0;
	json_object *o;
	bool transformer = p->kind != CT_MODEL_DDP;
	int err = get_object(L, root, "$", "parallelism", transformer, &o, sub, sizeof(sub));

	p->p = p->t = p->ep = 1;
	p->virtual_stages = 0;
	p->d = 0;
	p->recompute = p->kind == CT_MODEL_GPT;
	if (err || !o)
		return err;
	err = check_keys(L, o, sub, keys);
	err = err ?: get_unsigned(L, o, sub, "p", transformer, 1, 4096, &p->p);
	err = err ?: get_unsigned(L, o, sub, "t", transformer, 1, 4096, &p->t);
	err = err ?: get_unsigned(L, o, sub, "d", transformer, 1, 1 << 20, &p->d);
	err = err ?: get_unsigned(L, o, sub, "ep", false, 1, 1 << 20, &p->ep);
	err = err
		      ?: get_string(L, o, sub, "schedule", false, schedules, sched, sizeof(sched),
				    &interleaved);
	err = err ?: get_unsigned(L, o, sub, "virtual_stages", false, 2, 64, &p->virtual_stages);
	if (!err && interleaved && !p->virtual_stages)
		err = ct_load_fail(
			L, "$.parallelism.virtual_stages",
			"missing (schedule \"interleaved-1f1b\" needs the model chunks per stage, "
			">= 2)");
	if (!err && !interleaved && p->virtual_stages)
		err = ct_load_fail(L, "$.parallelism.virtual_stages",
				   "only with schedule \"interleaved-1f1b\"");
	err = err ?: get_bool(L, o, sub, "recompute", &p->recompute);
	err = err ?: get_unsigned(L, o, sub, "zero", false, 0, 3, &p->zero);
	err = err ?: get_bool(L, o, sub, "zero_overlap", &p->zero_overlap);
	return err;
}

/* Interleaved 1F1B as Megatron runs it: m a multiple of p, whole layers per chunk. */
static int validate_interleave(struct ct_load_err *L, struct ct_profile *p)
{
	unsigned v = p->virtual_stages;

	if (!v) {
		p->virtual_stages = 1;
		return 0;
	}
	if (p->kind != CT_MODEL_GPT || p->p < 2)
		return ct_load_fail(L, "$.parallelism.virtual_stages",
				    "interleaving needs model kind \"gpt\" and p >= 2, got p = %u",
				    p->p);
	if (p->micro_batches % p->p)
		return ct_load_fail(
			L, "$.parallelism.virtual_stages",
			"interleaving needs the micro-batches (m = %u) to be a multiple of p = %u",
			p->micro_batches, p->p);
	if (p->layers % (p->p * v))
		return ct_load_fail(L, "$.parallelism.virtual_stages",
				    "%u layers do not split into p·v = %u·%u chunks", p->layers,
				    p->p, v);
	return 0;
}

/* ZeRO shards what the DP replicas hold: stage 1 the optimizer, stage 3 the parameters. */
static int validate_zero(struct ct_load_err *L, const struct ct_profile *p)
{
	if (p->zero == 2)
		return ct_load_fail(L, "$.parallelism.zero",
				    "ZeRO-2 is not modelled (0, 1 or 3; its traffic is ZeRO-1's)");
	if (p->zero && p->kind != CT_MODEL_GPT)
		return ct_load_fail(L, "$.parallelism.zero",
				    "ZeRO is modelled for model kind \"gpt\" only");
	if (p->zero && p->d < 2)
		return ct_load_fail(
			L, "$.parallelism.zero",
			"ZeRO-%u shards over the data-parallel replicas: needs d >= 2, got d = %u",
			p->zero, p->d);
	if (p->zero == 3 && p->p != 1)
		return ct_load_fail(
			L, "$.parallelism.zero",
			"ZeRO-3 gathers every layer from the DP replicas and runs without a "
			"pipeline: needs p = 1, got p = %u",
			p->p);
	if (p->zero_overlap && p->zero != 1)
		return ct_load_fail(L, "$.parallelism.zero_overlap",
				    "needs \"zero\": 1, got zero = %u", p->zero);
	return 0;
}

/* NCCL's buffer sizes by protocol: Simple 4 MiB; LL 8 lines/thread × 512 threads ×
 * 8 steps × 16 B; LL128 120 elements × 640 threads × 8 steps × 8 B. */
static const uint64_t nccl_default_buffsize[] = {4u << 20, 524288, 4915200};

static int load_nccl(struct ct_load_err *L, json_object *root, struct ct_profile *p)
{
	static const char *const keys[] = {"protocol",	    "algorithm", "buffsize",
					   "p2p_chunksize", "channels",	 NULL};
	static const char *const protocols[] = {"Simple", "LL", "LL128", NULL};
	static const char *const algorithms[] = {"ring", "tree", NULL};
	struct ct_nccl *n = &p->nccl;
	int proto = CT_NCCL_SIMPLE, algo = CT_NCCL_RING;
	char sub[64], buf[8];
	json_object *o;
	int err = get_object(L, root, "$", "nccl", false, &o, sub, sizeof(sub));

	if (err || !o)
		return err;
	n->given = true;
	n->p2p_chunk = 128u << 10;
	err = check_keys(L, o, sub, keys);
	err = err ?: get_string(L, o, sub, "protocol", false, protocols, buf, sizeof(buf), &proto);
	err = err ?: get_string(L, o, sub, "algorithm", false, algorithms, buf, sizeof(buf), &algo);
	n->protocol = (enum ct_nccl_protocol)proto;
	n->algorithm = (enum ct_nccl_algorithm)algo;
	n->buffsize = nccl_default_buffsize[proto];
	err = err ?: get_uint(L, o, sub, "buffsize", false, 65536, 1ull << 30, &n->buffsize);
	err = err ?: get_uint(L, o, sub, "p2p_chunksize", false, 4096, 1ull << 30, &n->p2p_chunk);
	err = err ?: get_unsigned(L, o, sub, "channels", false, 1, 64, &n->channels);
	if (err)
		return err;
	/* a step must hold whole lines: 8 steps of a multiple of 128 bytes */
	if (n->buffsize % (8 * 128))
		return ct_load_fail(L, "$.nccl.buffsize",
				    "%llu bytes is not 8 steps of a multiple of 128 bytes",
				    (unsigned long long)n->buffsize);
	return 0;
}

/* Combinations that cannot describe a real job. */
static int validate(struct ct_load_err *L, struct ct_profile *p)
{
	if (p->kind == CT_MODEL_DDP) {
		if (p->p != 1 || p->t != 1)
			return ct_load_fail(L, "$.parallelism",
					    "a DDP job has p = t = 1, got p=%u t=%u", p->p, p->t);
		if (!p->d)
			p->d = p->gpus;
		if (p->d != p->gpus)
			return ct_load_fail(L, "$.parallelism.d",
					    "d = %u but the job has %u GPUs "
					    "($.placement.gpus)",
					    p->d, p->gpus);
		return validate_interleave(L, p) ?: validate_zero(L, p);
	}
	if ((uint64_t)p->p * p->t * p->d != p->gpus)
		return ct_load_fail(
			L, "$.parallelism",
			"p·t·d = %u·%u·%u = %llu but the job has %u GPUs ($.placement.gpus)", p->p,
			p->t, p->d, (unsigned long long)p->p * p->t * p->d, p->gpus);
	if ((uint64_t)p->micro_batch * p->micro_batches * p->d != p->global_batch)
		return ct_load_fail(L, "$.model.global_batch",
				    "gb = %u but b·m·d = %u·%u·%u = %llu", p->global_batch,
				    p->micro_batch, p->micro_batches, p->d,
				    (unsigned long long)p->micro_batch * p->micro_batches * p->d);
	if (p->layers < p->p)
		return ct_load_fail(L, "$.model.layers", "%u layers cannot fill %u pipeline stages",
				    p->layers, p->p);
	if (p->hidden % p->t)
		return ct_load_fail(L, "$.model.hidden",
				    "hidden size %u is not divisible by t = %u", p->hidden, p->t);
	if (p->kind == CT_MODEL_MOE) {
		if (p->d % p->ep)
			return ct_load_fail(L, "$.parallelism.ep",
					    "ep = %u must divide the data-parallel size d = %u",
					    p->ep, p->d);
		if (p->experts % p->ep)
			return ct_load_fail(L, "$.model.experts",
					    "%u experts cannot be split over ep = %u", p->experts,
					    p->ep);
	} else if (p->ep != 1) {
		return ct_load_fail(L, "$.parallelism.ep",
				    "expert parallelism needs model kind \"moe\"");
	}
	return validate_interleave(L, p) ?: validate_zero(L, p);
}

void ct_profile_map_ranks(struct ct_profile *p)
{
	for (unsigned stage = 0; stage < p->p; stage++)
		for (unsigned dp = 0; dp < p->d; dp++)
			for (unsigned tp = 0; tp < p->t; tp++) {
				unsigned slot;

				if (p->mapping == CT_MAP_CUSTOM)
					slot = (dp * p->p + stage) * p->t + tp;
				else
					slot = ct_rank_of(p, stage, dp, tp);
				p->rank_host[ct_rank_of(p, stage, dp, tp)] = slot / p->gpus_per_host;
			}
}

int ct_profile_map_nics(struct ct_profile *p)
{
	unsigned N = p->nics_per_host, *seen = calloc(p->hosts, sizeof(*seen));

	if (!seen)
		return -ENOMEM;
	for (unsigned r = 0; r < p->gpus; r++) {
		unsigned h = p->rank_host[r], g = seen[h]++;

		p->rank_nic[r] = h * N + (g < p->gpus_per_host ? g : p->gpus_per_host - 1) * N /
						 p->gpus_per_host;
	}
	free(seen);
	return 0;
}

/*
 * NICs per host and their addresses ($.placement.nics, host-major: host h's
 * NIC k at h·nics_per_host + k). With one NIC per host they are the hosts'
 * addresses; with several and no list, rail k of host h is 198.19.k.(h+1).
 */
static int load_nics(struct ct_load_err *L, json_object *o, struct ct_profile *p)
{
	json_object *list;
	unsigned N = 1;
	int err = get_unsigned(L, o, "$.placement", "nics_per_host", false, 1, 64, &N);

	if (err)
		return err;
	if (p->gpus_per_host % N)
		return ct_load_fail(L, "$.placement.nics_per_host",
				    "%u GPUs per host cannot share %u NICs evenly",
				    p->gpus_per_host, N);
	p->nics_per_host = N;
	p->nics = p->hosts * N;
	p->rank_nic = calloc(p->gpus, sizeof(*p->rank_nic));
	p->nic_addr = calloc(p->nics, sizeof(*p->nic_addr));
	if (!p->rank_nic || !p->nic_addr || ct_profile_map_nics(p))
		return -ENOMEM;
	if (!json_object_object_get_ex(o, "nics", &list)) {
		for (unsigned i = 0; i < p->nics; i++) {
			char text[32];

			if (N == 1) {
				p->nic_addr[i] = p->host_addr[i];
				continue;
			}
			snprintf(text, sizeof(text), "198.19.%u.%u", i % N, i / N + 1);
			ct_addr_parse(text, &p->nic_addr[i]);
		}
		return 0;
	}
	if (p->host_addr_given)
		return ct_load_fail(
			L, "$.placement.nics",
			"give the hosts' addresses either in \"hosts\" or, NIC by NIC, here");
	if (!json_object_is_type(list, json_type_array) ||
	    json_object_array_length(list) != p->nics)
		return ct_load_fail(
			L, "$.placement.nics",
			"expected an array of %u addresses (%u hosts × %u NICs, host by host)",
			p->nics, p->hosts, N);
	for (unsigned i = 0; i < p->nics; i++) {
		json_object *v = json_object_array_get_idx(list, i);
		char ip[64];

		snprintf(ip, sizeof(ip), "$.placement.nics[%u]", i);
		if (!json_object_is_type(v, json_type_string) ||
		    ct_addr_parse(json_object_get_string(v), &p->nic_addr[i]))
			return ct_load_fail(L, ip, "expected an IPv4 or IPv6 address, got %s",
					    shown(v));
	}
	/* flows map to hosts by their first NIC's address */
	for (unsigned h = 0; h < p->hosts; h++)
		p->host_addr[h] = p->nic_addr[h * N];
	p->host_addr_given = true;
	return 0;
}

static int load_placement(struct ct_load_err *L, json_object *root, struct ct_profile *p)
{
	static const char *const keys[] = {"gpus",  "gpus_per_host", "mapping", "rank_hosts",
					   "hosts", "nics_per_host", "nics",	NULL};
	static const char *const mappings[] = {"deepspeed-default", "custom", "explicit", NULL};
	char sub[64], mapping[24];
	json_object *o, *list;
	int choice = 0, err = get_object(L, root, "$", "placement", true, &o, sub, sizeof(sub));

	err = err ?: check_keys(L, o, sub, keys);
	err = err ?: get_unsigned(L, o, sub, "gpus", true, 1, 1 << 20, &p->gpus);
	err = err ?: get_unsigned(L, o, sub, "gpus_per_host", false, 1, 1024, &p->gpus_per_host);
	err = err ?: get_string(L, o, sub, "mapping", p->kind != CT_MODEL_DDP, mappings, mapping,
				sizeof(mapping), &choice);
	if (err)
		return err;
	p->mapping = (enum ct_mapping)(choice + 1);
	err = validate(L, p);
	if (err)
		return err;
	if (!p->gpus_per_host)
		return ct_load_fail(L, "$.placement.gpus_per_host",
				    "missing, and the hardware platform does not give it");
	if (p->gpus % p->gpus_per_host && p->mapping != CT_MAP_EXPLICIT)
		return ct_load_fail(
			L, "$.placement.gpus",
			"%u GPUs do not fill hosts of %u GPUs (use mapping \"explicit\")", p->gpus,
			p->gpus_per_host);
	p->hosts = (p->gpus + p->gpus_per_host - 1) / p->gpus_per_host;
	p->rank_host = calloc(p->gpus, sizeof(*p->rank_host));
	if (!p->rank_host)
		return -ENOMEM;

	if (p->mapping == CT_MAP_EXPLICIT) {
		if (!json_object_object_get_ex(o, "rank_hosts", &list))
			return ct_load_fail(
				L, "$.placement.rank_hosts",
				"missing (mapping \"explicit\" needs a host index per rank)");
		if (!json_object_is_type(list, json_type_array) ||
		    json_object_array_length(list) != p->gpus)
			return ct_load_fail(L, "$.placement.rank_hosts",
					    "expected an array of %u host indices", p->gpus);
		p->hosts = 0;
		for (unsigned r = 0; r < p->gpus; r++) {
			json_object *v = json_object_array_get_idx(list, r);
			char ip[64];

			snprintf(ip, sizeof(ip), "$.placement.rank_hosts[%u]", r);
			if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
			    json_object_get_int64(v) >= (int64_t)p->gpus)
				return ct_load_fail(L, ip,
						    "expected a host index in [0, %u), got %s",
						    p->gpus, shown(v));
			p->rank_host[r] = (unsigned)json_object_get_int64(v);
			if (p->rank_host[r] + 1 > p->hosts)
				p->hosts = p->rank_host[r] + 1;
		}
	} else if (json_object_object_get_ex(o, "rank_hosts", &list)) {
		return ct_load_fail(L, "$.placement.rank_hosts",
				    "only allowed with mapping \"explicit\"");
	} else {
		ct_profile_map_ranks(p);
	}

	p->host_addr = calloc(p->hosts, sizeof(*p->host_addr));
	if (!p->host_addr)
		return -ENOMEM;
	if (json_object_object_get_ex(o, "hosts", &list)) {
		if (!json_object_is_type(list, json_type_array) ||
		    json_object_array_length(list) != p->hosts)
			return ct_load_fail(L, "$.placement.hosts",
					    "expected an array of %u addresses", p->hosts);
		for (unsigned h = 0; h < p->hosts; h++) {
			json_object *v = json_object_array_get_idx(list, h);
			char ip[64];

			snprintf(ip, sizeof(ip), "$.placement.hosts[%u]", h);
			if (!json_object_is_type(v, json_type_string) ||
			    ct_addr_parse(json_object_get_string(v), &p->host_addr[h]))
				return ct_load_fail(L, ip,
						    "expected an IPv4 or IPv6 address, got %s",
						    shown(v));
		}
		p->host_addr_given = true;
	} else {
		/* Defaults from the benchmarking range, 198.18.0.0/15: 198.18.x.y, from .1 */
		for (unsigned h = 0; h < p->hosts; h++) {
			char text[32];

			snprintf(text, sizeof(text), "198.18.%u.%u", (h + 1) / 256, (h + 1) % 256);
			ct_addr_parse(text, &p->host_addr[h]);
		}
	}
	return load_nics(L, o, p);
}

static int load_hardware(struct ct_load_err *L, json_object *root, struct ct_profile *p)
{
	static const char *const keys[] = {"platform", "peak_flops", "flops_kind", "mu",
					   "nic_gbps", "intra_host", "intra_host_GBps",
					   "c_tp_GBps", "c_pp_GBps", "c_dp_GBps", "c_ep_GBps",
					   "nic_efficiency", NULL};
	struct ct_hardware *hw = &p->hw;
	char sub[64];
	json_object *o;
	double c[4] = {0, 0, 0, 0}, intra = 0;
	int err = get_object(L, root, "$", "hardware", true, &o, sub, sizeof(sub));

	err = err ?: check_keys(L, o, sub, keys);
	err = err ?: get_string(L, o, sub, "platform", false, ct_platform_names(), hw->platform,
				sizeof(hw->platform), NULL);
	if (err)
		return err;
	if (hw->platform[0])
		ct_platform_defaults(hw->platform, hw, &p->gpus_per_host);
	else
		hw->nic_efficiency = 0.9;
	err = get_double(L, o, sub, "peak_flops", !hw->platform[0], 1e9, 1e18, &hw->peak_flops);
	err = err ?: get_string(L, o, sub, "flops_kind", false, NULL, hw->flops_kind,
				sizeof(hw->flops_kind), NULL);
	err = err ?: get_double(L, o, sub, "mu", !hw->platform[0], 0.001, 1, &hw->mu);
	err = err ?: get_double(L, o, sub, "nic_gbps", !hw->platform[0], 0.001, 1e6, &hw->nic_gbps);
	err = err ?: get_string(L, o, sub, "intra_host", false, NULL, hw->intra_host,
				sizeof(hw->intra_host), NULL);
	err = err ?: get_double(L, o, sub, "intra_host_GBps", !hw->platform[0], 0.001, 1e6, &intra);
	err = err ?: get_double(L, o, sub, "nic_efficiency", false, 0.01, 1, &hw->nic_efficiency);
	err = err ?: get_double(L, o, sub, "c_tp_GBps", false, 0.001, 1e6, &c[0]);
	err = err ?: get_double(L, o, sub, "c_pp_GBps", false, 0.001, 1e6, &c[1]);
	err = err ?: get_double(L, o, sub, "c_dp_GBps", false, 0.001, 1e6, &c[2]);
	err = err ?: get_double(L, o, sub, "c_ep_GBps", false, 0.001, 1e6, &c[3]);
	if (err)
		return err;
	if (intra)
		hw->intra_host_Bps = intra * 1e9;
	if (c[0])
		hw->c_tp = c[0] * 1e9;
	if (c[1])
		hw->c_pp = c[1] * 1e9;
	if (c[2])
		hw->c_dp = c[2] * 1e9;
	if (c[3])
		hw->c_ep = c[3] * 1e9;
	return 0;
}

/*
 * Duplicate keys. json-c keeps the last value of a repeated key without a
 * word, so the text (already parsed, hence valid JSON) is scanned again:
 * the keys of each open object, decoded (so "a" and "\u0061" are one key),
 * are sorted when it closes and neighbours compared. The repeat found
 * earliest in the text is reported.
 */
struct seen_key {
	size_t at;   /* the offset of its opening quote */
	size_t name; /* its decoded bytes, in dup_scan.names */
	size_t len;
};

struct dup_scan {
	struct seen_key *keys;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t dup_at, first_at; /* the earliest repeat, and where its key came first */
	size_t dup;		 /* its index in keys while its object is checked */
	char dup_name[64];
};

static int names_put(struct dup_scan *d, const char *bytes, size_t len)
{
	if (d->names_len + len > d->names_cap) {
		size_t cap = d->names_cap ? d->names_cap * 2 : 256;
		char *p;

		while (cap < d->names_len + len)
			cap *= 2;
		p = realloc(d->names, cap);
		if (!p)
			return -ENOMEM;
		d->names = p;
		d->names_cap = cap;
	}
	memcpy(d->names + d->names_len, bytes, len);
	d->names_len += len;
	return 0;
}

static unsigned hex4(const char *s)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 4 | (unsigned)(s[i] <= '9' ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
	return v;
}

/*
 * The string whose opening quote is at text[i]: decoded into d->names when
 * keep (a key), else only skipped. Returns the offset after its closing
 * quote, or 0 when out of memory.
 */
static size_t scan_string(struct dup_scan *d, const char *text, size_t size, size_t i, int keep)
{
	for (i++; i < size && text[i] != '"'; i++) {
		char out[4];
		size_t len = 1;
		unsigned cp;

		out[0] = text[i];
		if (text[i] == '\\' && i + 1 < size) {
			switch (text[++i]) {
			case 'b':
				out[0] = '\b';
				break;
			case 'f':
				out[0] = '\f';
				break;
			case 'n':
				out[0] = '\n';
				break;
			case 'r':
				out[0] = '\r';
				break;
			case 't':
				out[0] = '\t';
				break;
			case 'u':
				if (i + 4 >= size)
					return size;
				cp = hex4(text + i + 1);
				i += 4;
				if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < size &&
				    text[i + 1] == '\\' && text[i + 2] == 'u') {
					unsigned lo = hex4(text + i + 3);

					if (lo >= 0xdc00 && lo < 0xe000) {
						cp = 0x10000 + ((cp - 0xd800) << 10) +
						     (lo - 0xdc00);
						i += 6;
					}
				}
				if (cp < 0x80) {
					out[0] = (char)cp;
				} else if (cp < 0x800) {
					out[0] = (char)(0xc0 | cp >> 6);
					out[1] = (char)(0x80 | (cp & 0x3f));
					len = 2;
				} else if (cp < 0x10000) {
					out[0] = (char)(0xe0 | cp >> 12);
					out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
					out[2] = (char)(0x80 | (cp & 0x3f));
					len = 3;
				} else {
					out[0] = (char)(0xf0 | cp >> 18);
					out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
					out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
					out[3] = (char)(0x80 | (cp & 0x3f));
					len = 4;
				}
				break;
			default:
				out[0] = text[i]; /* \" \\ \/ */
			}
		}
		if (keep && names_put(d, out, len))
			return 0;
	}
	return i + 1;
}

static int key_order(const void *a, const void *b, void *ctx)
{
	const struct seen_key *x = a, *y = b;
	const char *names = ctx;
	size_t len = x->len < y->len ? x->len : y->len;
	int c = memcmp(names + x->name, names + y->name, len);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

static int same_key(const struct dup_scan *d, const struct seen_key *x, const struct seen_key *y)
{
	return x->len == y->len && !memcmp(d->names + x->name, d->names + y->name, x->len);
}

/* An object closes: its keys are keys[from..n). */
static void check_object(struct dup_scan *d, size_t from)
{
	struct seen_key *k = d->keys + from;
	size_t n = d->n - from;
	size_t names_from = n ? k[0].name : d->names_len; /* before the sort moves it */

	qsort_r(k, n, sizeof(*k), key_order, d->names);
	for (size_t i = 1; i < n; i++) {
		if (!same_key(d, &k[i], &k[i - 1]) || (i > 1 && same_key(d, &k[i - 1], &k[i - 2])))
			continue; /* not the first repeat of its key */
		if (!d->dup_at || k[i].at < d->dup_at) {
			size_t len = k[i].len < sizeof(d->dup_name) - 1 ? k[i].len
									: sizeof(d->dup_name) - 1;

			d->dup_at = k[i].at;
			d->first_at = k[i - 1].at;
			for (size_t j = 0; j < len; j++) {
				char c = d->names[k[i].name + j];

				d->dup_name[j] = c >= 0x20 && c < 0x7f ? c : '?';
			}
			d->dup_name[len] = 0;
		}
	}
	d->n = from;
	d->names_len = names_from;
}

/*
 * Scan text (valid JSON) for a key repeated within one object: 1 with
 * d->dup_at, first_at and dup_name set, 0 none, -ENOMEM.
 */
static int find_duplicate_key(struct dup_scan *d, const char *text, size_t size)
{
	struct {
		size_t from; /* its first key in d->keys; SIZE_MAX: an array */
		int want_key;
	} open[JSON_TOKENER_DEFAULT_DEPTH + 1];
	int depth = 0;

	for (size_t i = 0; i < size;) {
		int in_object = depth && open[depth - 1].from != SIZE_MAX;

		switch (text[i]) {
		case '{':
		case '[':
			if (depth == (int)(sizeof(open) / sizeof(open[0])))
				return 0; /* deeper than json-c parses: not reached */
			open[depth].from = text[i] == '{' ? d->n : SIZE_MAX;
			open[depth++].want_key = 1;
			i++;
			break;
		case '}':
			if (in_object)
				check_object(d, open[depth - 1].from);
			/* fall through */
		case ']':
			depth -= depth > 0;
			i++;
			break;
		case ',':
			if (in_object)
				open[depth - 1].want_key = 1;
			i++;
			break;
		case '"':
			if (in_object && open[depth - 1].want_key) {
				struct seen_key k = {.at = i, .name = d->names_len};

				if (d->n == d->cap) {
					size_t cap = d->cap ? d->cap * 2 : 32;
					struct seen_key *p = realloc(d->keys, cap * sizeof(*p));

					if (!p)
						return -ENOMEM;
					d->keys = p;
					d->cap = cap;
				}
				i = scan_string(d, text, size, i, 1);
				if (!i)
					return -ENOMEM;
				k.len = d->names_len - k.name;
				d->keys[d->n++] = k;
				open[depth - 1].want_key = 0;
			} else {
				i = scan_string(d, text, size, i, 0);
			}
			break;
		default:
			i++;
		}
	}
	return d->dup_at ? 1 : 0;
}

static unsigned line_of(const char *text, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off; i++)
		line += text[i] == '\n';
	return line;
}

static int parse_file(struct ct_load_err *L, const char *path, json_object **root)
{
	struct json_tokener *tok;
	char *text;
	long size;
	FILE *f = fopen(path, "rb");
	int err = 0;

	if (!f) {
		err = -errno;
		snprintf(L->err, L->errlen, "%s: cannot open: %s", path, strerror(errno));
		return err;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		snprintf(L->err, L->errlen, "%s: cannot read", path);
		return -EIO;
	}
	text = malloc((size_t)size + 1);
	if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
		free(text);
		fclose(f);
		snprintf(L->err, L->errlen, "%s: cannot read", path);
		return -EIO;
	}
	fclose(f);
	text[size] = 0;
	tok = json_tokener_new();
	if (tok) /* invalid UTF-8 is an error, with its position */
		json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
	*root = tok ? json_tokener_parse_ex(tok, text, (int)size) : NULL;
	if (*root && (size_t)tok->char_offset < (size_t)size &&
	    text[tok->char_offset + strspn(text + tok->char_offset, " \t\r\n")]) {
		/* a document is one value: anything but white space after it is refused */
		size_t off = (size_t)tok->char_offset + strspn(text + tok->char_offset, " \t\r\n");
		unsigned line = 1;

		for (size_t i = 0; i < off; i++)
			line += text[i] == '\n';
		snprintf(L->err, L->errlen,
			 "%s: line %u (byte %zu): trailing data after the JSON "
			 "object",
			 path, line, off);
		json_object_put(*root);
		*root = NULL;
		err = -EINVAL;
	} else if (!*root) {
		size_t off = tok ? tok->char_offset : 0;
		unsigned line = 1;

		for (size_t i = 0; i < off && i < (size_t)size; i++)
			line += text[i] == '\n';
		snprintf(L->err, L->errlen, "%s: line %u (byte %zu): not valid JSON: %s", path,
			 line, off,
			 tok ? json_tokener_error_desc(json_tokener_get_error(tok)) : "no memory");
		err = -EINVAL;
	} else if (!json_object_is_type(*root, json_type_object)) {
		err = ct_load_fail(L, "$", "expected a JSON object");
		json_object_put(*root);
		*root = NULL;
	} else {
		/* json-c keeps the last of a repeated key: refused, with both places */
		struct dup_scan d = {0};
		int dup = find_duplicate_key(&d, text, (size_t)size);

		if (dup > 0)
			snprintf(L->err, L->errlen,
				 "%s: line %u (byte %zu): duplicate key \"%s\" (first at line %u, "
				 "byte %zu)",
				 path, line_of(text, d.dup_at), d.dup_at, d.dup_name,
				 line_of(text, d.first_at), d.first_at);
		else if (dup < 0)
			snprintf(L->err, L->errlen, "%s: out of memory checking for duplicate keys",
				 path);
		if (dup) {
			err = dup < 0 ? dup : -EINVAL;
			json_object_put(*root);
			*root = NULL;
		}
		free(d.keys);
		free(d.names);
	}
	if (tok)
		json_tokener_free(tok);
	free(text);
	return err;
}

int ct_profile_load(const char *path, struct ct_profile *p, char *err, size_t errlen)
{
	static const char *const keys[] = {"name",	"description", "model", "parallelism",
					   "placement", "hardware",    "nccl",	NULL};
	struct ct_load_err L = {path, err, errlen};
	const char *base = strrchr(path, '/');
	json_object *root = NULL;
	int rc;

	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", path);
	L.file = base ? base + 1 : path;
	rc = parse_file(&L, path, &root);
	if (rc)
		return rc;
	rc = check_keys(&L, root, "$", keys);
	rc = rc ?: get_string(&L, root, "$", "name", true, NULL, p->name, sizeof(p->name), NULL);
	rc = rc ?: get_string(&L, root, "$", "description", false, NULL, p->description,
			      sizeof(p->description), NULL);
	rc = rc ?: load_model(&L, root, p);
	rc = rc ?: load_parallelism(&L, root, p);
	/* hardware first: its platform gives the default GPUs per host */
	rc = rc ?: load_hardware(&L, root, p);
	rc = rc ?: load_placement(&L, root, p);
	rc = rc ?: load_nccl(&L, root, p);
	json_object_put(root);
	if (rc)
		ct_profile_free(p);
	return rc;
}

void ct_profile_free(struct ct_profile *p)
{
	free(p->layer_params);
	free(p->rank_host);
	free(p->host_addr);
	free(p->rank_nic);
	free(p->nic_addr);
	p->layer_params = NULL;
	p->rank_host = NULL;
	p->host_addr = NULL;
	p->rank_nic = NULL;
	p->nic_addr = NULL;
}

