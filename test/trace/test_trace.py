#!/usr/bin/env python3
"""commtap trace, checked by the format validator (validate_trace.py).

  test_trace.py demo COMMTAP PROFILE     the demo job (scripts/setup.sh demo): valid, the
                                         report's figures, <= 5 MB, --flows bounds it,
                                         overlapping bursts on their own tracks, and broken
                                         traces the validator must refuse
  test_trace.py pcaps COMMTAP DIR        the shared real captures (skip when absent)
  test_trace.py gpu COMMTAP CORRELATE PROFILE
                                         a report with the gpu section the correlation
                                         library writes (host_gpu/test/test_correlate's job),
                                         and the clock offset estimate on a report whose
                                         GPU iterations end a known time after the wire's
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATOR = os.path.join(HERE, "validate_trace.py")
SKIP = 77
MAX_BYTES = 5 * 1024 * 1024


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p


def validate(trace, report=None, flows=None, expect_ok=True, expect_text=None):
    cmd = [sys.executable, VALIDATOR, trace]
    if report:
        cmd += ["--report", report]
    if flows:
        cmd += ["--flows", str(flows)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and p.returncode:
        sys.exit("validator refused %s:\n%s" % (trace, p.stdout + p.stderr))
    if not expect_ok:
        if p.returncode == 0:
            sys.exit("validator accepted a broken trace (%s)" % expect_text)
        if expect_text and expect_text not in p.stdout:
            sys.exit("validator refused %s but not for %r:\n%s" % (trace, expect_text, p.stdout))
    print(p.stdout.strip())


def trace(commtap, report, out, *extra):
    run([commtap, "trace", report, "-o", out] + list(extra))
    with open(out) as f:
        return json.load(f)


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def broken(good, tmp, report):
    """Each deliberately broken copy of a valid trace must be refused, for the right reason."""
    events = good["traceEvents"]
    slices = [i for i, e in enumerate(events) if e["ph"] == "X" and e.get("cat") == "burst"]
    a, b = slices[0], slices[1]
    assert (events[a]["pid"], events[a]["tid"]) == (events[b]["pid"], events[b]["tid"])

    def case(name, mutate, text, with_report=False):
        t = copy.deepcopy(good)
        mutate(t["traceEvents"])
        path = os.path.join(tmp, "broken-%s.json" % name)
        write(path, t)
        validate(path, report if with_report else None, expect_ok=False, expect_text=text)

    def overlap(ev):
        ev[b]["ts"] = ev[a]["ts"] + ev[a]["dur"] / 2 if ev[a]["dur"] else ev[a]["ts"]
        ev[a]["dur"] = max(ev[a]["dur"], 1)
    case("overlap", overlap, "inside the previous slice")
    case("no-dur", lambda ev: ev[a].pop("dur"), "dur is missing")
    case("negative-dur", lambda ev: ev[a].__setitem__("dur", -1), "is negative")

    def out_of_order(ev):
        ev[a], ev[b] = ev[b], ev[a]
    case("order", out_of_order, "before the previous slice")
    case("begin-end", lambda ev: ev.append({"ph": "B", "name": "x", "pid": 1, "tid": 1,
                                            "ts": 0}), "only complete slices")
    counters = [i for i, e in enumerate(events) if e["ph"] == "C"]
    case("counter-text", lambda ev: ev[counters[0]]["args"].__setitem__("bytes", "12"),
         "is not a number")
    case("thread-name", lambda ev: ev.__setitem__(
        next(i for i, e in enumerate(ev) if e.get("name") == "thread_name"),
        {"ph": "M", "name": "thread_name", "pid": 1, "args": {}}), "args has no 'name'")
    case("bytes", lambda ev: ev[a]["args"].__setitem__("bytes", ev[a]["args"]["bytes"] + 1),
         "the report has", with_report=True)
    case("counter-sum", lambda ev: ev[counters[0]]["args"].__setitem__(
        "bytes", ev[counters[0]]["args"]["bytes"] + 1), "the counter sums to",
        with_report=True)
    case("drop-slice", lambda ev: ev.pop(b), "the report has", with_report=True)


def demo(commtap, profile):
    with tempfile.TemporaryDirectory(prefix="commtap-trace-") as tmp:
        pcap, report = os.path.join(tmp, "gpt-3b.pcap"), os.path.join(tmp, "gpt-3b.report.json")
        run([commtap, "synth", profile, "-o", pcap, "--iterations", "5", "--scale", "1e-3",
             "--time-scale", "1e-3", "--jitter", "0.05", "--snaplen", "128", "--noise"])
        run([commtap, "analyze", "--json", report, pcap])
        out = os.path.join(tmp, "gpt-3b.trace.json")
        good = trace(commtap, report, out)
        validate(out, report)
        size = os.path.getsize(out)
        print("demo trace: %d bytes, %d events" % (size, len(good["traceEvents"])))
        if size > MAX_BYTES:
            sys.exit("the demo trace is %d bytes, over %d" % (size, MAX_BYTES))
        with open(report) as f:
            rep = json.load(f)
        if len(rep["flows"]) <= 64 or good["otherData"]["flows_drawn"] != 64:
            sys.exit("the demo should have more flows than the default 64 drawn")

        # A smaller bound: fewer tracks, the same counters.
        small = trace(commtap, report, os.path.join(tmp, "small.json"), "--flows", "4")
        validate(os.path.join(tmp, "small.json"), report, flows=4)
        if small["otherData"]["class_bytes"] != good["otherData"]["class_bytes"]:
            sys.exit("--flows changed the per-class totals")

        # Overlapping bursts of one flow (as a merged report can hold): separate tracks.
        busiest = max(rep["flows"], key=lambda f: sum(b[2] for b in
                                                      f["periodicity"]["first_bursts"]))
        fb = busiest["periodicity"]["first_bursts"]
        s, e = fb[0][0], fb[0][1]
        fb.insert(1, [s + (e - s) // 2, e + 1000, 4242, 1])
        busiest["bytes"] += 4242
        over = os.path.join(tmp, "overlap.report.json")
        write(over, rep)
        t = trace(commtap, over, os.path.join(tmp, "overlap.json"))
        validate(os.path.join(tmp, "overlap.json"), over)
        names = [ev["args"]["name"] for ev in t["traceEvents"] if ev.get("name") == "thread_name"]
        if not any("overlapping bursts 2" in n for n in names):
            sys.exit("the overlapping burst did not get its own track")

        broken(good, tmp, report)

        # Counts are whole numbers from 1: one flow, one bin are fine; 2.5 and 0 are not.
        one = trace(commtap, report, os.path.join(tmp, "one.json"), "--flows", "1", "--bins", "1")
        validate(os.path.join(tmp, "one.json"), report, flows=1)
        if one["otherData"]["flows_drawn"] != 1:
            sys.exit("--flows 1 drew %s flows" % one["otherData"]["flows_drawn"])
        for flag, bad in (("--flows", "2.5"), ("--bins", "0"), ("--flows", "-1")):
            p = subprocess.run([commtap, "trace", report, "-o", os.path.join(tmp, "bad.json"),
                                flag, bad], capture_output=True, text=True)
            if p.returncode != 1 or flag not in p.stderr or len(p.stderr.splitlines()) != 1:
                sys.exit("trace %s %s: want exit 1 and one line naming %s, got %d: %s"
                         % (flag, bad, flag, p.returncode, p.stderr))

        # The output may not replace its input.
        p = subprocess.run([commtap, "trace", report, "-o", report], capture_output=True,
                           text=True)
        if p.returncode == 0 or "is the input" not in p.stderr:
            sys.exit("trace -o INPUT was not refused: %s" % p.stderr)
    return 0


def pcaps(commtap, folder):
    names = sorted(n for n in os.listdir(folder) if n.endswith(".pcap")) \
        if os.path.isdir(folder) else []
    if not names:
        print("SKIP: no captures in %s (../shared/pcaps is absent)" % folder)
        return SKIP
    with tempfile.TemporaryDirectory(prefix="commtap-trace-") as tmp:
        for n in names:
            report = os.path.join(tmp, n + ".report.json")
            p = subprocess.run([commtap, "analyze", "--json", report, os.path.join(folder, n)],
                               capture_output=True, text=True)
            if p.returncode not in (0, 2):
                sys.exit("analyze %s failed: %s" % (n, p.stderr))
            out = os.path.join(tmp, n + ".trace.json")
            trace(commtap, report, out)
            validate(out, report)
    return 0


def gpu(commtap, correlate, profile):
    with tempfile.TemporaryDirectory(prefix="commtap-trace-") as tmp:
        env = dict(os.environ, COMMTAP_CORR_KEEP=tmp)
        run([correlate, commtap, profile], env=env)
        with open(os.path.join(tmp, "roce-report.json")) as f:
            rep = json.load(f)
        with open(os.path.join(tmp, "roce-gpu.json")) as f:
            rep["gpu"] = json.load(f)     # where commtap agent puts it
        report = os.path.join(tmp, "with-gpu.report.json")
        write(report, rep)
        out = os.path.join(tmp, "with-gpu.trace.json")
        t = trace(commtap, report, out)
        validate(out, report)
        clock = t["otherData"]["gpu_clock_offset"]
        print("gpu clock:", json.dumps(clock))
        # This job's DP all-reduce stays inside host 0: the wire cannot show the
        # iterations' ends, and the trace must say so rather than guess.
        if clock["estimated"] or "put no bytes on the wire" not in clock["method"]:
            sys.exit("expected no estimate for a job whose DP stays inside the host")
        if sum(1 for e in t["traceEvents"] if e.get("cat") == "gpu") != \
                len(rep["gpu"]["iterations"]):
            sys.exit("not every GPU iteration drawn")

        # The estimate itself, on a report whose labelled DP flows end a known
        # 1.25 ms (+- 20 us of jitter) before the GPU section's iteration ends.
        est = copy.deepcopy(rep)
        # the skeleton is the test's own (six iterations of the job's period from its
        # first packet), not whatever the period estimator found in this short job
        period_ns = int((est["job"].get("iteration_period_s") or 0.1) * 1e9)
        t0 = est["capture"]["first_ts"]
        starts = [t0 + k * period_ns for k in range(6)]
        est["job"]["iteration_starts"] = starts
        est["job"]["iterations"] = len(starts)
        est["job"]["iteration_period_s"] = period_ns / 1e9
        est["job"]["periodic"] = True
        dp = [f for f in est["flows"] if f.get("class_source") == "label"][:2]
        jitter = [0, 20000, -20000, 5000]
        ends = []
        for f in dp:
            f["class"] = "DP"
            f["periodicity"]["first_bursts"] = []
            f["bytes"] = 0
        for i, s in enumerate(starts[:len(jitter)]):
            end = s + int((starts[i + 1] - s) * 0.9)
            for f in dp:
                f["periodicity"]["first_bursts"].append([end - 100000, end, 1000, 1])
                f["bytes"] += 1000
            ends.append(end)
        est["gpu"]["operations_joined"]["DP"]["wire_bytes"] = 2000 * len(ends)
        est["gpu"]["iterations"] = [
            {"start_ns": (ends[i - 1] if i else starts[0]) + 1250000 + (jitter[i - 1] if i else 0),
             "t_iter": (ends[i] + jitter[i] - (ends[i - 1] + jitter[i - 1] if i else starts[0]))
             / 1e9, "t_comp": 0.001, "t_DP": 0.0005}
            for i in range(len(ends))]
        report = os.path.join(tmp, "estimate.report.json")
        write(report, est)
        out = os.path.join(tmp, "estimate.trace.json")
        t = trace(commtap, report, out)
        validate(out, report)
        clock = t["otherData"]["gpu_clock_offset"]
        print("constructed gpu clock:", json.dumps(clock))
        if not clock["estimated"] or abs(clock["offset_ns"] - 1250000) > 20000 or \
                clock["uncertainty_ns"] < 5000 or clock["uncertainty_ns"] > 25000:
            sys.exit("offset estimate %s, expected 1.25 ms within its 20 us jitter" % clock)
    return 0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "demo":
        return demo(*args)
    if mode == "pcaps":
        return pcaps(*args)
    if mode == "gpu":
        return gpu(*args)
    sys.exit("unknown mode %s" % mode)


if __name__ == "__main__":
    sys.exit(main())
