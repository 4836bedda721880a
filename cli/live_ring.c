// SPDX-License-Identifier: MIT
/*
 * One AF_PACKET socket with a TPACKET_V3 ring (live_ring.h). The kernel
 * fills blocks of packets and hands a block over whole (full, or after the
 * retire timeout); the reader walks it and gives it back, with no copy and
 * no system call per packet.
 */
#include "live_ring.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

/*
 * A block holds many frames (a 9 KiB jumbo frame and 60-byte ACKs alike)
 * and is the unit the kernel hands over: 1 MiB keeps the hand-overs per
 * second low at 100 Gb/s (about 12,000) while a ring of 64 MiB still has
 * 64 of them to fill while the reader is busy.
 */
#define BLOCK_BYTES (1u << 20)
/* tpacket_req3 wants a frame size (TPACKET_ALIGNMENT multiple) only for its count check */
#define FRAME_HINT 2048u

struct live_filter {
	struct bpf_program prog;
};

struct live_ring {
	int fd;
	uint8_t *map;
	size_t map_bytes;
	unsigned blocks, next;
	int fanout_id;
	uint64_t packets, drops; /* PACKET_STATISTICS summed (each read resets the kernel's) */
	char iface[IF_NAMESIZE];
};

int live_filter_compile(const char *expr, unsigned snaplen, struct live_filter **out, char *err,
			size_t errlen)
{
	struct live_filter *f = calloc(1, sizeof(*f));
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, (int)snaplen);

	if (!f || !dead) {
		free(f);
		if (dead)
			pcap_close(dead);
		snprintf(err, errlen, "--filter: out of memory");
		return -ENOMEM;
	}
	if (pcap_compile(dead, &f->prog, expr, 1, PCAP_NETMASK_UNKNOWN)) {
		snprintf(err, errlen, "--filter '%s': %s", expr, pcap_geterr(dead));
		pcap_close(dead);
		free(f);
		return -EINVAL;
	}
	pcap_close(dead);
	*out = f;
	return 0;
}

void live_filter_free(struct live_filter *f)
{
	if (!f)
		return;
	pcap_freecode(&f->prog);
	free(f);
}

/* The interface exists and is up: checked before any privilege is needed. */
static int check_iface(const char *name, unsigned *ifindex, char *err, size_t errlen)
{
	struct ifreq ifr = {0};
	int fd, up;

	if (strlen(name) >= IF_NAMESIZE) {
		snprintf(err, errlen, "--live %s: not an interface name (%d characters at most)",
			 name, IF_NAMESIZE - 1);
		return -EINVAL;
	}
	*ifindex = if_nametoindex(name);
	if (!*ifindex) {
		snprintf(err, errlen, "--live %s: no such interface", name);
		return -ENODEV;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--live %s: %s", name, strerror(errno));
		return -errno;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	up = !ioctl(fd, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_UP);
	close(fd);
	if (!up) {
		snprintf(err, errlen, "--live %s: the interface is down (ip link set %s up)", name,
			 name);
		return -ENETDOWN;
	}
	return 0;
}

static int fail_sock(struct live_ring *r, const char *what, char *err, size_t errlen)
{
	int e = errno;

	snprintf(err, errlen, "--live %s: %s: %s", r->iface, what, strerror(e));
	return -e;
}

/*
 * Join the interface's fanout group, or start one with an id the kernel
 * picks (PACKET_FANOUT_FLAG_UNIQUEID, Linux 4.14): never an id another
 * program's group could share. PACKET_FANOUT_HASH sends a flow's packets to
 * one socket (the kernel's flow hash, the same both ways of a 5-tuple).
 */
static int join_fanout(struct live_ring *r, int id, char *err, size_t errlen)
{
	int val, type = PACKET_FANOUT_HASH;
	socklen_t len = sizeof(val);

	if (id < 0)
		val = (type | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
	else
		val = type << 16 | id;
	if (setsockopt(r->fd, SOL_PACKET, PACKET_FANOUT, &val, sizeof(val)))
		return fail_sock(r, "PACKET_FANOUT", err, errlen);
	if (getsockopt(r->fd, SOL_PACKET, PACKET_FANOUT, &val, &len))
		return fail_sock(r, "reading PACKET_FANOUT", err, errlen);
	r->fanout_id = val & 0xffff;
	return 0;
}

int live_ring_open(const struct live_ring_config *cfg, struct live_ring **out, char *err,
		   size_t errlen)
{
	struct live_ring *r;
	struct sock_fprog fprog;
	struct tpacket_req3 req = {0};
	struct sockaddr_ll sll = {0};
	unsigned ifindex;
	int version = TPACKET_V3, rc;

	rc = check_iface(cfg->iface, &ifindex, err, errlen);
	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "--live %s: out of memory", cfg->iface);
		return -ENOMEM;
	}
	snprintf(r->iface, sizeof(r->iface), "%s", cfg->iface);
	r->map = MAP_FAILED;
	/* protocol 0: nothing arrives before the filter is attached and bind() names one */
	r->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (r->fd < 0) {
		rc = -errno;
		if (rc == -EPERM || rc == -EACCES)
			snprintf(err, errlen,
				 "--live %s: cannot open a packet socket: %s (needs CAP_NET_RAW: "
				 "run as root or give the binary cap_net_raw)",
				 cfg->iface, strerror(-rc));
		else
			snprintf(err, errlen, "--live %s: packet socket: %s", cfg->iface,
				 strerror(-rc));
		free(r);
		return rc;
	}
	fprog.len = (unsigned short)cfg->filter->prog.bf_len;
	fprog.filter = (struct sock_filter *)cfg->filter->prog.bf_insns;
	if (setsockopt(r->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version))) {
		rc = fail_sock(r, "TPACKET_V3", err, errlen);
		goto fail;
	}
	if (setsockopt(r->fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog))) {
		rc = fail_sock(r, "attaching the capture filter", err, errlen);
		goto fail;
	}
	r->blocks = (unsigned)(cfg->ring_bytes / BLOCK_BYTES);
	if (r->blocks < 2)
		r->blocks = 2; /* one the reader walks, one the kernel fills */
	req.tp_block_size = BLOCK_BYTES;
	req.tp_block_nr = r->blocks;
	req.tp_frame_size = FRAME_HINT;
	req.tp_frame_nr = BLOCK_BYTES / FRAME_HINT * r->blocks;
	req.tp_retire_blk_tov = cfg->retire_ms;
	if (setsockopt(r->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		rc = fail_sock(r, "PACKET_RX_RING", err, errlen);
		goto fail;
	}
	r->map_bytes = (size_t)BLOCK_BYTES * r->blocks;
	r->map = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED) {
		rc = fail_sock(r, "mapping the ring", err, errlen);
		goto fail;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)ifindex;
	if (bind(r->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		rc = fail_sock(r, "bind", err, errlen);
		goto fail;
	}
	rc = join_fanout(r, cfg->fanout_id, err, errlen);
	if (rc)
		goto fail;
	*out = r;
	return 0;
fail:
	live_ring_close(r);
	return rc;
}

