// SPDX-License-Identifier: MIT
#include "capture.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ct_capture {
	pcap_t *pcap;
	char name[256];
	unsigned long long packets;
	char error[512];
};

static int finish_open(pcap_t *p, const char *name, struct ct_capture **out, char *err,
		       size_t errlen)
{
	struct ct_capture *c;
	int dlt = pcap_datalink(p);

	if (dlt != DLT_EN10MB) {
		const char *dlt_name = pcap_datalink_val_to_name(dlt);

		snprintf(err, errlen,
			 "%s: link type %d (%s) is not supported; commtap reads Ethernet captures "
			 "(EN10MB)",
			 name, dlt, dlt_name ? dlt_name : "unknown");
		pcap_close(p);
		return -EPROTONOSUPPORT;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pcap_close(p);
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	c->pcap = p;
	snprintf(c->name, sizeof(c->name), "%s", name);
	*out = c;
	return 0;
}

int ct_capture_open(const char *path, struct ct_capture **out, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	FILE *fp = fopen(path, "rb");
	pcap_t *p;

	if (!fp) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
		return -e;
	}
	p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!p) {
		fclose(fp);
		snprintf(err, errlen, "%s: not a readable pcap or pcapng capture: %s", path, perr);
		return -EINVAL;
	}
	return finish_open(p, path, out, err, errlen);
}

int ct_capture_open_stream(FILE *fp, const char *name, struct ct_capture **out, char *err,
			   size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, perr);

	if (!p) {
		fclose(fp);
		snprintf(err, errlen, "%s: not a readable pcap or pcapng capture: %s", name, perr);
		return -EINVAL;
	}
	return finish_open(p, name, out, err, errlen);
}

int ct_capture_next(struct ct_capture *c, struct ct_packet *pkt)
{
	struct pcap_pkthdr *hdr;
	const u_char *data;
	int rc = pcap_next_ex(c->pcap, &hdr, &data);

	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		FILE *fp = pcap_file(c->pcap);
		long off = fp ? ftell(fp) : -1;

		snprintf(c->error, sizeof(c->error),
			 "%s: capture breaks off after packet %llu (file offset %ld): %s", c->name,
			 c->packets, off, pcap_geterr(c->pcap));
		return -EIO;
	}
	/*
	 * With nanosecond precision libpcap puts nanoseconds in tv_usec. A time
	 * before 1970, a fraction outside [0, 1 s) or one past 2^63 ns (year
	 * 2262) is no time a capture can have: reading stops there, the report
	 * says where, and no later time wraps past 2^63.
	 */
	if (hdr->ts.tv_sec < 0 || hdr->ts.tv_usec < 0 || hdr->ts.tv_usec >= 1000000000 ||
	    (uint64_t)hdr->ts.tv_sec > (INT64_MAX - 999999999) / 1000000000) {
		snprintf(c->error, sizeof(c->error),
			 "%s: packet %llu has an impossible timestamp (%lld s %ld ns): reading "
			 "stopped there",
			 c->name, c->packets + 1, (long long)hdr->ts.tv_sec, (long)hdr->ts.tv_usec);
		return -ERANGE;
	}
	c->packets++;
	pkt->data = data;
	pkt->cap_len = hdr->caplen;
	pkt->wire_len = hdr->len;
	pkt->ts_ns = (uint64_t)hdr->ts.tv_sec * 1000000000ull + (uint64_t)hdr->ts.tv_usec;
	return 1;
}

const char *ct_capture_error(const struct ct_capture *c)
{
	return c->error[0] ? c->error : NULL;
}

unsigned long long ct_capture_packets_read(const struct ct_capture *c)
{
	return c->packets;
}

void ct_capture_close(struct ct_capture *c)
{
	if (!c)
		return;
	pcap_close(c->pcap);
	free(c);
}
