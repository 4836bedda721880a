// SPDX-License-Identifier: MIT
#include "capture.h"
#include "pcap_mapped.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct ct_capture {
	struct pcap_mapped mapped; /* classic pcap files; pcap is NULL then */
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

/* A classic pcap file, mapped: 1 and *out, 0 when libpcap must read it, or an error. */
static int open_mapped(const char *path, struct ct_capture **out, char *err, size_t errlen)
{
	struct pcap_mapped m;
	struct ct_capture *c;
	int rc = pcap_mapped_open(path, &m);

	if (rc <= 0)
		return 0; /* libpcap reads it, and names any error */
	c = calloc(1, sizeof(*c));
	if (!c) {
		pcap_mapped_close(&m);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	c->mapped = m;
	snprintf(c->name, sizeof(c->name), "%s", path);
	*out = c;
	return 1;
}

int ct_capture_open(const char *path, struct ct_capture **out, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	FILE *fp;
	pcap_t *p;
	int rc;

	/* "-": standard input, as tcpdump -r - reads it (`tcpdump -w - | commtap analyze -`) */
	if (!strcmp(path, "-"))
		return ct_capture_open_stream(stdin, "standard input", out, err, errlen);
	rc = open_mapped(path, out, err, errlen);
	if (rc)
		return rc < 0 ? rc : 0;
	fp = fopen(path, "rb");

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

/*
 * A time before 1970, a fraction outside [0, 1 s) or one past 2^63 ns (year
 * 2262) is no time a capture can have: reading stops there, the report says
 * where, and no later time wraps past 2^63.
 */
static int time_of(struct ct_capture *c, int64_t sec, int64_t nsec, uint64_t *ts_ns)
{
	if (sec < 0 || nsec < 0 || nsec >= 1000000000 ||
	    (uint64_t)sec > (INT64_MAX - 999999999) / 1000000000) {
		snprintf(c->error, sizeof(c->error),
			 "%s: packet %llu has an impossible timestamp (%lld s %lld ns): reading "
			 "stopped there",
			 c->name, c->packets + 1, (long long)sec, (long long)nsec);
		return -ERANGE;
	}
	*ts_ns = (uint64_t)sec * 1000000000ull + (uint64_t)nsec;
	return 0;
}

static int next_mapped(struct ct_capture *c, struct ct_packet *pkt)
{
	struct pcap_mapped_record r;
	char why[160];
	int rc = pcap_mapped_next(&c->mapped, &r, why, sizeof(why));

	if (rc < 0) {
		snprintf(c->error, sizeof(c->error),
			 "%s: capture breaks off after packet %llu (file offset %zu): %s", c->name,
			 c->packets, c->mapped.off, why);
		return rc;
	}
	if (rc == 0)
		return 0;
	rc = time_of(c, r.sec, c->mapped.nano ? r.frac : (int64_t)r.frac * 1000, &pkt->ts_ns);
	if (rc)
		return rc;
	c->packets++;
	pkt->data = r.data;
	pkt->cap_len = r.caplen;
	pkt->wire_len = r.len;
	return 1;
}

int ct_capture_next(struct ct_capture *c, struct ct_packet *pkt)
{
	struct pcap_pkthdr *hdr;
	const u_char *data;
	int rc;

	if (!c->pcap)
		return next_mapped(c, pkt);
	rc = pcap_next_ex(c->pcap, &hdr, &data);
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
	/* with nanosecond precision libpcap puts nanoseconds in tv_usec */
	rc = time_of(c, hdr->ts.tv_sec, hdr->ts.tv_usec, &pkt->ts_ns);
	if (rc)
		return rc;
	c->packets++;
	pkt->data = data;
	pkt->cap_len = hdr->caplen;
	pkt->wire_len = hdr->len;
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

int ct_capture_progress(const struct ct_capture *c, uint64_t *done, uint64_t *total)
{
	FILE *fp;
	struct stat st;
	long off;

	if (!c->pcap) {
		*done = c->mapped.off;
		*total = c->mapped.size;
		return 0;
	}
	fp = pcap_file(c->pcap);
	if (!fp || fstat(fileno(fp), &st) || !S_ISREG(st.st_mode) || (off = ftell(fp)) < 0)
		return -ENOTSUP; /* a pipe has no size */
	*done = (uint64_t)off;
	*total = (uint64_t)st.st_size;
	return 0;
}

void ct_capture_close(struct ct_capture *c)
{
	if (!c)
		return;
	if (c->pcap)
		pcap_close(c->pcap);
	pcap_mapped_close(&c->mapped);
	free(c);
}
