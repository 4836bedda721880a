#!/usr/bin/python3
"""Negative controls over RoCEv2, built packet by packet with scapy's RoCE
layers (Debian python3-scapy, in /usr/bin/python3), independent of
`commtap synth`: traffic where the right answer is "no training job here"
and every flow's class is Other.

  negctl_roce.py OUTDIR [--seed N] [SCENARIO ...]     (default: all of them)

writes OUTDIR/SCENARIO.pcap (snap length 128, true wire lengths) and
OUTDIR/SCENARIO.truth.json (commtap.truth/v1). Deterministic: the same
bytes on every run for a seed (default 1, the frozen held-out copies';
other seeds change QP numbers, PSNs, ports and timing, for development).

Scenarios, modelled on perftest (ib_*_lat / ib_*_bw) as run by hand:
  perftest-rc-write-lat  ib_write_lat -a: RC RDMA WRITE ping-pong, sizes
                         2 B .. 8 KiB, every write acknowledged (IPv4)
  perftest-rc-send-lat   ib_send_lat: RC SEND ping-pong, 2 B .. 4 KiB
  perftest-ud-send-lat   ib_send_lat -c UD: UD SEND ping-pong over IPv6
                         (the capture the issue saw classed PP), 2 B .. 4 KiB
  perftest-ud-send-lat-2B  the same with perftest's defaults: 2 B, 1000 times
  perftest-rc-write-bw   ib_write_bw: 64 KiB RDMA WRITEs back to back in
                         one direction for 25 ms, ACKs coalesced
Each begins and ends with perftest's out-of-band TCP exchange (port 18515),
as a real run does. IPv6 addresses are from the benchmarking prefix
2001:2::/48, the IPv6 twin of 198.18.0.0/15.
"""
import os
import random
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from scapy.contrib.roce import AETH, BTH  # noqa: E402
from scapy.fields import IntField, XBitField, XByteField, XIntField, XLongField  # noqa: E402
from scapy.layers.inet import IP, TCP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Packet, Raw  # noqa: E402

import pcapio  # noqa: E402
import truthfile  # noqa: E402

SNAPLEN = 128
MTU = 4096
ROCE_PORT = 4791
OOB_PORT = 18515
# opcodes (IBA vol. 1, 9.2)
RC_SEND_ONLY = 0x04
RC_WRITE_FIRST, RC_WRITE_MIDDLE, RC_WRITE_LAST, RC_WRITE_ONLY = 0x06, 0x07, 0x08, 0x0A
RC_ACK = 0x11
UD_SEND_ONLY = 0x64


class RETH(Packet):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dmalen", 0)]


class DETH(Packet):
    name = "DETH"
    fields_desc = [XIntField("qkey", 0), XByteField("resv", 0), XBitField("srcqp", 0, 24)]


def icrc(frame):
    """RoCEv2 ICRC (IBA annex A17): a CRC-32 of 8 bytes of ones, then the IP
    datagram with the fields routers may change (IPv4 TOS, TTL, checksum;
    IPv6 traffic class, flow label, hop limit), the UDP checksum and BTH's
    FECN/BECN/reserved byte set to ones, the ICRC itself left out. scapy
    computes it for IPv4 only and slowly; this is checked against scapy's
    for IPv4 (check_icrc)."""
    ip = bytearray(frame[14:-4])
    if ip[0] >> 4 == 4:
        ihl = (ip[0] & 0x0F) * 4
        ip[1] = 0xFF
        ip[8] = 0xFF
        ip[10:12] = b"\xff\xff"
    else:
        ihl = 40
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF
    ip[ihl + 6 : ihl + 8] = b"\xff\xff"
    ip[ihl + 8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip)) & 0xFFFFFFFF)


def check_icrc():
    a, b = Qp(random.Random(1), Host(1)), Qp(random.Random(2), Host(2))
    pkt = l3(a, b) / UDP(sport=a.sport, dport=ROCE_PORT, chksum=0) / BTH(
        opcode=RC_WRITE_ONLY, dqpn=b.qpn, psn=5) / RETH(dmalen=4) / Raw(b"abcd")
    frame = bytes(pkt)
    if frame[-4:] != icrc(frame):
        raise SystemExit("negctl_roce.py: ICRC disagrees with scapy's: %s vs %s"
                         % (frame[-4:].hex(), icrc(frame).hex()))


class Host:
    def __init__(self, idx, v6=False):
        self.mac = "02:c7:00:00:00:%02x" % idx
        self.addr = "2001:2::%x" % idx if v6 else "198.18.0.%d" % idx
        self.v6 = v6


