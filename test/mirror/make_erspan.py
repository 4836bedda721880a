#!/usr/bin/env python3
"""Write ERSPAN mirror captures of one small RoCEv2 exchange, for commtap-mirror.

The inner traffic: 16 host pairs in 198.18.0.0/16 (no two with the same
src XOR dst, which is all a symmetric Toeplitz key sees), each an RC WRITE of 8
packets one way and an ACK back, at 10 us steps. Every copy is encapsulated
by a mirror session (GRE to a collector, 198.19.255.0/24):

  make_erspan.py plain OUT.pcap      the inner frames, unwrapped
  make_erspan.py ii OUT.pcap         ERSPAN type II copies (session 1)
  make_erspan.py iii OUT.pcap        ERSPAN type III copies (session 2)
  make_erspan.py both OUT.pcap       every packet twice: the type II copy, and 1 us
                                     later the type III copy of another session,
                                     one hop on (inner TTL one less)
"""
import struct
import sys

PAIRS = 16
WRITE_PACKETS = 8
MTU = 1024
STEP_NS = 10_000
BASE_NS = 1_700_000_000_000_000_000


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload, ttl=64):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 26 << 2, 20 + len(payload), 0, 0x4000, ttl, proto,
                      0, bytes(src), bytes(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def eth(payload, ethertype=0x0800, mac_src=2, mac_dst=4):
    return (bytes([2, 0, 0, 0, 0, mac_dst]) + bytes([2, 0, 0, 0, 0, mac_src]) +
            struct.pack("!H", ethertype) + payload)


def roce(src, dst, opcode, dqpn, psn, ext, payload_len, ttl=64):
    bth = struct.pack("!BBHII", opcode, 0, 0xFFFF, dqpn & 0xFFFFFF, psn & 0xFFFFFF)
    body = bth + ext + bytes(payload_len) + bytes(4)  # ICRC
    udp = struct.pack("!HHHH", 0xC000 | (dqpn & 0x3FFF), 4791, 8 + len(body), 0) + body
    return eth(ipv4(src, dst, 17, udp, ttl))


def inner_frames(ttl=64):
    """(ts_ns, frame) of the whole exchange, in time order."""
    out = []
    t = BASE_NS
    for p in range(PAIRS):
        # the symmetric RSS key hashes src XOR dst: pairs that differ in it
        a, b = (198, 18, 1, p + 1), (198, 18, 2, 3 * p + 7)
        qp_a, qp_b = 0x100 + p, 0x200 + p
        size = WRITE_PACKETS * MTU
        for k in range(WRITE_PACKETS):
            if k == 0:
                op, ext = 0x06, struct.pack("!QII", 0x7F0000000000, 0x1234, size)  # FIRST, RETH
            elif k == WRITE_PACKETS - 1:
                op, ext = 0x08, b""  # LAST
            else:
                op, ext = 0x07, b""  # MIDDLE
            out.append((t, roce(a, b, op, qp_b, 100 + k, ext, MTU, ttl)))
            t += STEP_NS
        aeth = struct.pack("!I", 0x1F << 24 | 1)
        out.append((t, roce(b, a, 0x11, qp_a, 100 + WRITE_PACKETS - 1, aeth, 0, ttl)))
        t += STEP_NS
    return out


def gre_erspan(inner, version, seq, session, collector_src):
    if version == 2:
        gre = struct.pack("!HHI", 0x1000, 0x88BE, seq)  # S bit: a sequence number
        hdr = struct.pack("!II", 1 << 28 | session, 0)  # version 1 (type II), session
    else:
        gre = struct.pack("!HHI", 0x1000, 0x22EB, seq)
        hdr = struct.pack("!III", 2 << 28 | session, 0, 0)  # version 2 (type III), no subheader
    outer = ipv4(collector_src, (198, 19, 255, 100), 47, gre + hdr + inner)
    return eth(outer, mac_src=0x10 + session, mac_dst=0x20)


def write(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))  # ns timestamps
        for ts, data in frames:
            sec, nsec = divmod(ts, 1_000_000_000)
            f.write(struct.pack("<IIII", sec, nsec, len(data), len(data)) + data)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("plain", "ii", "iii", "both"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, path = sys.argv[1:]
    frames = inner_frames()
    if kind == "ii":
        frames = [(t, gre_erspan(f, 2, i, 1, (198, 19, 255, 1))) for i, (t, f) in enumerate(frames)]
    elif kind == "iii":
        frames = [(t, gre_erspan(f, 3, i, 2, (198, 19, 255, 2))) for i, (t, f) in enumerate(frames)]
    elif kind == "both":
        later = inner_frames(ttl=63)
        out = []
        for i, ((t, f), (_, g)) in enumerate(zip(frames, later)):
            out.append((t, gre_erspan(f, 2, i, 1, (198, 19, 255, 1))))
            out.append((t + 1000, gre_erspan(g, 3, i, 2, (198, 19, 255, 2))))
        frames = out
    write(path, frames)
    return 0


if __name__ == "__main__":
    sys.exit(main())
