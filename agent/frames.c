// SPDX-License-Identifier: MIT
#include "frames.h"

#include <commtap/parse.h>
#include <commtap/roce_opcode.h>
#include <string.h>

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* Ethernet and IPv4 (198.18.0.1 -> 198.18.0.2) for an L4 of l4_len bytes. */
static size_t eth_ipv4(uint8_t *buf, uint8_t proto, uint32_t l4_len)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1};
	uint8_t *ip = buf + 14;

	memcpy(buf, macs, sizeof(macs));
	put16(buf + 12, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[1] = 0x02; /* ECT(0) */
	put16(ip + 2, 20 + l4_len);
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = proto;
	ip[12] = 198, ip[13] = 18, ip[14] = 0, ip[15] = 1;
	ip[16] = 198, ip[17] = 18, ip[18] = 0, ip[19] = 2;
	return 34;
}

size_t ct_frame_roce(uint8_t *buf, size_t cap, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		     uint32_t payload, uint32_t reth_len)
{
	const struct ct_opcode_info *info = &ct_opcode_table[opcode];
	uint32_t udp_len = 8 + 12 + info->ext_len + payload + 4;
	size_t len = 14 + 20 + udp_len;
	uint8_t *p;

	if (len > cap || !info->valid)
		return 0;
	memset(buf, 0, len);
	p = buf + eth_ipv4(buf, 17, udp_len);
	put16(p, 49152);
	put16(p + 2, 4791);
	put16(p + 4, udp_len);
	p += 8;
	p[0] = opcode;
	put16(p + 2, 0xffff); /* default P_Key */
	put32(p + 4, dqpn & 0xffffff);
	put32(p + 8, psn & 0xffffff);
	p += 12;
	if (info->ext & CT_EXT_RETH) /* RETH: after DETH/XRCETH; its length at +12 */
		put32(p + ((info->ext & CT_EXT_DETH) ? 8 : 0) +
			      ((info->ext & CT_EXT_XRCETH) ? 4 : 0) + 12,
		      reth_len);
	return len;
}

size_t ct_frame_tcp(uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport, uint32_t seq,
		    uint32_t payload)
{
	size_t len = 14 + 20 + 20 + payload;
	uint8_t *p;

	if (len > cap)
		return 0;
	memset(buf, 0, len);
	p = buf + eth_ipv4(buf, 6, 20 + payload);
	put16(p, sport);
	put16(p + 2, dport);
	put32(p + 4, seq);
	p[12] = 5 << 4;
	p[13] = 0x18; /* PSH, ACK */
	put16(p + 14, 65535);
	return len;
}

size_t ct_frame_ipv6(uint8_t *out, size_t cap, const uint8_t *v4, size_t len)
{
	static const uint8_t prefix[4] = {0x20, 0x01, 0x0d, 0xb8};
	const uint8_t *ip = v4 + 14;
	size_t l4 = len - 14 - 20;
	uint8_t *ip6 = out + 14;

	if (len < 14 + 20 || len + 20 > cap)
		return 0;
	memcpy(out, v4, 12);
	put16(out + 12, 0x86dd);
	memset(ip6, 0, 40);
	ip6[0] = (uint8_t)(0x60 | ip[1] >> 4); /* version, traffic class */
	ip6[1] = (uint8_t)(ip[1] << 4);
	put16(ip6 + 4, (uint32_t)l4);
	ip6[6] = ip[9]; /* next header: the IPv4 protocol */
	ip6[7] = 64;
	memcpy(ip6 + 8, prefix, 4);
	ip6[23] = 1;
	memcpy(ip6 + 24, prefix, 4);
	ip6[39] = 2;
	memcpy(ip6 + 40, v4 + 34, l4);
	return len + 20;
}