int live_ring_fd(const struct live_ring *r)
{
	return r->fd;
}

int live_ring_fanout_id(const struct live_ring *r)
{
	return r->fanout_id;
}

const char *live_ring_iface(const struct live_ring *r)
{
	return r->iface;
}

/* A frame whose 802.1Q tag the kernel moved into the ring header, tag put back. */
static unsigned with_tag(const struct tpacket3_hdr *ph, const uint8_t *data, uint8_t *out)
{
	uint16_t tpid =
		(ph->tp_status & TP_STATUS_VLAN_TPID_VALID) ? ph->hv1.tp_vlan_tpid : ETH_P_8021Q;
	uint16_t tag[2] = {htons(tpid), htons((uint16_t)ph->hv1.tp_vlan_tci)};
	unsigned cap = ph->tp_snaplen;

	if (cap < 12 || cap > CT_LIVE_SCRATCH - 4)
		return 0;
	memcpy(out, data, 12);
	memcpy(out + 12, tag, 4);
	memcpy(out + 16, data + 12, cap - 12);
	return cap + 4;
}

unsigned live_ring_read_block(struct live_ring *r, uint8_t *scratch, live_batch_fn fn, void *ctx)
{
	struct tpacket_block_desc *bd =
		(struct tpacket_block_desc *)(r->map + (size_t)r->next * BLOCK_BYTES);
	struct ct_packet batch[CT_LIVE_BATCH];
	const struct tpacket3_hdr *ph;
	unsigned n, k = 0;

	if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
		return 0;
	n = bd->hdr.bh1.num_pkts;
	ph = (const struct tpacket3_hdr *)((const uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *data = (const uint8_t *)ph + ph->tp_mac;
		struct ct_packet *p = &batch[k];

		p->ts_ns = (uint64_t)ph->tp_sec * 1000000000ull + ph->tp_nsec;
		p->data = data;
		p->cap_len = ph->tp_snaplen;
		p->wire_len = ph->tp_len;
		if (ph->tp_status & TP_STATUS_VLAN_VALID) {
			/* the batch before it, then this one from the scratch buffer */
			if (k)
				fn(batch, k, ctx);
			batch[0] = *p;
			p = &batch[0];
			p->cap_len = with_tag(ph, data, scratch);
			p->wire_len += 4;
			p->data = scratch;
			if (p->cap_len)
				fn(p, 1, ctx);
			k = 0;
		} else if (++k == CT_LIVE_BATCH) {
			fn(batch, k, ctx);
			k = 0;
		}
		ph = (const struct tpacket3_hdr *)((const uint8_t *)ph + ph->tp_next_offset);
	}
	if (k)
		fn(batch, k, ctx);
	__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	r->next = (r->next + 1) % r->blocks;
	return n;
}

int live_ring_stats(struct live_ring *r, uint64_t *packets, uint64_t *drops)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	if (getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return -errno;
	r->packets += st.tp_packets;
	r->drops += st.tp_drops;
	*packets = r->packets;
	*drops = r->drops;
	return 0;
}

void live_ring_close(struct live_ring *r)
{
	if (!r)
		return;
	if (r->map != MAP_FAILED)
		munmap(r->map, r->map_bytes);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}
