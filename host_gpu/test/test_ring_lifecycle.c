// SPDX-License-Identifier: MIT
/*
 * The rings' lifecycle in their directory, with the real plugin driven as
 * NCCL drives it, one process per "rank" (docs/security.md, "GPU rings"):
 * a process that finalizes leaves no ring; processes that end without
 * finalizing leave no more than the directory's bound; a ring a reader
 * attached to stays until the reader has read it and its process is gone;
 * a live ring is never removed to make room; a directory that is a link or
 * that others may write into is refused.
 *
 *   test_ring_lifecycle PLUGIN.so
 */
#include "gpu_corr.h"
#include "nccl_driver.h"

#include "commtap/gpu_ring_dir.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define RING_SLOTS 256 /* 1 lane: 4 KiB header + 32 KiB of slots */
#define N_PROCS	   5   /* the probe: 5 plugin processes */

static const char *plugin_path;
static char dir[64];
static size_t ring_bytes;
/* Children not yet waited for: a failed check leaves one waiting on its
 * pipe, which teardown ends. */
static pid_t kids[8];
static unsigned n_kids;

/* Bytes and count of the ring files in dir. */
static uint64_t dir_usage(unsigned *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char path[320];
	uint64_t sum = 0;

	assert_non_null(d);
	*n = 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "commtap-", 8))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_int_equal(lstat(path, &st), 0);
		sum += (uint64_t)st.st_size;
		++*n;
	}
	closedir(d);
	return sum;
}

enum rank_end {
	END_FINALIZE, /* ncclCommDestroy, then exit */
	END_CRASH,    /* killed mid-job: no finalize */
	END_WAIT,     /* finalize when the parent writes a byte to the pipe */
};

/* One process as NCCL runs it: init, 3 all-reduces, then `end`. The child's
 * exit status: 0, or 10 + the step that failed; 3 when the plugin refused
 * its ring (it hands NCCL an empty mask). */
static pid_t rank_process(enum rank_end end, int go_fd, int ready_fd)
{
	struct drv_coll ar = {.func = "AllReduce",
			      .datatype = "ncclFloat32",
			      .algo = "Ring",
			      .proto = "Simple",
			      .count = 1024,
			      .n_channels = 1,
			      .n_steps = 2,
			      .chunk = 4096,
			      .peer = 1};
	struct drv_lib lib;
	struct drv_comm c;
	pid_t pid = fork();
	char byte = 0;

	if (pid) {
		if (pid > 0 && n_kids < sizeof(kids) / sizeof(kids[0]))
			kids[n_kids++] = pid;
		return pid;
	}
	if (drv_open(&lib, plugin_path))
		_exit(10);
	if (drv_init(&c, &lib, 5, 0xa11, "dp", 2, 2, 0))
		_exit(11);
	if (!c.mask)
		_exit(3);
	for (uint64_t i = 0; i < 3; i++) {
		ar.seq = i;
		drv_collective(&c, &ar);
	}
	if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1)
		_exit(12);
	if (end == END_CRASH)
		_exit(0);
	if (end == END_WAIT && read(go_fd, &byte, 1) != 1)
		_exit(13);
	if (drv_finalize(&c))
		_exit(14);
	_exit(0);
}

static int wait_status(pid_t pid)
{
	int ws;

	assert_int_equal(waitpid(pid, &ws, 0), pid);
	for (unsigned i = 0; i < n_kids; i++)
		if (kids[i] == pid)
			kids[i] = kids[--n_kids];
	assert_true(WIFEXITED(ws));
	return WEXITSTATUS(ws);
}

