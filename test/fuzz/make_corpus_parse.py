#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpus of fuzz_parse (test/fuzz/corpus_parse/).

Hand-made frames in fuzz_parse's input format (see fuzz_parse.c): one byte
of frames per feed call, then per frame a 6-byte header (u16 le length,
u16 le captured length, u8 wire length code, u8 time step code) and the
frame. Addresses come from the benchmarking range 198.18.0.0/15 and
2001:db8::/32. Run it from anywhere; it rewrites the directory's seeds.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus_parse")

MAC_A = bytes.fromhex("020000000001")
MAC_B = bytes.fromhex("020000000002")
IP_A = bytes([198, 18, 0, 1])
IP_B = bytes([198, 18, 0, 2])
IP_C = bytes([198, 19, 0, 3])
IP6_A = bytes.fromhex("20010db8000000000000000000000001")
IP6_B = bytes.fromhex("20010db8000000000000000000000002")
TOS = 26 << 2 | 2  # DSCP 26, ECT(0)
TOS_CE = 26 << 2 | 3


def be16(v):
    return struct.pack(">H", v & 0xFFFF)


def be24(v):
    return struct.pack(">I", v & 0xFFFFFF)[1:]


def be32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def eth(ethertype, payload, tags=(), dst=MAC_B, src=MAC_A):
    hdr = dst + src
    for tpid, tci in tags:
        hdr += be16(tpid) + be16(tci)
    return hdr + be16(ethertype) + payload


def ipv4(src, dst, proto, payload, tos=TOS, frag=0x4000, options=b""):
    ihl = 5 + len(options) // 4
    hdr = bytes([0x40 | ihl, tos]) + be16(4 * ihl + len(payload)) + be16(0x1234)
    hdr += be16(frag) + bytes([64, proto]) + be16(0) + src + dst + options
    return hdr + payload


def ipv6(src, dst, nxt, payload, tclass=TOS, exts=()):
    body = b""
    for ext_next, ext_body in exts:  # already in wire order; ext_body padded
        body += ext_body
    first = exts[0][0] if exts else nxt
    hdr = be32(6 << 28 | tclass << 20) + be16(len(body) + len(payload))
    return hdr + bytes([first, 64]) + src + dst + body + payload


def ipv6_opts(nxt):
    """A hop-by-hop or destination options header of 8 bytes (PadN)."""
    return bytes([nxt, 0, 1, 4, 0, 0, 0, 0])


def udp(sport, dport, payload):
    return be16(sport) + be16(dport) + be16(8 + len(payload)) + be16(0) + payload


def bth(opcode, dqpn, psn, ext=b"", payload=b"", ackreq=0, pad=0, se=0):
    hdr = bytes([opcode, se << 7 | pad << 4]) + be16(0xFFFF)
    hdr += b"\x00" + be24(dqpn) + bytes([ackreq << 7]) + be24(psn)
    return hdr + ext + payload + b"\x00" * pad + b"\xde\xad\xbe\xef"  # ICRC


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def aeth(syndrome, msn):
    return bytes([syndrome]) + be24(msn)


def deth(qkey, src_qp):
    return be32(qkey) + b"\x00" + be24(src_qp)


def roce(src, dst, opcode, dqpn, psn, ext=b"", payload=b"", sport=0xC001, tos=TOS, tags=(),
         **kw):
    l4 = udp(sport, 4791, bth(opcode, dqpn, psn, ext, payload, **kw))
    return eth(0x0800, ipv4(src, dst, 17, l4, tos=tos), tags=tags)


def roce6(opcode, dqpn, psn, ext=b"", payload=b"", exts=()):
    l4 = udp(0xC002, 4791, bth(opcode, dqpn, psn, ext, payload))
    return eth(0x86DD, ipv6(IP6_A, IP6_B, 17, l4, exts=exts))


def tcp(src, dst, sport, dport, seq, ack, flags, payload=b"", options=b""):
    doff = 5 + len(options) // 4
    hdr = be16(sport) + be16(dport) + be32(seq) + be32(ack)
    hdr += bytes([doff << 4, flags]) + be16(65535) + be16(0) + be16(0) + options
    return eth(0x0800, ipv4(src, dst, 6, hdr + payload))


