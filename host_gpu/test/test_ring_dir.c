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

/* Rewrite part of a ring file in place. */
static void patch_file(const char *name, off_t off, const void *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, off), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

/*
 * An empty file, a ring of another version, a truncated ring: skipped and
 * counted; a valid ring without one operation is read, and finishing a job
 * of no operations is defined (it passed NULL to qsort: UBSan).
 */
static void test_empty_foreign_truncated(void **state)
{
	uint32_t version = CT_GPU_RING_VERSION + 1;
	struct ct_gpu_ring ring;
	char path[128];
	struct gc_job job;
	int n;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ct-ringdir-XXXXXX");
	assert_non_null(mkdtemp(dir));
	put_file("commtap-nccl.1", "", 0);
	put_ring("commtap-nccl.2", 0xd0d0);
	patch_file("commtap-nccl.2", offsetof(struct ct_gpu_ring_hdr, version), &version,
		   sizeof(version));
	put_ring("commtap-nccl.3", 0x7070);
	snprintf(path, sizeof(path), "%s/commtap-nccl.3", dir);
	assert_int_equal(truncate(path, CT_GPU_RING_HDR_SIZE + 100), 0);
	snprintf(path, sizeof(path), "%s/commtap-cupti.4", dir);
	assert_int_equal(ct_gpu_ring_create(&ring, path, 64, 1, CT_GPU_SRC_CUPTI), 0);
	ct_gpu_ring_close(&ring);

	gc_job_init(&job);
	n = gc_job_read_dir(&job, dir);
	printf("rings read %d, skipped %u, first: %s\n", n, job.rings_skipped, job.skip_note);
	assert_int_equal(n, 1);
	assert_int_equal(job.rings_skipped, 3);
	gc_job_finish(&job);
	assert_int_equal(job.n_ops, 0);
	gc_job_free(&job);
	rm_dir();
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_junk_skipped),
					   cmocka_unit_test(test_empty_foreign_truncated)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
