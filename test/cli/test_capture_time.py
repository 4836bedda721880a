#!/usr/bin/env python3
"""commtap analyze: impossible pcap timestamps never become times past 2^63.

    test_capture_time.py COMMTAP

Writes nanosecond pcaps of three RoCE packets whose second packet's time is
impossible (-5 s; a fraction of 1.5 s) and analyzes
each: the report is written, marked incomplete with an error naming packet 2
and its timestamp, holds the first packet only, and every time in it is
below 2^63. A clean file of the same packets is complete.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

T0 = 1_700_000_000


def roce_frame(psn):
    eth = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    bth = struct.pack("!BBHII", 0x04, 0x40, 0xFFFF, 0x000011, psn)  # SEND only to QP 0x11
    payload = bytes(64)
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack("!HHHH", 49152, 4791, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                     bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
    return eth + ip + udp + bth + payload + bytes(4)


def pcap(times):
    out = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
    for i, (sec, frac) in enumerate(times):
        frame = roce_frame(i)
        out += struct.pack("<iiII", sec, frac, len(frame), len(frame)) + frame
    return out


def main():
    commtap = sys.argv[1]
    failures = []
    cases = {"clean": (T0, 2), "negative": (-5, 0), "fraction": (T0, 1_500_000_000)}
    with tempfile.TemporaryDirectory() as tmp:
        for name, second in cases.items():
            path = os.path.join(tmp, name + ".pcap")
            with open(path, "wb") as f:
                f.write(pcap([(T0, 1), second, (T0, 3)]))
            p = subprocess.run([commtap, "analyze", "--json", "-", path], capture_output=True,
                               text=True)
            try:
                report = json.loads(p.stdout)
            except ValueError:
                failures.append(f"{name}: no report (exit {p.returncode}: {p.stderr.strip()})")
                continue
            cap = report["capture"]
            times = [cap["first_ts"], cap["last_ts"]] + [
                f[k] for f in report["flows"] for k in ("first_ts", "last_ts")]
            print(f"{name}: exit {p.returncode}, {cap['packets']} packets, complete "
                  f"{cap['complete']}, error {cap['error']!r}, latest time {max(times)}")
            if max(times) >= 2 ** 63:
                failures.append(f"{name}: a time past 2^63: {max(times)}")
            if name == "clean":
                if not cap["complete"] or cap["packets"] != 3:
                    failures.append(f"clean: {cap['packets']} packets, complete {cap['complete']}")
            elif cap["complete"] or cap["packets"] != 1 or "packet 2" not in (cap["error"] or "") \
                    or "timestamp" not in cap["error"]:
                failures.append(f"{name}: packets {cap['packets']}, error {cap['error']!r}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
