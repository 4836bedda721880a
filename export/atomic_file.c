// SPDX-License-Identifier: MIT
/* Files written whole or not at all (atomic_file.h). */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
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

int ct_write_file_atomic(const char *path, ct_file_writer_fn write, void *ctx)
{
	char tmp[PATH_MAX];
	mode_t mask;
	FILE *f;
	int fd, err;

	if (!strcmp(path, "-"))
		return write_stdout(write, ctx);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* mkostemp: O_CREAT | O_EXCL, which also refuses a symbolic link at the name */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask); /* mkostemp makes it 0600 */
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
