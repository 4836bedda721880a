// SPDX-License-Identifier: MIT
/* From a report in memory to the /metrics server (see metrics_publish.h). */
#include "metrics_publish.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

int ct_metrics_publish_report(struct ct_metrics_server *s, const struct ct_report *r,
			      const struct ct_prom_opts *opts)
{
	char *json = NULL, *text = NULL;
	size_t json_len = 0, len = 0;
	json_object *doc;
	FILE *f = open_memstream(&json, &json_len);
	int rc;

	if (!f)
		return -ENOMEM;
	rc = ct_report_write_json(r, f);
	if (fclose(f) || rc) {
		free(json);
		return rc ? rc : -ENOMEM;
	}
	doc = json_tokener_parse(json);
	free(json);
	if (!doc)
		return -EIO;
	rc = ct_prom_render(doc, opts, &text, &len);
	json_object_put(doc);
	if (!rc)
		rc = ct_metrics_server_publish(s, text, len);
	free(text);
	return rc;
}
