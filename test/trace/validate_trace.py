#!/usr/bin/env python3
"""Check a trace against the Trace Event Format and, given the report, its figures.

Written from the format's definition (JSON object form with a `traceEvents`
array, or a bare array; phases, metadata events, counters, flow events), with
the stricter rules commtap's traces keep:

  - complete slices only (`X`, each with `ts` and `dur` >= 0; no `B`/`E`);
  - no two slices of one track (pid, tid) overlap, and a track's slices come
    in time order;
  - metadata events well formed (process/thread names and sort indexes);
  - counter values numeric, a counter's samples in time order;
  - flow events (s/t/f) paired by (cat, name, id), start before finish.

With --report, the trace must say what the report says:

  - each drawn flow's slices are exactly its `periodicity.first_bursts`
    (start, end, bytes, messages), on a track of the process of its source;
  - the drawn flows are the busiest (burst bytes), as many as --flows allows;
  - each class's counter sums to the burst bytes of the report's flows of
    that class, and otherData's per-class report bytes are the report's;
  - one iteration slice per `job.iteration_starts`, starting there;
  - with a `gpu` section, one GPU slice per `gpu.iterations[]`, at its start
    moved by the stated clock offset (or not moved when none is stated).

  validate_trace.py TRACE.json [--report REPORT.json] [--flows N]

Prints one line per problem (at most 20) and exits 1, or prints a summary and
exits 0. Timestamps are read as decimals: microseconds with three decimals
are nanoseconds, compared exactly.
"""
import argparse
import collections
import decimal
import json
import sys

PHASES = set("BEXiICbnesStTfFpPONDMVvRc()")
META_NAMES = {
    "process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index",
    "thread_name": "name", "thread_sort_index": "sort_index",
}
CLASSES = ["TP", "PP", "DP", "EP", "EmbTableSyn", "Other"]


class Problems:
    def __init__(self):
        self.lines = []

    def add(self, text):
        self.lines.append(text)

    def __bool__(self):
        return bool(self.lines)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (is_int(v) or isinstance(v, (float, decimal.Decimal))) and not isinstance(v, bool)


def ns(ts_us, origin):
    """A trace timestamp (µs, decimal) as nanoseconds on the report's clock."""
    v = ts_us * 1000 + origin
    return int(v) if v == int(v) else v


