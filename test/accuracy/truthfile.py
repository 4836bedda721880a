"""Ground truth (commtap.truth/v1, the schema `commtap synth --truth` writes,
docs/labels.md) for captures that were not synthesized: every flow found in
the capture gets the class the scenario says, with its packets and bytes
counted as synth counts them (Ethernet header + IP datagram, no padding).

Flow keys as commtap keys them: RoCEv2 (UDP 4791) by (src, dst, destination
QP), TCP by the 5-tuple. Stdlib only.
"""
import ipaddress
import json
import struct

import pcapio

ROCE_PORT = 4791


def flow_of(frame):
    """(key, bytes) of one Ethernet frame, or (None, 0) when it is no IP flow."""
    off = 12
    etype = struct.unpack_from("!H", frame, off)[0]
    while etype in (0x8100, 0x88A8):
        off += 4
        etype = struct.unpack_from("!H", frame, off)[0]
    off += 2
    if etype == 0x0800:
        ihl = (frame[off] & 0x0F) * 4
        total = struct.unpack_from("!H", frame, off + 2)[0]
        proto = frame[off + 9]
        src = str(ipaddress.IPv4Address(frame[off + 12 : off + 16]))
        dst = str(ipaddress.IPv4Address(frame[off + 16 : off + 20]))
        l4 = off + ihl
        size = 14 + total
    elif etype == 0x86DD:
        plen = struct.unpack_from("!H", frame, off + 4)[0]
        proto = frame[off + 6]
        src = str(ipaddress.IPv6Address(frame[off + 8 : off + 24]))
        dst = str(ipaddress.IPv6Address(frame[off + 24 : off + 40]))
        l4 = off + 40
        size = 14 + 40 + plen
    else:
        return None, 0
    if proto == 17:
        sport, dport = struct.unpack_from("!HH", frame, l4)
        if dport == ROCE_PORT:
            qpn = int.from_bytes(frame[l4 + 8 + 5 : l4 + 8 + 8], "big")
            return ("roce", src, dst, qpn), size
        return ("udp", src, dst, sport, dport), size
    if proto == 6:
        sport, dport = struct.unpack_from("!HH", frame, l4)
        return ("tcp", src, dst, sport, dport), size
    return None, 0


def count_flows(pcap):
    """{key: [packets, bytes, first_ts_ns]} for every flow of the capture."""
    flows = {}
    for ts, frame, _wire in pcapio.read(pcap):
        key, size = flow_of(frame)
        if key is None:
            continue
        f = flows.setdefault(key, [0, 0, ts])
        f[0] += 1
        f[1] += size
    return flows


def flow_json(key, packets, nbytes, cls, direction):
    o = {"transport": key[0], "src": key[1], "dst": key[2]}
    if key[0] == "roce":
        o["qpn"] = key[3]
    else:
        o["sport"], o["dport"] = key[3], key[4]
    o.update({"class": cls, "direction": direction, "packets": packets, "bytes": nbytes})
    return o


def reverse_key(key):
    if key[0] == "roce":
        return None  # the reverse QP's number is not in the key
    return (key[0], key[2], key[1], key[4], key[3])


def write(pcap, path, scenario, transport, classify, note=""):
    """Write the truth of pcap to path. classify(key) -> class. Of a
    connection's two directions the one with more bytes is "data"."""
    flows = count_flows(pcap)
    per_class = {}
    out = []
    for key in sorted(flows, key=lambda k: (flows[k][2], str(k))):
        packets, nbytes, _ = flows[key]
        cls = classify(key)
        rev = flows.get(reverse_key(key))
        direction = "reverse" if rev and rev[1] > nbytes else "data"
        per_class[cls] = per_class.get(cls, 0) + nbytes
        out.append(flow_json(key, packets, nbytes, cls, direction))
    truth = {
        "schema": "commtap.truth/v1",
        "profile": scenario,
        "transport": transport,
        "iterations": 0,
        "iteration_starts_ns": [],
        "mean_period_s": None,
        "training_job": False,
        "note": note,
        "bytes_per_class": per_class,
        "flows": out,
    }
    with open(path, "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    return truth
