// SPDX-License-Identifier: MIT
/* Classic pcap files read from a mapping (pcap_mapped.h). */
#include "pcap_mapped.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC_USEC	    0xa1b2c3d4u
#define MAGIC_NSEC	    0xa1b23c4du
#define FILE_HEADER	    24
#define RECORD_HEADER	    16
#define LINKTYPE_ETHERNET   1
#define MAX_SNAPLEN_LIBPCAP 262144u /* libpcap refuses larger records (its words below) */
/*
 * Pages read are let go every this many bytes: a mapped page counts in the
 * process's resident size until then (they stay in the page cache).
 */
#define RELEASE_EVERY (16u << 20)

static uint32_t get32(const struct pcap_mapped *m, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return m->swapped ? __builtin_bswap32(v) : v;
}

int pcap_mapped_open(const char *path, struct pcap_mapped *m)
{
	uint8_t hdr[FILE_HEADER];
	struct stat st;
	uint32_t magic;
	void *base;
	int fd, err;

	memset(m, 0, sizeof(*m));
	/* look before opening: opening a FIFO would block, closing it would cut its writer off */
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < FILE_HEADER ||
	    pread(fd, hdr, sizeof(hdr), 0) != sizeof(hdr)) {
		close(fd);
		return 0;
	}
	memcpy(&magic, hdr, sizeof(magic));
	if (magic == MAGIC_USEC || magic == MAGIC_NSEC) {
		m->nano = magic == MAGIC_NSEC;
	} else if (__builtin_bswap32(magic) == MAGIC_USEC ||
		   __builtin_bswap32(magic) == MAGIC_NSEC) {
		m->swapped = 1;
		m->nano = __builtin_bswap32(magic) == MAGIC_NSEC;
	} else {
		close(fd);
		return 0; /* pcapng or not a capture: libpcap says which */
	}
	/* version 2.4 and Ethernet without FCS bits; anything else goes to libpcap */
	if ((get32(m, hdr + 4) & 0xffff) != 2 || (get32(m, hdr + 4) >> 16) != 4 ||
	    get32(m, hdr + 20) != LINKTYPE_ETHERNET) {
		close(fd);
		return 0;
	}
	m->snaplen = get32(m, hdr + 16);
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	err = base == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return 0; /* a file system that cannot map: libpcap reads it */
	(void)madvise(base, (size_t)st.st_size, MADV_SEQUENTIAL);
	m->base = base;
	m->size = (size_t)st.st_size;
	m->off = FILE_HEADER;
	return 1;
}

int pcap_mapped_next(struct pcap_mapped *m, struct pcap_mapped_record *r, char *err, size_t errlen)
{
	const uint8_t *h = m->base + m->off;
	size_t left = m->size - m->off;

	if (!left)
		return 0;
	if (left < RECORD_HEADER) {
		snprintf(err, errlen,
			 "truncated dump file; tried to read %u header bytes, only got %zu",
			 RECORD_HEADER, left);
		m->off = m->size;
		return -EIO;
	}
	r->sec = (int32_t)get32(m, h);
	r->frac = (int32_t)get32(m, h + 4);
	r->caplen = get32(m, h + 8);
	r->len = get32(m, h + 12);
	if (r->caplen > MAX_SNAPLEN_LIBPCAP) {
		snprintf(err, errlen, "invalid packet capture length %u, bigger than maximum of %u",
			 r->caplen, MAX_SNAPLEN_LIBPCAP);
		return -EIO;
	}
	left -= RECORD_HEADER;
	if (left < r->caplen) {
		snprintf(err, errlen,
			 "truncated dump file; tried to read %u captured bytes, only got %zu",
			 r->caplen, left);
		m->off = m->size;
		return -EIO;
	}
	/* every page before this record's is done with (a packet lives until the next call) */
	if (m->off - m->released >= RELEASE_EVERY) {
		size_t upto = m->off & ~(size_t)4095;

		(void)madvise((void *)(m->base + m->released), upto - m->released, MADV_DONTNEED);
		m->released = upto;
	}
	r->data = h + RECORD_HEADER;
	m->off += RECORD_HEADER + r->caplen;
	/* as libpcap: bytes past the file's snapshot length are read and dropped */
	if (m->snaplen && r->caplen > m->snaplen)
		r->caplen = m->snaplen;
	return 1;
}

void pcap_mapped_close(struct pcap_mapped *m)
{
	if (m->base)
		munmap((void *)m->base, m->size);
	memset(m, 0, sizeof(*m));
}
