#!/usr/bin/env python3
"""Findings on clean real recordings (issue 30: "false alarms (confidence
>= 0.5) on clean real iterations: 0 in >= 1,000").

  clean_real.py COMMTAP DIR... [--min C] [--json OUT]

Each DIR holds one recording of test/realtrain (make_scenario.py,
spread.py): a capture (*.pcap*) and, where the ranks wrote it, truth.json
with their own iteration starts. Every finding of the final report at
confidence >= C (default 0.5, the alerts' threshold) on a clean run is
counted as a false alarm, per kind, against the job's iterations.

A rhythm break is also held against the ranks' own clocks: the longer of
the ranks' iteration that holds the finding's onset and the next (a
silence that starts in one iteration runs into the next), over the median
of theirs. Where
it is RHYTHM_CONFIRMED times the median or more, the job did stall there
(8 ranks on 2 cores stall on their own): the finding is printed as
confirmed, and still counted, since the run is clean.

Exits 0; the figures are for docs/accuracy.md, the gate is
test/realtrain/check_scenario.py's.
"""
import glob
import json
import os
import statistics
import subprocess
import sys

# a rhythm break's floor (analysis/anomaly_rhythm.c RHYTHM_MIN_EXCESS): 1.5x the median
RHYTHM_CONFIRMED = 1.5


def ranks_iteration(truth, t_ns):
    """(the longer of the ranks' iterations holding t_ns and the next, their
    median) in s, or None."""
    starts = truth.get("iteration_starts_ns") or []
    if len(starts) < 3 or "end_ns" not in truth:
        return None
    bounds = starts + [truth["end_ns"]]
    lens = [(b - a) / 1e9 for a, b in zip(bounds, bounds[1:])]
    for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
        if a <= t_ns < b:
            return max(lens[i:i + 2]), statistics.median(lens)
    return None


def recording(commtap, d, least):
    caps = sorted(glob.glob(os.path.join(d, "*.pcap*")))
    if not caps:
        return None
    r = subprocess.run([commtap, "analyze", "--json", "-", caps[0]], capture_output=True,
                       text=True)
    if r.returncode not in (0, 2):
        raise RuntimeError("%s: %s" % (caps[0], r.stderr.strip()[-300:]))
    doc = json.loads(r.stdout)
    truth_path = os.path.join(d, "truth.json")
    truth = json.load(open(truth_path)) if os.path.exists(truth_path) else {}
    rows = []
    for f in (doc.get("anomalies") or {}).get("findings", []):
        if f["confidence"] < least:
            continue
        row = {"kind": f["kind"], "confidence": round(f["confidence"], 3),
               "onset_iteration": f.get("onset_iteration"), "evidence": f["evidence"]}
        if f["kind"] == "rhythm" and f.get("onset_ns"):
            got = ranks_iteration(truth, f["onset_ns"])
            if got:
                row["ranks_iteration_s"], row["ranks_median_s"] = got
                row["confirmed"] = got[0] >= RHYTHM_CONFIRMED * got[1]
        rows.append(row)
    return {"recording": d, "iterations": (doc.get("job") or {}).get("iterations") or 0,
            "findings": rows}


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    least = float(args[args.index("--min") + 1]) if "--min" in args else 0.5
    out = args[args.index("--json") + 1] if "--json" in args else None
    skip = {i + 1 for i, a in enumerate(args) if a in ("--min", "--json")}
    dirs = [a for i, a in enumerate(args[1:], 1) if i not in skip and not a.startswith("--")]
    recs = [r for r in (recording(args[0], d, least) for d in dirs) if r]
    per_kind = {}
    for r in recs:
        for f in r["findings"]:
            per_kind[f["kind"]] = per_kind.get(f["kind"], 0) + 1
            extra = ""
            if "confirmed" in f:
                extra = " [ranks' own iteration %.3g s, %.2fx their median: %s]" % (
                    f["ranks_iteration_s"], f["ranks_iteration_s"] / f["ranks_median_s"],
                    "a real stall" if f["confirmed"] else "not long by their clocks")
            print("%-40s %-10s %.2f %s%s" % (os.path.basename(r["recording"]), f["kind"],
                                             f["confidence"], f["evidence"][:160], extra))
    its = sum(r["iterations"] for r in recs)
    total = sum(per_kind.values())
    confirmed = sum(f.get("confirmed", False) for r in recs for f in r["findings"])
    print("clean_real: %d recordings, %d iterations; findings >= %.2g: %d %s (rhythm breaks "
          "the ranks' clocks confirm: %d)" % (len(recs), its, least, total, per_kind, confirmed))
    if out:
        with open(out, "w") as f:
            json.dump({"recordings": recs, "iterations": its, "per_kind": per_kind,
                       "findings": total, "rhythm_confirmed": confirmed}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
