// SPDX-License-Identifier: MIT
#include <commtap/frame_build.h>

#include <commtap/byteorder.h>
#include <commtap/parse.h>
#include <commtap/roce_opcode.h>

#include <string.h>

#define IP_TTL	 64
#define IPV4_DF	 0x4000
#define BTH_LEN	 12
#define ICRC_LEN 4
#define UDP_LEN	 8

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	ct_put32(p, (uint32_t)(v >> 32));
	ct_put32(p + 4, (uint32_t)v);
}

size_t ct_frame_ip_len(const struct ct_frame_ip *h)
{
	return 14 + 4 * (size_t)h->n_vlan + (h->ipv6 ? 40 : 20);
}

size_t ct_frame_ip_write(uint8_t *buf, const struct ct_frame_ip *h, uint8_t proto, uint32_t l4_len)
{
	uint16_t l3_type = h->ipv6 ? CT_ETHERTYPE_IPV6 : CT_ETHERTYPE_IPV4;
	size_t l2 = 14 + 4 * (size_t)h->n_vlan;
	uint8_t *ip = buf + l2;

	memcpy(buf, h->dst_mac, 6);
	memcpy(buf + 6, h->src_mac, 6);
	/* each tag's TPID sits where the previous header's type goes */
	for (unsigned t = 0; t < h->n_vlan; t++) {
		ct_put16(buf + 12 + 4 * t, h->vlan[t].tpid);
		ct_put16(buf + 14 + 4 * t,
			 (uint16_t)(h->vlan[t].pcp << 13 | (h->vlan[t].vid & 0xfff)));
	}
	ct_put16(buf + l2 - 2, l3_type);
	if (h->ipv6) {
		ct_put32(ip, 6u << 28 | (uint32_t)h->tos << 20);
		ct_put16(ip + 4, (uint16_t)l4_len);
		ip[6] = proto;
		ip[7] = IP_TTL;
		memcpy(ip + 8, h->src, 16);
		memcpy(ip + 24, h->dst, 16);
		return l2 + 40;
	}
	memset(ip, 0, 20);
	ip[0] = 0x45; /* version 4, 5 words */
	ip[1] = h->tos;
	ct_put16(ip + 2, (uint16_t)(20 + l4_len));
	ct_put16(ip + 6, IPV4_DF);
	ip[8] = IP_TTL;
	ip[9] = proto;
	memcpy(ip + 12, h->src, 4);
	memcpy(ip + 16, h->dst, 4);
	return l2 + 20;
}

size_t ct_roce_hdr_len(uint8_t opcode)
{
	return BTH_LEN + (size_t)ct_opcode_table[opcode].ext_len;
}

size_t ct_roce_hdr_write(uint8_t *p, const struct ct_roce_hdr *h)
{
	const struct ct_opcode_info *info = &ct_opcode_table[h->opcode];
	size_t len = ct_roce_hdr_len(h->opcode);
	uint8_t *x = p + BTH_LEN;

	memset(p, 0, len);
	p[0] = h->opcode;
	p[1] = (uint8_t)((h->se ? 0x80 : 0) | (h->pad & 3) << 4); /* transport version 0 */
	ct_put16(p + 2, h->pkey ? h->pkey : 0xffff);
	put24(p + 5, h->dqpn);
	p[8] = h->ackreq ? 0x80 : 0;
	put24(p + 9, h->psn);
	if (info->ext & CT_EXT_RDETH)
		x += 4; /* the RD transport's EE context, 0 */
	if (info->ext & CT_EXT_DETH) {
		ct_put32(x, h->qkey);
		put24(x + 5, h->sqpn);
		x += 8;
	}
	if (info->ext & CT_EXT_XRCETH) {
		put24(x + 1, h->srqn);
		x += 4;
	}
	if (info->ext & CT_EXT_RETH) {
		put64(x, h->va);
		ct_put32(x + 8, h->rkey);
		ct_put32(x + 12, h->dma_len);
		x += 16;
	}
	if (info->ext & CT_EXT_ATOMICETH) {
		put64(x, h->va);
		ct_put32(x + 8, h->rkey);
		put64(x + 12, h->swap_add);
		put64(x + 20, h->compare);
		x += 28;
	}
	if (info->ext & CT_EXT_AETH) {
		x[0] = h->syndrome;
		put24(x + 1, h->msn);
		x += 4;
	}
	if (info->ext & CT_EXT_ATOMICACKETH) {
		put64(x, h->orig);
		x += 8;
	}
	if (info->ext & (CT_EXT_IMMDT | CT_EXT_IETH)) {
		ct_put32(x, h->imm);
		x += 4;
	}
	/* a CNP's 16 reserved bytes stay 0 */
	return len;
}

size_t ct_roce_frame_write(uint8_t *buf, size_t cap, const struct ct_roce_frame *f, size_t *hdr_len)
{
	size_t roce = ct_roce_hdr_len(f->bth.opcode);
	size_t l3 = ct_frame_ip_len(&f->ip);
	uint32_t udp_len = (uint32_t)(UDP_LEN + roce + f->payload + ICRC_LEN);
	size_t hdr = l3 + UDP_LEN + roce, len = l3 + udp_len;
	uint8_t *udp = buf + l3;

	if (hdr > cap)
		return 0;
	ct_frame_ip_write(buf, &f->ip, 17, udp_len);
	ct_put16(udp, f->sport);
	ct_put16(udp + 2, CT_ROCE_UDP_PORT);
	ct_put16(udp + 4, (uint16_t)udp_len);
	ct_put16(udp + 6, 0); /* no UDP checksum, as RoCEv2 senders send it */
	ct_roce_hdr_write(udp + UDP_LEN, &f->bth);
	if (hdr_len)
		*hdr_len = hdr;
	return len;
}
