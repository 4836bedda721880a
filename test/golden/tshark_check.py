#!/usr/bin/env python3
"""Cross-check `commtap analyze --json` against Wireshark's dissector.

tshark is the independent oracle: for every RoCEv2 flow (src, dst, dest QP)
and TCP flow (5-tuple) it decodes, the packet count, wire bytes, per-opcode
counts, request/response PSN ranges and READ RETH lengths must equal
commtap's. Exit 77 (skip) where tshark or the capture is missing.

With --snap N every frame is first cut to N bytes, as a SPAN session cuts its
copies: flows, packets and wire bytes must still agree. A RoCE copy cut before
its destination QP (tshark decodes no BTH QP, UDP port 4791) is counted by
commtap on its address pair's flow (qpn null, qpn_cut the reason): both sides
key such packets by the address pair and compare packets and bytes.

  tshark_check.py [--snap N] COMMTAP CAPTURE
"""
import collections
import json
import shutil
import os
import subprocess
import sys
import tempfile

import cut_pcap

TRANSPORTS = {0x00: "RC", 0x20: "UC", 0x40: "RD", 0x60: "UD", 0xA0: "XRC"}
OPS = ["SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_IMM", "SEND_ONLY",
       "SEND_ONLY_IMM", "WRITE_FIRST", "WRITE_MIDDLE", "WRITE_LAST", "WRITE_LAST_IMM",
       "WRITE_ONLY", "WRITE_ONLY_IMM", "READ_REQUEST", "READ_RESP_FIRST",
       "READ_RESP_MIDDLE", "READ_RESP_LAST", "READ_RESP_ONLY", "ACK", "ATOMIC_ACK",
       "CMP_SWAP", "FETCH_ADD", "RESYNC", "SEND_LAST_INV", "SEND_ONLY_INV"]
# Opcodes whose PSN belongs to the responder's sequence (ACK, READ responses).
RESPONSE_OPS = {"READ_RESP_FIRST", "READ_RESP_MIDDLE", "READ_RESP_LAST",
                "READ_RESP_ONLY", "ACK", "ATOMIC_ACK"}

FIELDS = ["frame.number", "eth.type", "vlan.id", "ip.src", "ip.dst", "ipv6.src",
          "ipv6.dst", "ip.len", "ipv6.plen", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reth.dmalen",
          "tcp.srcport", "tcp.dstport", "udp.dstport"]


def opcode_name(op):
    if op == 0x81:
        return "CNP"
    return "%s_%s" % (TRANSPORTS.get(op & 0xE0, "?"), OPS[op & 0x1F])


