/* SPDX-License-Identifier: MIT */
/*
 * Classic pcap files (version 2.4, Ethernet, either byte order, microsecond
 * or nanosecond timestamps) read straight from a read-only mapping of the
 * file: no copy of each packet and no call into libpcap per packet. Anything
 * else (pcapng, pipes, other link types, odd headers) is libpcap's
 * (capture.c chooses).
 */
#ifndef COMMTAP_PCAP_MAPPED_H
#define COMMTAP_PCAP_MAPPED_H

#include <stddef.h>
#include <stdint.h>

struct pcap_mapped {
	const uint8_t *base;
	size_t size, off;
	size_t released; /* pages before this were let go (MADV_DONTNEED) */
	int swapped;	 /* the file's byte order is not ours */
	int nano;	 /* nanosecond timestamps */
	uint32_t snaplen;
};

/* One record: its header's fields, timestamps as the file has them. */
struct pcap_mapped_record {
	int32_t sec, frac; /* the fraction in micro- or nanoseconds, as the file says */
	uint32_t caplen, len;
	const uint8_t *data;
};

/*
 * Map path when it is a regular file this reader takes: 1 and *m filled,
 * 0 when it is not (libpcap reads it), or a negative errno.
 */
int pcap_mapped_open(const char *path, struct pcap_mapped *m);

/*
 * The next record: 1, 0 at the end, or -EIO when the file breaks off or a
 * record is corrupt (err says why, in libpcap's words).
 */
int pcap_mapped_next(struct pcap_mapped *m, struct pcap_mapped_record *r, char *err, size_t errlen);

void pcap_mapped_close(struct pcap_mapped *m);

#endif
