// SPDX-License-Identifier: MIT
/*
 * The GPU side of the advice: the medians, over the iterations of the
 * agent's "gpu" section (commtap.gpu/v1, docs/gpu.md), of one rank's
 * iteration, computation, communication and their overlap. The section
 * writes r_comm = (t_comm - overlap) / t_iter, so t_comm = r_comm * t_iter
 * + overlap: every collective's time, overlapped or not.
 */
#include <commtap/advice.h>

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITERATIONS 256 /* what the section lists at most (iter_metrics.c) */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A number under key, or -1 when absent or not a number. */
static double num(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return -1;
	return json_object_get_double(v);
}

void ct_advice_gpu_read(json_object *gpu, struct ct_advice_gpu *out)
{
	double t_iter[MAX_ITERATIONS], t_comp[MAX_ITERATIONS], t_comm[MAX_ITERATIONS],
		overlap[MAX_ITERATIONS];
	json_object *iters;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (!gpu || !json_object_object_get_ex(gpu, "iterations", &iters) ||
	    !json_object_is_type(iters, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(iters) && n < MAX_ITERATIONS; i++) {
		json_object *it = json_object_array_get_idx(iters, i);
		double len = num(it, "t_iter"), comp = num(it, "t_comp");
		double ov = num(it, "overlap"), r = num(it, "r_comm");

		if (len <= 0 || comp < 0 || ov < 0 || r < 0)
			continue; /* an iteration the section could not measure whole */
		t_iter[n] = len;
		t_comp[n] = comp;
		overlap[n] = ov;
		t_comm[n++] = r * len + ov;
	}
	if (!n)
		return;
	out->present = 1;
	out->iterations = n;
	out->t_iter = median(t_iter, n);
	out->t_comp = median(t_comp, n);
	out->t_comm = median(t_comm, n);
	out->overlap = median(overlap, n);
}
