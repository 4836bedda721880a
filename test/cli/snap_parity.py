#!/usr/bin/env python3
"""64-byte mirror copies count like 128-byte ones.

Every bundled profile (IPv4) is rendered with 0, 1 and 2 VLAN tags, once cut
to 64 bytes per frame and once to 128, and analysed. At 64 bytes the RETH of
a WRITE FIRST/ONLY is cut (with two tags the AETH of an ACK too); the two
reports must still give the same flows, packets, bytes and messages (count,
bytes, size histogram), with nothing malformed, and the 64-byte one must say
which message sizes it inferred from the payload lengths.

  snap_parity.py COMMTAP PROFILE_DIR
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

SYNTH_ARGS = ["--iterations", "2", "--scale", "0.01", "--noise"]
FLOW_FIELDS = ["packets", "bytes", "messages", "message_bytes", "msg_size_hist"]


def flow_key(f):
    if f["transport"] == "roce":
        return ("roce", f["src"], f["dst"], f["qpn"])
    return ("tcp", f["src"], f["dst"], f["sport"], f["dport"])


def analyse(commtap, profile, vlan, snap, workdir):
    pcap = os.path.join(workdir, "v%d-s%d.pcap" % (vlan, snap))
    subprocess.run([commtap, "synth", profile, "--vlan", str(vlan), "--snaplen", str(snap),
                    "-o", pcap] + SYNTH_ARGS, check=True, capture_output=True)
    out = subprocess.run([commtap, "analyze", "--json", "-", pcap], check=True,
                         capture_output=True, text=True).stdout
    os.remove(pcap)
    return json.loads(out)


def compare(name, cut, whole):
    errors = []
    cc, wc = cut["capture"], whole["capture"]
    for k in ["packets", "bytes", "roce_packets", "tcp_packets"]:
        if cc[k] != wc[k]:
            errors.append("%s: capture %s: %s at 64 B, %s at 128 B" % (name, k, cc[k], wc[k]))
    if cc["malformed"]["total"]:
        errors.append("%s: %d malformed at 64 B: %s"
                      % (name, cc["malformed"]["total"], cc["malformed"]["by_reason"]))
    if wc["messages_size_inferred"]:
        errors.append("%s: sizes inferred at 128 B, where every RETH is whole" % name)
    cf = {flow_key(f): f for f in cut["flows"]}
    wf = {flow_key(f): f for f in whole["flows"]}
    if set(cf) != set(wf):
        errors.append("%s: flows differ: only at 64 B %s, only at 128 B %s"
                      % (name, sorted(set(cf) - set(wf), key=str)[:3],
                         sorted(set(wf) - set(cf), key=str)[:3]))
    for key in sorted(set(cf) & set(wf), key=str):
        for field in FLOW_FIELDS:
            if cf[key][field] != wf[key][field]:
                errors.append("%s: %s %s: %s at 64 B, %s at 128 B"
                              % (name, key, field, cf[key][field], wf[key][field]))
    flows_inferred = sum(f.get("messages_size_inferred", 0) for f in cut["flows"])
    if flows_inferred != cc["messages_size_inferred"]:
        errors.append("%s: flows infer %d sizes, the capture %d"
                      % (name, flows_inferred, cc["messages_size_inferred"]))
    return errors, cc["messages_size_inferred"], cc["roce_headers_cut"]["extension_headers"]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    commtap, profile_dir = sys.argv[1:]
    profiles = sorted(glob.glob(os.path.join(profile_dir, "*.json")))
    if not profiles:
        print("no profiles in %s" % profile_dir, file=sys.stderr)
        return 1
    errors, inferred, cut_packets, renders = [], 0, 0, 0
    with tempfile.TemporaryDirectory(prefix="snap-parity-") as workdir:
        for profile in profiles:
            for vlan in (0, 1, 2):
                name = "%s vlan=%d" % (os.path.basename(profile), vlan)
                cut = analyse(commtap, profile, vlan, 64, workdir)
                whole = analyse(commtap, profile, vlan, 128, workdir)
                e, n, c = compare(name, cut, whole)
                errors += e
                inferred += n
                cut_packets += c
                renders += 2
    for e in errors[:40]:
        print("MISMATCH " + e)
    print("%d profiles x 3 VLAN depths at 64 and 128 B: %d captures, %d copies with cut "
          "extension headers, %d message sizes inferred, %d mismatches"
          % (len(profiles), renders, cut_packets, inferred, len(errors)))
    if not cut_packets or not inferred:
        print("FAIL: no extension header was cut: the test exercised nothing")
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
