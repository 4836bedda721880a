// SPDX-License-Identifier: MIT
/*
 * Agent labels: which class each flow carries, as the host agent learns it
 * from NCCL (QP or socket -> communicator -> parallel group). The file is
 * commtap.labels/v1 (docs/labels.md); a synth truth file (commtap.truth/v1)
 * has the same "flows" list and is accepted too. Every field is checked;
 * an error names the file and the JSON path.
 */
#include <commtap/classify.h>
#include <commtap/error.h>

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int key_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct ct_label *)a)->key, &((const struct ct_label *)b)->key,
		      sizeof(struct ct_flow_key));
}

/*
 * In labels sorted by key, the labels of one flow made one (the class of
 * the one giving it, the job and communicator likewise: an agent may name a
 * flow's job in one file and a correlation its class in another). Returns
 * 0, or -EINVAL with why in err when two labels give one flow two classes
 * or two jobs.
 */
static int merge_same_flow(struct ct_labels *l, char *why, size_t len)
{
	size_t out = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct ct_label *a = out ? &l->l[out - 1] : NULL, *b = &l->l[i];

		if (!a || key_cmp(a, b)) {
			l->l[out++] = *b;
			continue;
		}
		if (!a->no_class && !b->no_class && a->cls != b->cls) {
			snprintf(why, len, "one flow labelled both %s and %s",
				 ct_class_name(a->cls), ct_class_name(b->cls));
			return -EINVAL;
		}
		if (a->job[0] && b->job[0] && strcmp(a->job, b->job)) {
			snprintf(why, len, "one flow labelled with two jobs, \"%s\" and \"%s\"",
				 a->job, b->job);
			return -EINVAL;
		}
		if (!b->no_class) {
			a->cls = b->cls;
			a->no_class = 0;
		}
		if (b->job[0])
			memcpy(a->job, b->job, sizeof(a->job));
		if (b->comm[0])
			memcpy(a->comm, b->comm, sizeof(a->comm));
	}
	l->n = out;
	return 0;
}

/* An integer field in [0, max]; -ENOENT when absent. */
static int get_uint(struct ct_load_err *L, json_object *o, const char *key, const char *path,
		    int64_t max, int64_t *out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return -ENOENT;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
	    json_object_get_int64(v) > max)
		return ct_load_fail(L, path, "\"%s\": expected an integer in [0, %lld]", key,
				    (long long)max);
	*out = json_object_get_int64(v);
	return 0;
}

static int get_string(struct ct_load_err *L, json_object *o, const char *key, const char *path,
		      const char **out)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return ct_load_fail(L, path, "\"%s\": expected a string", key);
	*out = json_object_get_string(v);
	return 0;
}

static int parse_label(struct ct_load_err *L, json_object *o, const char *path,
		       struct ct_label *out)
{
	const char *transport, *src, *dst, *cls = NULL;
	int64_t qpn, sport, dport;
	json_object *comm, *job;
	int rc, c;

	memset(out, 0, sizeof(*out));
	if (!json_object_is_type(o, json_type_object))
		return ct_load_fail(L, path, "expected an object");
	if ((rc = get_string(L, o, "transport", path, &transport)) ||
	    (rc = get_string(L, o, "src", path, &src)) ||
	    (rc = get_string(L, o, "dst", path, &dst)))
		return rc;
	if (json_object_object_get_ex(o, "job", &job)) {
		const char *name = json_object_is_type(job, json_type_string)
					   ? json_object_get_string(job)
					   : NULL;

		if (!name || !*name || strlen(name) >= sizeof(out->job))
			return ct_load_fail(L, path,
					    "\"job\": expected a name of 1 to %zu characters",
					    sizeof(out->job) - 1);
		/* the fleet's ct_job already means these (docs/metrics.md) */
		if (!strcmp(name, "none") || !strcmp(name, "_other"))
			return ct_load_fail(L, path,
					    "\"job\": \"%s\" is reserved (flows of no job, of the "
					    "jobs past the busiest)",
					    name);
		memcpy(out->job, name, strlen(name) + 1);
	}
	if (json_object_object_get_ex(o, "class", NULL) || !out->job[0]) {
		rc = get_string(L, o, "class", path, &cls);
		if (rc)
			return rc;
	}
	if (ct_addr_parse(src, &out->key.src))
		return ct_load_fail(L, path, "\"src\": \"%s\" is not an IPv4 or IPv6 address", src);
	if (ct_addr_parse(dst, &out->key.dst))
		return ct_load_fail(L, path, "\"dst\": \"%s\" is not an IPv4 or IPv6 address", dst);
	c = cls ? ct_class_from_name(cls) : CT_CLASS_OTHER;
	if (c < 0)
		return ct_load_fail(
			L, path,
			"\"class\": \"%s\" is not one of TP, PP, DP, EP, EmbTableSyn, Other", cls);
	out->cls = (uint8_t)c;
	out->no_class = cls == NULL;
	if (!strcmp(transport, "roce")) {
		rc = get_uint(L, o, "qpn", path, 0xffffff, &qpn);
		if (rc == -ENOENT)
			return ct_load_fail(L, path,
					    "\"qpn\": missing (a RoCE flow is named by its "
					    "destination QP)");
		if (rc)
			return rc;
		out->key.transport = CT_TRANSPORT_ROCE;
		out->key.id = (uint32_t)qpn;
	} else if (!strcmp(transport, "tcp")) {
		rc = get_uint(L, o, "sport", path, 65535, &sport);
		rc = rc ?: get_uint(L, o, "dport", path, 65535, &dport);
		if (rc == -ENOENT)
			return ct_load_fail(L, path,
					    "\"sport\" and \"dport\": both needed for a TCP "
					    "flow");
		if (rc)
			return rc;
		out->key.transport = CT_TRANSPORT_TCP;
		out->key.id = (uint32_t)sport << 16 | (uint32_t)dport;
	} else {
		return ct_load_fail(L, path, "\"transport\": \"%s\" is not \"roce\" or \"tcp\"",
				    transport);
	}
	if (json_object_object_get_ex(o, "comm", &comm)) {
		if (!json_object_is_type(comm, json_type_string))
			return ct_load_fail(L, path, "\"comm\": expected a string");
		snprintf(out->comm, sizeof(out->comm), "%s", json_object_get_string(comm));
	}
	return 0;
}

