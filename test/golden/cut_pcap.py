#!/usr/bin/env python3
"""Cut every frame of a classic pcap file to SNAP bytes, as a SPAN session does.

The original lengths stay: the copy says how long each frame was on the wire.

  cut_pcap.py SNAP IN.pcap OUT.pcap
"""
import struct
import sys


def cut(snap, src, dst):
    with open(src, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise ValueError("%s: not a classic pcap file" % src)
    out = bytearray(data[:24])
    struct.pack_into(end + "I", out, 16, snap)  # the file's snap length
    off = 24
    while off + 16 <= len(data):
        sec, frac, cap, orig = struct.unpack_from(end + "IIII", data, off)
        frame = data[off + 16:off + 16 + cap][:snap]
        out += struct.pack(end + "IIII", sec, frac, len(frame), orig) + frame
        off += 16 + cap
    with open(dst, "wb") as f:
        f.write(out)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    cut(int(sys.argv[1]), sys.argv[2], sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