class Qp:
    """One side of a queue pair: its number, next PSN and UDP source port."""

    def __init__(self, rng, host):
        self.host = host
        self.qpn = rng.randrange(0x100, 0x20000)
        self.psn = rng.randrange(0, 1 << 24)
        self.msn = 0
        self.sport = 0xC000 | (self.qpn * 2654435761 >> 8) & 0x3FFF

    def next_psn(self):
        psn = self.psn
        self.psn = (self.psn + 1) & 0xFFFFFF
        return psn


class Capture:
    def __init__(self, path):
        self.w = pcapio.Writer(path, SNAPLEN)
        self.ns = 1_700_000_000 * 1_000_000_000
        self.gbps = 100.0

    def put(self, pkt, gap_ns=0):
        frame = pkt if isinstance(pkt, bytes) else bytes(pkt)
        self.ns += gap_ns
        self.w.write(self.ns, frame, max(len(frame), 60))
        self.ns += int(len(frame) * 8 / self.gbps) + 1

    def wait(self, ns):
        self.ns += int(ns)


def l3(src, dst):
    if src.host.v6:
        return Ether(src=src.host.mac, dst=dst.host.mac) / IPv6(
            src=src.host.addr, dst=dst.host.addr, tc=0x02, hlim=64)
    return Ether(src=src.host.mac, dst=dst.host.mac) / IP(
        src=src.host.addr, dst=dst.host.addr, tos=0x02, ttl=64, flags="DF", id=0)


TEMPLATES = {}


def roce(src, dst, opcode, payload=b"", ext=None, ackreq=0, psn=None):
    """A RoCEv2 frame as bytes. scapy builds each distinct header once; the
    PSN, the AETH's MSN and the ICRC are then patched per packet."""
    key = (src.qpn, dst.qpn, opcode, len(payload), bytes(ext) if ext is not None else b"",
           ackreq)
    frame = TEMPLATES.get(key)
    if frame is None:
        pad = -len(payload) % 4
        body = BTH(opcode=opcode, padcount=pad, dqpn=dst.qpn, ackreq=ackreq, psn=0, icrc=0)
        if ext is not None:
            body = body / ext
        body = body / Raw(payload + b"\0" * pad)
        frame = bytes(l3(src, dst) / UDP(sport=src.sport, dport=ROCE_PORT, chksum=0) / body)
        TEMPLATES[key] = frame
    frame = bytearray(frame)
    bth = 14 + (40 if src.host.v6 else 20) + 8
    psn = src.next_psn() if psn is None else psn
    frame[bth + 9 : bth + 12] = psn.to_bytes(3, "big")
    if opcode == RC_ACK:
        frame[bth + 13 : bth + 16] = src.msn.to_bytes(3, "big")
    frame[-4:] = icrc(frame)
    return bytes(frame)


def ack(responder, requester, psn):
    responder.msn = (responder.msn + 1) & 0xFFFFFF
    return roce(responder, requester, RC_ACK, ext=AETH(syndrome=0x1F), psn=psn)


class TcpConn:
    """perftest's out-of-band exchange: a TCP connection carrying the QP
    attributes (a short text message each way) and the final sync."""

    def __init__(self, rng, client, server):
        self.c, self.s = client, server
        self.cport = rng.randrange(32768, 61000)
        self.seq = {0: rng.randrange(1 << 32), 1: rng.randrange(1 << 32)}

    def seg(self, cap, side, flags, data=b""):
        a, b = (self.c, self.s) if side == 0 else (self.s, self.c)
        sport, dport = (self.cport, OOB_PORT) if side == 0 else (OOB_PORT, self.cport)
        ip = (IPv6(src=a.addr, dst=b.addr) if a.v6 else
              IP(src=a.addr, dst=b.addr, flags="DF", id=0))
        pkt = (Ether(src=a.mac, dst=b.mac) / ip /
               TCP(sport=sport, dport=dport, flags=flags, seq=self.seq[side],
                   ack=self.seq[1 - side] if "A" in flags else 0, window=64240) / Raw(data))
        self.seq[side] = (self.seq[side] + len(data) + (1 if flags in ("S", "SA", "FA") else 0)) \
            & 0xFFFFFFFF
        cap.put(pkt, 30_000)

    def open(self, cap, qp_c, qp_s):
        self.seg(cap, 0, "S")
        self.seg(cap, 1, "SA")
        self.seg(cap, 0, "A")
        for side, qp in ((0, qp_c), (1, qp_s)):
            msg = ("%04x:%06x:%06x:%08x:%016x:%s" % (
                1, qp.qpn, qp.psn, 0x1234, 0x7F0000000000, qp.host.addr)).encode()
            self.seg(cap, side, "PA", msg)
            self.seg(cap, 1 - side, "A")

    def close(self, cap):
        for side in (0, 1):
            self.seg(cap, side, "PA", b"\0" * 16)
        self.seg(cap, 0, "FA")
        self.seg(cap, 1, "FA")
        self.seg(cap, 0, "A")


