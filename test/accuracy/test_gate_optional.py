#!/usr/bin/env python3
"""gate.py's optional per-case gates (issue 29): operation_right and
confident_wrong_max apply only where a case's entry has them, and
--write keeps them and never adds them.

  test_gate_optional.py COMMTAP PROFILE

One case (PROFILE synthesized with --truth-operations) under three names:
"plain" (bytes_right 0, no optional gate) must pass; "op" with an
operation_right no classifier can reach (above 100%) and "confident"
with a confident_wrong_max below 0 must each fail, naming their gate.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GATE = os.path.join(HERE, "gate.py")
# beyond any measurable figure (gate.py's SLACK is 0.005)
UNREACHABLE_OP = 1.5
UNREACHABLE_WRONG = -0.5


def gate(commtap, gates, spec, names, write=False):
    return subprocess.run([sys.executable, GATE] + (["--write"] if write else []) +
                          [commtap, gates] + ["%s=%s" % (n, spec) for n in names],
                          capture_output=True, text=True)


def main():
    commtap, profile = sys.argv[1:3]
    failures = []
    with tempfile.TemporaryDirectory(prefix="commtap-gate-test-") as tmp:
        pcap = os.path.join(tmp, "job.pcap")
        truth = os.path.join(tmp, "job.truth.json")
        subprocess.run([commtap, "synth", profile, "-o", pcap, "--iterations", "4",
                        "--transport", "roce", "--snaplen", "128", "--truth-operations",
                        "--scale", "0.001", "--time-scale", "0.01"],
                       check=True, capture_output=True)
        spec = "%s:%s" % (pcap, truth)
        gates = os.path.join(tmp, "gates.json")
        base = {"bytes_right": 0.0, "layout_right": False}
        with open(gates, "w") as f:
            json.dump({"plain": base, "op": dict(base, operation_right=UNREACHABLE_OP),
                       "confident": dict(base, confident_wrong_max=UNREACHABLE_WRONG)}, f)
        r = gate(commtap, gates, spec, ["plain"])
        print(r.stdout.strip())
        if r.returncode:
            failures.append("a case with no optional gate failed: %s" % r.stdout.strip())
        for name, word in (("op", "operation right"), ("confident", "confidence >= 0.8")):
            r = gate(commtap, gates, spec, [name])
            print(r.stdout.strip())
            if r.returncode != 1 or ("FAIL %s: " % name) not in r.stdout or word not in r.stdout:
                failures.append("%s: an unreachable gate did not fail (exit %d)"
                                % (name, r.returncode))
        r = gate(commtap, gates, spec, ["plain", "op", "confident"], write=True)
        with open(gates) as f:
            written = json.load(f)
        if "operation_right" in written["plain"] or "confident_wrong_max" in written["plain"]:
            failures.append("--write added an optional gate: %s" % written["plain"])
        if written["op"].get("operation_right") != UNREACHABLE_OP or \
                written["confident"].get("confident_wrong_max") != UNREACHABLE_WRONG:
            failures.append("--write dropped an optional gate: %s" % written)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