static int setup(void **state)
{
	char slots[16];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ct-rings-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("COMMTAP_GPU_RING_DIR", dir, 1);
	snprintf(slots, sizeof(slots), "%d", RING_SLOTS);
	setenv("COMMTAP_GPU_RING_SLOTS", slots, 1);
	setenv("COMMTAP_GPU_RING_LANES", "1", 1);
	unsetenv("COMMTAP_GPU_RING_KEEP");
	unsetenv("COMMTAP_GPU_RING_DIR_MAX");
	ring_bytes = ct_gpu_ring_bytes(RING_SLOTS, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	while (n_kids) {
		pid_t pid = kids[--n_kids];

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

/* Five processes that finalize and end, no agent: no ring is left. */
static void test_finalize_removes(void **state)
{
	unsigned n;
	uint64_t bytes;

	(void)state;
	for (int i = 0; i < N_PROCS; i++)
		assert_int_equal(wait_status(rank_process(END_FINALIZE, -1, -1)), 0);
	bytes = dir_usage(&n);
	printf("after %d finalized processes: %u ring(s), %llu bytes\n", N_PROCS, n,
	       (unsigned long long)bytes);
	assert_int_equal(n, 0);
}

/* Five processes killed before finalize: each new ring removes those of the
 * ended ones while the directory would pass its bound (2.5 rings here). */
static void test_crashes_bounded(void **state)
{
	uint64_t max = ring_bytes * 5 / 2, bytes = 0;
	char s[32];
	unsigned n;

	(void)state;
	snprintf(s, sizeof(s), "%llu", (unsigned long long)max);
	setenv("COMMTAP_GPU_RING_DIR_MAX", s, 1);
	for (int i = 0; i < N_PROCS; i++) {
		assert_int_equal(wait_status(rank_process(END_CRASH, -1, -1)), 0);
		bytes = dir_usage(&n);
		assert_true(bytes <= max);
	}
	printf("after %d killed processes: %u ring(s), %llu bytes, bound %llu\n", N_PROCS, n,
	       (unsigned long long)bytes, (unsigned long long)max);
	assert_int_equal(n, 2);
	unsetenv("COMMTAP_GPU_RING_DIR_MAX");
}

/* A reader attached while the process ran: the ring outlives finalize; the
 * reader reads it and, the process gone, removes it. */
static void test_attached_reader_removes(void **state)
{
	int go[2], ready[2];
	struct gc_job job;
	unsigned n;
	pid_t pid;
	char byte;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid = rank_process(END_WAIT, go[0], ready[1]);
	/* the child's ends only: a child that dies unready gives EOF, not a hang */
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &byte, 1), 1);
	assert_int_equal(gc_rings_attach(dir), 1);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(wait_status(pid), 0);
	dir_usage(&n);
	assert_int_equal(n, 1);

	gc_job_init(&job);
	job.reap = true;
	assert_int_equal(gc_job_read_dir(&job, dir), 1);
	gc_job_finish(&job);
	printf("attached ring: %zu communicator(s), %zu operation(s), %u removed\n", job.n_comms,
	       job.n_ops, job.rings_removed);
	assert_int_equal(job.n_comms, 1);
	assert_int_equal(job.n_ops, 3);
	assert_int_equal(job.rings_removed, 1);
	gc_job_free(&job);
	dir_usage(&n);
	assert_int_equal(n, 0);
	close(go[1]);
	close(ready[0]);
}

/* A reader does not remove a ring whose process still runs. */
static void test_reader_keeps_live(void **state)
{
	int go[2], ready[2];
	struct gc_job job;
	unsigned n;
	pid_t pid;
	char byte;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid = rank_process(END_WAIT, go[0], ready[1]);
	/* the child's ends only: a child that dies unready gives EOF, not a hang */
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &byte, 1), 1);
	gc_job_init(&job);
	job.reap = true;
	assert_int_equal(gc_job_read_dir(&job, dir), 1);
	assert_int_equal(job.rings_removed, 0);
	gc_job_free(&job);
	dir_usage(&n);
	assert_int_equal(n, 1);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(wait_status(pid), 0);
	dir_usage(&n);
	assert_int_equal(n, 0); /* not attached: finalize removed it */
	close(go[1]);
	close(ready[0]);
}

/* Live rings fill the bound: the next process runs unprofiled, the live
 * ring stays. */
static void test_live_never_pruned(void **state)
{
	int go[2], ready[2];
	unsigned n;
	pid_t pid;
	char s[32], byte;

	(void)state;
	snprintf(s, sizeof(s), "%zu", ring_bytes + ring_bytes / 2);
	setenv("COMMTAP_GPU_RING_DIR_MAX", s, 1);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	pid = rank_process(END_WAIT, go[0], ready[1]);
	/* the child's ends only: a child that dies unready gives EOF, not a hang */
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &byte, 1), 1);
	assert_int_equal(wait_status(rank_process(END_FINALIZE, -1, -1)), 3);
	dir_usage(&n);
	assert_int_equal(n, 1);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(wait_status(pid), 0);
	dir_usage(&n);
	assert_int_equal(n, 0);
	unsetenv("COMMTAP_GPU_RING_DIR_MAX");
	close(go[1]);
	close(ready[0]);
}

/* A planted link, or a directory others may write: refused, nothing made. */
static void test_unsafe_dir_refused(void **state)
{
	char link[96], open_dir[96];
	unsigned n;

	(void)state;
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(open_dir, sizeof(open_dir), "%s/open", dir);
	assert_int_equal(mkdir(open_dir, 0700), 0);
	assert_int_equal(symlink(open_dir, link), 0);
	setenv("COMMTAP_GPU_RING_DIR", link, 1);
	assert_int_equal(wait_status(rank_process(END_CRASH, -1, -1)), 3);
	assert_int_equal(chmod(open_dir, 0777), 0);
	setenv("COMMTAP_GPU_RING_DIR", open_dir, 1);
	assert_int_equal(wait_status(rank_process(END_CRASH, -1, -1)), 3);
	setenv("COMMTAP_GPU_RING_DIR", dir, 1);
	dir_usage(&n);
	assert_int_equal(n, 0);
	assert_int_equal(rmdir(open_dir), 0);
	assert_int_equal(unlink(link), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_finalize_removes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crashes_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attached_reader_removes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_keeps_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_never_pruned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsafe_dir_refused, setup, teardown),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_ring_lifecycle PLUGIN.so\n");
		return 2;
	}
	plugin_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
