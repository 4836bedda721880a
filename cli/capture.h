/* SPDX-License-Identifier: MIT */
/*
 * Capture files as a stream of struct ct_packet with nanosecond
 * timestamps: classic pcap files from a mapping of the file
 * (pcap_mapped.c), pcapng, pipes and other link types through libpcap.
 */
#ifndef COMMTAP_CAPTURE_H
#define COMMTAP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <commtap/dataplane.h>

struct ct_capture;

/*
 * Open a capture file. On failure returns a negative errno and writes a
 * one-line reason naming the file into err.
 */
int ct_capture_open(const char *path, struct ct_capture **out, char *err, size_t errlen);
/* The same over an open stream (closed by ct_capture_close); name is for messages. */
int ct_capture_open_stream(FILE *fp, const char *name, struct ct_capture **out, char *err,
			   size_t errlen);

/*
 * Next packet: returns 1 with *pkt filled (its data valid until the next
 * call), 0 at the end, -EIO when the file breaks off or is corrupt, or
 * -ERANGE at a packet whose timestamp is before 1970, past 2^63 ns or has a
 * fraction outside [0, 1 s); then ct_capture_error() says where.
 */
int ct_capture_next(struct ct_capture *c, struct ct_packet *pkt);
const char *ct_capture_error(const struct ct_capture *c);
/* How far into the file reading is (bytes); -ENOTSUP for a pipe. */
int ct_capture_progress(const struct ct_capture *c, uint64_t *done, uint64_t *total);
unsigned long long ct_capture_packets_read(const struct ct_capture *c);
void ct_capture_close(struct ct_capture *c);

#endif