def check_structure(trace, bad):
    """The format's rules; returns the events (a list) or None."""
    if isinstance(trace, list):
        events = trace
    elif isinstance(trace, dict):
        events = trace.get("traceEvents")
        if not isinstance(events, list):
            bad.add("top level: no 'traceEvents' array")
            return None
        unit = trace.get("displayTimeUnit")
        if unit is not None and unit not in ("ms", "ns"):
            bad.add("displayTimeUnit is %r, not 'ms' or 'ns'" % unit)
        if "otherData" in trace and not isinstance(trace["otherData"], dict):
            bad.add("otherData is not an object")
    else:
        bad.add("top level: neither an object nor an array")
        return None

    track_end = {}        # (pid, tid) -> (ts, end) of the last slice
    counter_ts = {}       # (pid, name, id) -> last ts
    proc_names, thread_names = {}, {}
    used_pids, used_tracks = set(), set()
    flows = collections.defaultdict(list)
    for i, e in enumerate(events):
        where = "event %d" % i
        if not isinstance(e, dict):
            bad.add("%s: not an object" % where)
            continue
        ph = e.get("ph")
        if not isinstance(ph, str) or len(ph) != 1 or ph not in PHASES:
            bad.add("%s: phase %r is not one of the format's" % (where, ph))
            continue
        where = "event %d (%s %r)" % (i, ph, e.get("name"))
        if ph in "BE":
            bad.add("%s: a duration event; only complete slices (X) are allowed" % where)
            continue
        if not isinstance(e.get("name"), str):
            bad.add("%s: no name" % where)
        if not is_int(e.get("pid")):
            bad.add("%s: pid is not an integer" % where)
            continue
        if "tid" in e and not is_int(e["tid"]):
            bad.add("%s: tid is not an integer" % where)
            continue
        if "args" in e and not isinstance(e["args"], dict):
            bad.add("%s: args is not an object" % where)
            continue
        pid = e["pid"]
        if ph == "M":
            key = META_NAMES.get(e.get("name"))
            args = e.get("args")
            if key is None:
                bad.add("%s: unknown metadata name" % where)
            elif not isinstance(args, dict) or key not in args:
                bad.add("%s: args has no %r" % (where, key))
            elif key == "sort_index" and not is_int(args[key]):
                bad.add("%s: sort_index is not an integer" % where)
            elif key != "sort_index" and not isinstance(args[key], str):
                bad.add("%s: %s is not a string" % (where, key))
            elif e["name"].startswith("thread_") and "tid" not in e:
                bad.add("%s: thread metadata without a tid" % where)
            elif e["name"] == "process_name":
                if proc_names.setdefault(pid, args[key]) != args[key]:
                    bad.add("%s: process %d named twice, differently" % (where, pid))
            elif e["name"] == "thread_name":
                if thread_names.setdefault((pid, e["tid"]), args[key]) != args[key]:
                    bad.add("%s: thread %d/%d named twice, differently" % (where, pid, e["tid"]))
            continue
        ts = e.get("ts")
        if not is_num(ts):
            bad.add("%s: ts is missing or not a number" % where)
            continue
        used_pids.add(pid)
        if ph == "X":
            dur = e.get("dur")
            if "tid" not in e:
                bad.add("%s: a slice without a tid" % where)
                continue
            if not is_num(dur):
                bad.add("%s: dur is missing or not a number" % where)
                continue
            if dur < 0:
                bad.add("%s: dur %s is negative" % (where, dur))
                continue
            track = (pid, e["tid"])
            used_tracks.add(track)
            if track in track_end:
                last_ts, last_end = track_end[track]
                if ts < last_ts:
                    bad.add("%s: ts %s before the previous slice's %s on track %d/%d"
                            % (where, ts, last_ts, pid, e["tid"]))
                elif ts < last_end:
                    bad.add("%s: starts at %s, inside the previous slice (ends %s) on track %d/%d"
                            % (where, ts, last_end, pid, e["tid"]))
            track_end[track] = (ts, ts + dur)
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args:
                bad.add("%s: a counter without values" % where)
                continue
            for k, v in args.items():
                if not is_num(v):
                    bad.add("%s: counter value %r = %r is not a number" % (where, k, v))
            key = (pid, e.get("name"), e.get("id"))
            if key in counter_ts and ts < counter_ts[key]:
                bad.add("%s: counter sample at %s before the previous one (%s)"
                        % (where, ts, counter_ts[key]))
            counter_ts[key] = ts
        elif ph in "iI":
            if e.get("s", "t") not in ("g", "p", "t"):
                bad.add("%s: instant scope %r is not g, p or t" % (where, e.get("s")))
        elif ph in "stf":
            if "id" not in e:
                bad.add("%s: a flow event without an id" % where)
                continue
            if e.get("bp", "e") != "e":
                bad.add("%s: binding point %r is not 'e'" % (where, e.get("bp")))
            flows[(e.get("cat"), e.get("name"), str(e["id"]))].append((ph, ts))
    for key, steps in flows.items():
        phs = [p for p, _ in steps]
        if phs.count("s") != 1 or phs.count("f") != 1:
            bad.add("flow %r: %d starts and %d finishes, not one each"
                    % (key, phs.count("s"), phs.count("f")))
            continue
        start = [t for p, t in steps if p == "s"][0]
        if any(t < start for _, t in steps):
            bad.add("flow %r: a step or the finish before its start" % (key,))
    for pid in sorted(used_pids - set(proc_names)):
        bad.add("process %d has events but no process_name" % pid)
    for track in sorted(used_tracks - set(thread_names)):
        bad.add("track %d/%d has slices but no thread_name" % track)
    return events


