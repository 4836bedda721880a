#!/usr/bin/env python3
"""The frame builder's worked frames (test_frame_build.c) decoded by tshark.

Wireshark's dissector is an oracle independent of commtap: each frame's
fields, as tshark reads them, must be the ones test_frame_build.c describes.
Exit 77 (skip) where tshark is missing.

  frame_build_tshark.py TEST_FRAME_BUILD
"""
import os
import shutil
import subprocess
import sys
import tempfile

FIELDS = ["ieee8021ad.id", "vlan.id", "ip.dsfield", "ip.len", "ipv6.plen", "udp.srcport", "udp.length",
          "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.destqp",
          "infiniband.bth.a", "infiniband.bth.psn", "infiniband.reth.va",
          "infiniband.reth.r_key", "infiniband.reth.dmalen", "infiniband.immdt",
          "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.deth.q_key",
          "infiniband.deth.srcqp"]

# The values test_frame_build.c's comments work out, as tshark prints them.
WANT = [
    {"vlan.id": "100", "ip.dsfield": "0x6a", "ip.len": "1088", "udp.srcport": "49153",
     "udp.length": "1068", "infiniband.bth.opcode": "11", "infiniband.bth.se": "1",
     "infiniband.bth.destqp": "0x000123", "infiniband.bth.a": "1",
     "infiniband.bth.psn": "1110", "infiniband.reth.va": "0x00007f0000001000",
     "infiniband.reth.r_key": "0x00001234", "infiniband.reth.dmalen": "8192",
     "infiniband.immdt": "deadbeef"},
    {"ipv6.plen": "28", "udp.length": "28", "infiniband.bth.opcode": "17",
     "infiniband.bth.destqp": "0x000321", "infiniband.bth.psn": "1110",
     "infiniband.aeth.syndrome": "31", "infiniband.aeth.msn": "2748"},
    {"ieee8021ad.id": "10", "vlan.id": "20", "ip.dsfield": "0xc0", "ip.len": "60", "udp.length": "40",
     "infiniband.bth.opcode": "129", "infiniband.bth.destqp": "0x000777"},
    {"ip.len": "72", "udp.srcport": "49374", "udp.length": "52",
     "infiniband.bth.opcode": "101", "infiniband.bth.destqp": "0x000001",
     "infiniband.bth.psn": "16777215", "infiniband.deth.q_key": "0x0000000080010000",
     "infiniband.deth.srcqp": "0x00000055", "infiniband.immdt": "00000007"},
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tshark = shutil.which("tshark")
    if not tshark:
        print("SKIP: tshark not found")
        return 77
    with tempfile.TemporaryDirectory(prefix="commtap-frames-") as tmp:
        pcap = os.path.join(tmp, "frames.pcap")
        subprocess.run([sys.argv[1], "--pcap", pcap], check=True)
        cmd = [tshark, "-r", pcap, "-T", "fields",
               "-E", "separator=|", "-E", "occurrence=f"]
        for f in FIELDS:
            cmd += ["-e", f]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [dict(zip(FIELDS, line.split("|"))) for line in out.splitlines()]
    if len(rows) != len(WANT):
        print("FAIL: tshark decoded %d frames, expected %d" % (len(rows), len(WANT)))
        return 1
    bad = 0
    for i, (got, want) in enumerate(zip(rows, WANT)):
        for k, v in want.items():
            if got.get(k) != v:
                print("FAIL: frame %d %s: tshark %r, worked by hand %r" % (i + 1, k, got.get(k), v))
                bad += 1
    print("%d frames, %d fields checked, %d differ" %
          (len(rows), sum(len(w) for w in WANT), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
