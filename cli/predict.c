// SPDX-License-Identifier: MIT
/*
 * commtap predict PROFILE: what a job should send, before it runs.
 * A table by default, --json for machines.
 */
#include "commands.h"

#include "model.h"
#include "predict_whatif.h"
#include "profile.h"

#include <errno.h>
#include <commtap/params.h>
#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static const char *model_kind_name(enum ct_model_kind k)
{
	return k == CT_MODEL_GPT ? "gpt" : k == CT_MODEL_DDP ? "ddp" : "moe";
}

static const char *mapping_name(enum ct_mapping m)
{
	return m == CT_MAP_CUSTOM ? "custom" : m == CT_MAP_EXPLICIT ? "explicit"
								     : "deepspeed-default";
}

/* One on-off period of a class between two hosts within an iteration. */
struct burst {
	double start, end, bytes;
};

/*
 * The transfers of one host pair and class, in start order: a run of the
 * index that orders the transfers by (source host, destination host,
 * class), start order kept inside each.
 */
struct pair_run {
	unsigned src, dst;
	int cls;
	const uint32_t *xfer; /* indices into the prediction's transfers */
	size_t n;
};

struct pair_key {
	uint16_t src, dst;
	uint8_t cls;
	uint32_t i;
};

static int pair_key_cmp(const void *a, const void *b)
{
	const struct pair_key *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The off-host transfers' indices grouped by (src host, dst host, class); free(). */
static uint32_t *pair_order(const struct ct_prediction *pr, size_t *n_out)
{
	struct pair_key *k = malloc((pr->n_xfers + 1) * sizeof(*k));
	uint32_t *order = malloc((pr->n_xfers + 1) * sizeof(*order));
	size_t n = 0;

	if (!k || !order) {
		free(k);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < pr->n_xfers; i++) {
		const struct ct_transfer *x = &pr->xfers[i];

		if (x->src_host != x->dst_host)
			k[n++] = (struct pair_key){x->src_host, x->dst_host, x->cls, (uint32_t)i};
	}
	qsort(k, n, sizeof(*k), pair_key_cmp);
	for (size_t i = 0; i < n; i++)
		order[i] = k[i].i;
	free(k);
	*n_out = n;
	return order;
}

/* The run starting at order[*at]; false at the end. */
static bool next_run(const struct ct_prediction *pr, const uint32_t *order, size_t n, size_t *at,
		     struct pair_run *run)
{
	const struct ct_transfer *x;
	size_t j;

	if (*at >= n)
		return false;
	x = &pr->xfers[order[*at]];
	for (j = *at + 1; j < n; j++) {
		const struct ct_transfer *y = &pr->xfers[order[j]];

		if (y->src_host != x->src_host || y->dst_host != x->dst_host || y->cls != x->cls)
			break;
	}
	*run = (struct pair_run){x->src_host, x->dst_host, x->cls, order + *at, j - *at};
	*at = j;
	return true;
}

/* Merge the transfers of one run into bursts (overlaps join). */
static size_t host_pair_bursts(const struct ct_prediction *pr, const struct pair_run *run,
			       struct burst *out, size_t max)
{
	size_t n = 0;

	for (size_t k = 0; k < run->n; k++) {
		const struct ct_transfer *x = &pr->xfers[run->xfer[k]];

		if (n && x->start <= out[n - 1].end + 1e-9) {
			out[n - 1].end = fmax(out[n - 1].end, x->start + x->duration);
			out[n - 1].bytes += (double)x->bytes;
		} else if (n < max) {
			out[n++] = (struct burst){x->start, x->start + x->duration, (double)x->bytes};
		} else {
			out[n - 1].end = fmax(out[n - 1].end, x->start + x->duration);
			out[n - 1].bytes += (double)x->bytes;
		}
	}
	return n;
}

static void print_matrix_grid(const struct ct_prediction *pr, int cls, unsigned n, bool hosts)
{
	double max = 0;

	for (unsigned a = 0; a < n; a++)
		for (unsigned b = 0; b < n; b++)
			max = fmax(max, hosts ? ct_host_bytes(pr, cls, a, b)
					      : ct_rank_bytes(pr, cls, a, b));
	if (max <= 0)
		return;
	printf("  %s %s x %s (bytes per iteration: '.' none, 1..9 log scale of the max %.1f MiB)\n",
	       ct_class_name(cls), hosts ? "host" : "rank", hosts ? "host" : "rank", max / MIB);
	for (unsigned a = 0; a < n; a++) {
		printf("    %4u ", a);
		for (unsigned b = 0; b < n; b++) {
			double v = hosts ? ct_host_bytes(pr, cls, a, b)
					 : ct_rank_bytes(pr, cls, a, b);
			int level = v > 0 ? 9 + (int)floor(log10(v / max) * 2) : 0;

			putchar(v <= 0 ? '.' : level < 1 ? '1' : '0' + level);
		}
		putchar('\n');
	}
}

/* The layout settings beyond p, t, d and the mapping, when a profile has any. */
static void print_layout(const struct ct_profile *p)
{
	static const char *const protocol[] = {"Simple", "LL", "LL128"};
	char nics[64] = "";

	if (p->nics_per_host > 1)
		snprintf(nics, sizeof(nics), " %u NICs per host (GPU g on NIC g*%u/%u);",
			 p->nics_per_host, p->nics_per_host, p->gpus_per_host);
	if (!nics[0] && !p->zero && p->virtual_stages < 2 && !p->nccl.given)
		return;
	printf("layout:%s", nics);
	if (p->zero)
		printf(" ZeRO-%u%s;", p->zero, p->zero_overlap ? " overlapped" : "");
	if (p->virtual_stages > 1)
		printf(" interleaved 1F1B, %u chunks per stage;", p->virtual_stages);
	if (p->nccl.given)
		printf(" NCCL %s %s, buffer %llu B, p2p chunk %llu B%s", protocol[p->nccl.protocol],
		       p->nccl.algorithm == CT_NCCL_TREE ? "tree" : "ring",
		       (unsigned long long)p->nccl.buffsize, (unsigned long long)p->nccl.p2p_chunk,
		       p->nccl.channels ? "" : ";");
	if (p->nccl.given && p->nccl.channels)
		printf(", %u channels;", p->nccl.channels);
	printf("\n");
}

#define MAX_BURSTS 4096 /* per host pair and class; later transfers join the last burst */

static int print_table(const struct ct_profile *p, const struct ct_prediction *pr)
{
	static const char *const cls_short[] = {"TP", "PP", "DP", "EP", "Emb"};
	size_t n_order = 0;
	uint32_t *order = pair_order(pr, &n_order);
	struct burst *bursts = malloc(MAX_BURSTS * sizeof(*bursts));
	struct pair_run run;

	if (!bursts) {
		free(order);
		return -ENOMEM;
	}

	printf("profile %s (%s): %u GPUs on %u hosts of %u, p=%u t=%u d=%u ep=%u, mapping %s\n",
	       p->name, model_kind_name(p->kind), p->gpus, p->hosts, p->gpus_per_host, p->p, p->t,
	       p->d, p->ep, mapping_name(p->mapping));
	print_layout(p);
	printf("parameters: %.4g (%.2fM in units of 2^20)", pr->params, pr->params / MIB);
	if (p->kind == CT_MODEL_MOE)
		printf(", dense base %.4g (%.2fM), active per token %.4g", pr->params_dense,
		       pr->params_dense / MIB, pr->params_active);
	printf("\n");
	if (p->kind != CT_MODEL_DDP) {
		printf("stages:");
		for (unsigned s = 0; s < p->p; s++)
			printf(" %u:%u layers/%.4g params per TP rank", s, pr->stage_layers[s],
			       pr->stage_rank_params[s]);
		printf("\nvocabulary padded to %u\n", pr->vocab_padded);
	} else {
		printf("DDP buckets: %zu (first %.2f MiB, then up to %.0f MiB)\n", pr->n_buckets,
		       pr->n_buckets ? pr->bucket_bytes[0] / MIB : 0, p->bucket_bytes / MIB);
	}

	printf("\niteration time (s): T_comp %.4f", pr->t_comp);
	for (int c = 0; c < CT_CLASS_COUNT; c++)
		if (pr->t_class[c] > 0)
			printf("  T_%s %.4f", cls_short[c], pr->t_class[c]);
	printf("  T_bubble %.4f  R_bubble %.3f  R_comm %.3f\n", pr->t_bubble, pr->r_bubble,
	       pr->r_comm);
	printf("  T_iter %.4f (T_comp + T_comm + T_bubble), %.4f (1F1B/bucket schedule)\n",
	       pr->t_iter_formula, pr->t_iter);
	printf("  inputs: F %.4g FLOP/s (%s), mu %.2f, NIC %.0f Gb/s, intra-host %s %.1f GB/s;"
	       " C (GB/s):",
	       p->hw.peak_flops, p->hw.flops_kind, p->hw.mu, p->hw.nic_gbps, p->hw.intra_host,
	       p->hw.intra_host_Bps / 1e9);
	for (int c = 0; c < CT_CLASS_COUNT; c++)
		printf(" %s %.2f", cls_short[c], pr->c[c] / 1e9);
	printf("\n  FLOPs per iteration (job): %.4g\n", pr->flops_per_iter);

	printf("\nclasses crossing the NIC:");
	bool any = false;

	for (int c = 0; c < CT_CLASS_COUNT; c++)
		if (pr->crosses_nic[c]) {
			printf(" %s", ct_class_name(c));
			any = true;
		}
	printf(any ? " (%.1f MiB per iteration over all NICs)\n"
		   : " none: all traffic stays inside hosts, no NIC traffic (%.0f)\n",
	       pr->nic_bytes_per_iter / MIB);

	printf("\nper rank, per iteration: messages x size (MiB) = MiB sent\n");
	printf("%5s %4s", "rank", "host");
	for (int c = 0; c < CT_CLASS_COUNT; c++)
		printf(" %26s", cls_short[c]);
	printf("\n");
	for (unsigned r = 0; r < pr->nranks; r++) {
		printf("%5u %4u", r, p->rank_host[r]);
		for (int c = 0; c < CT_CLASS_COUNT; c++) {
			const struct ct_rank_traffic *t = ct_rank_traffic(pr, r, c);
			char cell[40];

			if (t->messages)
				snprintf(cell, sizeof(cell), "%.0f x %.3f = %.1f", t->messages,
					 t->msg_bytes / MIB, t->bytes / MIB);
			else
				snprintf(cell, sizeof(cell), "-");
			printf(" %26s", cell);
		}
		printf("\n");
	}

	printf("\ncommunication matrices\n");
	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		if (pr->nranks <= 64)
			print_matrix_grid(pr, c, pr->nranks, false);
		if (pr->nhosts <= 64)
			print_matrix_grid(pr, c, pr->nhosts, true);
	}
	if (pr->nhosts > 64)
		printf("  (more than 64 hosts: see --json for the host pairs)\n");

	printf("\nNIC traffic per host pair and class, one iteration (schedule from t=0):\n");
	printf("%5s %5s %-12s %10s %7s %10s %10s %10s\n", "src", "dst", "class", "MiB", "bursts",
	       "first on", "last off", "on time");
	for (size_t at = 0; order && next_run(pr, order, n_order, &at, &run);) {
		double on = 0, bytes = 0;
		size_t n = host_pair_bursts(pr, &run, bursts, MAX_BURSTS);

		for (size_t i = 0; i < n; i++) {
			on += bursts[i].end - bursts[i].start;
			bytes += bursts[i].bytes;
		}
		printf("%5u %5u %-12s %10.1f %7zu %9.4fs %9.4fs %9.4fs\n", run.src, run.dst,
		       ct_class_name(run.cls), bytes / MIB, n, bursts[0].start, bursts[n - 1].end, on);
	}
	free(order);
	free(bursts);
	return order || !pr->n_xfers ? 0 : -ENOMEM;
}

