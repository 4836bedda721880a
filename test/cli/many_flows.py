#!/usr/bin/env python3
"""A capture of many distinct RoCE flows, one packet each (198.18.0.0/15).

    many_flows.py FLOWS OUT.pcap [HEAVY_EVERY]

Flow i: 198.18.0.1 -> 198.19.(i >> 16).((i >> 8) & 255), destination QPN
(i & 0xffff) + 1, one RC SEND-only packet 1 us after the previous flow's; a
64-byte payload, 1,024 bytes every HEAVY_EVERY-th flow (0: none). Used by
test_memory_budget.py and by the memory figures of docs/performance.md.
"""
import struct
import sys

T0 = 1_700_000_000


def frame(qpn, dst, payload_len):
    eth = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    bth = struct.pack("!BBHII", 0x04, 0x40, 0xFFFF, qpn, 0)  # RC SEND only
    udp_len = 8 + len(bth) + payload_len + 4
    udp = struct.pack("!HHHH", 49152, 4791, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                     bytes([198, 18, 0, 1]), dst)
    return eth + ip + udp + bth + bytes(payload_len) + bytes(4)


def heavy(i, every):
    return every > 0 and i % every == 0


def flow_key(i):
    """(dst, qpn) of flow i, as the report writes them."""
    return f"198.19.{i >> 16}.{(i >> 8) & 255}", (i & 0xFFFF) + 1


def write(path, flows, heavy_every=0):
    """Write the capture; returns its wire bytes."""
    total = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(flows):
            fr = frame((i & 0xFFFF) + 1, bytes([198, 19, i >> 16, (i >> 8) & 255]),
                       1024 if heavy(i, heavy_every) else 64)
            t = i * 1000
            f.write(struct.pack("<IIII", T0 + t // 10**9, t % 10**9, len(fr), len(fr)) + fr)
            total += len(fr)
    return total


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    write(sys.argv[2], int(sys.argv[1]), int(sys.argv[3]) if len(sys.argv) == 4 else 0)
