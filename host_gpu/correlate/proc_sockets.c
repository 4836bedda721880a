// SPDX-License-Identifier: MIT
/* TCP sockets → processes, from /proc (NCCL's socket transport). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_corr.h"

/* "  0: 0100007F:1F90 0100007F:C3A2 01 ... uid timeout inode ..." */
int gc_proc_tcp_line(const char *line, uint16_t *lport, uint16_t *rport, unsigned long *inode)
{
	char local[64], remote[64];
	unsigned st, lp, rp;
	const char *c;
	unsigned long ino;
	int uid, timeout;
	char txrx[40], tr[40], retr[16];

	if (sscanf(line, " %*d: %63s %63s %x %39s %39s %15s %d %d %lu", local, remote, &st, txrx,
		   tr, retr, &uid, &timeout, &ino) != 9)
		return -EINVAL;
	c = strchr(local, ':');
	if (!c || sscanf(c + 1, "%x", &lp) != 1 || lp > 0xffff)
		return -EINVAL;
	c = strchr(remote, ':');
	if (!c || sscanf(c + 1, "%x", &rp) != 1 || rp > 0xffff)
		return -EINVAL;
	*lport = (uint16_t)lp;
	*rport = (uint16_t)rp;
	*inode = ino;
	return 0;
}

struct sock_ino {
	unsigned long inode;
	uint16_t lport, rport;
};

static size_t read_table(const char *path, struct sock_ino **v, size_t n, size_t *cap)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return n;
	if (!fgets(line, sizeof(line), f)) { /* header */
		fclose(f);
		return n;
	}
	while (fgets(line, sizeof(line), f)) {
		struct sock_ino s;

		if (gc_proc_tcp_line(line, &s.lport, &s.rport, &s.inode) || !s.inode)
			continue;
		if (n == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			void *p = realloc(*v, c * sizeof(**v));

			if (!p)
				break;
			*v = p;
			*cap = c;
		}
		(*v)[n++] = s;
	}
	fclose(f);
	return n;
}

static int by_inode(const void *pa, const void *pb)
{
	const struct sock_ino *a = pa, *b = pb;

	return a->inode < b->inode ? -1 : a->inode > b->inode;
}

int gc_job_add_proc_sockets(struct gc_job *j)
{
	struct sock_ino *v = NULL;
	size_t n = 0, cap = 0;
	DIR *proc = opendir("/proc");
	struct dirent *e;
	int added = 0;

	if (!proc)
		return -errno;
	n = read_table("/proc/net/tcp", &v, n, &cap);
	n = read_table("/proc/net/tcp6", &v, n, &cap);
	if (n) /* every fd of every process is looked up in it */
		qsort(v, n, sizeof(*v), by_inode);
	while (n && (e = readdir(proc))) {
		char fds[300], link[PATH_MAX], target[64];
		struct dirent *fe;
		DIR *d;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(fds, sizeof(fds), "/proc/%s/fd", e->d_name);
		d = opendir(fds);
		if (!d)
			continue;
		while ((fe = readdir(d))) {
			struct sock_ino key, *s;
			unsigned long ino;
			ssize_t len;

			snprintf(link, sizeof(link), "%s/%s", fds, fe->d_name);
			len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = 0;
			if (sscanf(target, "socket:[%lu]", &ino) != 1)
				continue;
			/* one inode is one socket: its entry, if a TCP one */
			key.inode = ino;
			s = bsearch(&key, v, n, sizeof(*v), by_inode);
			if (s && !gc_job_add_socket(j, atoi(e->d_name), s->lport, s->rport))
				added++;
		}
		closedir(d);
	}
	closedir(proc);
	free(v);
	return added;
}
