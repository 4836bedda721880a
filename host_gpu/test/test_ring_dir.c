// SPDX-License-Identifier: MIT
/*
 * The ring directory as the agent reads it: files it cannot validate (junk,
 * a short file, a symbolic link, a FIFO, a ring owned by another user) are
 * skipped and counted, and the valid ring beside them is still read.
 */
#include "gpu_corr.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define NOBODY 65534

static char dir[64];

static void put_file(const char *name, const void *data, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* A plugin ring holding one communicator. */
static void put_ring(const char *name, uint64_t hash)
{
	struct ct_gpu_ring ring;
	struct ct_gpu_rec r = {.type = CT_GPU_REC_COMM, .comm_hash = hash};
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	r.comm.n_ranks = 2;
	r.comm.n_nodes = 2;
	snprintf(r.comm.name, sizeof(r.comm.name), "c%llx", (unsigned long long)hash);
	assert_int_equal(ct_gpu_ring_create(&ring, path, 64, 1, CT_GPU_SRC_NCCL_PLUGIN), 0);
	assert_true(ct_gpu_ring_push(&ring, &r));
	ct_gpu_ring_close(&ring);
}

static void rm_dir(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

static void test_junk_skipped(void **state)
{
	char junk[4096], path[128], target[128];
	struct gc_job job;
	int n, owner_case = geteuid() == 0;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ct-ringdir-XXXXXX");
	assert_non_null(mkdtemp(dir));
	put_ring("commtap-nccl.100", 0xd0d0);
	memset(junk, 0x5a, sizeof(junk));
	put_file("commtap-nccl.junk", junk, sizeof(junk)); /* a header's size, no magic */
	put_file("commtap-cupti.short", "x", 1);
	snprintf(path, sizeof(path), "%s/commtap-nccl.link", dir);
	snprintf(target, sizeof(target), "%s/commtap-nccl.100", dir);
	assert_int_equal(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/commtap-nccl.fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	put_file("unrelated.txt", "not a ring", 10);
	if (owner_case) { /* a valid ring, but another user's, naming no process of theirs */
		put_ring("commtap-nccl.200", 0xbad);
		snprintf(path, sizeof(path), "%s/commtap-nccl.200", dir);
		assert_int_equal(chown(path, NOBODY, NOBODY), 0);
	}

	gc_job_init(&job);
	n = gc_job_read_dir(&job, dir);
	printf("rings read %d, skipped %u, first: %s\n", n, job.rings_skipped, job.skip_note);
	assert_int_equal(n, 1);
	assert_int_equal(job.rings, 1);
	assert_int_equal(job.rings_skipped, 4 + owner_case);
	assert_int_equal(job.n_comms, 1);
	assert_true(job.comms[0].hash == 0xd0d0);
	assert_non_null(strstr(job.skip_note, "commtap-"));
	gc_job_free(&job);
	rm_dir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_junk_skipped)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
