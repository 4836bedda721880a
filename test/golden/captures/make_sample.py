#!/usr/bin/env python3
"""Write commtap_sample.pcap: a small, deterministic RoCEv2 + TCP capture.

It exercises what the real captures in ../shared/pcaps do not: a ring of
RDMA WRITE messages at a 4 KiB MTU with ACKs, a VLAN tag with a priority, a
lost packet answered by a NAK and a go-back-N replay, a READ, ECN-CE marks
and the CNPs they trigger, a PFC pause frame, an ERSPAN II mirror copy,
header-truncated copies, an IPv6 flow and a TCP flow. Addresses are from
198.18.0.0/15 and 2001:db8::/32 (documentation ranges).

  make_sample.py OUT.pcap
"""
import struct
import sys

MTU = 4096
SNAP = 128  # header-truncated mirror copies, like a SPAN session


class Writer:
    def __init__(self, path):
        self.f = open(path, "wb")
        # pcap, nanosecond timestamps (magic a1b23c4d), Ethernet, snaplen 65535
        self.f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))

    def frame(self, ts_ns, data, snap=None):
        cap = data if snap is None else data[:snap]
        sec, nsec = divmod(ts_ns, 1_000_000_000)
        self.f.write(struct.pack("<IIII", sec, nsec, len(cap), len(data)))
        self.f.write(cap)


def eth(payload, ethertype, vlan=None, src=b"\x02\x00\x00\x00\x00\x01", dst=b"\x02\x00\x00\x00\x00\x02"):
    hdr = dst + src
    if vlan is not None:
        pcp, vid = vlan
        hdr += struct.pack(">HH", 0x8100, pcp << 13 | vid)
    return hdr + struct.pack(">H", ethertype) + payload


def ipv4(src, dst, proto, payload, tos=0x00):
    s = bytes(int(x) for x in src.split("."))
    d = bytes(int(x) for x in dst.split("."))
    return struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), 0, 0x4000, 64, proto, 0, s, d) + payload


def ipv6(src, dst, nxt, payload, tclass=0):
    import ipaddress
    first = 6 << 28 | tclass << 20
    return struct.pack(">IHBB", first, len(payload), nxt, 64) + ipaddress.IPv6Address(src).packed + ipaddress.IPv6Address(dst).packed + payload


def udp(sport, payload, dport=4791):
    return struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload


def bth(opcode, dqpn, psn, ackreq=0, pad=0):
    return struct.pack(">BBHII", opcode, pad << 4, 0xFFFF, dqpn & 0xFFFFFF, (ackreq << 31) | (psn & 0xFFFFFF))


def reth(length, va=0x7F0000000000, rkey=0x1234):
    return struct.pack(">QII", va, rkey, length)


def aeth(syndrome, msn):
    return struct.pack(">I", syndrome << 24 | (msn & 0xFFFFFF))


def roce(src, dst, sport, hdrs, payload_len, tos=0x02, vlan=None, v6=False):
    icrc = b"\x00\x00\x00\x00"
    body = udp(sport, hdrs + bytes(payload_len) + icrc)
    if v6:
        return eth(ipv6(src, dst, 17, body, tclass=tos), 0x86DD, vlan)
    return eth(ipv4(src, dst, 17, body, tos), 0x0800, vlan)


