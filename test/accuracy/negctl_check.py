#!/usr/bin/env python3
"""Negative controls, made afresh and checked (meson suite accuracy-matrix):

  negctl_check.py COMMTAP roce|tcp [--seed N]

roce: negctl_roce.py under /usr/bin/python3 (scapy; SKIP when absent), at
seed 2 by default so that the frozen seed-1 copies stay unseen.
tcp: negctl_tcp.py (root and network namespaces; SKIP when absent), a new
recording each time.

Fails when `commtap analyze` does not account for exactly the truth's
flows, packets and bytes, or when the truth given as labels leaves a byte
without its class. Prints, per scenario, the class accuracy with no profile
and whether a period was claimed: the right answer is Other and no period,
but the figure is a measurement, not a verdict (docs/accuracy.md).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import score  # noqa: E402

SCAPY_PYTHON = "/usr/bin/python3"


def make(kind, outdir, seed):
    if kind == "roce":
        if subprocess.run([SCAPY_PYTHON, "-c", "import scapy.contrib.roce"],
                          capture_output=True).returncode:
            print("SKIP: %s cannot import scapy.contrib.roce (Debian python3-scapy)"
                  % SCAPY_PYTHON)
            sys.exit(77)
        cmd = [SCAPY_PYTHON, os.path.join(HERE, "negctl_roce.py"), outdir, "--seed", str(seed)]
    else:
        cmd = [sys.executable, os.path.join(HERE, "negctl_tcp.py"), outdir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 77:
        print(r.stdout.strip())
        sys.exit(77)
    if r.returncode:
        raise SystemExit("negctl_check.py: %s failed: %s%s"
                         % (" ".join(cmd), r.stdout.strip(), r.stderr.strip()[-500:]))
    return [line.strip() for line in r.stdout.splitlines() if line.endswith(".pcap")]


def main():
    args = sys.argv[1:]
    seed = 2
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2 or args[1] not in ("roce", "tcp"):
        raise SystemExit(__doc__)
    commtap, kind = args
    failed = 0
    with tempfile.TemporaryDirectory(prefix="commtap-negctl-") as tmp:
        for pcap in make(kind, tmp, seed):
            truth_path = pcap[:-5] + ".truth.json"
            truth = json.load(open(truth_path))
            report = score.analyze(commtap, pcap)
            want = {score.flow_key(f): (f["packets"], f["bytes"]) for f in truth["flows"]}
            got = {score.flow_key(f): (f["packets"], f["bytes"]) for f in report["flows"]}
            errors = []
            if want != got:
                diff = sorted(set(want.items()) ^ set(got.items()), key=str)[:3]
                errors.append("analyze and the truth disagree on flows: %s" % diff)
            labelled = score.score(truth, score.analyze(commtap, pcap, "--labels", truth_path))
            if labelled["accuracy"] != 1.0:
                errors.append("labels give %.2f%% of bytes their class"
                              % (100 * labelled["accuracy"]))
            s = score.score(truth, report)
            print("%-26s %s  Other %5.1f%%  period %s  [%s]"
                  % (truth["profile"], "FAIL" if errors else "ok", 100 * s["accuracy"],
                     "%.4g s (claimed, wrongly)" % s["period_s"] if s["period_s"] else "none",
                     score.fmt_confusion(s["confusion"])))
            for e in errors:
                print("  " + e)
            failed += bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
