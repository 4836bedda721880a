"""Classic pcap files (microsecond or nanosecond timestamps), stdlib only, so
that both /usr/bin/python3 (scapy) and any other python3 can use it.

A record is (ts_ns, frame_bytes, wire_len): frame_bytes may be shorter than
wire_len when a snap length truncated it, as a mirror session does.
"""
import struct

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1


class Writer:
    def __init__(self, path, snaplen=65535):
        self.f = open(path, "wb")
        self.snaplen = snaplen
        self.f.write(struct.pack("<IHHiIII", MAGIC_NS, 2, 4, 0, 0, snaplen, LINKTYPE_ETHERNET))

    def write(self, ts_ns, frame, wire_len=None):
        wire = len(frame) if wire_len is None else wire_len
        cap = frame[: self.snaplen]
        self.f.write(struct.pack("<IIII", ts_ns // 1000000000, ts_ns % 1000000000, len(cap), wire))
        self.f.write(cap)

    def close(self):
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read(path):
    """Yield (ts_ns, frame, wire_len) from a classic pcap file."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            raise ValueError("%s: not a pcap file (%d bytes)" % (path, len(head)))
        for endian in ("<", ">"):
            magic = struct.unpack(endian + "I", head[:4])[0]
            if magic in (MAGIC_US, MAGIC_NS):
                break
        else:
            raise ValueError("%s: not a classic pcap file (magic %s)" % (path, head[:4].hex()))
        scale = 1 if magic == MAGIC_NS else 1000
        link = struct.unpack(endian + "I", head[20:24])[0] & 0xFFFF
        if link != LINKTYPE_ETHERNET:
            raise ValueError("%s: link type %d, expected Ethernet" % (path, link))
        rec = struct.Struct(endian + "IIII")
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, frac, cap, wire = rec.unpack(h)
            yield sec * 1000000000 + frac * scale, f.read(cap), wire
