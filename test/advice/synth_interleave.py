#!/usr/bin/env python3
"""The interleaving of two jobs on a synthesized shared fabric.

Two GPT jobs of different profiles and periods, custom mapping (the NIC
carries the data-parallel all-reduce, one burst at the end of each
iteration): GPT-1.5B on 198.18.0.1-2 and GPT-3B on 198.18.1.1-4, the
second's iteration 1.5 times the first's, each synthesized alone
(`commtap synth`). In the test's own merge of the two captures, each job's
traffic toward its last host goes to one shared receiver R (198.18.2.1)
instead: R only receives (its acknowledgements stay with the hosts that
sent them), so it joins neither job, and its downlink carries both jobs'
ring traffic, the link they share.

  the report's advice.interleave names R's downlink, shared by the two jobs
  the overlap measured on it after the advised delay (the job's capture
  merged again that much later, analysed again) <= half of the overlap now
  the same delay given to the other job (the sign wrong) does not halve it:
  the check tells a right shift from a wrong one

  synth_interleave.py COMMTAP PROFILES_DIR
"""
import heapq
import json
import os
import struct
import subprocess
import sys
import tempfile

R = bytes([198, 18, 2, 1])
SCALE = 0.005  # message sizes: the all-reduce a few percent of the iteration
A_TIME = 0.001  # GPT-1.5B's 35 s iteration to 35 ms
A_ITERS, B_ITERS = 30, 20


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def profile(pdir, name, net):
    with open(os.path.join(pdir, name + ".json")) as f:
        prof = json.load(f)
    hosts = prof["placement"]["gpus"] // prof["placement"]["gpus_per_host"]
    prof["placement"]["hosts"] = [f"198.18.{net}.{i}" for i in range(1, hosts + 1)]
    return prof, hosts


def ip_checksum(header):
    total = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    total = (total & 0xffff) + (total >> 16)
    total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def read(path, to_r):
    """A nanosecond pcap's records; IPv4 packets to to_r sent to R instead."""
    out = []
    with open(path, "rb") as f:
        head = f.read(24)
        assert struct.unpack("<I", head[:4])[0] == 0xa1b23c4d, "nanosecond pcap"
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            sec, nsec, cap, wire = struct.unpack("<IIII", rec)
            data = bytearray(f.read(cap))
            if data[12:14] == b"\x08\x00" and bytes(data[30:34]) == to_r:
                data[30:34] = R
                data[24:26] = b"\0\0"
                ihl = (data[14] & 15) * 4
                data[24:26] = struct.pack("!H", ip_checksum(bytes(data[14:14 + ihl])))
            out.append((sec * 10**9 + nsec, cap, wire, bytes(data)))
    return head, out


def merged_report(commtap, tmp, head, a, b, delay_a_ns, delay_b_ns):
    pcap, report = os.path.join(tmp, "m.pcap"), os.path.join(tmp, "m.json")
    with open(pcap, "wb") as o:
        o.write(head)
        for t, cap, wire, data in heapq.merge(
                [(t + delay_a_ns, c, w, d) for t, c, w, d in a],
                [(t + delay_b_ns, c, w, d) for t, c, w, d in b]):
            o.write(struct.pack("<IIII", t // 10**9, t % 10**9, cap, wire) + data)
    run(commtap, "analyze", "--json", report, pcap)
    os.unlink(pcap)
    with open(report) as f:
        return json.load(f)


def main():
    commtap, pdir = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory(prefix="commtap-interleave-") as tmp:
        paths, last = {}, {}
        for tag, name, net in (("a", "gpt-1.5b-custom", 0), ("b", "gpt-3b-custom", 1)):
            prof, last[tag] = profile(pdir, name, net)
            paths[tag] = os.path.join(tmp, tag + ".json")
            with open(paths[tag], "w") as f:
                json.dump(prof, f)
        ta = json.loads(run(commtap, "predict", "--json", paths["a"]))["time_s"]
        tb = json.loads(run(commtap, "predict", "--json", paths["b"]))["time_s"]
        b_time = 1.5 * ta["iteration_schedule"] * A_TIME / tb["iteration_schedule"]
        run(commtap, "synth", paths["a"], "-o", os.path.join(tmp, "a.pcap"), "--iterations",
            str(A_ITERS), "--snaplen", "64", "--scale", str(SCALE), "--time-scale",
            str(A_TIME))
        run(commtap, "synth", paths["b"], "-o", os.path.join(tmp, "b.pcap"), "--iterations",
            str(B_ITERS), "--snaplen", "64", "--scale", str(SCALE), "--time-scale",
            str(b_time), "--seed", "7")
        head, a = read(os.path.join(tmp, "a.pcap"), bytes([198, 18, 0, last["a"]]))
        _, b = read(os.path.join(tmp, "b.pcap"), bytes([198, 18, 1, last["b"]]))

        rep = merged_report(commtap, tmp, head, a, b, 0, 0)
        jobs = rep["jobs"]
        print("jobs:", [(j["hosts"][0], round(j["iteration_period_s"], 6)) for j in jobs])
        il = rep["advice"].get("interleave")
        print("interleave:", json.dumps(il))
        if len(jobs) != 2 or not il or "links" not in il:
            print("FAILED: two jobs sharing R's downlink expected")
            return 1
        links = [(l["address"], l["direction"]) for l in il["links"]]
        if ("198.18.2.1", "rx") not in links:
            failures.append("R's downlink shared")
        # the delayed job and its capture; the first job keeps its phase
        moved = 1
        period = jobs[moved]["iteration_period_s"]
        delay = il["jobs"][moved]["shift_s"]
        is_a = jobs[moved]["hosts"][0].startswith("198.18.0.")

        def overlap_with(delay_s, job_is_a):
            ns = int(round(delay_s * 1e9))
            r = merged_report(commtap, tmp, head, a, b, ns if job_is_a else 0,
                              0 if job_is_a else ns)
            return r["advice"]["interleave"]["overlap_now"]

        now = il["overlap_now"]
        after = overlap_with(delay, is_a)
        # the sign wrong: the same delay given to the other job
        wrong = overlap_with(delay, not is_a)
        print(f"overlap on the shared link: now {now:.5f} (model {il['overlap_now_model']:.5f}),"
              f" after the advised delay of {delay * 1e3:.3f} ms {after:.5f} (advice said "
              f"{il['overlap_after']:.5f}), the same delay given to the other job {wrong:.5f}")
        if not now > 0:
            failures.append("an overlap now to halve")
        if not after <= now / 2:
            failures.append("overlap after the advised delay <= half of now")
        if wrong <= now / 2:
            failures.append("a wrong delay told from the advised one")
    if failures:
        print("FAILED:", ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
