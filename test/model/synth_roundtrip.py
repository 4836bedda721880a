#!/usr/bin/env python3
"""synth -> analyze round trip: analyze must find exactly the flows the
synthesizer wrote, with exactly their packets and bytes.

  synth_roundtrip.py COMMTAP PROFILE [roce|tcp] [--noise] [--tshark CHECK.py]

With --tshark, the capture is also decoded by Wireshark's dissector through
test/golden/tshark_check.py, which must agree flow by flow.

The sizes and times are scaled down together (so the on-off shape is kept)
to about TARGET_BYTES of NIC traffic over the iterations.
"""
import json
import os
import subprocess
import sys
import tempfile

TARGET_BYTES = 30e6
ITERATIONS = 4


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def flow_key(f):
    if f["transport"] == "roce":
        return ("roce", f["src"], f["dst"], f["qpn"])
    return ("tcp", f["src"], f["dst"], f["sport"], f["dport"])


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    transport = sys.argv[3] if len(sys.argv) > 3 else "roce"
    noise = "--noise" in sys.argv
    pred = json.loads(run(commtap, "predict", "--json", profile))
    per_iter = pred["nic_bytes_per_iteration"]
    scale = min(1.0, TARGET_BYTES / (per_iter * ITERATIONS)) if per_iter else 1.0
    name = os.path.basename(profile)
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "s.pcap")
        cmd = [commtap, "synth", profile, "-o", pcap, "--iterations", str(ITERATIONS),
               "--transport", transport, "--scale", "%.9g" % scale,
               "--time-scale", "%.9g" % scale, "--jitter", "0.05", "--snaplen", "128"]
        if noise:
            cmd.append("--noise")
        run(*cmd)
        truth = json.load(open(os.path.join(tmp, "s.truth.json")))
        report = json.loads(run(commtap, "analyze", "--json", "-", pcap))
        tshark = None
        if "--tshark" in sys.argv:
            check = sys.argv[sys.argv.index("--tshark") + 1]
            tshark = subprocess.run([sys.executable, check, commtap, pcap],
                                    capture_output=True, text=True)
            print(tshark.stdout.strip())
    want = {flow_key(f): f for f in truth["flows"]}
    got = {flow_key(f): f for f in report["flows"]}
    errors = []
    for k in sorted(set(want) | set(got), key=str):
        if k not in got:
            errors.append("%s: in the truth, not found by analyze" % (k,))
        elif k not in want:
            errors.append("%s: found by analyze, not in the truth" % (k,))
        else:
            for field in ("packets", "bytes"):
                if want[k][field] != got[k][field]:
                    errors.append("%s: %s: truth %d, analyze %d"
                                  % (k, field, want[k][field], got[k][field]))
    if tshark is not None and tshark.returncode not in (0, 77):
        errors.append("tshark disagrees (exit %d)" % tshark.returncode)
    if report["capture"]["malformed"]["total"]:
        errors.append("malformed frames: %s" % report["capture"]["malformed"])
    for e in errors[:20]:
        print("MISMATCH " + e)
    print("%s %s%s: scale %.3g, %d flows, %d packets, %d mismatches"
          % (name, transport, " +noise" if noise else "", scale, len(want),
             report["capture"]["packets"], len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
