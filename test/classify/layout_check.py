#!/usr/bin/python3
"""A profile's layout held against the wire's (issue 19, item 3).

  layout_check.py COMMTAP PROFILE OTHER_PROFILE

Synthesizes PROFILE's job (12 iterations, RoCE, header-only copies) and
analyzes it with PROFILE, then with OTHER_PROFILE: the same model on the
same hosts with another rank-to-host mapping. The first report's
classification.layout_check must agree; the second must not, and its
summary must name each class whose groups moved.
"""
import json
import os
import subprocess
import sys
import tempfile


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r.stdout


def main():
    commtap, profile, other = sys.argv[1:4]
    pred = json.loads(run(commtap, "predict", "--json", profile))
    time_scale = 0.05 / pred["time_s"]["iteration_schedule"]
    size_scale = min(time_scale, 48e6 / (pred["nic_bytes_per_iteration"] * 12))
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "job.pcap")
        run(commtap, "synth", profile, "-o", pcap, "--iterations", "12", "--transport", "roce",
            "--scale", "%.9g" % size_scale, "--time-scale", "%.9g" % time_scale,
            "--jitter", "0.05", "--snaplen", "128", "--seed", "5")
        checks = {}
        for name, prof in (("own", profile), ("other", other)):
            report = json.loads(run(commtap, "analyze", "--json", "-", "--profile", prof, pcap))
            checks[name] = report["classification"].get("layout_check")
            print("%s profile: %s" % (name, json.dumps(checks[name])))
    failures = []
    if not checks["own"] or not checks["own"]["agree"]:
        failures.append("its own profile does not agree with the wire")
    other = checks["other"]
    if not other or other["agree"]:
        failures.append("a profile with another mapping agrees with the wire")
    else:
        moved = [c for c, e in other["classes"].items() if e["alike"] < max(e["profile_groups"],
                                                                          e["wire_groups"])]
        missing = [c for c in moved if c + ":" not in other["summary"]]
        if not moved or missing:
            failures.append("the summary does not name every class that moved: %s" % missing)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
