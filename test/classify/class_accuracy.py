#!/usr/bin/env python3
"""Classification accuracy on synthesized jobs (issue "Flow classification").

For a profile with NIC traffic and a transport: synthesize ITERATIONS
iterations with 5% jitter and background noise (storage TCP), analyze the
capture three ways and compare every flow's class with the truth:

  labels     --labels TRUTH (what the host agent would say)   100% of bytes
  profile    --profile PROFILE                                 >= 99% of bytes
  signatures (nothing but the traffic)                         >= 90% of bytes

Accuracy is the share of bytes (both directions of every flow) whose class
is right; noise flows must come out Other. The confusion matrix (bytes, in
KiB, truth rows by found columns) is printed for each case, and (issue 29,
measured, not gated) the operation recognised right, the bytes wrong at
confidence >= 0.8 and the bytes right per confidence bin
(test/accuracy/figures.py; synth names each flow's operation).

  class_accuracy.py COMMTAP PROFILE roce|tcp [labels|profile|signatures ...]
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "accuracy"))
import figures  # noqa: E402

ITERATIONS = 12
ITERATION_S = 0.05
TARGET_BYTES = 40e6
CLASSES = ["TP", "PP", "DP", "EP", "EmbTableSyn", "Other"]
LIMITS = {"labels": 1.0, "profile": 0.99, "signatures": 0.90}


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def key(f):
    if f["transport"] == "roce":
        return ("roce", f["src"], f["dst"], f["qpn"])
    return ("tcp", f["src"], f["dst"], f["sport"], f["dport"])


def confusion(truth, report):
    found = {key(f): f.get("class", "Other") for f in report["flows"]}
    m = {t: {c: 0 for c in CLASSES} for t in CLASSES}
    missing = 0
    for f in truth["flows"]:
        k = key(f)
        if k not in found:
            missing += f["bytes"]
            continue
        m[f["class"]][found[k]] += f["bytes"]
    return m, missing


def show(m):
    lines = ["%-12s" % "truth\\found" + "".join("%12s" % c for c in CLASSES)]
    for t in CLASSES:
        if sum(m[t].values()):
            lines.append("%-12s" % t + "".join("%12.0f" % (m[t][c] / 1024) for c in CLASSES))
    return "\n".join(lines)


def main():
    commtap, profile, transport = sys.argv[1:4]
    methods = sys.argv[4:] or ["labels", "profile", "signatures"]
    name = os.path.basename(profile)[:-5]
    pred = json.loads(run(commtap, "predict", "--json", profile))
    if not pred["nic_bytes_per_iteration"]:
        print("SKIP: %s has no NIC traffic" % name)
        return 77
    time_scale = ITERATION_S / pred["time_s"]["iteration_schedule"]
    size_scale = min(time_scale, TARGET_BYTES / (pred["nic_bytes_per_iteration"] * ITERATIONS))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "job.pcap")
        run(commtap, "synth", profile, "-o", pcap, "--iterations", str(ITERATIONS),
            "--transport", transport, "--scale", "%.9g" % size_scale,
            "--time-scale", "%.9g" % time_scale, "--jitter", "0.05", "--noise",
            "--snaplen", "128", "--seed", "11", "--truth-operations")
        truth_path = pcap[:-5] + ".truth.json"
        truth = json.load(open(truth_path))
        for method in methods:
            args = {"labels": ["--labels", truth_path], "profile": ["--profile", profile],
                    "signatures": []}[method]
            report = json.loads(run(commtap, "analyze", "--json", "-", *args, pcap))
            m, missing = confusion(truth, report)
            total = sum(sum(r.values()) for r in m.values()) + missing
            right = sum(m[c][c] for c in CLASSES)
            acc = right / total if total else 0
            noise = sum(m["Other"].values())
            noise_ok = m["Other"]["Other"] == noise
            print("%s %s, %s: %.2f%% of bytes right (limit %.0f%%)%s%s"
                  % (name, transport, method, 100 * acc, 100 * LIMITS[method],
                     "" if noise_ok else ", noise not all Other",
                     ", %d bytes of truth flows not in the report" % missing if missing else ""))
            print(show(m))
            by_key = {figures.flow_key(f): f for f in report["flows"]}
            op, op_conf = figures.operations(truth, by_key)
            print("  operation right %s, confident wrong %.2f%%  [%s]"
                  % ("-" if op is None else "%.2f%%" % (100 * op),
                     100 * figures.confident_wrong(truth, by_key),
                     figures.show_op_confusion(op_conf)))
            print(figures.show_reliability(figures.reliability(truth, by_key)))
            if acc + 1e-12 < LIMITS[method] or not noise_ok:
                failures.append(method)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
