#!/usr/bin/env python3
"""Several jobs on one fabric (issue "Flow classification", "Several jobs").

Two bundled profiles are synthesized on disjoint hosts (the second moved to
198.18.<block>.x) with different iteration periods, 5% jitter and storage
noise, and merged into one capture. `commtap analyze` with nothing but the
traffic must report both in `jobs`:

  - exactly the hosts of each job (the storage server may join none);
  - each job's period within 1% of its realized mean iteration period;
  - the top-level `job` is the one with the most bytes;
  - at least 90% of each job's bytes classified right by signatures.

Also printed, measured and not gated (issue 29, test/accuracy/figures.py):
per job the operation recognised right and the bytes wrong at confidence
>= 0.8.

  jobs_accuracy.py COMMTAP PROFILE_A PROFILE_B roce|tcp
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "accuracy"))
import figures  # noqa: E402

ITERATIONS = 12
TARGET_BYTES = 40e6
PERIOD_LIMIT = 0.01
CLASS_LIMIT = 0.90


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def key(f):
    if f["transport"] == "roce":
        return ("roce", f["src"], f["dst"], f["qpn"])
    return ("tcp", f["src"], f["dst"], f["sport"], f["dport"])


def synth(commtap, profile, out, iteration_s, block, transport, seed):
    """Render profile with iteration_s per iteration on hosts 198.18.<block>.x."""
    pred = json.loads(run(commtap, "predict", "--json", profile))
    if not pred["nic_bytes_per_iteration"]:
        return None
    prof = json.load(open(profile))
    prof.setdefault("placement", {})["hosts"] = [
        "198.18.%d.%d" % (block, h + 1) for h in range(pred["hosts"])]
    moved = out[:-5] + ".profile.json"
    with open(moved, "w") as f:
        json.dump(prof, f)
    time_scale = iteration_s / pred["time_s"]["iteration_schedule"]
    size_scale = min(time_scale, TARGET_BYTES / (pred["nic_bytes_per_iteration"] * ITERATIONS))
    run(commtap, "synth", moved, "-o", out, "--iterations", str(ITERATIONS),
        "--transport", transport, "--scale", "%.9g" % size_scale,
        "--time-scale", "%.9g" % time_scale, "--jitter", "0.05", "--noise",
        "--snaplen", "128", "--seed", str(seed), "--truth-operations")
    truth = json.load(open(out[:-5] + ".truth.json"))
    truth["hosts"] = set(prof["placement"]["hosts"])
    return truth


def main():
    commtap, prof_a, prof_b, transport = sys.argv[1:5]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        truths = []
        for i, (profile, period) in enumerate(((prof_a, 0.050), (prof_b, 0.037))):
            t = synth(commtap, profile, os.path.join(tmp, "job%d.pcap" % i), period, 10 + i,
                      transport, 11 + i)
            if t is None:
                print("SKIP: %s has no NIC traffic" % os.path.basename(profile))
                return 77
            truths.append(t)
        both = os.path.join(tmp, "both.pcap")
        run("mergecap", "-w", both, os.path.join(tmp, "job0.pcap"), os.path.join(tmp, "job1.pcap"))
        report = json.loads(run(commtap, "analyze", "--json", "-", both))

    jobs = report.get("jobs", [])
    print("%d jobs found, %d synthesized" % (len(jobs), len(truths)))
    for j in jobs:
        print("  hosts %s period %.6f s confidence %.2f bytes %d classes %s"
              % (",".join(j["hosts"]), j["iteration_period_s"], j["period_confidence"],
                 j["bytes"], j.get("class_bytes")))
    if len(jobs) != len(truths):
        failures.append("jobs")
    found = {key(f): f for f in report["flows"]}
    for t in truths:
        job = next((j for j in jobs if set(j["hosts"]) & t["hosts"]), None)
        name = t["profile"]
        if job is None:
            print("%s: no job holds its hosts" % name)
            failures.append(name)
            continue
        hosts = set(job["hosts"])
        err = abs(job["iteration_period_s"] - t["mean_period_s"]) / t["mean_period_s"]
        right = total = 0
        for f in t["flows"]:
            total += f["bytes"]
            g = found.get(key(f))
            if g is not None and g.get("class") == f["class"]:
                right += f["bytes"]
        acc = right / total if total else 0
        print("%s %s: hosts %s, period %.6f s vs %.6f s realized (%.2f%%, limit 1%%), "
              "%.2f%% of bytes classified right (limit 90%%)"
              % (name, transport, "exact" if hosts == t["hosts"] else "WRONG",
                 job["iteration_period_s"], t["mean_period_s"], 100 * err, 100 * acc))
        by_key = {figures.flow_key(f): f for f in report["flows"]}
        op, _ = figures.operations(t, by_key)
        print("  operation right %s, confident wrong %.2f%% (measured, not gated)"
              % ("-" if op is None else "%.2f%%" % (100 * op),
                 100 * figures.confident_wrong(t, by_key)))
        if hosts != t["hosts"] or err > PERIOD_LIMIT or acc + 1e-12 < CLASS_LIMIT:
            failures.append(name)
    if jobs:
        top = max(jobs, key=lambda j: j["bytes"])
        if abs(top["iteration_period_s"] - report["job"]["iteration_period_s"]) > 1e-12:
            print("the top-level job is not the one with the most bytes")
            failures.append("top")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
