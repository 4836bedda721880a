// SPDX-License-Identifier: MIT
/* Small drawing helpers for the HTML page: escaping, units, colours. */
#include "html_internal.h"

#include <math.h>
#include <stdio.h>

void ct_html_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

void ct_html_bytes(FILE *out, double b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	unsigned u = 0;

	while (fabs(b) >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	fprintf(out, u ? "%.3g %s" : "%.0f %s", b, units[u]);
}

void ct_html_seconds(FILE *out, double s)
{
	if (s >= 1)
		fprintf(out, "%.3g s", s);
	else if (s >= 1e-3)
		fprintf(out, "%.3g ms", s * 1e3);
	else if (s >= 1e-6)
		fprintf(out, "%.3g µs", s * 1e6);
	else
		fprintf(out, "%.3g ns", s * 1e9);
}

/* A perceptually ordered scale, dark (little) to bright (much). */
void ct_html_colour(double t, char out[8])
{
	static const unsigned char stops[][3] = {
		{0x44, 0x01, 0x54}, {0x3b, 0x52, 0x8b}, {0x21, 0x91, 0x8c},
		{0x5e, 0xc9, 0x62}, {0xfd, 0xe7, 0x25},
	};
	const int n = sizeof(stops) / sizeof(stops[0]) - 1;
	double x;
	int i;

	t = !(t >= 0) ? 0 : t > 1 ? 1 : t; /* NaN reads as 0 */
	x = t * n;
	i = (int)x >= n ? n - 1 : (int)x;
	x -= i;
	snprintf(out, 8, "#%02x%02x%02x",
		 (unsigned)(stops[i][0] + x * (stops[i + 1][0] - stops[i][0])),
		 (unsigned)(stops[i][1] + x * (stops[i + 1][1] - stops[i][1])),
		 (unsigned)(stops[i][2] + x * (stops[i + 1][2] - stops[i][2])));
}

const char *ct_html_class_colour(int cls)
{
	static const char *const colours[CT_HTML_CLASSES] = {
		"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#7f7f7f",
	};

	return cls >= 0 && cls < CT_HTML_CLASSES ? colours[cls] : colours[CT_HTML_CLASSES - 1];
}