def message(cap, src, dst, size, first, middle, last, only, gap_ns, reth=True):
    """One RC message of size bytes as MTU-sized packets; returns the last PSN."""
    if size <= MTU:
        ext = RETH(va=0x7F0000001000, rkey=0x1234, dmalen=size) if reth else None
        cap.put(roce(src, dst, only, b"\xab" * size, ext, ackreq=1), gap_ns)
        return (src.psn - 1) & 0xFFFFFF
    npk = (size + MTU - 1) // MTU
    for i in range(npk):
        n = min(MTU, size - i * MTU)
        op = first if i == 0 else last if i == npk - 1 else middle
        ext = RETH(va=0x7F0000001000, rkey=0x1234, dmalen=size) if i == 0 and reth else None
        cap.put(roce(src, dst, op, b"\xab" * n, ext, ackreq=int(i == npk - 1)), gap_ns)
        gap_ns = 0
    return (src.psn - 1) & 0xFFFFFF


def sizes(top):
    s = 2
    while s <= top:
        yield s
        s *= 2


def lat(cap, rng, a, b, kind, top, iters):
    """Ping-pong: a sends, b answers when the message lands, and so on."""
    for size in sizes(top):
        for _ in range(iters):
            for src, dst in ((a, b), (b, a)):
                wire_ns = 1200 + rng.randrange(0, 300)  # one-way through a switch
                if kind == "write":
                    psn = message(cap, src, dst, size, RC_WRITE_FIRST, RC_WRITE_MIDDLE,
                                  RC_WRITE_LAST, RC_WRITE_ONLY, wire_ns)
                    cap.put(ack(dst, src, psn), 600)
                elif kind == "send":
                    psn = message(cap, src, dst, size, 0x00, 0x01, 0x02, RC_SEND_ONLY,
                                  wire_ns, reth=False)
                    cap.put(ack(dst, src, psn), 600)
                else:  # UD: one datagram, no acknowledgement
                    deth = DETH(qkey=0x11111111, srcqp=src.qpn)
                    cap.put(roce(src, dst, UD_SEND_ONLY, b"\xab" * size, deth), wire_ns)
        cap.wait(20_000)


def bw(cap, rng, a, b, msg, duration_ns):
    """ib_write_bw: a keeps its send queue full; b acknowledges every 8th message."""
    end = cap.ns + duration_ns
    n = 0
    while cap.ns < end:
        psn = message(cap, a, b, msg, RC_WRITE_FIRST, RC_WRITE_MIDDLE, RC_WRITE_LAST,
                      RC_WRITE_ONLY, 0)
        n += 1
        if n % 8 == 0:
            cap.put(ack(b, a, psn), 0)


def run(scenario, outdir, seed=1):
    rng = random.Random("%s:%d" % (scenario, seed))
    v6 = scenario.startswith("perftest-ud-")
    a, b = Host(11, v6), Host(12, v6)
    qa, qb = Qp(rng, a), Qp(rng, b)
    pcap = os.path.join(outdir, scenario + ".pcap")
    cap = Capture(pcap)
    oob = TcpConn(rng, a, b)
    oob.open(cap, qa, qb)
    cap.wait(2_000_000)
    if scenario == "perftest-rc-write-lat":
        lat(cap, rng, qa, qb, "write", 8192, 200)
    elif scenario == "perftest-rc-send-lat":
        lat(cap, rng, qa, qb, "send", 4096, 200)
    elif scenario == "perftest-ud-send-lat":
        lat(cap, rng, qa, qb, "ud", 4096, 200)
    elif scenario == "perftest-ud-send-lat-2B":
        lat(cap, rng, qa, qb, "ud", 2, 1000)
    elif scenario == "perftest-rc-write-bw":
        bw(cap, rng, qa, qb, 65536, 25_000_000)
    else:
        raise SystemExit("negctl_roce.py: unknown scenario %r (known: %s)"
                         % (scenario, ", ".join(SCENARIOS)))
    cap.wait(2_000_000)
    oob.close(cap)
    cap.w.close()
    truthfile.write(pcap, os.path.join(outdir, scenario + ".truth.json"), scenario, "roce",
                    lambda key: "Other",
                    "perftest-style RoCEv2 test built with scapy; no training job")
    return pcap


SCENARIOS = ["perftest-rc-write-lat", "perftest-rc-send-lat", "perftest-ud-send-lat",
             "perftest-ud-send-lat-2B", "perftest-rc-write-bw"]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    args = sys.argv[1:]
    seed = 1
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i : i + 2]
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    check_icrc()
    for s in args[1:] or SCENARIOS:
        print(run(s, outdir, seed))


if __name__ == "__main__":
    main()
