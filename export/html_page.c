// SPDX-License-Identifier: MIT
/* The HTML page around the sections: head, inline style, order of sections. */
#include "html_internal.h"

#include <errno.h>

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;"
	"border-bottom:1px solid #ccc}h3{font-size:15px}"
	"svg text{font-size:11px;fill:#333}svg text.host{font-size:10px}"
	".grid{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}"
	"figcaption{margin:4px 0}rect.diag{fill:#fff;stroke:#ddd}"
	"line.grid{stroke:#e6e6e6}line.iter-boundary{stroke:#c00;stroke-dasharray:4 3}"
	"table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid "
	"#eee;text-align:right;white-space:nowrap}td:first-child,th:first-child{text-align:left;"
	"white-space:nowrap}"
	"th{background:#f4f4f4}tr[data-scope=job]{font-weight:bold}"
	"tr[data-scope=class]{background:#fafafa}.warn{color:#b00}.absent{color:#777}"
	"dl.summary{display:grid;grid-template-columns:max-content auto;gap:2px 16px}"
	"dt{font-weight:bold}dd{margin:0}.chip{border-left:6px solid;padding:0 6px;"
	"margin-right:6px}"
	"tr.anomaly{background:#fdecea}tr.anomaly td{border-bottom:1px solid #f5c6c0}"
	"td.evidence,th.evidence{white-space:normal;text-align:left;max-width:520px}svg.strip{"
	"display:block}";

int ct_html_write_report(const struct ct_rep *rep, const struct ct_html_opts *opts, FILE *out)
{
	struct ct_html_opts o = opts ? *opts : (struct ct_html_opts){0};
	struct ct_view v;
	int rc = ct_view_build(rep, &o, &v);

	if (rc)
		return rc;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n<title>",
	      out);
	ct_html_text(out, o.title ? o.title : "commtap report");
	fprintf(out, "</title>\n<style>%s</style></head><body>\n<h1>", style);
	ct_html_text(out, o.title ? o.title : "commtap report");
	fputs("</h1><p class=\"generator\">", out);
	ct_html_text(out, rep->generator);
	fputs(", ", out);
	ct_html_text(out, rep->schema);
	fputs("</p>\n", out);
	ct_html_summary(out, &v);
	ct_html_anomalies(out, &rep->anomalies);
	ct_html_advice(out, &rep->advice);
	ct_html_heatmaps(out, &v);
	ct_html_cdfs(out, &v);
	ct_html_timeline(out, &v, &o);
	ct_html_periodicity(out, &v, &o);
	ct_html_cc(out, &v);
	if (o.expect)
		ct_html_expected(out, &v, o.expect);
	ct_html_gpu(out, &v);
	fputs("</body></html>\n", out);
	ct_view_free(&v);
	return ferror(out) ? -EIO : 0;
}

int ct_html_write(json_object *report, const struct ct_html_opts *opts, FILE *out)
{
	struct ct_rep rep;
	char err[256];
	int rc = ct_rep_read(report, "", &rep, err, sizeof(err));

	if (rc)
		return rc;
	rc = ct_html_write_report(&rep, opts, out);
	ct_rep_free(&rep);
	return rc;
}
