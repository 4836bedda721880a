// SPDX-License-Identifier: MIT
/* Reading commtap.report/v1 documents back (json-c). */
#include "report_doc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CT_DOC_SCHEMA "commtap.report/v1"

int ct_doc_check(json_object *doc, const char *name, char *err, size_t errlen)
{
	const char *schema;

	if (!json_object_is_type(doc, json_type_object)) {
		snprintf(err, errlen, "%s: not a JSON object", name);
		return -EINVAL;
	}
	schema = ct_doc_str(doc, "schema");
	if (!schema || strcmp(schema, CT_DOC_SCHEMA)) {
		snprintf(err, errlen, "%s: schema is '%s', expected '%s'", name,
			 schema ? schema : "(none)", CT_DOC_SCHEMA);
		return -EINVAL;
	}
	if (!json_object_is_type(ct_doc_get(doc, "flows"), json_type_array)) {
		snprintf(err, errlen, "%s: no 'flows' array", name);
		return -EINVAL;
	}
	return 0;
}

int ct_doc_load(const char *path, json_object **out, char *err, size_t errlen)
{
	json_object *doc;
	int rc;

	*out = NULL;
	/*
	 * json-c says "failed: Success" when an allocation fails; malloc's
	 * ENOMEM in errno, untouched by a syntax error, tells the two apart.
	 */
	errno = 0;
	doc = json_object_from_file(path);
	if (!doc && errno == ENOMEM) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	if (!doc) {
		FILE *f = fopen(path, "r");

		if (!f) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -errno;
		}
		fclose(f);
		const char *why = json_util_get_last_err();

		/* json-c's reason ends with a newline */
		snprintf(err, errlen, "%s: not valid JSON (%.*s)", path,
			 why ? (int)strcspn(why, "\n") : 7, why ? why : "unknown");
		return -EINVAL;
	}
	rc = ct_doc_check(doc, path, err, errlen);
	if (rc) {
		json_object_put(doc);
		return rc;
	}
	*out = doc;
	return 0;
}

json_object *ct_doc_get(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

uint64_t ct_doc_u64(json_object *o, const char *key)
{
	json_object *v = ct_doc_get(o, key);

	if (json_object_is_type(v, json_type_int))
		return json_object_get_uint64(v);
	if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);

		/* out of range (or NaN) is not a count */
		return d > 0 && d < 18446744073709549568.0 ? (uint64_t)d : 0;
	}
	return 0;
}

double ct_doc_num(json_object *o, const char *key)
{
	json_object *v = ct_doc_get(o, key);

	if (json_object_is_type(v, json_type_int))
		return (double)json_object_get_uint64(v);
	if (json_object_is_type(v, json_type_double))
		return json_object_get_double(v);
	return 0;
}

const char *ct_doc_str(json_object *o, const char *key)
{
	json_object *v = ct_doc_get(o, key);

	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int ct_doc_bool(json_object *o, const char *key)
{
	json_object *v = ct_doc_get(o, key);

	return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

size_t ct_doc_len(json_object *array)
{
	return json_object_is_type(array, json_type_array) ? json_object_array_length(array) : 0;
}

json_object *ct_doc_at(json_object *array, size_t i)
{
	return i < ct_doc_len(array) ? json_object_array_get_idx(array, i) : NULL;
}

void ct_doc_flow_key(json_object *flow, char *buf, size_t len)
{
	const char *t = ct_doc_str(flow, "transport");
	const char *src = ct_doc_str(flow, "src"), *dst = ct_doc_str(flow, "dst");

	const char *cut = ct_doc_str(flow, "qpn_cut"); /* copies cut before their QPN */

	if (t && !strcmp(t, "tcp"))
		snprintf(buf, len, "tcp %s %s %llu %llu", src ? src : "?", dst ? dst : "?",
			 (unsigned long long)ct_doc_u64(flow, "sport"),
			 (unsigned long long)ct_doc_u64(flow, "dport"));
	else if (cut)
		snprintf(buf, len, "%s %s %s cut:%s", t ? t : "?", src ? src : "?", dst ? dst : "?",
			 cut);
	else
		snprintf(buf, len, "%s %s %s %llu", t ? t : "?", src ? src : "?", dst ? dst : "?",
			 (unsigned long long)ct_doc_u64(flow, "qpn"));
}

/* An address as 16 bytes, IPv4 mapped into IPv6, for ordering. */
static void addr_bytes(const char *text, unsigned char out[16])
{
	memset(out, 0, 16);
	if (!text)
		return;
	if (inet_pton(AF_INET6, text, out) == 1)
		return;
	out[10] = out[11] = 0xff;
	if (inet_pton(AF_INET, text, out + 12) != 1)
		memset(out, 0, 16);
}

int ct_doc_flow_cmp(json_object *a, json_object *b)
{
	uint64_t ta = ct_doc_u64(a, "first_ts"), tb = ct_doc_u64(b, "first_ts");
	const char *pa = ct_doc_str(a, "transport"), *pb = ct_doc_str(b, "transport");
	unsigned char xa[16], xb[16];
	uint64_t ia, ib;
	int r;

	if (ta != tb)
		return ta < tb ? -1 : 1;
	r = strcmp(pa ? pa : "", pb ? pb : "");
	if (r)
		return r;
	addr_bytes(ct_doc_str(a, "src"), xa);
	addr_bytes(ct_doc_str(b, "src"), xb);
	r = memcmp(xa, xb, 16);
	if (r)
		return r;
	addr_bytes(ct_doc_str(a, "dst"), xa);
	addr_bytes(ct_doc_str(b, "dst"), xb);
	r = memcmp(xa, xb, 16);
	if (r)
		return r;
	ia = ct_doc_u64(a, "qpn") + (ct_doc_u64(a, "sport") << 16) + ct_doc_u64(a, "dport");
	ib = ct_doc_u64(b, "qpn") + (ct_doc_u64(b, "sport") << 16) + ct_doc_u64(b, "dport");
	return ia < ib ? -1 : ia > ib;
}