def check_anomalies(events, report, origin, starts, bad):
    """Each anomaly instant where the report puts it: at its iteration's
    start, or when the report says the host entered there (a straggler's
    per_iteration at_ns); a finding of the whole capture at the first
    packet."""
    want = collections.Counter()
    first = report.get("capture", {}).get("first_ts")
    for f in (report.get("anomalies") or {}).get("findings", []):
        if f.get("onset_iteration") is None:
            if first is not None:
                want[(f["kind"], f["evidence"], None, first)] += 1
            continue
        for p in f.get("per_iteration") or []:
            it = p["iteration"]
            if it < len(starts):
                want[(f["kind"], f["evidence"], it, p.get("at_ns") or starts[it])] += 1
    got = collections.Counter()
    for e in events:
        if e.get("ph") == "i" and e.get("cat") == "anomaly":
            a = e.get("args", {})
            got[(a.get("kind"), a.get("evidence"), a.get("iteration"), ns(e["ts"], origin))] += 1
    if got != want:
        extra, missing = got - want, want - got
        bad.add("anomaly instants: %d not where the report puts them (e.g. %s), %d missing "
                "(e.g. %s)" % (sum(extra.values()), str(list(extra)[:1])[:160],
                               sum(missing.values()), str(list(missing)[:1])[:160]))