/* JSON numbers: integers as integers, the rest with every digit a double has. */
static void put_number(double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		printf("%.0f", v);
	else
		printf("%.17g", v);
}

/*
 * A class's matrix: dense rows up to DENSE_MAX entities, beyond that the
 * pairs that carry bytes as [src, dst, bytes], sorted (a dense matrix of
 * 16,384 ranks would be 268 M numbers).
 */
#define DENSE_MAX 256

struct pair_entry {
	unsigned src, dst;
	double bytes;
};

static int pair_entry_cmp(const void *a, const void *b)
{
	const struct pair_entry *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

static int put_matrix(const struct ct_prediction *pr, int cls, bool hosts)
{
	const struct ct_pair_bytes *m = hosts ? &pr->host_pairs : &pr->rank_pairs;
	unsigned n = hosts ? pr->nhosts : pr->nranks;
	struct pair_entry *e;
	size_t k = 0;

	if (n <= DENSE_MAX) {
		printf("\"%s_matrix\": [", hosts ? "host" : "rank");
		for (unsigned a = 0; a < n; a++) {
			printf(a ? ", [" : "[");
			for (unsigned b = 0; b < n; b++) {
				printf(b ? ", " : "");
				put_number(hosts ? ct_host_bytes(pr, cls, a, b)
						 : ct_rank_bytes(pr, cls, a, b));
			}
			printf("]");
		}
		printf("]");
		return 0;
	}
	e = malloc((m->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; m->keys && i <= m->mask; i++) {
		unsigned c, a, b;
		double bytes;

		if (ct_pair_bytes_at(m, i, &c, &a, &b, &bytes) && (int)c == cls)
			e[k++] = (struct pair_entry){a, b, bytes};
	}
	qsort(e, k, sizeof(*e), pair_entry_cmp);
	printf("\"%s_pairs\": [", hosts ? "host" : "rank");
	for (size_t i = 0; i < k; i++) {
		printf(i ? ", [%u, %u, " : "[%u, %u, ", e[i].src, e[i].dst);
		put_number(e[i].bytes);
		printf("]");
	}
	printf("]");
	free(e);
	return 0;
}

/*
 * The prediction as JSON, written piece by piece: the header through json-c,
 * the matrices, ranks and schedule streamed, so the output's size never sits
 * in memory as a tree.
 */
static int print_json(const struct ct_profile *p, const struct ct_prediction *pr)
{
	json_object *root = json_object_new_object(), *t = json_object_new_object();
	json_object *nic = json_object_new_array();
	const char *head;
	size_t n_order = 0, len;
	uint32_t *order = NULL;
	struct burst *bursts = NULL;
	struct pair_run run;
	int err = -ENOMEM;

	if (!root || !t || !nic) {
		json_object_put(t);
		json_object_put(nic);
		goto cleanup;
	}
	json_object_object_add(root, "schema", json_object_new_string("commtap.prediction/v1"));
	json_object_object_add(root, "profile", json_object_new_string(p->name));
	json_object_object_add(root, "model", json_object_new_string(model_kind_name(p->kind)));
	json_object_object_add(root, "gpus", json_object_new_int((int)p->gpus));
	json_object_object_add(root, "hosts", json_object_new_int((int)p->hosts));
	json_object_object_add(root, "nics_per_host", json_object_new_int((int)p->nics_per_host));
	json_object_object_add(root, "zero", json_object_new_int((int)p->zero));
	json_object_object_add(root, "virtual_stages", json_object_new_int((int)p->virtual_stages));
	json_object_object_add(root, "params", json_object_new_double(pr->params));
	json_object_object_add(root, "params_dense", json_object_new_double(pr->params_dense));
	json_object_object_add(root, "params_active", json_object_new_double(pr->params_active));
	json_object_object_add(root, "flops_per_iteration",
			       json_object_new_double(pr->flops_per_iter));
	json_object_object_add(t, "comp", json_object_new_double(pr->t_comp));
	for (int c = 0; c < CT_CLASS_COUNT; c++)
		json_object_object_add(t, ct_class_name(c), json_object_new_double(pr->t_class[c]));
	json_object_object_add(t, "bubble", json_object_new_double(pr->t_bubble));
	json_object_object_add(t, "r_bubble", json_object_new_double(pr->r_bubble));
	json_object_object_add(t, "r_comm", json_object_new_double(pr->r_comm));
	json_object_object_add(t, "iteration_formula", json_object_new_double(pr->t_iter_formula));
	json_object_object_add(t, "iteration_schedule", json_object_new_double(pr->t_iter));
	json_object_object_add(root, "time_s", t);
	for (int c = 0; c < CT_CLASS_COUNT; c++)
		if (pr->crosses_nic[c])
			json_object_array_add(nic, json_object_new_string(ct_class_name(c)));
	json_object_object_add(root, "nic_classes", nic);
	json_object_object_add(root, "nic_bytes_per_iteration",
			       json_object_new_double(pr->nic_bytes_per_iter));
	head = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	if (!head || !(len = strlen(head)) || head[len - 1] != '}')
		goto cleanup;
	printf("%.*s,\n  \"classes\": {", (int)(len - 2), head); /* less "\n}" */

	for (int c = 0; c < CT_CLASS_COUNT; c++) {
		printf("%s\n    \"%s\": {\"crosses_nic\": %s, \"bandwidth_Bps\": ", c ? "," : "",
		       ct_class_name(c), pr->crosses_nic[c] ? "true" : "false");
		put_number(pr->c[c]);
		printf(", ");
		if ((err = put_matrix(pr, c, false)))
			goto cleanup;
		printf(", ");
		if ((err = put_matrix(pr, c, true)))
			goto cleanup;
		printf("}");
	}
	printf("\n  },\n  \"ranks\": [");
	for (unsigned r = 0; r < pr->nranks; r++) {
		printf("%s\n    {\"rank\": %u, \"host\": %u", r ? "," : "", r, p->rank_host[r]);
		for (int c = 0; c < CT_CLASS_COUNT; c++) {
			const struct ct_rank_traffic *rt = ct_rank_traffic(pr, r, c);

			printf(", \"%s\": {\"messages\": ", ct_class_name(c));
			put_number(rt->messages);
			printf(", \"message_bytes\": ");
			put_number(rt->msg_bytes);
			printf(", \"bytes\": ");
			put_number(rt->bytes);
			printf("}");
		}
		printf("}");
	}
	printf("\n  ],\n  \"schedule\": [");
	err = -ENOMEM;
	order = pair_order(pr, &n_order);
	bursts = malloc(MAX_BURSTS * sizeof(*bursts));
	if (!order || !bursts)
		goto cleanup;
	for (size_t at = 0, k = 0; next_run(pr, order, n_order, &at, &run); k++) {
		size_t n = host_pair_bursts(pr, &run, bursts, MAX_BURSTS);

		printf("%s\n    {\"src_host\": %u, \"dst_host\": %u, \"class\": \"%s\", "
		       "\"on_periods_s_s_bytes\": [",
		       k ? "," : "", run.src, run.dst, ct_class_name(run.cls));
		for (size_t i = 0; i < n; i++) {
			printf(i ? ", [" : "[");
			put_number(bursts[i].start);
			printf(", ");
			put_number(bursts[i].end);
			printf(", ");
			put_number(bursts[i].bytes);
			printf("]");
		}
		printf("]}");
	}
	printf("\n  ]\n}\n");
	err = 0;
cleanup:
	free(order);
	free(bursts);
	json_object_put(root);
	return err;
}

struct predict_args {
	int json, what_if;
	const char *report, *transport;
	uint32_t d;
};

static const struct ct_param predict_params[] = {
	{.name = "json",
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct predict_args, json),
	 .help = "write commtap.prediction/v1 JSON instead of the table\n"
		 "(with --what-if: commtap.whatif/v1)"},
	{.name = "what-if",
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct predict_args, what_if),
	 .help = "NIC bytes per host and communication time under the other\n"
		 "mapping, --d and the other transport (docs/advice.md)"},
	{.name = "report",
	 .type = CT_PARAM_STRING,
	 .arg = "R.json",
	 .offset = offsetof(struct predict_args, report),
	 .help = "--what-if fitted to an analysed report of the job: its\n"
		 "transport, NIC bytes per host, d where the wire reads it"},
	{.name = "d",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct predict_args, d),
	 .min = 1,
	 .max = 1 << 20,
	 .help = "--what-if: another data-parallel size (b and m kept)"},
	{.name = "transport",
	 .type = CT_PARAM_STRING,
	 .arg = "roce|tcp",
	 .offset = offsetof(struct predict_args, transport),
	 .help = "--what-if: the job's transport (default: the report's, else roce)"},
	CT_PARAM_TABLE_END,
};

