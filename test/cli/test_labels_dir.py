#!/usr/bin/env python3
"""commtap analyze --labels DIR: only regular files are read (issue 33).

    test_labels_dir.py COMMTAP

A labels directory holds a good file (one RoCE flow labelled PP), a FIFO
named x.json and a symbolic link to /dev/zero named y.json. The report must
come within REPORT_S with the good file's label on its flow and one warning
naming each skipped file. On the last landed commit the reader blocked in
open() on the FIFO (no report at all) and, without it, read /dev/zero
without bound (2.1 GB in 30 s).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

REPORT_S = 10  # the capture is 3 packets: a report takes well under a second
T0 = 1_700_000_000


def frame(src, dst, qpn):
    eth = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    bth = struct.pack("!BBHII", 0x04, 0x40, 0xFFFF, qpn, 0)  # SEND only
    payload = bytes(64)
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack("!HHHH", 49152, 4791, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                     bytes(src), bytes(dst))
    return eth + ip + udp + bth + payload + bytes(4)


def capture(path):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(3):
            fr = frame([198, 18, 0, 1], [198, 18, 0, 2], 257)
            f.write(struct.pack("<iiII", T0, i * 1000, len(fr), len(fr)) + fr)


def main():
    commtap = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        cap = os.path.join(tmp, "one.pcap")
        labels = os.path.join(tmp, "labels")
        out = os.path.join(tmp, "report.json")
        capture(cap)
        os.mkdir(labels)
        with open(os.path.join(labels, "good.json"), "w") as f:
            json.dump({"schema": "commtap.labels/v1",
                       "flows": [{"transport": "roce", "src": "198.18.0.1",
                                  "dst": "198.18.0.2", "qpn": 257, "class": "PP"}]}, f)
        os.mkfifo(os.path.join(labels, "x.json"))
        os.symlink("/dev/zero", os.path.join(labels, "y.json"))
        start = time.monotonic()
        try:
            p = subprocess.run([commtap, "analyze", "--labels", labels, "--json", out, cap],
                               capture_output=True, text=True, timeout=REPORT_S)
        except subprocess.TimeoutExpired:
            print(f"FAIL: no report within {REPORT_S} s (the reader blocked or read without end)")
            return 1
        took = time.monotonic() - start
        failures = []
        if p.returncode != 0:
            failures.append(f"exit {p.returncode}: {p.stderr.strip()}")
        else:
            flows = json.load(open(out))["flows"]
            labelled = [fl for fl in flows if fl.get("class") == "PP"]
            if len(flows) != 1 or len(labelled) != 1:
                failures.append(f"expected the one flow labelled PP, got {flows}")
        for name, why in (("x.json", "not a regular file"), ("y.json", "a symbolic link")):
            lines = [l for l in p.stderr.splitlines()
                     if os.path.join(labels, name) in l and why in l]
            if len(lines) != 1:
                failures.append(f"expected one warning naming {name} ({why}); stderr: "
                                f"{p.stderr.strip()!r}")
        print(f"report in {took:.2f} s (bound {REPORT_S} s)")
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
