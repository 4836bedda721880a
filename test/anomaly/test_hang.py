#!/usr/bin/env python3
"""A hang (issue 30, item 5): a synthesized job one of whose hosts stops in
the middle of an iteration's collective, the others a tenth of an iteration
later (they wait for it), while other traffic goes on, is reported as a hang
at the iteration it stopped in, at 0.45 or more (the synthesized others go
on whatever they wait for, so the stop reads as one of all: below an alarm
where one host does not stand out); the same job stopped after a whole
iteration is said at a confidence below an alarm's (it may have ended); the
job whole gives no hang. Read with interval reports six iterations apart (the
first at iteration 6, the next after the capture's last job packet by
four periods and more), the stopped job's hang is said in an interval
report put as its silence reaches the one that pages (the hang watch of
analyze), within 3 periods of its last packet.

  test_hang.py COMMTAP PROFILE
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "accuracy"))
import pcapio  # noqa: E402

NOISE_NET = bytes([198, 19])  # synth's storage and other non-job traffic: 198.19.0.0/16


def other_traffic(frame):
    """A frame of traffic that is not the job's: an address in 198.19.0.0/16."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return False
    return frame[26:28] == NOISE_NET or frame[30:32] == NOISE_NET


def sender(frame):
    return frame[26:30] if len(frame) >= 34 and frame[12:14] == b"\x08\x00" else None


def cut(src, dst, at_ns, period_ns, stopped=None, others_ns=0):
    """The job's packets up to at_ns (those of the host `stopped` sends, and
    the others' up to others_ns later: they go on until they need it); after
    that only other traffic, some of it three and four periods later (the
    capture goes on)."""
    last_other = None
    end = 0
    with pcapio.Writer(dst) as w:
        for ts, frame, wire in pcapio.read(src):
            stop = at_ns if stopped is None or sender(frame) == stopped else at_ns + others_ns
            if ts < stop or other_traffic(frame):
                w.write(ts, frame, wire)
                end = max(end, ts)
            if other_traffic(frame):
                last_other = (frame, wire)
        for k in (3, 4):
            w.write(max(end, at_ns) + k * period_ns, *last_other)


def hangs(commtap, pcap):
    r = subprocess.run([commtap, "analyze", "--json", "-", pcap], capture_output=True,
                       text=True)
    if r.returncode:
        sys.exit("FAIL: analyze %s: %s" % (pcap, r.stderr.strip()))
    doc = json.loads(r.stdout)
    return [f for f in doc["anomalies"]["findings"] if f["kind"] == "hang"], doc


def said_as_it_comes(commtap, pcap, tmp, period_ns, interval_ns):
    reports = os.path.join(tmp, "reports")
    os.mkdir(reports)
    r = subprocess.run([commtap, "analyze", pcap, "--interval", "%.9f" % (interval_ns / 1e9),
                        "--report-dir", reports,
                        "--json", os.path.join(tmp, "final.json")], capture_output=True, text=True)
    if r.returncode:
        sys.exit("FAIL: analyze --interval %s: %s" % (pcap, r.stderr.strip()))
    job_last = max(ts for ts, frame, _ in pcapio.read(pcap) if not other_traffic(frame))
    said = []
    for name in sorted(os.listdir(reports)):
        doc = json.load(open(os.path.join(reports, name)))
        if any(f["kind"] == "hang" for f in doc["anomalies"]["findings"]):
            said.append((doc["capture"]["last_ts"] - job_last) / period_ns)
    ok = bool(said) and said[0] <= 3
    print("%s said as it comes: %s" % ("ok  " if ok else "FAIL",
          "%.2f periods after the job's last packet (%d interval reports hold it)" %
          (said[0], len(said)) if said else "in no interval report"))
    return not ok


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    fail = 0
    with tempfile.TemporaryDirectory(prefix="commtap-hang-") as tmp:
        whole = os.path.join(tmp, "whole.pcap")
        subprocess.run([commtap, "synth", profile, "-o", whole, "--iterations", "12",
                        "--scale", "1e-3", "--noise", "--seed", "3"],
                       check=True, capture_output=True)
        truth = json.load(open(whole[:-5] + ".truth.json"))
        starts, period = truth["iteration_starts_ns"], truth["mean_period_s"] * 1e9
        found, _ = hangs(commtap, whole)
        ok = not found
        print("%s whole job: %d hang findings" % ("ok  " if ok else "FAIL", len(found)))
        fail |= not ok
        # one host (198.18.0.2) stopped in the middle of iteration 7's traffic
        # (its median packet); the others go on a tenth of an iteration, then
        # wait for it in a collective that never completes
        in7 = sorted(ts for ts, frame, _ in pcapio.read(whole)
                     if starts[7] <= ts < starts[8] and not other_traffic(frame))
        mid = os.path.join(tmp, "mid.pcap")
        cut(whole, mid, in7[len(in7) // 2], int(period), bytes([198, 18, 0, 2]),
            int(0.1 * period))
        found, doc = hangs(commtap, mid)
        ok = len(found) == 1 and abs(found[0]["onset_iteration"] - 7) <= 1 and \
            found[0]["confidence"] >= 0.45
        print("%s stopped mid-iteration 7: %s" % ("ok  " if ok else "FAIL",
              [(f["confidence"], f.get("onset_iteration"), f["evidence"]) for f in found]))
        fail |= not ok
        # as it comes: an interval report put when the silence pages, with no
        # interval ending before the capture does
        fail |= said_as_it_comes(commtap, mid, tmp, period,
                                 starts[6] - next(pcapio.read(mid))[0])
        # stopped after a whole iteration (iteration 7's start): said below an alarm's confidence
        end = os.path.join(tmp, "end.pcap")
        cut(whole, end, starts[7] - int(0.02 * period), int(period))
        found, _ = hangs(commtap, end)
        ok = len(found) == 1 and found[0]["confidence"] < 0.5
        print("%s stopped between iterations: %s" % ("ok  " if ok else "FAIL",
              [(f["confidence"], f.get("onset_iteration")) for f in found]))
        fail |= not ok
    return fail


if __name__ == "__main__":
    sys.exit(main())
