// SPDX-License-Identifier: MIT
#include "frame_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t mac_dst[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t mac_src[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t mac_ctrl_dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};

static uint8_t *room(struct frame_builder *fb, size_t n)
{
	uint8_t *p;

	if (n > fb->size - fb->len) {
		fprintf(stderr, "frame_builder: %zu bytes do not fit (%zu of %zu used)\n", n,
			fb->len, fb->size);
		abort();
	}
	p = fb->buf + fb->len;
	fb->len += n;
	return p;
}

static void open_length(struct frame_builder *fb, size_t off, size_t hdr_len,
			enum fb_len_field field)
{
	if (fb->n_open == FB_MAX_OPEN) {
		fprintf(stderr, "frame_builder: too many nested length fields\n");
		abort();
	}
	fb->open[fb->n_open].off = off;
	fb->open[fb->n_open].hdr_len = hdr_len;
	fb->open[fb->n_open].field = field;
	fb->n_open++;
}

void fb_init(struct frame_builder *fb, uint8_t *buf, size_t size)
{
	memset(fb, 0, sizeof(*fb));
	fb->buf = buf;
	fb->size = size;
}

size_t fb_bytes(struct frame_builder *fb, const void *data, size_t n)
{
	size_t off = fb->len;

	memcpy(room(fb, n), data, n);
	return off;
}

size_t fb_fill(struct frame_builder *fb, uint8_t byte, size_t n)
{
	size_t off = fb->len;

	memset(room(fb, n), byte, n);
	return off;
}

size_t fb_u8(struct frame_builder *fb, uint8_t v)
{
	return fb_bytes(fb, &v, 1);
}

size_t fb_u16(struct frame_builder *fb, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	return fb_bytes(fb, b, sizeof(b));
}

