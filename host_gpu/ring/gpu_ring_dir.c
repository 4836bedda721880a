// SPDX-License-Identifier: MIT
/* The per-user ring directory: opened safely, bounded in total. */
#include "commtap/gpu_ring_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int ct_gpu_ring_dir_path(char *buf, size_t len)
{
	const char *env = getenv("COMMTAP_GPU_RING_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else
		n = snprintf(buf, len, "/dev/shm/commtap-%u", (unsigned)geteuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ct_gpu_ring_dir_open(char *buf, size_t len)
{
	const char *env = getenv("COMMTAP_GPU_RING_DIR");
	struct stat st;
	int n, fd;

	n = ct_gpu_ring_dir_path(buf, len);
	if (n)
		return n;
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	/* O_NOFOLLOW: a link planted under the name is refused, not followed. */
	fd = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR ? -ELOOP : -errno;
	if (fstat(fd, &st)) {
		n = -errno;
		close(fd);
		return n;
	}
	/* Someone else's directory, or one others may write into: their files
	 * could pass for this user's rings, or take this user's room. The
	 * default one is this user's alone (0700): no one else reads it. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (env && *env ? (mode_t)(S_IWGRP | S_IWOTH) : (mode_t)077))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

uint64_t ct_gpu_ring_dir_max(void)
{
	const char *s = getenv("COMMTAP_GPU_RING_DIR_MAX");
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return CT_GPU_RING_DIR_MAX_DEFAULT;
	errno = 0;
	v = strtoull(s, &end, 0);
	return errno || *end || !v ? CT_GPU_RING_DIR_MAX_DEFAULT : v;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A process starts before it makes its ring; its start time is taken in
 * clock ticks (10 ms at the usual 100 Hz): one second is ample. */
#define START_SLACK_NS 1000000000ull

bool ct_gpu_ring_writer_gone(const struct ct_gpu_ring_hdr *h)
{
	char path[64], line[1024], *p;
	unsigned long long start_ticks;
	uint64_t start_ns, boot_minus_mono;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	int i;

	if (h->pid <= 0)
		return true;
	if (kill(h->pid, 0) && errno == ESRCH)
		return true;
	/* The pid is taken: by the writer, or by a later process (pid reuse). */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)h->pid);
	f = fopen(path, "re");
	if (!f)
		return false; /* another pid namespace's /proc: assume it runs */
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || !(p = strrchr(line, ')')))
		return false;
	/* Field 22 (starttime), the 20th after the command's closing ')'. */
	for (i = 0; i < 20 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, "%llu", &start_ticks) != 1 || hz <= 0)
		return false;
	/* starttime counts from boot including suspend (CLOCK_BOOTTIME); the
	 * ring's creation is CLOCK_MONOTONIC. */
	start_ns = start_ticks * (1000000000ull / (uint64_t)hz);
	boot_minus_mono = clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC);
	return start_ns > h->created_monotonic_ns + boot_minus_mono + START_SLACK_NS;
}

struct ring_file {
	char name[64];
	uint64_t bytes;
	uint64_t created; /* CLOCK_REALTIME ns: the header's, else the file's mtime */
	bool live, attached;
};

static bool is_ring_name(const char *name)
{
	return !strncmp(name, "commtap-nccl.", 13) || !strncmp(name, "commtap-cupti.", 14);
}

/* Removable ones first: no reader attached before attached, then oldest. */
static int cmp_removal(const void *a, const void *b)
{
	const struct ring_file *x = a, *y = b;

	if (x->live != y->live)
		return x->live ? 1 : -1;
	if (x->attached != y->attached)
		return x->attached ? 1 : -1;
	return x->created < y->created ? -1 : x->created > y->created;
}

/* One file of the directory; false if it is no ring file to count. */
static bool stat_ring(int dirfd, const char *name, struct ring_file *rf)
{
	struct ct_gpu_ring_hdr h;
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool valid;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	valid = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		__atomic_load_n(&h.magic, __ATOMIC_ACQUIRE) == CT_GPU_RING_MAGIC &&
		h.version == CT_GPU_RING_VERSION;
	close(fd);
	snprintf(rf->name, sizeof(rf->name), "%s", name);
	rf->bytes = (uint64_t)st.st_size;
	/* A file without a valid header in this user's directory is a ring
	 * its writer never finished (creation runs under the lock): junk. */
	rf->live = valid && !ct_gpu_ring_writer_gone(&h);
	rf->attached = valid && (h.flags & CT_GPU_RING_F_READER);
	rf->created = valid ? h.created_realtime_ns
			    : (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
				      (uint64_t)st.st_mtim.tv_nsec;
	return true;
}

void ct_gpu_ring_dir_unlock(int dirfd)
{
	flock(dirfd, LOCK_UN);
}

int ct_gpu_ring_dir_prune(int dirfd, uint64_t need, uint64_t max, bool hold)
{
	struct ring_file *v = NULL, *p;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	DIR *d;
	int dup_fd, err = 0;

	if (flock(dirfd, LOCK_EX))
		return -errno;
	dup_fd = dup(dirfd);
	d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		err = -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		goto out;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (!is_ring_name(e->d_name) || strlen(e->d_name) >= sizeof(v->name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			p = realloc(v, cap * sizeof(*v));
			if (!p) {
				err = -ENOMEM;
				break;
			}
			v = p;
		}
		if (stat_ring(dirfd, e->d_name, &v[n]))
			total += v[n++].bytes;
	}
	closedir(d);
	if (err)
		goto out;
	if (n) /* qsort takes no NULL array */
		qsort(v, n, sizeof(*v), cmp_removal);
	for (size_t i = 0; i < n && total + need > max && !v[i].live; i++)
		if (!unlinkat(dirfd, v[i].name, 0) || errno == ENOENT)
			total -= v[i].bytes;
	if (total + need > max)
		err = -ENOSPC;
out:
	free(v);
	if (err || !hold)
		flock(dirfd, LOCK_UN);
	return err;
}
