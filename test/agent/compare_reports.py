#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare an agent report with `commtap analyze`'s report of the same capture.

usage: compare_reports.py ANALYZE.json AGENT.json [--fields a,b,...] [--totals-only]
                          [--period-tolerance F]
Exit 0 when they agree, 1 (with what differs) when not.
"""
import json
import sys


def key(f):
    return (f["transport"], f["src"], f["dst"], f.get("qpn"), f.get("sport"), f.get("dport"))


def main(argv):
    fields = ["packets", "bytes", "messages", "message_bytes"]
    totals_only = False
    period_tol = None
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--fields":
            fields = argv[i + 1].split(",")
            i += 2
        elif argv[i] == "--totals-only":
            totals_only = True
            i += 1
        elif argv[i] == "--period-tolerance":
            period_tol = float(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    with open(args[0]) as f:
        a = json.load(f)
    with open(args[1]) as f:
        b = json.load(f)
    bad = []
    for t in ("packets", "bytes", "roce_packets", "tcp_packets"):
        if a["capture"][t] != b["capture"][t]:
            bad.append("capture %s: analyze %s, agent %s" % (t, a["capture"][t], b["capture"][t]))
    if not totals_only:
        fa = {key(f): f for f in a["flows"]}
        fb = {key(f): f for f in b["flows"]}
        for k in sorted(set(fa) | set(fb), key=str):
            if k not in fb:
                bad.append("flow %s: missing from the agent's report" % (k,))
                continue
            if k not in fa:
                bad.append("flow %s: only in the agent's report" % (k,))
                continue
            for fld in fields:
                if fa[k][fld] != fb[k][fld]:
                    bad.append("flow %s %s: analyze %s, agent %s" % (k, fld, fa[k][fld], fb[k][fld]))
    if period_tol is not None:
        pa = (a.get("job") or {}).get("iteration_period_s")
        pb = (b.get("job") or {}).get("iteration_period_s")
        if not pa or not pb or abs(pa - pb) > period_tol * pa:
            bad.append("job period: analyze %s, agent %s (tolerance %g)" % (pa, pb, period_tol))
    for line in bad[:20]:
        print(line)
    if bad:
        print("%d differences" % len(bad))
        return 1
    print("agree: %d flows, %d packets" % (len(b["flows"]), b["capture"]["packets"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
