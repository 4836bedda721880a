#!/usr/bin/env python3
"""commtap analyze --json in bounded memory (issue 24): many distinct flows
under an address-space limit and a time bound, the totals exact.

    test_memory_budget.py COMMTAP SANITIZE

Writes a capture of 60,000 RoCE flows (many_flows.py: one packet each; every
60th flow carries 1,024 payload bytes, the rest 64) and analyses it:

1. `analyze --json` under RLIMIT_AS 512 MiB and 60 s: every flow in the
   report, their bytes and packets summing to the capture's. On the last
   landed commit the report document held a json-c tree of every flow
   (about 16 KiB a flow) and its whole text: 60,000 flows needed over
   1 GiB, and this run failed "out of memory".
2. `--report-flows 5000` under 384 MiB: at most 5,000 flows in detail,
   every heavy flow among them, the rest in "flows_summed", and the flows
   in detail plus the summed ones are the capture's flows, packets and
   bytes exactly.

SANITIZE: meson's b_sanitize; the sanitizers reserve terabytes of address
space, so under them the runs have no address-space limit and no time
bound, and check the rest (the sanitizers watch the streamed writer and
the summing).
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import many_flows  # noqa: E402

FLOWS = 60000
HEAVY_EVERY = 60


def analyze(commtap, args, limit_mib, seconds):
    def cap_memory():
        resource.setrlimit(resource.RLIMIT_AS, (limit_mib << 20, limit_mib << 20))

    start = time.monotonic()
    p = subprocess.run([commtap, "analyze"] + args, capture_output=True, text=True,
                       preexec_fn=cap_memory if limit_mib else None,
                       timeout=seconds * 3 if seconds else None)
    return p, time.monotonic() - start


def key(f):
    return (f["dst"], f["qpn"])


def main():
    commtap, sanitize = sys.argv[1], sys.argv[2]
    bounded = sanitize in ("", "none")
    if not bounded:
        print(f"built with -Db_sanitize={sanitize}: no address-space limit or time bound")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        cap = os.path.join(tmp, "flows.pcap")
        out = os.path.join(tmp, "report.json")
        wire = many_flows.write(cap, FLOWS, HEAVY_EVERY)
        heavy_keys = {many_flows.flow_key(i) for i in range(FLOWS)
                      if many_flows.heavy(i, HEAVY_EVERY)}

        for limit_mib, seconds, extra in ((512, 60, []), (384, 60, ["--report-flows", "5000"])):
            if not bounded:
                limit_mib = seconds = 0
            what = f"analyze {' '.join(extra) or '(defaults)'}"
            if limit_mib:
                what += f" under {limit_mib} MiB"
            p, took = analyze(commtap, extra + ["--json", out, cap], limit_mib, seconds)
            print(f"{what}: exit {p.returncode}, {took:.1f} s")
            if p.returncode != 0:
                failures.append(f"{what}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
                continue
            if seconds and took > seconds:
                failures.append(f"{what}: {took:.1f} s, over {seconds} s")
            with open(out) as f:
                doc = json.load(f)
            os.unlink(out)
            flows = doc["flows"]
            summed = doc.get("flows_summed", {"flows": 0, "packets": 0, "bytes": 0})
            c = doc["capture"]
            if c["packets"] != FLOWS or c["bytes"] != wire:
                failures.append(f"{what}: capture {c['packets']} packets {c['bytes']} bytes, "
                                f"wrote {FLOWS} and {wire}")
            n = len(flows) + summed["flows"]
            pk = sum(f["packets"] for f in flows) + summed["packets"]
            by = sum(f["bytes"] for f in flows) + summed["bytes"]
            if (n, pk, by) != (FLOWS, FLOWS, wire):
                failures.append(f"{what}: flows+summed = {n} flows, {pk} packets, {by} bytes; "
                                f"the capture has {FLOWS}, {FLOWS}, {wire}")
            if not extra:
                if "flows_summed" in doc or len(flows) != FLOWS:
                    failures.append(f"{what}: {len(flows)} flows in detail, want all {FLOWS}")
                continue
            if len(flows) > 5000 or doc["flows_summed"]["limit"] != 5000:
                failures.append(f"{what}: {len(flows)} flows in detail, limit "
                                f"{doc['flows_summed']['limit']}")
            missing = heavy_keys - {key(f) for f in flows}
            if missing:
                failures.append(f"{what}: {len(missing)} of the {len(heavy_keys)} heaviest "
                                f"flows summed, e.g. {sorted(missing)[:3]}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