def gre(proto, inner, seq=None, key=None, csum=False):
    flags = (0x8000 if csum else 0) | (0x2000 if key is not None else 0)
    flags |= 0x1000 if seq is not None else 0
    hdr = be16(flags) + be16(proto)
    if csum:
        hdr += b"\x00\x00\x00\x00"
    if key is not None:
        hdr += be32(key)
    if seq is not None:
        hdr += be32(seq)
    return hdr + inner


def erspan2(inner):
    hdr = be16(0x1000 | 7) + be16(0x0001) + be32(0)  # ver 1, VLAN 7, session 1
    return gre(0x88BE, hdr + inner, seq=1)


def erspan3(inner, platform=False):
    hdr = be16(0x2000) + be16(0x0001) + be32(0x12345678)
    hdr += be16(0) + be16(0x0001 if platform else 0)  # O bit last
    if platform:
        hdr += b"\x08\x00\x00\x00\x00\x00\x00\x00"
    return gre(0x22EB, hdr + inner, seq=2)


def mirror(gre_payload):
    return eth(0x0800, ipv4(IP_C, IP_A, 47, gre_payload, tos=0))


def mac_control(opcode, body):
    frame = eth(0x8808, be16(opcode) + body, dst=bytes.fromhex("0180c2000001"))
    return frame + b"\x00" * max(0, 60 - len(frame))


def cm_mad(attr, local_comm_id, remote_comm_id, qpn):
    mad = bytes([1, 0x07, 2, 0x03]) + be16(0) + be16(0) + struct.pack(">Q", 0x42)
    mad += be16(attr) + be16(0) + be32(0)
    if attr == 0x0010:  # REQ: comm id, rsvd, service id, CA GUID, rsvd, Q_Key, QPN
        cm = be32(local_comm_id) + be32(0) + struct.pack(">QQ", 0x106, 0x1122)
        cm += be32(0) + be32(0) + be24(qpn) + b"\x00"
    else:  # REP: local comm id, remote comm id, Q_Key, QPN
        cm = be32(local_comm_id) + be32(remote_comm_id) + be32(0) + be24(qpn) + b"\x00"
    return mad + cm + b"\x00" * (256 - len(mad) - len(cm))


def rec(frame, cap=0, wire=0, dt=1):
    return struct.pack("<HHBB", len(frame), cap, wire, dt) + frame


def seed(per_call, *records):
    return bytes([per_call - 1]) + b"".join(records)


