#!/usr/bin/env python3
"""synth's truth names each flow's collective operation (issue 29, item 1).

  test_truth_operations.py COMMTAP BUNDLED_PROFILES_DIR

For a few bundled profiles and layout-matrix profiles (ZeRO-1, ZeRO-3, TP
across hosts), over RoCE and TCP: `commtap synth --truth-operations` must
give every truth flow an "operation" and "operation_bytes" that add up to
its bytes, each class's flows the operations the model moves that class
with (TP, EmbTableSyn and plain DP: AllReduce; sharded DP: AllGather and
ReduceScatter; PP: SendRecv; EP: AllToAll; storage noise: Other), and the
truth a layout whose `sharded` says whether the profile uses ZeRO. Without
the flag the truth has neither (the frozen truths stay as they were) and
the capture is byte for byte the same.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_matrix  # noqa: E402

ITERATIONS = 3
# Each class's operations, as profiles/model.c moves them.
PLAIN = {"TP": {"AllReduce"}, "PP": {"SendRecv"}, "DP": {"AllReduce"}, "EP": {"AllToAll"},
         "EmbTableSyn": {"AllReduce"}, "Other": {"Other"}}
SHARDED = dict(PLAIN, DP={"AllGather", "ReduceScatter"})


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def synth(commtap, profile, out, transport, ops):
    pred = json.loads(run(commtap, "predict", "--json", profile))
    time_scale = 0.05 / pred["time_s"]["iteration_schedule"]
    size_scale = min(time_scale, 8e6 / (pred["nic_bytes_per_iteration"] * ITERATIONS))
    run(commtap, "synth", profile, "-o", out, "--iterations", str(ITERATIONS),
        "--transport", transport, "--scale", "%.9g" % size_scale,
        "--time-scale", "%.9g" % time_scale, "--jitter", "0.05", "--noise", "--snaplen", "128",
        "--seed", "7", *(["--truth-operations"] if ops else []))
    with open(out[:-5] + ".truth.json") as f:
        return json.load(f)


def check(name, truth, sharded, want_classes):
    errors = []
    lay = truth.get("layout") or {}
    if lay.get("sharded") is not sharded:
        errors.append("layout.sharded %r, the profile says %r" % (lay.get("sharded"), sharded))
    allowed = SHARDED if sharded else PLAIN
    seen = {}
    for f in truth["flows"]:
        per = f.get("operation_bytes") or {}
        if sum(per.values()) != f["bytes"]:
            errors.append("%s->%s: operation_bytes add to %d, the flow has %d bytes"
                          % (f["src"], f["dst"], sum(per.values()), f["bytes"]))
            break
        if f.get("operation") != max(per, key=per.get, default=None):
            errors.append("%s->%s: operation %r is not the one with most bytes %r"
                          % (f["src"], f["dst"], f.get("operation"), per))
            break
        for op, b in per.items():
            seen.setdefault(f["class"], {}).setdefault(op, 0)
            seen[f["class"]][op] += b
    for cls, ops in seen.items():
        if not set(ops) <= allowed[cls]:
            errors.append("%s flows carry %s, expected only %s"
                          % (cls, sorted(ops), sorted(allowed[cls])))
    if sharded and "DP" in seen and set(seen["DP"]) != SHARDED["DP"]:
        errors.append("sharded DP carries %s, not both all-gather and reduce-scatter"
                      % sorted(seen["DP"]))
    missing = set(want_classes) - set(seen)
    if missing:
        errors.append("no flow of %s on the wire" % sorted(missing))
    print("%-32s %s" % (name, "; ".join("%s: %s" % (c, ", ".join(
        "%s %.0f%%" % (op, 100 * b / sum(ops.values())) for op, b in sorted(ops.items())))
        for c, ops in sorted(seen.items()))))
    return errors


def main():
    commtap, bundled = sys.argv[1:3]
    cases = [  # (name, profile, sharded, classes that must cross a NIC)
        ("gpt-3b-deepspeed-default", os.path.join(bundled, "gpt-3b-deepspeed-default.json"),
         False, ["PP", "EmbTableSyn", "Other"]),
        ("moe-125m-2hosts", os.path.join(bundled, "moe-125m-2hosts.json"), False,
         ["EP", "DP", "Other"]),
        ("ddp-resnet50-32gpu", os.path.join(bundled, "ddp-resnet50-32gpu.json"), False,
         ["DP", "Other"]),
    ]
    generated = [
        (make_matrix.gpt("gpt-p1t2d4-1gph-zero3", 1, 2, 4, 1, par={"zero": 3}), True,
         ["TP", "DP"]),
        (make_matrix.gpt("gpt-p2t2d2-1gph-zero1", 2, 2, 2, 1, par={"zero": 1}), True,
         ["TP", "PP", "DP", "EmbTableSyn"]),
        (make_matrix.gpt("gpt-p2t4d2-4gph-tp-across", 2, 4, 2, 4, "explicit",
                         rank_hosts=make_matrix.tp_across_hosts(2, 4, 2)), False, ["TP"]),
    ]
    failures = []
    with tempfile.TemporaryDirectory(prefix="commtap-truth-ops-") as tmp:
        for prof, sharded, classes in generated:
            path = os.path.join(tmp, prof["name"] + ".json")
            with open(path, "w") as f:
                json.dump(prof, f)
            cases.append((prof["name"], path, sharded, classes))
        for name, profile, sharded, classes in cases:
            for transport in ("roce", "tcp"):
                label = "%s %s" % (name, transport)
                with_ops = os.path.join(tmp, "ops.pcap")
                plain = os.path.join(tmp, "plain.pcap")
                errors = check(label, synth(commtap, profile, with_ops, transport, True),
                               sharded, classes)
                t = synth(commtap, profile, plain, transport, False)
                if "layout" in t or any("operation" in f for f in t["flows"]):
                    errors.append("without --truth-operations the truth names operations")
                if digest(with_ops) != digest(plain):
                    errors.append("--truth-operations changed the capture")
                failures += ["%s: %s" % (label, e) for e in errors]
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
