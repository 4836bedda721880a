#!/usr/bin/env python3
"""CI's regression gate on classification with no profile (issue 19).

  gate.py COMMTAP GATES.json NAME=CASE...          check
  gate.py --write COMMTAP GATES.json NAME=CASE...  record the figures as they are

Each CASE is what corpus_accuracy.py takes (a directory, or
CAPTURE:TRUTH[:PROFILE]); `matrix:SUBSET` stands for the cases of that
layout-matrix subset (make_matrix.py specs, made in its cache if absent),
each named by its case. Per case it gates on the share of bytes
classified right with no profile, which may not fall more than SLACK
below the recorded figure, and on the inferred layout, which may not go
from right to wrong. A case with no recorded figure fails: record it with
--write (a decision, stated in the commit, never a way to make CI pass).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The run-to-run spread of a deterministic case is 0; SLACK only absorbs
# the rounding of the recorded figure.
SLACK = 0.005


def measure(commtap, spec):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = subprocess.run([sys.executable, os.path.join(HERE, "corpus_accuracy.py"),
                            "--json-out", out.name, "--no-period", commtap, spec],
                           stdout=subprocess.DEVNULL)
        if r.returncode:
            raise RuntimeError("corpus_accuracy.py failed on %s" % spec)
        case = json.load(out)["cases"][0]
    return {"bytes_right": round(case["methods"]["signatures"]["accuracy"] or 0, 4),
            "layout_right": bool(case["layout"] and case["layout"]["right"])}


def matrix_cases(commtap, subset):
    matrix = os.path.join(HERE, "make_matrix.py")
    names = subprocess.run([sys.executable, matrix, "list", "--subset", subset],
                           capture_output=True, text=True, check=True).stdout.split()
    specs = subprocess.run([sys.executable, matrix, "specs", commtap, "--subset", subset],
                           capture_output=True, text=True, check=True).stdout.split()
    names = [n for n in names if n != "(frozen)"]
    if len(names) != len(specs):
        raise RuntimeError("make_matrix.py: %d names, %d cases" % (len(names), len(specs)))
    return list(zip(names, specs))


def main():
    args = sys.argv[1:]
    write = "--write" in args
    args = [a for a in args if a != "--write"]
    if len(args) < 3:
        sys.stderr.write(__doc__)
        return 2
    commtap, gates_path, cases = args[0], args[1], args[2:]
    gates = {}
    if os.path.exists(gates_path):
        with open(gates_path) as f:
            gates = json.load(f)
    fails = []
    named = []
    for item in cases:
        if item.startswith("matrix:"):
            named += matrix_cases(commtap, item.split(":", 1)[1])
        else:
            named.append(tuple(item.split("=", 1)))
    for name, spec in named:
        got = measure(commtap, spec)
        want = gates.get(name)
        print("%-40s bytes right %6.2f%% (recorded %s), layout %s (recorded %s)"
              % (name, 100 * got["bytes_right"],
                 "%.2f%%" % (100 * want["bytes_right"]) if want else "none",
                 "right" if got["layout_right"] else "wrong",
                 ("right" if want["layout_right"] else "wrong") if want else "none"))
        if write:
            gates[name] = got
            continue
        if not want:
            fails.append("%s: no recorded figure" % name)
            continue
        if got["bytes_right"] < want["bytes_right"] - SLACK:
            fails.append("%s: %.2f%% of the bytes right, %.2f%% recorded"
                         % (name, 100 * got["bytes_right"], 100 * want["bytes_right"]))
        if want["layout_right"] and not got["layout_right"]:
            fails.append("%s: the layout was inferred right and no longer is" % name)
    if write:
        with open(gates_path, "w") as f:
            json.dump(gates, f, indent=1, sort_keys=True)
            f.write("\n")
    for f in fails:
        print("FAIL " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
