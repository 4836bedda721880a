#!/usr/bin/env python3
"""The advice on a synthesized job whose computation and communication are known.

A DDP job (ResNet50, 8 GPUs on 4 hosts) whose class bandwidth is 98% of the
NIC's, so that each transfer keeps the wire busy from its start to its end:
the prediction's schedule (commtap predict --json, each host pair's
on-periods) then is the communication the wire carries, and the rest of the
iteration the computation. Synthesized with sizes and times scaled alike
(rates kept), analysed with the profile (it states the NIC's rate):

  communication ratio, per class and together   within 1 point of the schedule's
  scheduling bound                              the closed form T_iter / max(T_comp, T_comm)
                                                of the schedule, within 1%
  bandwidth utilization                         within 2% of 0.98 x the RoCE header overhead

  synth_advice.py COMMTAP
"""
import json
import os
import subprocess
import sys
import tempfile

from spans import union

SCALE = 0.2  # sizes and times alike: an iteration of 8 ms, 18 MB of capture
ITERATIONS = 6
NIC_EFFICIENCY = 0.98
# a 4096-byte RDMA WRITE payload carries Ethernet 14, IPv4 20, UDP 8, BTH 12,
# ICRC 4 (and RETH 16 on a message's first packet, left out): 58 bytes
HEADER_OVERHEAD = (4096 + 58) / 4096
BURST_GAP_MS = "0.01"  # the transfers' own gaps (bucket to bucket) are longer

PROFILE = {
    "name": "advice-ddp",
    "model": {"kind": "ddp", "architecture": "resnet50", "batch_per_gpu": 32,
              "precision": "fp32", "bucket_mb": 25, "first_bucket_mb": 1},
    "placement": {"gpus": 8, "gpus_per_host": 2},
    "hardware": {"platform": "RTX3090-PCIe", "nic_efficiency": NIC_EFFICIENCY},
}


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    commtap = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory(prefix="commtap-advice-") as tmp:
        prof = os.path.join(tmp, "profile.json")
        pcap = os.path.join(tmp, "job.pcap")
        report = os.path.join(tmp, "report.json")
        with open(prof, "w") as f:
            json.dump(PROFILE, f)
        pred = json.loads(run(commtap, "predict", "--json", prof))
        run(commtap, "synth", prof, "-o", pcap, "--iterations", str(ITERATIONS),
            "--snaplen", "64", "--scale", str(SCALE), "--time-scale", str(SCALE))
        run(commtap, "analyze", "--burst-gap", BURST_GAP_MS, "--profile", prof, "--json",
            report, pcap)
        with open(report) as f:
            advice = json.load(f)["advice"]
        # the operator's --nic-gbps wins over the profile's; neither: unknown
        nic = advice["nic_gbps"]  # the profile's platform's
        run(commtap, "analyze", "--burst-gap", BURST_GAP_MS, "--profile", prof, "--nic-gbps",
            str(2 * nic), "--json", report, pcap)
        with open(report) as f:
            given = json.load(f)["advice"]
        run(commtap, "analyze", "--burst-gap", BURST_GAP_MS, "--json", report, pcap)
        with open(report) as f:
            unstated = json.load(f)["advice"]

    t_iter = pred["time_s"]["iteration_schedule"] * SCALE
    spans, by_class = [], {}
    for pair in pred["schedule"]:
        for s, e, _ in pair["on_periods_s_s_bytes"]:
            spans.append((s * SCALE, e * SCALE))
            by_class.setdefault(pair["class"], []).append((s * SCALE, e * SCALE))
    t_comm = union(spans)
    job = advice["jobs"][0]
    print(f"NIC {advice['nic_gbps']} Gb/s from the {advice['nic_source']}")
    print(f"iteration: schedule {t_iter:.6f} s, measured {job['iteration_s']:.6f} s")

    def check(what, got, want, tol):
        ok = got is not None and abs(got - want) <= tol
        print(f"{what}: {got} against {want:.4f} (+-{tol:.4f}) {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(what)

    check("communication ratio", job["comm_ratio"], t_comm / t_iter, 0.01)
    for cls, cls_spans in by_class.items():
        got = job["classes"].get(cls, {})
        check(f"{cls} communication ratio", got.get("comm_ratio"), union(cls_spans) / t_iter,
              0.01)
        check(f"{cls} bandwidth utilization", got.get("bw_utilization"),
              NIC_EFFICIENCY * HEADER_OVERHEAD, 0.02)
    bound = t_iter / max(t_iter - t_comm, t_comm)
    check("scheduling bound", job["scheduling"]["speedup_bound"], bound, 0.01 * bound)
    if advice["nic_source"] != "profile":
        failures.append("the profile's NIC rate")
    dp = job["classes"]["DP"]["bw_utilization"]
    print(f"--nic-gbps {2 * nic}: {given['nic_source']} {given['nic_gbps']}, DP utilization "
          f"{given['jobs'][0]['classes']['DP']['bw_utilization']} (half of {dp}); neither: "
          f"{unstated['nic_source']} {unstated['jobs'][0]['classes']['DP']['bw_utilization']}")
    if given["nic_source"] != "option" or given["nic_gbps"] != 2 * nic or \
            abs(given["jobs"][0]["classes"]["DP"]["bw_utilization"] - dp / 2) > 0.01 * dp:
        failures.append("the --nic-gbps given")
    if unstated["nic_source"] is not None or \
            unstated["jobs"][0]["classes"]["DP"]["bw_utilization"] is not None:
        failures.append("no NIC rate stated: unknown")
    if failures:
        print("FAILED:", ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
