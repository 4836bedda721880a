// SPDX-License-Identifier: MIT
#include "roce_frame.h"

#include <commtap/frame_build.h>
#include <commtap/parse.h>

void roce_frame_udp_on(struct frame_builder *fb, const struct roce_frame *r)
{
	const struct ct_roce_hdr bth = {
		.opcode = r->opcode,
		.se = r->se,
		.pad = r->pad,
		.dqpn = r->dqpn,
		.ackreq = r->ackreq,
		.psn = r->psn,
		.va = r->va,
		.rkey = r->rkey,
		.dma_len = r->dma_len,
		.swap_add = 1, /* AtomicETH */
		.syndrome = r->syndrome,
		.msn = r->msn,
		.orig = 0x0102030405060708ull, /* AtomicAckETH */
		.imm = r->imm,
		.qkey = r->qkey,
		.sqpn = r->sqpn,
		.srqn = r->srqn,
	};
	size_t n = ct_roce_hdr_len(r->opcode);

	fb_udp(fb, r->sport ? r->sport : 49152, CT_ROCE_UDP_PORT);
	/* the BTH and extension headers: the product's builder (commtap/frame_build.h) */
	ct_roce_hdr_write(fb->buf + fb_fill(fb, 0, n), &bth);
	if (r->payload)
		fb_bytes(fb, r->payload, r->payload_len);
	else
		fb_payload(fb, r->payload_len);
	fb_fill(fb, 0, r->pad);
	fb_icrc(fb);
}

size_t roce_frame_build(uint8_t *buf, size_t size, const struct roce_frame *r)
{
	struct frame_builder fb;
	uint16_t l3_type = r->ipv6 ? CT_ETHERTYPE_IPV6 : CT_ETHERTYPE_IPV4;

	fb_init(&fb, buf, size);
	fb_eth(&fb, r->n_vlan ? r->vlan[0].tpid : l3_type);
	for (unsigned i = 0; i < r->n_vlan; i++)
		fb_vlan(&fb, r->vlan[i].pcp, r->vlan[i].vid,
			i + 1 < r->n_vlan ? r->vlan[i + 1].tpid : l3_type);
	if (r->ipv6) {
		struct fb_ipv6 ip = {.proto = 17, .dscp = r->dscp, .ecn = r->ecn};

		for (int i = 0; i < 16; i++) {
			ip.src[i] = r->src6[i];
			ip.dst[i] = r->dst6[i];
		}
		fb_ipv6(&fb, &ip);
	} else {
		struct fb_ipv4 ip = {
			.src = {r->src4[0], r->src4[1], r->src4[2], r->src4[3]},
			.dst = {r->dst4[0], r->dst4[1], r->dst4[2], r->dst4[3]},
			.proto = 17,
			.dscp = r->dscp,
			.ecn = r->ecn,
			.options_len = r->ipv4_options_len,
		};

		fb_ipv4(&fb, &ip);
	}
	roce_frame_udp_on(&fb, r);
	return fb_finish(&fb);
}

size_t roce_frame_bth_offset(const struct roce_frame *r)
{
	return 14 + 4 * (size_t)r->n_vlan + (r->ipv6 ? 40 : 20 + (size_t)r->ipv4_options_len) + 8;
}
