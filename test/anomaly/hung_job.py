#!/usr/bin/env python3
"""A hung job for the producers' hang watch (live and mirror suites).

  hung_job.py make COMMTAP PROFILE DIR   DIR/hung.pcap: the profile's job
      synthesized (12 iterations of about 1.2 s, storage traffic beside),
      every host stopped in the middle of iteration 7's traffic while the
      other traffic goes on (test_hang.py's cut); prints the period, s
  hung_job.py said REPORT_DIR            the silence, in periods, that the
      first interval report holding a hang finding says; "none"
"""
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_hang  # noqa: E402


def make(commtap, profile, work):
    whole = os.path.join(work, "whole.pcap")
    subprocess.run([commtap, "synth", profile, "-o", whole, "--iterations", "12", "--scale",
                    "1e-3", "--time-scale", "30", "--noise", "--seed", "3"],
                   check=True, capture_output=True)
    truth = json.load(open(whole[:-5] + ".truth.json"))
    starts, period = truth["iteration_starts_ns"], truth["mean_period_s"]
    in7 = sorted(ts for ts, frame, _ in test_hang.pcapio.read(whole)
                 if starts[7] <= ts < starts[8] and not test_hang.other_traffic(frame))
    test_hang.cut(whole, os.path.join(work, "hung.pcap"), in7[len(in7) // 2],
                  int(period * 1e9))
    print(period)


def said(reports):
    for path in sorted(glob.glob(os.path.join(reports, "commtap-report-*.json"))):
        for f in json.load(open(path))["anomalies"]["findings"]:
            if f["kind"] == "hang":
                print(re.search(r"\(([0-9.]+) periods", f["evidence"]).group(1))
                return
    print("none")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "said":
        said(sys.argv[2])
    else:
        sys.exit(__doc__)
