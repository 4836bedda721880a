// SPDX-License-Identifier: MIT
/* libcommtap-cupti.so's InitializeInjection never fails the application:
 * with a GPU it leaves a valid ring, without one (no driver) it prints one
 * line and leaves no ring. argv[1]: the library. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "commtap/gpu_ring.h"

static const char *lib_path;

static void test_initialize(void **state)
{
	char dir[] = "/tmp/commtap-cupti-test.XXXXXX", path[512];
	struct ct_gpu_ring ring;
	int (*init)(void);
	void *h;

	assert_non_null(mkdtemp(dir));
	setenv("COMMTAP_GPU_RING_DIR", dir, 1);
	h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	init = (int (*)(void))dlsym(h, "InitializeInjection");
	assert_non_null(init);
	assert_int_equal(init(), 1);
	ct_gpu_ring_path(path, sizeof(path), dir, "cupti", getpid());
	/* Without a CUDA driver CUPTI cannot start: no ring may be left. */
	if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
		assert_int_not_equal(access(path, F_OK), 0);
	} else {
		assert_int_equal(ct_gpu_ring_open(&ring, path), 0);
		assert_int_equal(ring.hdr->source, CT_GPU_SRC_CUPTI);
		assert_int_equal(ring.hdr->clock, CT_GPU_CLOCK_REALTIME);
		ct_gpu_ring_close(&ring);
		unlink(path);
	}
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_initialize)};

	if (argc < 2)
		return 2;
	lib_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
