#!/usr/bin/env python3
"""Period accuracy on synthesized jobs.

For a profile with NIC traffic: synthesize it with 5% jitter and background
noise, analyze the capture, and compare the job's iteration period with the
truth's realized mean period: within 1% after ITERATIONS iterations, and
within 5% for a first estimate from 3 iterations.

  period_accuracy.py COMMTAP PROFILE [roce|tcp] [--seed N]

The seed (default 7, the one CI uses) picks the jitter and the noise; other
seeds measure how robust the estimator is (docs/performance.md).

Times are scaled so an iteration lasts about 50 ms (sizes scaled down to
keep the capture small): bursts then stand well above the 100 us idle gap
that separates them.
"""
import json
import os
import subprocess
import sys
import tempfile

ITERATIONS = 12
ITERATION_S = 0.05
TARGET_BYTES = 40e6


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def estimate(commtap, profile, transport, iterations, time_scale, size_scale, seed, tmp):
    pcap = os.path.join(tmp, "p%d.pcap" % iterations)
    run(commtap, "synth", profile, "-o", pcap, "--iterations", str(iterations),
        "--transport", transport, "--scale", "%.9g" % size_scale,
        "--time-scale", "%.9g" % time_scale, "--jitter", "0.05", "--noise",
        "--snaplen", "128", "--seed", str(seed))
    truth = json.load(open(pcap[:-5] + ".truth.json"))
    report = json.loads(run(commtap, "analyze", "--json", "-", pcap))
    return truth["mean_period_s"], report["job"]


def main():
    args = sys.argv[1:]
    seed = 7
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2 or len(args) > 3 or args[0].startswith("-"):
        sys.stderr.write("usage: period_accuracy.py COMMTAP PROFILE [roce|tcp] [--seed N]\n")
        return 2
    commtap, profile = args[0], args[1]
    transport = args[2] if len(args) > 2 else "roce"
    name = os.path.basename(profile)[:-5]
    pred = json.loads(run(commtap, "predict", "--json", profile))
    if not pred["nic_bytes_per_iteration"]:
        print("SKIP: %s has no NIC traffic" % name)
        return 77
    t_iter = pred["time_s"]["iteration_schedule"]
    time_scale = ITERATION_S / t_iter
    size_scale = min(time_scale, TARGET_BYTES / (pred["nic_bytes_per_iteration"] * ITERATIONS))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for iterations, tolerance in ((ITERATIONS, 0.01), (3, 0.05)):
            truth, job = estimate(commtap, profile, transport, iterations, time_scale,
                                  size_scale, seed, tmp)
            got = job["iteration_period_s"]
            if got is None:
                failures.append("%d iterations: no period (%s)" % (iterations, job["reason"]))
                print("%s %s, %2d iterations: truth %.6f s, no period: %s"
                      % (name, transport, iterations, truth, job["reason"]))
                continue
            err = abs(got - truth) / truth
            print("%s %s, %2d iterations: period %.6f s, truth %.6f s, error %.3f%% "
                  "(limit %.0f%%), confidence %.2f, %d iterations found"
                  % (name, transport, iterations, got, truth, 100 * err, 100 * tolerance,
                     job["period_confidence"], job["iterations"]))
            if err > tolerance:
                failures.append("%d iterations: error %.3f%%" % (iterations, 100 * err))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
