#!/usr/bin/env python3
"""Split an Ethernet pcap into the views of two vantage points.

    split_by_hosts.py IN.pcap HOSTS_A OUT_A.pcap OUT_B.pcap

HOSTS_A is a comma-separated list of IPv4 addresses. OUT_A gets every frame
to or from a host of HOSTS_A (what probes on those hosts see), OUT_B every
frame to or from any other host; traffic between the two groups is in both.
Frames without IPv4 go to OUT_A. Reads classic pcap (micro- or nanosecond).
"""
import socket
import struct
import sys


def ipv4_addrs(frame):
    """(src, dst) of an Ethernet frame's IPv4 header under any VLAN tags, or None."""
    off, ethertype = 12, None
    while off + 2 <= len(frame):
        ethertype = struct.unpack_from("!H", frame, off)[0]
        if ethertype in (0x8100, 0x88A8):
            off += 4
            continue
        off += 2
        break
    if ethertype != 0x0800 or off + 20 > len(frame):
        return None
    return socket.inet_ntoa(frame[off + 12:off + 16]), socket.inet_ntoa(frame[off + 16:off + 20])


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, hosts, out_a, out_b = sys.argv[1], set(sys.argv[2].split(",")), sys.argv[3], sys.argv[4]
    data = open(src, "rb").read()
    magic = data[:4]
    endian = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<",
              b"\xa1\xb2\xc3\xd4": ">", b"\xa1\xb2\x3c\x4d": ">"}.get(magic)
    if endian is None:
        sys.exit(f"{src}: not a classic pcap file")
    a, b = [data[:24]], [data[:24]]
    off, n_a, n_b = 24, 0, 0
    while off + 16 <= len(data):
        incl = struct.unpack_from(endian + "I", data, off + 8)[0]
        rec = data[off:off + 16 + incl]
        addrs = ipv4_addrs(rec[16:])
        in_a = addrs is None or addrs[0] in hosts or addrs[1] in hosts
        in_b = addrs is not None and (addrs[0] not in hosts or addrs[1] not in hosts)
        if in_a:
            a.append(rec)
            n_a += 1
        if in_b:
            b.append(rec)
            n_b += 1
        off += 16 + incl
    open(out_a, "wb").write(b"".join(a))
    open(out_b, "wb").write(b"".join(b))
    print(f"split {src}: {n_a} frames to {out_a}, {n_b} to {out_b}")


if __name__ == "__main__":
    main()