const struct ct_app_args predict_app_args = {
	.prog = "commtap predict",
	.usage = "usage: commtap predict [--json] PROFILE\n"
		 "       commtap predict --what-if [--report R.json] [--d N] [--json] PROFILE\n"
		 "  Predict a job's traffic from its profile (docs/profiles.md), or what\n"
		 "  another mapping, d or transport would change (docs/advice.md).\n",
	.min_pos = 1,
	.max_pos = 1,
	.pos_meaning = "PROFILE",
};

const struct ct_param *const predict_options[] = {predict_params, NULL};

int cmd_predict(int argc, char **argv)
{
	struct predict_args a = {0};
	const struct ct_param_set set = {predict_params, &a};
	struct ct_profile profile;
	struct ct_prediction pred;
	char err[512];
	int first, rc = ct_app_parse(&predict_app_args, &set, 1, argc, argv, &first);

	if (rc)
		return rc == 1 ? CT_EXIT_OK : CT_EXIT_ERROR;
	rc = ct_profile_load(argv[first], &profile, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "commtap predict: %s\n", err);
		return CT_EXIT_ERROR;
	}
	if (!a.what_if && (a.report || a.d || a.transport)) {
		fprintf(stderr, "commtap predict: --report, --d and --transport go with --what-if\n");
		ct_profile_free(&profile);
		return CT_EXIT_ERROR;
	}
	if (a.what_if) {
		const struct whatif_args w = {a.report, a.d, a.transport, a.json};

		rc = predict_whatif(&profile, &w);
		if (!rc && (fflush(stdout) || ferror(stdout))) {
			rc = -EIO;
			fprintf(stderr, "commtap predict: writing the what-if: %s\n", strerror(EIO));
		}
		ct_profile_free(&profile);
		return rc ? CT_EXIT_ERROR : CT_EXIT_OK;
	}
	rc = ct_predict(&profile, &pred);
	if (rc) {
		fprintf(stderr, "commtap predict: %s: %s\n", argv[first],
			ct_predict_strerror(&pred, rc));
		ct_profile_free(&profile);
		return CT_EXIT_ERROR;
	}
	rc = a.json ? print_json(&profile, &pred) : print_table(&profile, &pred);
	if (!rc && (fflush(stdout) || ferror(stdout)))
		rc = -EIO;
	if (rc)
		fprintf(stderr, "commtap predict: %s: writing the prediction: %s\n", argv[first],
			strerror(-rc));
	ct_prediction_free(&pred);
	ct_profile_free(&profile);
	return rc ? CT_EXIT_ERROR : CT_EXIT_OK;
}
