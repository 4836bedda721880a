#!/usr/bin/env python3
"""synth cuts transfers into network messages as the profile's "nccl" says.

  nccl_chunks.py COMMTAP

For one GPT layout, (p,t,d) = (2,2,2) with one GPU per host, it renders an
iteration with several "nccl" settings and reads the messages back from
the capture: RoCE by the RETH's DMA length of each WRITE FIRST / ONLY, TCP
by the 4-byte size segments on the control connections. Expected, from
NCCL's constants (docs/profiles.md):

  Simple, ring, 4 MiB buffer   collectives 1 MiB (a slice of 2 steps of 512 KiB)
  Simple, tree                 512 KiB (one step)
  Simple, ring, 1 MiB buffer   256 KiB
  LL                           64 KiB on the wire per message (32 KiB of data)
  LL128                        614400 B on the wire per step (576000 B of data)
  p2p chunks (PP)              NCCL_P2P_NET_CHUNKSIZE: 128 KiB, or as set
  channels                     connections per peer and class, as set
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "accuracy"))

import pcapio  # noqa: E402

PROFILE = {
    "name": "nccl-chunks",
    "model": {"kind": "gpt", "layers": 24, "hidden": 1024, "seq_len": 1024,
              "global_batch": 64, "micro_batch": 4, "micro_batches": 8},
    "parallelism": {"p": 2, "t": 2, "d": 2},
    "placement": {"gpus": 8, "gpus_per_host": 1, "mapping": "custom"},
    "hardware": {"platform": "A100"},
}


def messages(pcap, truth):
    """{class: sorted distinct message sizes} from RETH DMA lengths, and the
    number of RoCE connections per (src, dst, class)."""
    cls_of = {(f["src"], f["dst"], f["qpn"]): f["class"]
              for f in truth["flows"] if f["transport"] == "roce"}
    sizes = {}
    for _ts, frame, _wire in pcapio.read(pcap):
        if struct.unpack_from("!H", frame, 12)[0] != 0x0800 or frame[23] != 17:
            continue
        if struct.unpack_from("!H", frame, 36)[0] != 4791:
            continue
        bth = 42
        opcode = frame[bth]
        if opcode not in (0x06, 0x0B):  # WRITE FIRST / ONLY carry the RETH
            continue
        qpn = int.from_bytes(frame[bth + 5 : bth + 8], "big")
        src = ".".join(str(b) for b in frame[26:30])
        dst = ".".join(str(b) for b in frame[30:34])
        dma = struct.unpack_from("!I", frame, bth + 12 + 12)[0]
        cls = cls_of.get((src, dst, qpn))
        if dma > 64:  # not a clear-to-send
            sizes.setdefault(cls, set()).add(dma)
    return sizes


def tcp_ctrl(pcap, truth):
    """Per class: (segments of exactly 4 bytes, data connections, control connections)."""
    out = {}
    for f in truth["flows"]:
        if f["transport"] != "tcp" or f["direction"] != "data" or f["class"] == "Other":
            continue
        c = out.setdefault(f["class"], [0, 0])
        # a control connection carries only 4-byte sizes (and ACKs): 58-byte frames
        c[0 if f["bytes"] == f["packets"] * (14 + 20 + 20 + 4) else 1] += 1
    return out


def synth(commtap, tmp, nccl, transport="roce"):
    prof = dict(PROFILE, nccl=nccl) if nccl is not None else PROFILE
    path = os.path.join(tmp, "p.json")
    with open(path, "w") as f:
        json.dump(prof, f)
    pcap = os.path.join(tmp, "c.pcap")
    subprocess.run([commtap, "synth", path, "-o", pcap, "--iterations", "1", "--scale", "0.05",
                    "--time-scale", "0.05", "--snaplen", "128", "--transport", transport], check=True,
                   capture_output=True)
    return pcap, json.load(open(pcap[:-5] + ".truth.json"))


def main():
    commtap = sys.argv[1]
    fails = []

    def expect(what, got, want):
        ok = got == want
        print("%-44s %s%s" % (what, got, "" if ok else "  (expected %s)" % (want,)))
        if not ok:
            fails.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        cases = [
            ("Simple ring 4 MiB", {}, 1 << 20, 128 << 10),
            ("Simple tree", {"algorithm": "tree"}, 512 << 10, 128 << 10),
            ("Simple ring 1 MiB buffer, p2p 64 KiB",
             {"buffsize": 1 << 20, "p2p_chunksize": 64 << 10}, 256 << 10, 64 << 10),
            ("LL", {"protocol": "LL"}, 64 << 10, 128 << 10),
            ("LL128", {"protocol": "LL128"}, 614400, 128 << 10),
            ("no nccl object (fixed sizes)", None, 512 << 10, 128 << 10),
        ]
        for name, nccl, coll, p2p in cases:
            pcap, truth = synth(commtap, tmp, nccl)
            sizes = messages(pcap, truth)
            expect(name + ": largest DP message", max(sizes.get("DP", {0})), coll)
            expect(name + ": largest PP message", max(sizes.get("PP", {0})), p2p)
        pcap, truth = synth(commtap, tmp, {"channels": 4})
        conns = {(f["src"], f["dst"]) for f in truth["flows"]
                 if f["class"] == "DP" and f["direction"] == "data"}
        qps = [f for f in truth["flows"] if f["class"] == "DP" and f["direction"] == "data"]
        expect("channels 4: DP connections per host pair", len(qps) // len(conns), 4)
        pcap, truth = synth(commtap, tmp, {}, "tcp")
        ctrl = tcp_ctrl(pcap, truth)
        expect("socket transport: DP control connections", ctrl["DP"][0], ctrl["DP"][1])
    print("%d failed" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