def tcp(src, dst, sport, dport, seq, flags, payload_len):
    hdr = struct.pack(">HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    return eth(ipv4(src, dst, 6, hdr + bytes(payload_len)), 0x0800)


def erspan2(inner, seq):
    gre = struct.pack(">HHI", 0x1000, 0x88BE, seq)
    erspan = struct.pack(">II", 0x1000_0001, 0)  # version 1 (type II), session 1
    return eth(ipv4("198.19.255.1", "198.19.255.2", 47, gre + erspan + inner), 0x0800)


def main(path):
    w = Writer(path)
    t = 1_700_000_000_000_000_000
    hosts = ["198.18.0.%d" % i for i in (1, 2, 3, 4)]
    psn = {}
    # A ring: host i writes 64 KiB messages to host i+1 over QP 0x100+i, acked every 4 packets.
    for it in range(3):
        for i, src in enumerate(hosts):
            dst = hosts[(i + 1) % 4]
            qp, back = 0x100 + (i + 1) % 4, 0x100 + i
            for m in range(2):
                n = 16
                for k in range(n):
                    p = psn.get(qp, 1000 * (i + 1))
                    op = 0x06 if k == 0 else (0x09 if k == n - 1 else 0x07)
                    hdr = bth(op, qp, p, ackreq=(k % 4 == 3)) + (reth(n * MTU) if k == 0 else b"")
                    if k == n - 1:
                        hdr += struct.pack(">I", 0xABCD)  # ImmDt
                    w.frame(t, roce(src, dst, 49152 + i, hdr, MTU, vlan=(3, 100)), SNAP)
                    psn[qp] = p + 1
                    t += 350
                    if k % 4 == 3:
                        w.frame(t, roce(dst, src, 49152 + i, bth(0x11, back, p) + aeth(0x1F, m), 0, vlan=(3, 100)))
                        t += 200
                t += 2000
        t += 5_000_000
    # Loss: PSN 5000 2 is missing, the receiver NAKs (sequence error), the sender goes back.
    src, dst, qp = "198.18.0.5", "198.18.0.6", 0x200
    seq = [5000, 5001, 5003, 5004]
    for k, p in enumerate(seq):
        op = 0x06 if k == 0 else 0x07
        w.frame(t, roce(src, dst, 50000, bth(op, qp, p) + (reth(6 * 1024) if k == 0 else b""), 1024))
        t += 1000
    w.frame(t, roce(dst, src, 50000, bth(0x11, 0x201, 5002) + aeth(0x60, 1), 0))
    t += 1000
    for k, p in enumerate([5002, 5003, 5004, 5005]):
        op = 0x08 if p == 5005 else 0x07
        w.frame(t, roce(src, dst, 50000, bth(op, qp, p, ackreq=(p == 5005)), 1024))
        t += 1000
    w.frame(t, roce(dst, src, 50000, bth(0x11, 0x201, 5005) + aeth(0x1F, 2), 0))
    t += 1000
    # A READ of 2 KiB answered by two 1 KiB responses (path MTU 1024).
    w.frame(t, roce(src, dst, 50000, bth(0x0C, qp, 5006) + reth(2048), 0))
    t += 2000
    w.frame(t, roce(dst, src, 50000, bth(0x0D, 0x201, 5006) + aeth(0x1F, 3), 1024), SNAP)
    t += 400
    w.frame(t, roce(dst, src, 50000, bth(0x0F, 0x201, 5007) + aeth(0x1F, 3), 1024), SNAP)
    t += 2000
    # Congestion: CE-marked writes, CNPs back to the sender's QP, a PFC pause on priority 3.
    for k in range(4):
        w.frame(t, roce(src, dst, 50000, bth(0x0A, qp, 5008 + k) + reth(512), 512, tos=0x03))
        t += 500
        w.frame(t, roce(dst, src, 50001, bth(0x81, 0x201, 0) + bytes(16), 0, tos=0x02 | (26 << 2)))
        t += 500
    pfc = struct.pack(">HH8H", 0x0101, 1 << 3, 0, 0, 0, 0xFFFF, 0, 0, 0, 0)
    w.frame(t, eth(pfc + bytes(26), 0x8808, dst=b"\x01\x80\xc2\x00\x00\x01"))
    t += 1000
    # An ERSPAN II mirror copy of one SEND, header-truncated.
    inner = roce("198.18.0.7", "198.18.0.8", 50002, bth(0x04, 0x300, 1), 2048)
    w.frame(t, erspan2(inner, 1), 14 + 20 + 8 + 8 + 60)
    t += 1000
    # IPv6 RoCE: one two-packet SEND.
    w.frame(t, roce("2001:db8::1", "2001:db8::2", 50003, bth(0x00, 0x400, 7), MTU, v6=True), SNAP)
    t += 800
    w.frame(t, roce("2001:db8::1", "2001:db8::2", 50003, bth(0x02, 0x400, 8), 100, v6=True))
    t += 1000
    # TCP (NCCL socket transport): two messages separated by an idle gap, one retransmission.
    seq0 = 100000
    w.frame(t, tcp("198.18.1.1", "198.18.1.2", 40000, 43210, seq0 - 1, 0x02, 0))
    t += 10000
    for k in range(4):
        w.frame(t, tcp("198.18.1.1", "198.18.1.2", 40000, 43210, seq0 + k * 1448, 0x18, 1448), SNAP)
        t += 1000
    w.frame(t, tcp("198.18.1.1", "198.18.1.2", 40000, 43210, seq0 + 1448, 0x18, 1448), SNAP)
    t += 5_000_000
    for k in range(4, 6):
        w.frame(t, tcp("198.18.1.1", "198.18.1.2", 40000, 43210, seq0 + k * 1448, 0x18, 1448), SNAP)
        t += 1000
    w.frame(t, tcp("198.18.1.2", "198.18.1.1", 43210, 40000, 555, 0x10, 0))
    # An ARP request: counted, not a flow.
    arp = struct.pack(">HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, b"\x02" * 6, bytes([198, 18, 0, 1]), bytes(6), bytes([198, 18, 0, 2]))
    w.frame(t + 1000, eth(arp, 0x0806, dst=b"\xff" * 6))
    w.f.close()


if __name__ == "__main__":
    main(sys.argv[1])
