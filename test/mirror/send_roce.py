#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Send crafted RoCEv2 RC SEND_ONLY frames on an interface (raw socket).
usage: send_roce.py IFACE DST_MAC SRC_IP DST_IP QPN COUNT PAYLOAD
Only for the namespaces and 198.18.0.0/15 addresses the test creates."""
import ipaddress
import socket
import struct
import sys


def ip_checksum(h):
    s = sum(struct.unpack("!%dH" % (len(h) // 2), h))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def main():
    iface, dst_mac, src, dst, qpn, count, payload = sys.argv[1:8]
    net = ipaddress.ip_network("198.18.0.0/15")
    if ipaddress.ip_address(src) not in net or ipaddress.ip_address(dst) not in net:
        sys.exit("send_roce.py: addresses must be in 198.18.0.0/15")
    qpn, count, payload = int(qpn, 0), int(count), int(payload)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    src_mac = s.getsockname()[4]
    for psn in range(count):
        bth = struct.pack("!BBHB3sB3s", 0x04, 0x40, 0xffff, 0, qpn.to_bytes(3, "big"), 0,
                          psn.to_bytes(3, "big"))
        body = bth + bytes(payload) + bytes(4)  # payload, ICRC
        udp = struct.pack("!HHHH", 49152 + (qpn & 0xff), 4791, 8 + len(body), 0) + body
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0x68, 20 + len(udp), psn & 0xffff, 0x4000, 64,
                         17, 0, socket.inet_aton(src), socket.inet_aton(dst))
        ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
        frame = bytes.fromhex(dst_mac.replace(":", "")) + src_mac + b"\x08\x00" + ip + udp
        s.send(frame)


if __name__ == "__main__":
    main()
