// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the input as a report document (JSON) through what reads
 * reports back: the check, the cluster merge (the document with a second
 * copy of itself), the HTML page and the Prometheus exposition.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "html.h"
#include "merge.h"
#include "prom.h"
#include "report_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_object *parse(const uint8_t *data, size_t size)
{
	json_tokener *tok = json_tokener_new();
	json_object *doc;

	if (!tok || size > 1 << 20) {
		json_tokener_free(tok);
		return NULL;
	}
	doc = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	json_tokener_free(tok);
	return doc;
}

static void draw(json_object *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!ct_prom_render(doc, NULL, &text, &len))
		free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	ct_html_write(doc, NULL, f);
	fclose(f);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *docs[2] = {parse(data, size), parse(data, size)}, *merged;
	const char *names[2] = {"a", "b"};
	char err[256];

	if (docs[0] && !ct_doc_check(docs[0], "a", err, sizeof(err))) {
		draw(docs[0]);
		if (!ct_merge_reports(docs, names, 2, &merged)) {
			draw(merged);
			json_object_put(merged);
		}
	}
	json_object_put(docs[0]);
	json_object_put(docs[1]);
	return 0;
}