int ct_labels_load(const char *path, struct ct_labels *out, char *err, size_t errlen)
{
	const char *base = strrchr(path, '/');
	struct ct_load_err L = {base ? base + 1 : path, err, errlen};
	json_object *root, *schema, *flows;
	char where[64], why[200];
	int rc = 0;
	size_t n;

	memset(out, 0, sizeof(*out));
	FILE *f = fopen(path, "r");

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	fclose(f);
	root = json_object_from_file(path);
	if (!root) {
		const char *json_err = json_util_get_last_err();
		size_t len;

		snprintf(err, errlen, "%s: not valid JSON: %s", path,
			 json_err ? json_err : "unreadable");
		len = strlen(err);
		while (len && (err[len - 1] == '\n' || err[len - 1] == ' '))
			err[--len] = 0; /* json-c ends its message with a newline */
		return -EINVAL;
	}
	if (!json_object_is_type(root, json_type_object)) {
		rc = ct_load_fail(&L, "$", "expected a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(root, "schema", &schema) ||
	    !json_object_is_type(schema, json_type_string) ||
	    (strcmp(json_object_get_string(schema), "commtap.labels/v1") &&
	     strcmp(json_object_get_string(schema), "commtap.truth/v1"))) {
		rc = ct_load_fail(&L, "$.schema", "expected \"commtap.labels/v1\"");
		goto out;
	}
	if (!json_object_object_get_ex(root, "flows", &flows) ||
	    !json_object_is_type(flows, json_type_array)) {
		rc = ct_load_fail(&L, "$.flows", "expected a list of flows");
		goto out;
	}
	n = json_object_array_length(flows);
	out->l = calloc(n ? n : 1, sizeof(*out->l));
	if (!out->l) {
		snprintf(err, errlen, "%s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		snprintf(where, sizeof(where), "$.flows[%zu]", i);
		rc = parse_label(&L, json_object_array_get_idx(flows, i), where, &out->l[i]);
	}
	if (rc)
		goto out;
	out->n = n;
	ct_labels_sort(out);
	if (merge_same_flow(out, why, sizeof(why)))
		rc = ct_load_fail(&L, "$.flows", "%s", why);
out:
	json_object_put(root);
	if (rc)
		ct_labels_free(out);
	return rc;
}

int ct_labels_join(const struct ct_labels *a, const struct ct_labels *b, struct ct_labels *out,
		   char *err, size_t errlen)
{
	char why[200];

	memset(out, 0, sizeof(*out));
	out->l = malloc((a->n + b->n + 1) * sizeof(*out->l));
	if (!out->l) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (a->n)
		memcpy(out->l, a->l, a->n * sizeof(*a->l));
	if (b->n)
		memcpy(out->l + a->n, b->l, b->n * sizeof(*b->l));
	out->n = a->n + b->n;
	ct_labels_sort(out);
	if (merge_same_flow(out, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		ct_labels_free(out);
		return -EINVAL;
	}
	return 0;
}

void ct_labels_free(struct ct_labels *l)
{
	free(l->l);
	l->l = NULL;
	l->n = 0;
}

void ct_labels_sort(struct ct_labels *l)
{
	if (l->n) /* none: l->l may be NULL, which qsort may not be given */
		qsort(l->l, l->n, sizeof(*l->l), key_cmp);
}

const struct ct_label *ct_labels_find(const struct ct_labels *l, const struct ct_flow_key *key)
{
	struct ct_label probe;

	if (!l || !l->n)
		return NULL;
	probe.key = *key;
	return bsearch(&probe, l->l, l->n, sizeof(*l->l), key_cmp);
}

static int json_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 5 && !strcmp(e->d_name + n - 5, ".json");
}

int ct_labels_load_dir(const char *dir, struct ct_labels *out, char *err, size_t errlen)
{
	struct dirent **names = NULL;
	struct ct_labels one;
	char path[4096];
	int n, rc = 0;

	memset(out, 0, sizeof(*out));
	n = scandir(dir, &names, json_file, alphasort);
	if (n < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot read the directory: %s", dir, strerror(errno));
		return rc;
	}
	for (int i = 0; i < n && !rc; i++) {
		struct ct_label *grown;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		rc = ct_labels_load(path, &one, err, errlen);
		if (rc)
			break;
		grown = realloc(out->l, (out->n + one.n + 1) * sizeof(*grown));
		if (!grown) {
			snprintf(err, errlen, "%s: out of memory", dir);
			rc = -ENOMEM;
		} else {
			out->l = grown;
			memcpy(out->l + out->n, one.l, one.n * sizeof(*one.l));
			out->n += one.n;
		}
		ct_labels_free(&one);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (!rc) {
		char why[200];

		ct_labels_sort(out);
		rc = merge_same_flow(out, why, sizeof(why));
		if (rc)
			snprintf(err, errlen, "%s: two files label one flow differently: %s", dir,
				 why);
	}
	if (rc)
		ct_labels_free(out);
	return rc;
}