def check_report(trace, events, report, flow_limit, bad):
    other = trace.get("otherData") if isinstance(trace, dict) else None
    if not isinstance(other, dict) or not is_int(other.get("time_origin_ns")):
        bad.add("otherData.time_origin_ns is missing: timestamps cannot be matched to the report")
        return
    origin = other["time_origin_ns"]
    proc_names = {e["pid"]: e["args"]["name"] for e in events
                  if e.get("ph") == "M" and e.get("name") == "process_name"}

    by_flow = collections.defaultdict(list)
    counters = collections.Counter()
    iterations, gpu_slices = [], []
    for e in events:
        ph, cat, args = e.get("ph"), e.get("cat"), e.get("args", {})
        if ph == "X" and cat == "burst":
            if not all(is_int(args.get(k)) for k in ("flow", "bytes", "messages")):
                bad.add("burst slice at %s: args lack flow, bytes or messages" % e["ts"])
                continue
            start = ns(e["ts"], origin)
            by_flow[args["flow"]].append(
                (start, ns(e["ts"] + e["dur"], origin), args["bytes"], args["messages"],
                 e["pid"]))
        elif ph == "X" and cat == "iteration":
            iterations.append(ns(e["ts"], origin))
        elif ph == "X" and cat == "gpu":
            gpu_slices.append(ns(e["ts"], origin))
        elif ph == "C" and e.get("name", "").startswith("wire bytes "):
            counters[e["name"][len("wire bytes "):]] += args.get("bytes", 0)

    flows = report["flows"]
    burst_bytes, class_bursts, class_bytes = {}, collections.Counter(), collections.Counter()
    for i, f in enumerate(flows):
        fid = f.get("id", i)
        bursts = f["periodicity"]["first_bursts"]
        cls = f.get("class") if f.get("class") in CLASSES else "unclassified"
        burst_bytes[fid] = sum(b[2] for b in bursts)
        class_bursts[cls] += burst_bytes[fid]
        class_bytes[cls] += f["bytes"]
        if fid not in by_flow:
            continue
        want = sorted((b[0], b[1], b[2], b[3] if len(b) > 3 else 0) for b in bursts)
        got = sorted(s[:4] for s in by_flow[fid])
        if got != want:
            bad.add("flow %s: %d slices, %d bytes; the report has %d bursts, %d bytes%s"
                    % (fid, len(got), sum(g[2] for g in got), len(want), burst_bytes[fid],
                       "" if len(got) != len(want) else " (or other times or messages)"))
        host = "host %s" % f["src"]
        if any(proc_names.get(s[4]) != host for s in by_flow[fid]):
            bad.add("flow %s: slices outside its source's process (%s)" % (fid, host))
    unknown = set(by_flow) - set(burst_bytes)
    if unknown:
        bad.add("slices of flows the report does not have: %s" % sorted(unknown)[:5])
    busy = [fid for fid in burst_bytes if burst_bytes[fid] > 0]
    expect = min(flow_limit, len(busy))
    if len(by_flow) != expect:
        bad.add("%d flows drawn; expected %d (the busiest up to --flows %d)"
                % (len(by_flow), expect, flow_limit))
    drawn = [burst_bytes[f] for f in by_flow if f in burst_bytes]
    rest = [burst_bytes[f] for f in busy if f not in by_flow]
    if drawn and rest and max(rest) > min(drawn):
        bad.add("a flow of %d burst bytes is not drawn but one of %d is"
                % (max(rest), min(drawn)))

    for cls in sorted(set(class_bursts) | set(counters)):
        if counters[cls] != class_bursts[cls]:
            bad.add("class %s: the counter sums to %d bytes, the report's bursts to %d"
                    % (cls, counters[cls], class_bursts[cls]))
    stated = other.get("class_bytes", {})
    for cls in sorted(set(class_bytes) | set(stated)):
        if class_bytes[cls] == 0 and cls not in stated:
            continue
        s = stated.get(cls, {})
        if s.get("report_bytes") != class_bytes[cls] or s.get("counter_bytes") != counters[cls]:
            bad.add("class %s: otherData says %s report / %s counter bytes; the report has %d, "
                    "the counter %d" % (cls, s.get("report_bytes"), s.get("counter_bytes"),
                                        class_bytes[cls], counters[cls]))

    starts = sorted(report.get("job", {}).get("iteration_starts") or [])
    check_anomalies(events, report, origin, starts, bad)
    if sorted(iterations) != starts:
        bad.add("%d iteration slices; the report has %d iteration starts (or others)"
                % (len(iterations), len(starts)))

    gpu = report.get("gpu")
    if gpu is not None:
        clock = other.get("gpu_clock_offset")
        if not isinstance(clock, dict) or not isinstance(clock.get("method"), str):
            bad.add("the report has a gpu section; otherData.gpu_clock_offset does not say "
                    "how its clock was placed")
            return
        shift = clock.get("offset_ns", 0) if clock.get("estimated") else 0
        want = sorted(it["start_ns"] - shift for it in gpu.get("iterations", []))
        if sorted(gpu_slices) != want:
            bad.add("%d GPU slices; the gpu section has %d iterations (or other starts "
                    "after the offset %d ns)" % (len(gpu_slices), len(want), shift))
    elif gpu_slices:
        bad.add("GPU slices in the trace of a report without a gpu section")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--report")
    ap.add_argument("--flows", type=int, default=64)
    a = ap.parse_args()
    bad = Problems()
    try:
        with open(a.trace) as f:
            trace = json.load(f, parse_float=decimal.Decimal)
    except (OSError, ValueError) as e:
        print("%s: cannot read: %s" % (a.trace, e))
        return 1
    events = check_structure(trace, bad)
    if events is not None and a.report and not bad:
        with open(a.report) as f:
            report = json.load(f)
        check_report(trace, events, report, a.flows, bad)
    if bad:
        for line in bad.lines[:20]:
            print("%s: %s" % (a.trace, line))
        if len(bad.lines) > 20:
            print("%s: ... %d more" % (a.trace, len(bad.lines) - 20))
        return 1
    kinds = collections.Counter(e.get("ph") for e in events)
    print("%s: valid: %d events (%s)" % (a.trace, len(events),
                                         ", ".join("%s %d" % k for k in sorted(kinds.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
