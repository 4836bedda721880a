// SPDX-License-Identifier: MIT
/* Files written whole or not at all (atomic_file.h). */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_stdout(ct_file_writer_fn write, void *ctx)
{
	int err = write(stdout, ctx);

	if (fflush(stdout) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

/* The directory entry is durable only once the directory itself is synced. */
static int sync_dir_of(const char *path)
{
	char copy[PATH_MAX];
	int fd, err = 0;

	if (strlen(path) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) && errno != EINVAL) /* some file systems cannot sync a directory */
		err = -errno;
	close(fd);
	return err;
}

/*
 * A new file beside path under a random name: O_EXCL refuses any name that
 * exists, a symbolic link planted there included (O_NOFOLLOW says so
 * twice), and mode 0666 leaves the permissions to the umask as for any
 * file. The descriptor, or a negative errno.
 */
static int create_beside(const char *path, char *tmp, size_t len)
{
	for (int tries = 0; tries < 16; tries++) {
		uint64_t r;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return errno ? -errno : -EIO;
		if (snprintf(tmp, len, "%s.tmp.%012llx", path,
			     (unsigned long long)(r & 0xffffffffffffull)) >= (int)len)
			return -ENAMETOOLONG;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int ct_write_file_atomic(const char *path, ct_file_writer_fn write, void *ctx)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, err;

	if (!strcmp(path, "-"))
		return write_stdout(write, ctx);
	fd = create_beside(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	err = write(f, ctx);
	if (fflush(f) && !err)
		err = errno ? -errno : -EIO;
	if (!err && ferror(f))
		err = -EIO;
	if (!err && fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	return sync_dir_of(path);
}

int ct_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
		return 0;
	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
