// SPDX-License-Identifier: MIT
/* The owner pin beside a probe's maps: the network namespace's cookie. */
#include "pin_owner.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* Linux 5.14, asm-generic/socket.h */
#endif

uint64_t ct_netns_cookie(void)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	/* any socket is in the namespace of the process that made it */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) || len != sizeof(cookie))
		cookie = 0;
	close(fd);
	return cookie;
}

static void owner_path(char *buf, size_t len, const char *pin_dir)
{
	snprintf(buf, len, "%s/owner", pin_dir);
}

int ct_pin_owner_read(const char *pin_dir, uint64_t *cookie)
{
	char path[600];
	uint32_t zero = 0;
	int fd, rc;

	owner_path(path, sizeof(path), pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	rc = bpf_map_lookup_elem(fd, &zero, cookie) ? -errno : 1;
	close(fd);
	return rc;
}

int ct_pin_owner_write(const char *pin_dir, uint64_t cookie)
{
	char path[600];
	uint32_t zero = 0;
	int fd, rc = 0;

	owner_path(path, sizeof(path), pin_dir);
	unlink(path);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ctp_owner", sizeof(zero), sizeof(cookie), 1,
			    NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, &cookie, BPF_ANY) || bpf_obj_pin(fd, path))
		rc = -errno;
	close(fd);
	return rc;
}

int ct_pin_owner_remove(const char *pin_dir)
{
	char path[600];

	owner_path(path, sizeof(path), pin_dir);
	return unlink(path) && errno != ENOENT ? -errno : 0;
}

int ct_pins_remove(const char *pin_dir)
{
	DIR *d = opendir(pin_dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && !unlinkat(dirfd(d), e->d_name, 0))
			n++;
	closedir(d);
	return n;
}
