#!/usr/bin/env python3
"""commtap analyze --json under an address-space limit: out of memory in the
report document is one line and a non-zero exit, never an abort, and the
previous --json file stays as it was.

    test_report_oom.py COMMTAP SANITIZE

Writes a capture of 3,000 RoCE flows (198.18.0.0/15, one packet each),
analyses it once without a limit (the previous report), then again under
RLIMIT_AS from 384 MiB downwards (x0.92 a step) until a run fails in the
report document itself (its one line: "out of memory: report 0 is not
written"; here from 183 MiB, printing fails at 184-201 MiB, 202 MiB
succeeds). Every run: no signal; a failed one leaves the previous report
byte for byte and no file beside it. On the last landed commit json-c
asserted there (SIGABRT, "json_object_object_add_ex: Assertion"). The
ladder stops at the document: lower, the engine and the slow path run out
first (fftw aborts on its own allocations around 97 MiB; not this test's).
SANITIZE: meson's b_sanitize; the sanitizers reserve terabytes of address
space, so the test skips under them.
"""
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile

FLOWS = 3000
T0 = 1_700_000_000
DOC_OOM = "commtap analyze: out of memory: report 0 is not written"


def frame(qpn, dst):
    eth = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    bth = struct.pack("!BBHII", 0x04, 0x40, 0xFFFF, qpn, 0)  # SEND only
    payload = bytes(64)
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack("!HHHH", 49152, 4791, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                     bytes([198, 18, 0, 1]), dst)
    return eth + ip + udp + bth + payload + bytes(4)


def capture(path):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(FLOWS):
            fr = frame(i + 1, bytes([198, 19, i >> 8, i & 255]))
            f.write(struct.pack("<iiII", T0, i * 1000, len(fr), len(fr)) + fr)


def analyze(commtap, cap, out, limit_mib=None):
    def cap_memory():
        if limit_mib:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mib << 20, limit_mib << 20))

    return subprocess.run([commtap, "analyze", "--json", out, cap], capture_output=True,
                          text=True, preexec_fn=cap_memory, timeout=120)


def main():
    commtap, sanitize = sys.argv[1], sys.argv[2]
    if sanitize not in ("", "none"):
        print(f"SKIP: built with -Db_sanitize={sanitize}: no address-space limit applies")
        return 77
    failures = []
    doc_oom = 0
    with tempfile.TemporaryDirectory() as tmp:
        cap = os.path.join(tmp, "flows.pcap")
        out_dir = os.path.join(tmp, "out")
        out = os.path.join(out_dir, "report.json")
        os.mkdir(out_dir)
        capture(cap)
        p = analyze(commtap, cap, out)
        if p.returncode != 0:
            print(f"FAIL: analyze without a limit: exit {p.returncode}: {p.stderr.strip()}")
            return 1
        previous = open(out, "rb").read()
        if len(json.loads(previous)["flows"]) != FLOWS:
            print("FAIL: the report without a limit does not hold every flow")
            return 1
        limit = 384.0
        while limit > 32 and not doc_oom:
            mib = int(limit)
            p = analyze(commtap, cap, out, mib)
            lines = p.stderr.strip().splitlines()
            shown = lines[-1] if lines else ""
            print(f"RLIMIT_AS {mib} MiB: exit {p.returncode}, {len(lines)} line(s) {shown}")
            if p.returncode < 0:
                failures.append(f"{mib} MiB: killed by signal {-p.returncode}: {shown}")
            elif p.returncode == 0:
                if open(out, "rb").read() != previous:
                    failures.append(f"{mib} MiB: the report differs from the one without a limit")
            else:
                if mib == 384:
                    failures.append("384 MiB is not enough for 3,000 flows: raise the ladder")
                if open(out, "rb").read() != previous:
                    failures.append(f"{mib} MiB: the previous report was changed")
                if os.listdir(out_dir) != ["report.json"]:
                    failures.append(f"{mib} MiB: files left beside it: {os.listdir(out_dir)}")
                doc_oom += lines == [DOC_OOM]
            limit *= 0.92
    if not doc_oom:
        failures.append("no limit ran out of memory in the report document alone")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