def tshark_flows(capture):
    cmd = ["tshark", "--disable-protocol", "tftp", "-r", capture, "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    flows = {}
    for line in out.splitlines():
        v = dict(zip(FIELDS, line.split("\t")))
        vlans = len([x for x in v["vlan.id"].split(",") if x])
        if v["ip.src"]:
            src, dst = v["ip.src"].split(",")[-1], v["ip.dst"].split(",")[-1]
            l3 = int(v["ip.len"].split(",")[-1])
        elif v["ipv6.src"]:
            src, dst = v["ipv6.src"].split(",")[-1], v["ipv6.dst"].split(",")[-1]
            l3 = 40 + int(v["ipv6.plen"].split(",")[-1])
        else:
            continue
        wire = 14 + 4 * vlans + l3
        if v["infiniband.bth.destqp"]:
            op = int(v["infiniband.bth.opcode"])
            key = ("roce", src, dst, int(v["infiniband.bth.destqp"], 16))
        elif v["udp.dstport"].split(",")[-1] == "4791":  # cut before the QP
            op = None
            key = ("roce", src, dst, None)
        elif v["tcp.srcport"]:
            op = None
            key = ("tcp", src, dst, int(v["tcp.srcport"]), int(v["tcp.dstport"]))
        else:
            continue
        f = flows.setdefault(key, {"packets": 0, "bytes": 0,
                                   "opcodes": collections.Counter(),
                                   "req_psn": [], "resp_psn": [], "read_len": 0})
        f["packets"] += 1
        f["bytes"] += wire
        if op is None:
            continue
        name = opcode_name(op)
        f["opcodes"][name] += 1
        psn = int(v["infiniband.bth.psn"])
        if name != "CNP":
            f["resp_psn" if name.split("_", 1)[1] in RESPONSE_OPS else "req_psn"].append(psn)
        if name.endswith("READ_REQUEST") and v["infiniband.reth.dmalen"]:
            f["read_len"] += int(v["infiniband.reth.dmalen"])
    return flows


def commtap_flows(commtap, capture):
    out = subprocess.run([commtap, "analyze", "--json", "-", capture], check=True,
                         capture_output=True, text=True).stdout
    flows = {}
    for f in json.loads(out)["flows"]:
        if f["transport"] == "roce":
            key = ("roce", f["src"], f["dst"], f["qpn"])
        else:
            key = ("tcp", f["src"], f["dst"], f["sport"], f["dport"])
        if key in flows:  # one address pair's copies cut at different places
            flows[key]["packets"] += f["packets"]
            flows[key]["bytes"] += f["bytes"]
        else:
            flows[key] = f
    return flows


def compare(ref, got):
    errors = []
    for key in sorted(set(ref) | set(got), key=str):
        if key not in got:
            errors.append("%s: decoded by tshark, missing from commtap" % (key,))
            continue
        if key not in ref:
            errors.append("%s: reported by commtap, unknown to tshark" % (key,))
            continue
        r, g = ref[key], got[key]
        checks = [("packets", r["packets"], g["packets"]), ("bytes", r["bytes"], g["bytes"])]
        if key[0] == "roce" and key[3] is not None:
            checks.append(("opcodes", dict(r["opcodes"]), g["opcodes"]))
            checks.append(("READ RETH bytes", r["read_len"], g["reads"]["bytes_requested"]))
            psn = g["psn"]
            if r["req_psn"]:
                checks.append(("first request PSN", r["req_psn"][0], psn.get("request_first")))
                checks.append(("last request PSN", r["req_psn"][-1], psn.get("request_last")))
            if r["resp_psn"]:
                checks.append(("first response PSN", r["resp_psn"][0], psn.get("response_first")))
                checks.append(("last response PSN", r["resp_psn"][-1], psn.get("response_last")))
        for what, want, have in checks:
            if want != have:
                errors.append("%s: %s: tshark %s, commtap %s" % (key, what, want, have))
    return errors


def main():
    args = sys.argv[1:]
    snap = None
    if args[:1] == ["--snap"] and len(args) >= 2:
        snap = int(args[1])
        args = args[2:]
    if len(args) != 2:
        print("usage: tshark_check.py [--snap N] COMMTAP CAPTURE", file=sys.stderr)
        return 2
    commtap, capture = args
    if not shutil.which("tshark"):
        print("SKIP: tshark is not installed")
        return 77
    try:
        open(capture, "rb").close()
    except OSError:
        print("SKIP: %s not found (../shared/pcaps is absent)" % capture)
        return 77
    with tempfile.TemporaryDirectory(prefix="tshark-check-") as tmp:
        if snap:
            cut = os.path.join(tmp, "cut.pcap")
            cut_pcap.cut(snap, capture, cut)
            capture = cut
        ref = tshark_flows(capture)
        got = commtap_flows(commtap, capture)
    errors = compare(ref, got)
    for e in errors:
        print("MISMATCH " + e)
    print("%s%s: %d flows, %d packets checked against tshark, %d mismatches"
          % (args[1].rsplit("/", 1)[-1], " cut to %d bytes" % snap if snap else "", len(ref),
             sum(f["packets"] for f in ref.values()), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