def snapped(frame, snap):
    """The first snap bytes of a frame, as a mirror copies it; the wire length stays."""
    if not snap or len(frame) <= snap:
        return rec(frame)
    return rec(frame[:snap], wire=min(255, (len(frame) - snap) // 64))


def write_message(pmtu=256, snap=0):
    """A 3-packet RDMA WRITE with immediate and its ACK."""
    data = b"\x5a" * pmtu
    return [
        snapped(roce(IP_A, IP_B, 0x06, 0x11, 100, reth(0x7F0000, 0x10, 3 * pmtu), data), snap),
        snapped(roce(IP_A, IP_B, 0x07, 0x11, 101, payload=data), snap),
        snapped(roce(IP_A, IP_B, 0x09, 0x11, 102, be32(3 * pmtu), data, ackreq=1, se=1), snap),
        snapped(roce(IP_B, IP_A, 0x11, 0x22, 102, aeth(0x1F, 1), sport=0xC002), snap),
    ]


def seeds():
    s = {}
    s["write_msg"] = seed(4, *write_message())
    s["write_truncated"] = seed(2, *write_message(4096, snap=80))
    s["read"] = seed(8,
        rec(roce(IP_A, IP_B, 0x0C, 0x11, 7, reth(0x1000, 5, 512))),
        rec(roce(IP_B, IP_A, 0x0D, 0x22, 7, aeth(0, 0), b"\x01" * 256)),
        rec(roce(IP_B, IP_A, 0x0F, 0x22, 8, aeth(0, 1), b"\x02" * 256)),
        rec(roce(IP_A, IP_B, 0x0C, 0x11, 9, reth(0x2000, 5, 512))),
        rec(roce(IP_B, IP_A, 0x10, 0x22, 9, aeth(0, 2), b"\x03" * 512)))
    s["send"] = seed(3,
        rec(roce(IP_A, IP_B, 0x00, 0x33, 1, payload=b"s" * 256)),
        rec(roce(IP_A, IP_B, 0x01, 0x33, 2, payload=b"s" * 256)),
        rec(roce(IP_A, IP_B, 0x03, 0x33, 3, be32(9), b"s" * 100, pad=2)),
        rec(roce(IP_A, IP_B, 0x05, 0x33, 4, be32(10), b"i" * 8)),
        rec(roce(IP_A, IP_B, 0x17, 0x33, 5, be32(0x77), b"v" * 8)),
        rec(roce(IP_A, IP_B, 0x04, 0x33, 6, payload=b"o" * 64)))
    s["atomic"] = seed(4,
        rec(roce(IP_A, IP_B, 0x13, 0x44, 20, reth(0x3000, 6, 0) + b"\x00" * 12)),
        rec(roce(IP_B, IP_A, 0x12, 0x55, 20, aeth(0, 3) + b"\x00" * 8)),
        rec(roce(IP_A, IP_B, 0x14, 0x44, 21, reth(0x3008, 6, 0) + b"\x00" * 12)))
    s["nak_replay"] = seed(1,
        rec(roce(IP_A, IP_B, 0x0A, 0x66, 50, reth(0, 1, 64), b"w" * 64)),
        rec(roce(IP_A, IP_B, 0x0A, 0x66, 52, reth(0, 1, 64), b"w" * 64)),
        rec(roce(IP_B, IP_A, 0x11, 0x77, 50, aeth(0x60, 1))),
        rec(roce(IP_A, IP_B, 0x0A, 0x66, 51, reth(0, 1, 64), b"w" * 64)),
        rec(roce(IP_A, IP_B, 0x0A, 0x66, 52, reth(0, 1, 64), b"w" * 64)),
        rec(roce(IP_B, IP_A, 0x11, 0x77, 52, aeth(0x21, 2))),
        rec(roce(IP_B, IP_A, 0x11, 0x77, 52, aeth(0x61, 2))))
    s["cnp_ecn"] = seed(2,
        rec(roce(IP_A, IP_B, 0x0A, 0x88, 1, reth(0, 1, 32), b"c" * 32, tos=TOS_CE)),
        rec(roce(IP_B, IP_A, 0x81, 0x99, 0, b"\x00" * 16)))
    s["ud_cm"] = seed(2,
        rec(roce(IP_A, IP_B, 0x64, 1, 0, deth(0x80010000, 1), cm_mad(0x0010, 0xAA, 0, 0x123))),
        rec(roce(IP_B, IP_A, 0x64, 1, 0, deth(0x80010000, 1), cm_mad(0x0013, 0xBB, 0xAA, 0x456))),
        rec(roce(IP_A, IP_B, 0x65, 0x200, 0, deth(7, 0x201) + be32(1), b"u" * 16)))
    s["uc_xrc"] = seed(2,
        rec(roce(IP_A, IP_B, 0x2A, 0x300, 0, reth(0, 1, 16), b"x" * 16)),
        rec(roce(IP_A, IP_B, 0xA4, 0x301, 0, be32(0x99), b"y" * 16)))
    s["vlan"] = seed(3,
        rec(roce(IP_A, IP_B, 0x0A, 0x11, 1, reth(0, 1, 8), b"v" * 8,
                 tags=((0x8100, 3 << 13 | 100),))),
        rec(eth(0x0800, ipv4(IP_A, IP_B, 17, udp(1, 4791, bth(0x04, 0x12, 1, payload=b"q"))),
                tags=((0x88A8, 10), (0x8100, 5 << 13 | 20)))),
        rec(eth(0x0800, ipv4(IP_A, IP_B, 1, b"\x08\x00" + b"\x00" * 6),
                tags=((0x88A8, 1), (0x9100, 2), (0x8100, 3), (0x8100, 4), (0x8100, 5)))))
    s["ipv6"] = seed(2,
        rec(roce6(0x0A, 0x11, 1, reth(0, 1, 32), b"6" * 32)),
        rec(roce6(0x04, 0x12, 2, payload=b"6" * 8, exts=((0, ipv6_opts(60)), (60, ipv6_opts(17))))),
        rec(eth(0x86DD, ipv6(IP6_A, IP6_B, 17, udp(1, 4791, bth(0x04, 0x13, 3, payload=b"f")),
                             exts=((44, bytes([17, 0, 0, 0, 0, 0, 0, 1])),)))),
        rec(eth(0x86DD, ipv6(IP6_A, IP6_B, 17, b"\x00" * 16,
                             exts=((44, bytes([17, 0, 0, 0x10, 0, 0, 0, 1])),)))))
    inner = roce(IP_A, IP_B, 0x0A, 0x11, 5, reth(0, 1, 128), b"m" * 128)
    s["erspan"] = seed(4,
        rec(mirror(erspan2(inner))),
        rec(mirror(erspan3(inner, platform=True)), cap=120),
        rec(mirror(erspan3(inner))),
        rec(mirror(gre(0x6558, inner, key=5, csum=True))),
        rec(mirror(gre(0x6558, mirror(gre(0x6558, mirror(gre(0x6558, inner))))))))
    s["tcp"] = seed(2,
        rec(tcp(IP_A, IP_B, 40000, 29500, 1000, 0, 0x02, options=b"\x02\x04\x05\xb4")),
        rec(tcp(IP_B, IP_A, 29500, 40000, 5000, 1001, 0x12)),
        rec(tcp(IP_A, IP_B, 40000, 29500, 1001, 5001, 0x18, b"t" * 200)),
        rec(tcp(IP_A, IP_B, 40000, 29500, 1001, 5001, 0x18, b"t" * 200)),
        rec(tcp(IP_A, IP_B, 40000, 29500, 1201, 5001, 0x18, b"t" * 100), dt=140),
        rec(tcp(IP_A, IP_B, 40000, 29500, 1301, 5001, 0x11), cap=40, wire=3))
    s["l2"] = seed(4,
        rec(mac_control(0x0101, be16(0x0009) + b"".join(be16(q) for q in range(8)))),
        rec(mac_control(0x0001, be16(0xFFFF))),
        rec(mac_control(0x0002, b"\x00" * 4)),
        rec(eth(0x0806, b"\x00\x01\x08\x00\x06\x04\x00\x01" + b"\x00" * 20)),
        rec(eth(0x88CC, b"\x02\x07\x04" + MAC_A)))
    s["ip_other"] = seed(4,
        rec(eth(0x0800, ipv4(IP_A, IP_B, 17, udp(1, 4791, bth(0x04, 0x12, 1, payload=b"o")),
                             options=b"\x01\x01\x01\x00"))),
        rec(eth(0x0800, ipv4(IP_A, IP_B, 17, b"\x00" * 24, frag=0x0010))),
        rec(eth(0x0800, ipv4(IP_A, IP_B, 17, udp(53, 53, b"d" * 12)))),
        rec(eth(0x0800, ipv4(IP_A, IP_B, 1, b"\x08\x00\x00\x00\x00\x01\x00\x01"))))
    good = roce(IP_A, IP_B, 0x04, 0x12, 1, payload=b"g" * 16)
    s["malformed"] = seed(8,
        rec(good[:10]),
        rec(good[:14] + b"\x44" + good[15:]),
        rec(good[:16] + be16(10) + good[18:]),
        rec(good[:38] + be16(4) + good[40:]),
        rec(good[:42] + b"\x1f" + good[43:]),
        rec(good[:43] + b"\x01" + good[44:]),
        rec(good[:38] + be16(20) + good[40:]),
        rec(good, cap=44),
        rec(roce(IP_A, IP_B, 0x06, 0x11, 1, reth(0, 1, 4096), b"w" * 32), cap=60),
        rec(tcp(IP_A, IP_B, 1, 2, 0, 0, 0x10)[:40]))
    ops = (0x00, 0x01, 0x02, 0x04, 0x06, 0x07, 0x08, 0x0A, 0x0C, 0x13, 0x14)
    s["opcodes_one_flow"] = seed(6, *[  # more opcodes than a flow has slots for
        rec(roce(IP_A, IP_B, op, 0x500, 10 + i,
                 reth(0, 1, 16) + (b"\x00" * 12 if op in (0x13, 0x14) else b"")
                 if op in (0x06, 0x0A, 0x0C, 0x13, 0x14) else b"",
                 b"" if op in (0x0C, 0x13, 0x14) else b"p" * 16))
        for i, op in enumerate(ops)])
    flows = []
    for i in range(12):  # more flows than the fuzz engine's table holds
        flows.append(rec(roce(IP_A, IP_B, 0x0A, 0x1000 + i, i, reth(0, 1, 64), b"f" * 64),
                         dt=(1 if i % 4 else 200)))
    flows += [rec(roce(IP_A, IP_B, 0x0A, 0x1000, 99, reth(0, 1, 64), b"f" * 64), dt=252)]
    s["many_flows"] = seed(5, *flows)
    return s


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.unlink(os.path.join(OUT, name))
    for name, data in sorted(seeds().items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
