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

#include <commtap/log.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	/* "job": null is a flow of no job, as the truth files write it */
	if (json_object_object_get_ex(o, "job", &job) && job) {
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

/* A parsed labels document into out (root is the caller's); path names it in errors. */
static int labels_from_root(json_object *root, const char *path, struct ct_labels *out, char *err,
			    size_t errlen)
{
	const char *base = strrchr(path, '/');
	struct ct_load_err L = {base ? base + 1 : path, err, errlen};
	json_object *schema, *flows;
	char where[64], why[200];
	int rc = 0;
	size_t n;

	if (!json_object_is_type(root, json_type_object))
		return ct_load_fail(&L, "$", "expected a JSON object");
	if (!json_object_object_get_ex(root, "schema", &schema) ||
	    !json_object_is_type(schema, json_type_string) ||
	    (strcmp(json_object_get_string(schema), "commtap.labels/v1") &&
	     strcmp(json_object_get_string(schema), "commtap.truth/v1")))
		return ct_load_fail(&L, "$.schema", "expected \"commtap.labels/v1\"");
	if (!json_object_object_get_ex(root, "flows", &flows) ||
	    !json_object_is_type(flows, json_type_array))
		return ct_load_fail(&L, "$.flows", "expected a list of flows");
	n = json_object_array_length(flows);
	out->l = calloc(n ? n : 1, sizeof(*out->l));
	if (!out->l) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
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
	if (rc)
		ct_labels_free(out);
	return rc;
}

/* json-c's reason without the newline it ends with. */
static void say_not_json(const char *path, const char *why, char *err, size_t errlen)
{
	size_t len;

	snprintf(err, errlen, "%s: not valid JSON: %s", path, why ? why : "unreadable");
	len = strlen(err);
	while (len && (err[len - 1] == '\n' || err[len - 1] == ' '))
		err[--len] = 0;
}

int ct_labels_load(const char *path, struct ct_labels *out, char *err, size_t errlen)
{
	json_object *root;
	int rc;

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
		say_not_json(path, json_util_get_last_err(), err, errlen);
		return -EINVAL;
	}
	rc = labels_from_root(root, path, out, err, errlen);
	json_object_put(root);
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

/*
 * A labels file of a directory is read only when it is a regular file of
 * at most this many bytes: a label is ~200 bytes of JSON, so 64 MiB holds
 * ~300 k flows, more than a node's agents label, while json-c's tree of
 * it (~10x the text) stays under 1 GB. A directory is a drop box other
 * processes write to: a FIFO there would block open() and a link to
 * /dev/zero would be read for ever.
 */
#define LABELS_FILE_MAX (64u << 20)

/*
 * The text of a labels file of a directory, NUL-ended, in *text: 0, or 1
 * with why when the file is skipped (not a regular file, too big), or a
 * negative errno with err. O_NONBLOCK: a FIFO does not block the open;
 * O_NOFOLLOW: a link is not followed; fstat then says what was opened.
 */
static int read_dir_file(const char *path, char **text, char *why, size_t whylen, char *err,
			 size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	size_t len = 0;
	struct stat st;
	char *buf;
	int rc;

	*text = NULL;
	if (fd < 0 && errno == ELOOP) {
		snprintf(why, whylen, "a symbolic link (only regular files are read)");
		return 1;
	}
	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)LABELS_FILE_MAX) {
		if (S_ISREG(st.st_mode))
			snprintf(why, whylen,
				 "%lld bytes, more than the %u MiB a labels file may have",
				 (long long)st.st_size, LABELS_FILE_MAX >> 20);
		else
			snprintf(why, whylen, "not a regular file (only regular files are read)");
		close(fd);
		return 1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* at most the size fstat gave: a file that grows meanwhile is cut, then fails to parse */
	while (len < (size_t)st.st_size) {
		ssize_t got = read(fd, buf + len, (size_t)st.st_size - len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return rc;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	close(fd);
	buf[len] = 0;
	*text = buf;
	return 0;
}

/* One file of a directory: 0 (its labels in out, maybe none when it was skipped) or an error. */
static int load_dir_file(const char *path, struct ct_labels *out, char *err, size_t errlen)
{
	enum json_tokener_error jerr;
	json_object *root;
	char why[160], *text;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = read_dir_file(path, &text, why, sizeof(why), err, errlen);
	if (rc == 1) {
		ct_log(CT_LOG_WARN, "labels: %s skipped: %s", path, why);
		return 0;
	}
	if (rc)
		return rc;
	root = json_tokener_parse_verbose(text, &jerr);
	free(text);
	if (!root) {
		say_not_json(path, json_tokener_error_desc(jerr), err, errlen);
		return -EINVAL;
	}
	rc = labels_from_root(root, path, out, err, errlen);
	json_object_put(root);
	return rc;
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
		rc = load_dir_file(path, &one, err, errlen);
		if (rc)
			break;
		if (!one.l) /* skipped: nothing to add (memcpy may not be given NULL) */
			continue;
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
