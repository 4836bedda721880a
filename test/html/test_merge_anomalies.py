#!/usr/bin/env python3
"""commtap merge keeps the findings of every report, one per anomaly.

    test_merge_anomalies.py COMMTAP PROFILE.json

Synthesizes one job three times with faults injected (commtap synth
--lossy-link, --congest): a lossy link alone, congestion alone, both.
Analyzes each (the capture "both" twice: two vantage points that see the
same traffic) and merges:
  - both + both again: each finding once, found by the two reports;
  - lossy + congested: the two findings, each found by its own report;
  - both + congested: the congestion once (found by both), the loss once.
The merged page lists them.
"""
import json
import os
import subprocess
import sys
import tempfile

FAULTS = {
    "lossy": ["--lossy-link", "0-1:0.01"],
    "congested": ["--congest", "2:0.2"],
    "both": ["--lossy-link", "0-1:0.01", "--congest", "2:0.2"],
}


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True)


def place(f):
    return (f["kind"], f["scope"], f.get("host"), f.get("src"), f.get("dst"), f.get("priority"))


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        for name, fault in FAULTS.items():
            run(commtap, "synth", profile, "-o", t(name + ".pcap"), "--iterations", 8,
                "--scale", "1e-3", "--time-scale", "1e-3", *fault)
            run(commtap, "analyze", "--profile", profile, "--json", t(name + ".json"),
                t(name + ".pcap"))
        run(commtap, "analyze", "--profile", profile, "--json", t("both2.json"), t("both.pcap"))
        found = {n: json.load(open(t(n + ".json")))["anomalies"]["findings"]
                 for n in ("lossy", "congested", "both")}
        for n, fs in found.items():
            print(f"{n}: {sorted(place(f) for f in fs)}")
        kinds = {n: {f["kind"] for f in fs} for n, fs in found.items()}
        if kinds != {"lossy": {"loss"}, "congested": {"congestion"},
                     "both": {"loss", "congestion"}}:
            failures.append(f"the injected faults are not what analyze finds: {kinds}")

        def merged(*names):
            out = t("-".join(names) + ".merged.json")
            run(commtap, "merge", *[t(n + ".json") for n in names], "-o", out)
            return out, json.load(open(out))

        cases = [
            (("both", "both2"), {"loss": ["both", "both2"], "congestion": ["both", "both2"]}),
            (("lossy", "congested"), {"loss": ["lossy"], "congestion": ["congested"]}),
            (("both", "congested"), {"loss": ["both"], "congestion": ["both", "congested"]}),
        ]
        for names, want in cases:
            path, m = merged(*names)
            fs = m.get("anomalies", {}).get("findings", [])
            got = {f["kind"]: [os.path.basename(s)[:-5] for s in f.get("sources", [])]
                   for f in fs}
            print(f"merge {' + '.join(names)}: {got}")
            if len(fs) != len(want) or got != want:
                failures.append(f"merge {names}: findings {got}, expected {want}")
            for f in fs:
                copies = [g for n in names for g in found.get(n.rstrip("2"), [])
                          if place(g) == place(f)]
                best = max(g["confidence"] for g in copies) if copies else None
                if f["confidence"] != best:
                    failures.append(f"merge {names}: {place(f)} confidence {f['confidence']},"
                                    f" the most confident copy has {best}")
            if names == ("lossy", "congested"):
                page = run(commtap, "report", path, "-o", "-").stdout
                if page.count('<tr class="anomaly"') != 2:
                    failures.append("the merged page does not list the two findings")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
