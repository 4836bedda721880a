// SPDX-License-Identifier: MIT
/* Files written whole or not at all; devices and FIFOs written through (atomic_file.h). */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * A FIFO output with no reader yet: waited for this long (a reader started
 * just after commtap, as `cat fifo &` often is), then the write fails with
 * ENXIO instead of blocking a producer's reports for good.
 */
#define FIFO_READER_WAIT_MS 10000
#define FIFO_READER_POLL_MS 10

/*
 * stdio over a descriptor that keeps the first write error's errno: a
 * writer says -EIO when its stream fails, the cause (ENOSPC, EPIPE...) is
 * here, whatever errno became since.
 */
struct fd_sink {
	int fd;
	int err;
};

static ssize_t sink_write(void *cookie, const char *buf, size_t len)
{
	struct fd_sink *s = cookie;
	size_t done = 0;

	while (done < len && !s->err) {
		ssize_t n = write(s->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			s->err = n < 0 ? errno : EIO;
		else
			done += (size_t)n;
	}
	if (s->err)
		errno = s->err;
	return (ssize_t)done; /* short: stdio marks the stream failed */
}

/*
 * A reader of a FIFO that goes away must not kill the producer with
 * SIGPIPE: blocked in this thread (write(2) sends it to the writing thread)
 * while the content goes, and one raised meanwhile taken back, so the
 * write fails with EPIPE instead.
 */
static int write_fd(int fd, int quiet_pipe, ct_file_writer_fn write, void *ctx)
{
	cookie_io_functions_t io = {.write = sink_write};
	struct fd_sink s = {fd, 0};
	sigset_t pipe_set, old;
	int err, was_pending = 0;
	FILE *f;

	if (quiet_pipe) {
		sigset_t pending;

		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		sigpending(&pending);
		was_pending = sigismember(&pending, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	}
	f = fopencookie(&s, "w", io);
	if (!f) {
		err = errno ? -errno : -ENOMEM;
	} else {
		err = write(f, ctx);
		if (fflush(f) && !err)
			err = -EIO;
		if (ferror(f) && !err)
			err = -EIO;
		fclose(f); /* the cookie has no close: fd stays the caller's */
	}
	if (s.err && (!err || err == -EIO))
		err = -s.err;
	if (quiet_pipe) {
		const struct timespec now = {0, 0};

		if (!was_pending)
			while (sigtimedwait(&pipe_set, NULL, &now) == SIGPIPE)
				;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return err;
}

static int write_stdout(ct_file_writer_fn write, void *ctx)
{
	if (fflush(stdout))
		return -errno;
	return write_fd(STDOUT_FILENO, 0, write, ctx);
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

static int write_renamed(const char *path, ct_file_writer_fn write, void *ctx)
{
	char tmp[PATH_MAX];
	int fd, err;

	fd = create_beside(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	err = write_fd(fd, 0, write, ctx);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	return sync_dir_of(path);
}

/*
 * Open an existing device or FIFO for writing. O_NONBLOCK: a FIFO without
 * a reader fails (ENXIO) instead of blocking, so its reader is waited for
 * a bounded time; O_NOFOLLOW: a link swapped in since the lstat is
 * refused. The descriptor (blocking again), or a negative errno; -EAGAIN
 * when the path became a regular file meanwhile (written renamed then).
 */
static int open_through(const char *path, int fifo, int *is_fifo)
{
	const struct timespec step = {0, FIFO_READER_POLL_MS * 1000000L};
	struct stat st;
	int fd, waited = 0;

	for (;;) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0 || errno != ENXIO || !fifo || waited >= FIFO_READER_WAIT_MS)
			break;
		nanosleep(&step, NULL);
		waited += FIFO_READER_POLL_MS;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || S_ISREG(st.st_mode)) {
		int err = S_ISREG(st.st_mode) ? -EAGAIN : -errno;

		close(fd);
		return err;
	}
	*is_fifo = S_ISFIFO(st.st_mode);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int ct_write_file_atomic(const char *path, ct_file_writer_fn write, void *ctx)
{
	struct stat st;
	int fd, err, is_fifo = 0;

	/* /dev/stdout is a link (to /proc/self/fd/1), but its meaning is not in doubt */
	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return write_stdout(write, ctx);
	if (lstat(path, &st)) {
		if (errno != ENOENT)
			return -errno;
		return write_renamed(path, write, ctx);
	}
	if (S_ISLNK(st.st_mode))
		return -ELOOP; /* refused: see ct_output_strerror */
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISREG(st.st_mode))
		return write_renamed(path, write, ctx);
	fd = open_through(path, S_ISFIFO(st.st_mode), &is_fifo);
	if (fd == -EAGAIN)
		return write_renamed(path, write, ctx);
	if (fd < 0)
		return fd;
	/* no fsync: a device or FIFO has nothing to make durable (most refuse it) */
	err = write_fd(fd, is_fifo, write, ctx);
	if (close(fd) && !err)
		err = -errno;
	return err;
}

const char *ct_output_strerror(int rc)
{
	switch (rc) {
	case -ELOOP:
		return "a symbolic link: outputs are not written through links (name the file "
		       "it points to)";
	case -ENOMEM:
		return "out of memory";
	case -ENXIO:
		return "nothing reads it (a FIFO is waited 10 s for a reader; a device may have "
		       "no driver)";
	default:
		return strerror(-rc);
	}
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
