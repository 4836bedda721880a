"""A small pure-python pcap reader and cutter (Ethernet, IPv4, TCP).

Bytes per frame are counted as commtap counts them: the Ethernet header
plus the IP total length, whatever the snap length kept.
"""
import struct

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D


class Frame:
    __slots__ = ("ts_ns", "wire", "src", "dst", "sport", "dport", "payload")


def _header(f):
    head = f.read(24)
    if len(head) < 24:
        raise ValueError("not a pcap file (%d bytes)" % len(head))
    for endian in ("<", ">"):
        magic, _, _, _, _, _, link = struct.unpack(endian + "IHHiIII", head)
        if magic in (MAGIC_US, MAGIC_NS):
            return head, endian, 1 if magic == MAGIC_NS else 1000, link
    raise ValueError("not a pcap file (magic %08x)" % struct.unpack("<I", head[:4]))


def records(path):
    """(ts_ns, record header, data, original length) of every record."""
    with open(path, "rb") as f:
        _, endian, mult, link = _header(f)
        if link != 1:
            raise ValueError("%s: link type %d, not Ethernet" % (path, link))
        rec = struct.Struct(endian + "IIII")
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, frac, caplen, orig = rec.unpack(h)
            yield sec * 1000000000 + frac * mult, h, f.read(caplen), orig


def tcp_frames(path):
    """Frame objects for the IPv4 TCP frames of a capture."""
    for ts, _, d, _ in records(path):
        if len(d) < 34 or d[12:14] != b"\x08\x00" or d[23] != 6:
            continue
        ihl = (d[14] & 0xF) * 4
        total = struct.unpack_from(">H", d, 16)[0]
        if len(d) < 14 + ihl + 13:
            continue
        fr = Frame()
        fr.ts_ns = ts
        fr.wire = 14 + total
        fr.src = "%d.%d.%d.%d" % tuple(d[26:30])
        fr.dst = "%d.%d.%d.%d" % tuple(d[30:34])
        fr.sport, fr.dport = struct.unpack_from(">HH", d, 14 + ihl)
        fr.payload = total - ihl - (d[14 + ihl + 12] >> 4) * 4
        yield fr


def max_wire(path):
    """The longest frame (as on the wire) of a capture."""
    return max((orig for _, _, _, orig in records(path)), default=0)


def cut(src, dst, t0_ns, t1_ns):
    """Copy the records with t0 <= ts < t1 into a new capture; their count."""
    n = 0
    with open(src, "rb") as f:
        head = _header(f)[0]
    with open(dst, "wb") as out:
        out.write(head)
        for ts, h, d, _ in records(src):
            if t0_ns <= ts < t1_ns:
                out.write(h + d)
                n += 1
    return n
