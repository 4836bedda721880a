// SPDX-License-Identifier: MIT
#include "frames.h"

#include <commtap/byteorder.h>
#include <commtap/frame_build.h>
#include <commtap/roce_opcode.h>
#include <string.h>

/* Ethernet and IPv4: 198.18.0.1 -> 198.18.0.2, ECT(0). */
static const struct ct_frame_ip frame_ip = {
	.dst_mac = {0x02, 0, 0, 0, 0, 2},
	.src_mac = {0x02, 0, 0, 0, 0, 1},
	.src = {198, 18, 0, 1},
	.dst = {198, 18, 0, 2},
	.tos = 0x02,
};

size_t ct_frame_roce(uint8_t *buf, size_t cap, uint8_t opcode, uint32_t dqpn, uint32_t psn,
		     uint32_t payload, uint32_t reth_len)
{
	struct ct_roce_frame r = {
		.ip = frame_ip,
		.sport = 49152,
		.bth = {.opcode = opcode, .dqpn = dqpn, .psn = psn, .dma_len = reth_len},
		.payload = payload,
	};
	size_t len = ct_roce_frame_write(buf, cap, &r, NULL);

	if (!ct_opcode_table[opcode].valid || !len || len > cap)
		return 0;
	memset(buf + len - payload - 4, 0, payload + 4); /* payload and ICRC */
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
	p = buf + ct_frame_ip_write(buf, &frame_ip, 6, 20 + payload);
	ct_put16(p, sport);
	ct_put16(p + 2, dport);
	ct_put32(p + 4, seq);
	p[12] = 5 << 4;
	p[13] = 0x18; /* PSH, ACK */
	ct_put16(p + 14, 65535);
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
	ct_put16(out + 12, 0x86dd);
	memset(ip6, 0, 40);
	ip6[0] = (uint8_t)(0x60 | ip[1] >> 4); /* version, traffic class */
	ip6[1] = (uint8_t)(ip[1] << 4);
	ct_put16(ip6 + 4, (uint16_t)l4);
	ip6[6] = ip[9]; /* next header: the IPv4 protocol */
	ip6[7] = 64;
	memcpy(ip6 + 8, prefix, 4);
	ip6[23] = 1;
	memcpy(ip6 + 24, prefix, 4);
	ip6[39] = 2;
	memcpy(ip6 + 40, v4 + 34, l4);
	return len + 20;
}
