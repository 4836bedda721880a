// SPDX-License-Identifier: MIT
/* commtap-gpu check and dump on rings the harness writes: a run whose CUPTI
 * times match the CUDA events passes, one 10% off fails. argv[1]: the tool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "commtap/gpu_names.h"
#include "commtap/gpu_ring.h"

static const char *tool;
static char dir[] = "/tmp/commtap-gpu-tool.XXXXXX";

static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Six timed operations; each window holds its kernels (a GEMM as two). */
static void write_inputs(double event_scale)
{
	struct ct_gpu_ring ring;
	char path[512];
	FILE *ev;
	uint64_t t = 1700000000000000000ull;

	snprintf(path, sizeof(path), "%s/cupti", dir);
	assert_int_equal(ct_gpu_ring_create(&ring, path, 1024, 1, CT_GPU_SRC_HARNESS), 0);
	snprintf(path, sizeof(path), "%s/events", dir);
	ev = fopen(path, "w");
	assert_non_null(ev);
	for (int i = 0; i < 6; i++) {
		int gemm = i % 2 == 0;
		uint64_t t0 = t, k0 = t0 + 20000, dur = gemm ? 1000000 : 400000;
		struct ct_gpu_rec r = {.type = CT_GPU_REC_CUPTI_KERNEL};

		if (gemm) {
			strcpy(r.cupti.name, "sm90_xmma_gemm_f32f32");
			r.t_start = k0;
			r.t_stop = k0 + dur * 3 / 4;
			assert_true(ct_gpu_ring_push(&ring, &r));
			strcpy(r.cupti.name, "splitKreduce_kernel");
			r.t_start = r.t_stop + 1000;
			r.t_stop = r.t_start + dur / 4;
			assert_true(ct_gpu_ring_push(&ring, &r));
		} else {
			r.type = CT_GPU_REC_CUPTI_MEMCPY;
			r.cupti.copy_kind = 8;
			r.t_start = k0;
			r.t_stop = k0 + dur;
			assert_true(ct_gpu_ring_push(&ring, &r));
		}
		fprintf(ev, "%s %.6f %llu %llu\n", gemm ? "gemm" : "allreduce",
			dur / 1e6 * event_scale, (unsigned long long)t0,
			(unsigned long long)(k0 + dur + 50000));
		t += 5000000;
	}
	/* Setup work outside every window does not count. */
	{
		struct ct_gpu_rec r = {
			.type = CT_GPU_REC_CUPTI_KERNEL, .t_start = t, .t_stop = t + 9000000};

		assert_true(ct_gpu_ring_push(&ring, &r));
	}
	fclose(ev);
	ct_gpu_ring_close(&ring);
}

static void test_check(void **state)
{
	write_inputs(1.0);
	assert_int_equal(run("'%s' check %s/events %s/cupti >/dev/null", tool, dir, dir), 0);
	write_inputs(1.10);
	assert_int_equal(run("'%s' check %s/events %s/cupti >/dev/null", tool, dir, dir), 1);
	/* Missing files and bad arguments: one line, non-zero. */
	assert_int_equal(run("'%s' check %s/nope %s/cupti 2>/dev/null", tool, dir, dir), 1);
	assert_int_equal(run("'%s' check %s/events %s/nope 2>/dev/null", tool, dir, dir), 1);
	assert_int_equal(run("'%s' frobnicate 2>/dev/null", tool), 2);
}

static void test_dump(void **state)
{
	write_inputs(1.0);
	assert_int_equal(run("test $('%s' dump %s/cupti | grep -c '^type') = 10", tool, dir), 0);
	assert_int_equal(run("'%s' dump %s/events 2>/dev/null", tool, dir), 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_check),
					   cmocka_unit_test(test_dump)};
	int rc;

	if (argc < 2 || !mkdtemp(dir))
		return 2;
	tool = argv[1];
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	run("rm -rf '%s'", dir);
	return rc;
}
