#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare a commtap-mirror report with a `commtap analyze` report of the
same capture: flows (packets, bytes, messages, class), the capture totals and
the job's period must agree. Prints each difference; exit 1 if any."""
import json
import sys


def flows_by_key(report):
    out = {}
    for f in report.get("flows", []):
        key = "%s %s>%s qpn=%s %s>%s" % tuple(f.get(k) for k in (
            "transport", "src", "dst", "qpn", "sport", "dport"))
        e = out.setdefault(key, {"packets": 0, "bytes": 0, "messages": 0, "class": None})
        e["packets"] += f.get("packets", 0)
        e["bytes"] += f.get("bytes", 0)
        e["messages"] += f.get("messages", 0)
        e["class"] = f.get("class")
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: compare_reports.py ANALYZE.json MIRROR.json", file=sys.stderr)
        return 2
    a = json.load(open(sys.argv[1]))
    m = json.load(open(sys.argv[2]))
    diffs = []
    for k in ("packets", "bytes", "roce_packets", "tcp_packets", "other_ip_packets",
              "other_l2_packets", "malformed"):
        if a["capture"].get(k) != m["capture"].get(k):
            diffs.append(f"capture.{k}: analyze {a['capture'].get(k)} mirror {m['capture'].get(k)}")
    fa, fm = flows_by_key(a), flows_by_key(m)
    if len(fa) != len(fm):
        diffs.append(f"flows: analyze {len(fa)} mirror {len(fm)}")
    for key, va in fa.items():
        vm = fm.get(key)
        if vm != va:
            diffs.append(f"flow {key}: analyze {va} mirror {vm}")
    # net_pcap hands out microsecond timestamps: times agree to 1 us
    for k in ("first_ts", "last_ts"):
        if abs(a["capture"][k] - m["capture"][k]) > 1000:
            diffs.append(f"capture.{k}: analyze {a['capture'][k]} mirror {m['capture'][k]}")
    ja, jm = a.get("job", {}), m.get("job", {})
    for k in ("periodic", "iterations"):
        if ja.get(k) != jm.get(k):
            diffs.append(f"job.{k}: analyze {ja.get(k)} mirror {jm.get(k)}")
    pa, pm = ja.get("iteration_period_s"), jm.get("iteration_period_s")
    if (pa is None) != (pm is None) or (pa is not None and abs(pa - pm) > max(1e-5, 1e-3 * pa)):
        diffs.append(f"job.iteration_period_s: analyze {pa} mirror {pm}")
    if a.get("classification") != m.get("classification"):
        diffs.append("classification: analyze %s mirror %s" % (
            json.dumps(a.get("classification"))[:300], json.dumps(m.get("classification"))[:300]))
    for d in diffs[:20]:
        print(d)
    if not fa:
        print("no flows in the analyze report: nothing compared")
        return 1
    print(f"{len(fa)} flows, {a['capture']['packets']} packets: "
          f"{'same' if not diffs else str(len(diffs)) + ' differences'}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
