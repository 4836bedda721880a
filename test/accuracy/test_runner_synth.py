#!/usr/bin/env python3
"""corpus_accuracy.py on a synthesized case, where the answers are known.

commtap synth writes a capture and its truth; the runner must then find
every flow of the truth in the report, score --labels TRUTH at exactly 100%,
put each truth byte in one confusion cell, give the period rows the truth's
mean over the cut iterations, and read a gzipped capture the same as the
plain one.

  test_runner_synth.py COMMTAP RUNNER PROFILE
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

ITERATIONS = 13


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    commtap, runner, profile = sys.argv[1:4]
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        case = os.path.join(tmp, "case")
        os.mkdir(case)
        pcap = os.path.join(case, "capture.pcap")
        run(commtap, "synth", profile, "-o", pcap, "--iterations", str(ITERATIONS),
            "--scale", "1e-3", "--time-scale", "0.15", "--jitter", "0.05", "--noise",
            "--snaplen", "128", "--seed", "5")
        os.rename(os.path.join(case, "capture.truth.json"), os.path.join(case, "truth.json"))
        shutil.copy(profile, os.path.join(case, "profile.json"))
        truth = json.load(open(os.path.join(case, "truth.json")))
        res = json.loads(run(sys.executable, runner, "--json", commtap, case))["cases"][0]
        total = sum(f["bytes"] for f in truth["flows"])
        for method in ("signatures", "profile", "labels"):
            s = res["methods"].get(method)
            if s is None:
                fails.append("no %s row" % method)
                continue
            cells = sum(sum(r.values()) for r in s["confusion"].values())
            if cells != total or s["bytes"] != total:
                fails.append("%s: %d bytes in the matrix, the truth has %d" % (method, cells,
                                                                               total))
            missing = sum(r["missing"] for r in s["confusion"].values())
            if missing:
                fails.append("%s: %d truth bytes not found in the report" % (method, missing))
            print("%s: %.2f%% right" % (method, 100 * s["accuracy"]))
        if res["methods"]["labels"]["accuracy"] != 1.0:
            fails.append("labels: %r, not 100%%" % res["methods"]["labels"]["accuracy"])
        starts = truth["iteration_starts_ns"]
        for k in (3, 12):
            want = (starts[k] - starts[0]) / k / 1e9
            got = res["period"][str(k)]["truth_s"]
            print("period after %d: truth %.6f s, report %r" % (k, want,
                                                               res["period"][str(k)]["period_s"]))
            if abs(got - want) > 1e-9:
                fails.append("period after %d: truth mean %r, expected %r" % (k, got, want))
        with open(pcap, "rb") as src, gzip.open(pcap + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.unlink(pcap)
        again = json.loads(run(sys.executable, runner, "--json", commtap, case))["cases"][0]
        if again["methods"] != res["methods"] or again["period"] != res["period"]:
            fails.append("the gzipped capture scores differently")
    for f in fails:
        print("FAIL " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