size_t fb_u24(struct frame_builder *fb, uint32_t v)
{
	uint8_t b[3] = {(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	return fb_bytes(fb, b, sizeof(b));
}

size_t fb_u32(struct frame_builder *fb, uint32_t v)
{
	size_t off = fb_u16(fb, (uint16_t)(v >> 16));

	fb_u16(fb, (uint16_t)v);
	return off;
}

size_t fb_u64(struct frame_builder *fb, uint64_t v)
{
	size_t off = fb_u32(fb, (uint32_t)(v >> 32));

	fb_u32(fb, (uint32_t)v);
	return off;
}

void fb_put16(struct frame_builder *fb, size_t off, uint16_t v)
{
	if (off + 2 > fb->len)
		abort();
	fb->buf[off] = (uint8_t)(v >> 8);
	fb->buf[off + 1] = (uint8_t)v;
}

size_t fb_eth(struct frame_builder *fb, uint16_t ethertype)
{
	size_t off = fb->len;

	/* MAC control frames go to the reserved multicast address. */
	fb_bytes(fb, ethertype == 0x8808 ? mac_ctrl_dst : mac_dst, 6);
	fb_bytes(fb, mac_src, 6);
	fb_u16(fb, ethertype);
	return off;
}

size_t fb_vlan(struct frame_builder *fb, uint8_t pcp, uint16_t vid, uint16_t ethertype)
{
	size_t off = fb_u16(fb, (uint16_t)((pcp & 7) << 13 | (vid & 0x0fff)));

	fb_u16(fb, ethertype);
	return off;
}

size_t fb_ipv4(struct frame_builder *fb, const struct fb_ipv4 *ip)
{
	size_t hlen = 20 + ip->options_len;
	size_t off;

	if (ip->options_len % 4 || ip->options_len > 40)
		abort();
	off = fb_u8(fb, (uint8_t)(0x40 | hlen / 4));
	fb_u8(fb, (uint8_t)(ip->dscp << 2 | (ip->ecn & 3)));
	fb_u16(fb, 0); /* total length: fb_finish */
	fb_u16(fb, 0x1234);
	fb_u16(fb, ip->frag);
	fb_u8(fb, 64);
	fb_u8(fb, ip->proto);
	fb_u16(fb, 0); /* checksum: fb_finish */
	fb_bytes(fb, ip->src, 4);
	fb_bytes(fb, ip->dst, 4);
	if (ip->options_len) {
		/* router alert (4 bytes), then NOPs and a final EOL */
		static const uint8_t router_alert[4] = {0x94, 0x04, 0x00, 0x00};

		fb_bytes(fb, router_alert, 4);
		if (ip->options_len > 4) {
			fb_fill(fb, 0x01, ip->options_len - 5u);
			fb_u8(fb, 0x00);
		}
	}
	open_length(fb, off, hlen, FB_LEN_IPV4);
	return off;
}

static void ipv6_ext(struct frame_builder *fb, const struct fb_ipv6_ext *ext, uint8_t next)
{
	fb_u8(fb, next);
	if (ext->type == FB_IPV6_FRAGMENT) {
		fb_u8(fb, 0);
		fb_u16(fb, (uint16_t)(ext->frag_off << 3 | (ext->more_frags ? 1 : 0)));
		fb_u32(fb, 0xabcd0001); /* identification */
		return;
	}
	fb_u8(fb, ext->len8);
	if (ext->type == FB_IPV6_ROUTING) {
		fb_u8(fb, 4); /* routing type: segment routing */
		fb_u8(fb, 0); /* segments left: 0, so no router processes it */
		fb_fill(fb, 0, 4 + (size_t)ext->len8 * 8);
		return;
	}
	/* hop-by-hop or destination options: PadN over the whole header */
	fb_u8(fb, 1);
	fb_u8(fb, (uint8_t)(4 + ext->len8 * 8));
	fb_fill(fb, 0, 4 + (size_t)ext->len8 * 8);
}

size_t fb_ipv6(struct frame_builder *fb, const struct fb_ipv6 *ip)
{
	uint8_t tclass = (uint8_t)(ip->dscp << 2 | (ip->ecn & 3));
	uint8_t first = ip->n_ext ? ip->ext[0].type : ip->proto;
	size_t off;

	if (ip->n_ext > FB_MAX_IPV6_EXT)
		abort();
	off = fb_u32(fb, 6u << 28 | (uint32_t)tclass << 20 | (ip->flow_label & 0xfffff));
	fb_u16(fb, 0); /* payload length: fb_finish */
	fb_u8(fb, first);
	fb_u8(fb, 64);
	fb_bytes(fb, ip->src, 16);
	fb_bytes(fb, ip->dst, 16);
	for (unsigned i = 0; i < ip->n_ext; i++)
		ipv6_ext(fb, &ip->ext[i], i + 1 < ip->n_ext ? ip->ext[i + 1].type : ip->proto);
	open_length(fb, off, 40, FB_LEN_IPV6);
	return off;
}

size_t fb_udp(struct frame_builder *fb, uint16_t sport, uint16_t dport)
{
	size_t off = fb_u16(fb, sport);

	fb_u16(fb, dport);
	fb_u16(fb, 0); /* length: fb_finish */
	fb_u16(fb, 0); /* no checksum, as RoCEv2 NICs send it */
	open_length(fb, off, 0, FB_LEN_UDP);
	return off;
}

size_t fb_tcp(struct frame_builder *fb, const struct fb_tcp *tcp)
{
	size_t hlen = 20 + tcp->options_len;
	size_t off;

	if (tcp->options_len % 4 || tcp->options_len > 40)
		abort();
	off = fb_u16(fb, tcp->sport);
	fb_u16(fb, tcp->dport);
	fb_u32(fb, tcp->seq);
	fb_u32(fb, tcp->ack);
	fb_u8(fb, (uint8_t)(hlen / 4 << 4));
	fb_u8(fb, tcp->flags);
	fb_u16(fb, tcp->window ? tcp->window : 0xffff);
	fb_u16(fb, 0); /* checksum (not verified by the parser) */
	fb_u16(fb, 0); /* urgent pointer */
	if (tcp->options_len >= 4) {
		fb_u8(fb, 2); /* MSS 8960 */
		fb_u8(fb, 4);
		fb_u16(fb, 8960);
	}
	for (size_t left = tcp->options_len >= 4 ? tcp->options_len - 4 : 0; left;) {
		if (left >= 12) { /* NOP, NOP, timestamps */
			fb_u16(fb, 0x0101);
			fb_u8(fb, 8);
			fb_u8(fb, 10);
			fb_u32(fb, 0x01020304);
			fb_u32(fb, 0x05060708);
			left -= 12;
		} else {
			fb_u8(fb, 1);
			left--;
		}
	}
	return off;
}

size_t fb_bth(struct frame_builder *fb, const struct fb_bth *bth)
{
	size_t off = fb_u8(fb, bth->opcode);

	fb_u8(fb, (uint8_t)((bth->se ? 0x80 : 0) | (bth->pad & 3) << 4 | (bth->tver & 0x0f)));
	fb_u16(fb, bth->pkey ? bth->pkey : 0xffff);
	fb_u8(fb, 0);
	fb_u24(fb, bth->dqpn);
	fb_u8(fb, bth->ackreq ? 0x80 : 0);
	fb_u24(fb, bth->psn);
	return off;
}

size_t fb_reth(struct frame_builder *fb, uint64_t va, uint32_t rkey, uint32_t dma_len)
{
	size_t off = fb_u64(fb, va);

	fb_u32(fb, rkey);
	fb_u32(fb, dma_len);
	return off;
}

size_t fb_aeth(struct frame_builder *fb, uint8_t syndrome, uint32_t msn)
{
	size_t off = fb_u8(fb, syndrome);

	fb_u24(fb, msn);
	return off;
}

size_t fb_atomic_ack_eth(struct frame_builder *fb, uint64_t orig_data)
{
	return fb_u64(fb, orig_data);
}

size_t fb_immdt(struct frame_builder *fb, uint32_t imm)
{
	return fb_u32(fb, imm);
}

size_t fb_ieth(struct frame_builder *fb, uint32_t rkey)
{
	return fb_u32(fb, rkey);
}

size_t fb_atomic_eth(struct frame_builder *fb, uint64_t va, uint32_t rkey, uint64_t swap_add,
		     uint64_t compare)
{
	size_t off = fb_u64(fb, va);

	fb_u32(fb, rkey);
	fb_u64(fb, swap_add);
	fb_u64(fb, compare);
	return off;
}

size_t fb_deth(struct frame_builder *fb, uint32_t qkey, uint32_t sqpn)
{
	size_t off = fb_u32(fb, qkey);

	fb_u8(fb, 0);
	fb_u24(fb, sqpn);
	return off;
}

size_t fb_xrceth(struct frame_builder *fb, uint32_t srqn)
{
	size_t off = fb_u8(fb, 0);

	fb_u24(fb, srqn);
	return off;
}

size_t fb_cnp_reserved(struct frame_builder *fb)
{
	return fb_fill(fb, 0, 16);
}

size_t fb_payload(struct frame_builder *fb, size_t n)
{
	size_t off = fb->len;
	uint8_t *p = room(fb, n);

	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	return off;
}

size_t fb_icrc(struct frame_builder *fb)
{
	return fb_u32(fb, 0x1cc1cc1c);
}

size_t fb_gre(struct frame_builder *fb, const struct fb_gre *gre)
{
	uint16_t flags = (uint16_t)((gre->has_csum ? 0x8000 : 0) | (gre->has_key ? 0x2000 : 0) |
				    (gre->has_seq ? 0x1000 : 0));
	size_t off = fb_u16(fb, flags);

	fb_u16(fb, gre->proto);
	if (gre->has_csum)
		fb_u32(fb, 0); /* checksum and reserved1 */
	if (gre->has_key)
		fb_u32(fb, gre->key);
	if (gre->has_seq)
		fb_u32(fb, gre->seq);
	return off;
}

size_t fb_erspan2(struct frame_builder *fb, uint16_t session, uint16_t vlan)
{
	/* Ver 1 (4 bits), VLAN (12); COS (3), En (2), T (1), session (10); reserved, index */
	size_t off = fb_u16(fb, (uint16_t)(1u << 12 | (vlan & 0x0fff)));

	fb_u16(fb, (uint16_t)(3u << 13 | (session & 0x3ff)));
	fb_u32(fb, 0x00000007);
	return off;
}

size_t fb_erspan3(struct frame_builder *fb, uint16_t session, uint32_t timestamp, int platform)
{
	/* Ver 2, VLAN; COS, BSO, T, session; timestamp; SGT, P, FT, HW ID, D, Gra, O */
	size_t off = fb_u16(fb, (uint16_t)(2u << 12 | 0x064));

	fb_u16(fb, (uint16_t)(5u << 13 | (session & 0x3ff)));
	fb_u32(fb, timestamp);
	fb_u16(fb, 0xbeef);				 /* SGT */
	fb_u8(fb, 0x01);				 /* P 0, FT 0, HW ID high bits */
	fb_u8(fb, (uint8_t)(0x06 | (platform ? 1 : 0))); /* ... Gra 3, O */
	if (platform) {
		fb_u32(fb, 0x0c000000); /* platform id 3 */
		fb_u32(fb, 0x89abcdef);
	}
	return off;
}

size_t fb_pfc(struct frame_builder *fb, uint8_t class_enable, const uint16_t quanta[8])
{
	size_t off = fb_u16(fb, 0x0101);

	fb_u16(fb, class_enable);
	for (int i = 0; i < 8; i++)
		fb_u16(fb, quanta[i]);
	fb_fill(fb, 0, 26); /* pad to the 60-byte minimum */
	return off;
}

size_t fb_pause(struct frame_builder *fb, uint16_t quanta)
{
	size_t off = fb_u16(fb, 0x0001);

	fb_u16(fb, quanta);
	fb_fill(fb, 0, 42);
	return off;
}

static uint16_t ipv4_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t fb_finish(struct frame_builder *fb)
{
	while (fb->n_open) {
		const size_t off = fb->open[fb->n_open - 1].off;
		const size_t hdr_len = fb->open[fb->n_open - 1].hdr_len;
		const size_t len = fb->len - off;

		switch (fb->open[--fb->n_open].field) {
		case FB_LEN_IPV4:
			fb_put16(fb, off + 2, (uint16_t)len);
			fb_put16(fb, off + 10, 0);
			fb_put16(fb, off + 10, ipv4_checksum(fb->buf + off, hdr_len));
			break;
		case FB_LEN_IPV6:
			fb_put16(fb, off + 4, (uint16_t)(len - 40));
			break;
		case FB_LEN_UDP:
			fb_put16(fb, off + 4, (uint16_t)len);
			break;
		}
	}
	return fb->len;
}
