#!/usr/bin/env python3
"""Accuracy of commtap analyze on an evaluation corpus (issue 18).

A case is a capture, its truth (commtap.truth/v1) and optionally a profile:

  corpus_accuracy.py [--json | --json-out FILE] [--no-period] COMMTAP CASE...

CASE is a directory holding capture.pcap (or capture.pcap.gz), truth.json
and optionally profile.json, or CAPTURE:TRUTH[:PROFILE]. For each case:

  class accuracy  bytes-weighted share of the truth's flows (both
                  directions) whose class is right, analyzed with no profile
                  (signatures), with the profile when there is one, and with
                  --labels TRUTH; a truth flow missing from the report counts
                  as wrong. One confusion matrix (KiB, truth rows, found
                  columns) per method.
  period error    the capture cut at the truth's iteration boundaries, from
                  the first iteration's start to the start of iteration k
                  (k = 3 and 12), analyzed with no profile; the report's
                  iteration period against the truth's mean over the same k
                  iterations. Also the whole capture against the truth's mean.
  layout          per class, the groups of hosts the wire shows (the truth's
                  flows of that class, connected) against the report's
                  inferred_layout groups, and p, t, d, ep against the largest
                  of them (unknown where no flow of the class crosses a NIC);
                  the layout is right when all agree.
  calibration     among flows reported with confidence >= 0.8: the share of
                  their bytes that is right, and their share of all bytes;
                  the share of all bytes wrong at >= 0.8; bytes right per
                  confidence bin (0-0.2 ... 0.8-1.0), per case and pooled
                  over the cases (the calibration curve).
  operation       (issue 29) bytes-weighted share of the truth's flows whose
                  reported operation is right, and the operation confusion,
                  where the truth names operations (figures.py); the layout
                  also says whether `sharded` is right where the truth gives it.

After the cases, a summary line: per figure the mean and the worst case.

Nothing is gated: the exit status is 0 unless a case cannot be read or
commtap fails. Pure python3, standard library only.
"""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

CLASSES = ["TP", "PP", "DP", "EP", "EmbTableSyn", "Other"]
PERIOD_CUTS = (3, 12)
CONFIDENT = 0.8


def key(f):
    if f["transport"] == "roce":
        return ("roce", f["src"], f["dst"], f["qpn"])
    return ("tcp", f["src"], f["dst"], f["sport"], f["dport"])


def analyze(commtap, pcap, *args):
    r = subprocess.run([commtap, "analyze", "--json", "-"] + list(args) + [pcap],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("commtap analyze %s %s: %s" % (" ".join(args), pcap,
                                                           r.stderr.strip()))
    return json.loads(r.stdout)


def load_case(spec, tmp):
    if os.path.isdir(spec):
        name = os.path.basename(os.path.normpath(spec))
        pcap = os.path.join(spec, "capture.pcap")
        truth = os.path.join(spec, "truth.json")
        profile = os.path.join(spec, "profile.json")
        profile = profile if os.path.exists(profile) else None
    else:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise ValueError("%s: a case is DIR or CAPTURE:TRUTH[:PROFILE]" % spec)
        pcap, truth = parts[0], parts[1]
        profile = parts[2] if len(parts) == 3 else None
        name = os.path.basename(truth).replace(".truth.json", "").replace(".json", "")
    if not os.path.exists(pcap) and os.path.exists(pcap + ".gz"):
        pcap += ".gz"
    if pcap.endswith(".gz"):  # commtap reads plain pcap: unpack into the scratch dir
        plain = os.path.join(tmp, name + ".pcap")
        with gzip.open(pcap) as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
        pcap = plain
    with open(truth) as f:
        t = json.load(f)
    if t.get("schema") != "commtap.truth/v1":
        raise ValueError("%s: schema %r, not commtap.truth/v1" % (truth, t.get("schema")))
    return name, pcap, truth, t, profile


# ---- classes --------------------------------------------------------------------------


def score(truth, report):
    found = {key(f): f for f in report["flows"]}
    m = {t: {c: 0 for c in CLASSES + ["missing"]} for t in CLASSES}
    confident = confident_right = total = 0
    for f in truth["flows"]:
        got = found.get(key(f))
        cls = got.get("class") or "Other" if got else "missing"
        m[f["class"]][cls] += f["bytes"]
        total += f["bytes"]
        if got and (got.get("class_confidence") or 0) >= CONFIDENT:
            confident += f["bytes"]
            confident_right += f["bytes"] if cls == f["class"] else 0
    right = sum(m[c][c] for c in CLASSES)
    by_key = {figures.flow_key(f): f for f in report["flows"]}
    op_right, op_confusion = figures.operations(truth, by_key)
    return {
        "accuracy": right / total if total else None,
        "bytes": total,
        "confusion": m,
        "confident_share": confident / total if total else None,
        "confident_accuracy": confident_right / confident if confident else None,
        "calibration": confident_right / confident if confident else None,
        "confident_wrong": figures.confident_wrong(truth, by_key),
        "operation_accuracy": op_right,
        "operation_confusion": op_confusion,
        "reliability": figures.reliability(truth, by_key),
    }


def show_confusion(m):
    cols = CLASSES + ["missing"]
    lines = ["    %-12s" % "truth\\found" + "".join("%12s" % c for c in cols)]
    for t in CLASSES:
        if sum(m[t].values()):
            lines.append("    %-12s" % t + "".join("%12.0f" % (m[t][c] / 1024) for c in cols))
    return "\n".join(lines)


# ---- period ---------------------------------------------------------------------------


def boundaries(t):
    starts = t.get("iteration_starts_ns") or []
    if not starts:
        return []
    end = t.get("end_ns") or round(starts[0] + t["mean_period_s"] * 1e9 * len(starts))
    return starts + [end]


def cut_pcap(src, dst, t0, t1):
    with open(src, "rb") as f, open(dst, "wb") as out:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        mult = 1 if struct.unpack(endian + "I", head[:4])[0] == 0xA1B23C4D else 1000
        out.write(head)
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, frac, caplen, _ = struct.unpack(endian + "IIII", h)
            d = f.read(caplen)
            if t0 <= sec * 1000000000 + frac * mult < t1:
                out.write(h + d)


def period_row(commtap, pcap, truth_mean, job):
    got = job.get("iteration_period_s") if job else None
    row = {"truth_s": truth_mean, "period_s": got,
           "reason": None if got else (job or {}).get("reason", "no job in the report")}
    row["error"] = abs(got - truth_mean) / truth_mean if got and truth_mean else None
    if job:
        row["confidence"] = job.get("period_confidence")
        row["iterations_found"] = job.get("iterations")
    return row


def periods(commtap, pcap, t, full_report, tmp):
    b = boundaries(t)
    out = {"all": period_row(commtap, pcap, t.get("mean_period_s"), full_report.get("job"))}
    for k in PERIOD_CUTS:
        if len(b) <= k:
            out[str(k)] = {"truth_s": None, "period_s": None, "error": None,
                           "reason": "the truth has %d iterations" % (len(b) - 1)}
            continue
        part = os.path.join(tmp, "cut%d.pcap" % k)
        cut_pcap(pcap, part, b[0], b[k])
        rep = analyze(commtap, part)
        out[str(k)] = period_row(commtap, part, (b[k] - b[0]) / k / 1e9, rep.get("job"))
    return out


# ---- layout ---------------------------------------------------------------------------


def components(edges):
    parent = {}

    def find(a):
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a

    for a, b in edges:
        parent[find(a)] = find(b)
    groups = {}
    for a in list(parent):
        groups.setdefault(find(a), set()).add(a)
    return [frozenset(g) for g in groups.values()]


DEGREES = (("p", "PP"), ("t", "TP"), ("d", "DP"), ("ep", "EP"))


def layout(truth, report):
    """The layout the report infers against what the wire shows of the truth.

    The groups the wire shows are the connected host sets of each class's
    truth flows (a class that never crosses a NIC has none, and its degree
    must be reported unknown); a degree is the hosts of its largest group.
    The layout is right when every class's groups and every degree agree.
    """
    truth_edges = {c: [] for c in CLASSES}
    for f in truth["flows"]:
        if f.get("direction", "data") == "data":
            truth_edges[f["class"]].append((f["src"], f["dst"]))
    inferred = (report.get("classification") or {}).get("inferred_layout") or {}
    found_groups = inferred.get("groups") or {}
    tl = truth.get("layout") or {}
    out = {"truth": {k: tl.get(k) for k in ("p", "t", "d", "ep")},
           "inferred_layout": {k: inferred.get(k) for k in ("p", "t", "d", "ep")},
           "wire": {}, "classes": {}}
    right = True
    for deg, cls in DEGREES + (("emb", "EmbTableSyn"),):
        want = sorted(sorted(g) for g in components(truth_edges[cls]))
        got = sorted(sorted(g) for g in found_groups.get(cls, []))
        size = max((len(g) for g in want), default=None)
        if deg != "emb":
            out["wire"][deg] = size
            right = right and inferred.get(deg) == size
        same = want == got
        right = right and same
        out["classes"][cls] = {"groups": len(want), "found": len(got), "same": same,
                               "groups_found": sum(g in got for g in want)}
    out["right"] = right
    # `sharded` apart, so that "right" keeps its meaning for the gates
    out["sharded"] = figures.sharded(truth, report)
    out["right_with_sharded"] = right and out["sharded"]["right"] is not False
    return out


# ---- driver ---------------------------------------------------------------------------


def run_case(commtap, spec, want_period):
    tmp = tempfile.mkdtemp(prefix="corpus-accuracy-")
    try:
        name, pcap, truth_path, t, profile = load_case(spec, tmp)
        methods = [("signatures", [])]
        if profile:
            methods.append(("profile", ["--profile", profile]))
        methods.append(("labels", ["--labels", truth_path]))
        res = {"case": name, "scenario": t.get("scenario"), "methods": {}}
        reports = {}
        for method, args in methods:
            reports[method] = analyze(commtap, pcap, *args)
            res["methods"][method] = score(t, reports[method])
        res["layout"] = layout(t, reports["signatures"])
        if want_period:
            res["period"] = periods(commtap, pcap, t, reports["signatures"], tmp)
        res["unlabelled_job_bytes"] = t.get("unlabelled_job_bytes")
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def pct(x):
    return "   n/a" if x is None else "%5.1f%%" % (100 * x)


def show(res):
    print("== %s" % res["case"])
    for method, s in res["methods"].items():
        print("  %-10s %s of %.1f MiB right; confidence >= %.1f: %s of bytes, %s of them right"
              % (method, pct(s["accuracy"]), s["bytes"] / 2**20, CONFIDENT,
                 pct(s["confident_share"]), pct(s["confident_accuracy"])))
        print(show_confusion(s["confusion"]))
        print("  %-10s operation right %s, confident wrong %s%s"
              % ("", pct(s["operation_accuracy"]), pct(s["confident_wrong"]),
                 "  [%s]" % figures.show_op_confusion(s["operation_confusion"])
                 if s["operation_confusion"] else ""))
        print(figures.show_reliability(s["reliability"], "  " + " " * 11))
    for k, p in (res.get("period") or {}).items():
        label = "whole capture" if k == "all" else "first %s iterations" % k
        truth = "n/a" if p["truth_s"] is None else "%.4f s" % p["truth_s"]
        if p["period_s"]:
            print("  period, %-20s %.4f s, truth %s, error %s (confidence %.2f)"
                  % (label + ":", p["period_s"], truth, pct(p["error"]), p["confidence"] or 0))
        else:
            print("  period, %-20s none, truth %s: %s" % (label + ":", truth, p["reason"]))
    lay = res.get("layout")
    if lay:
        print("  layout %s: on the wire %s; inferred %s%s" % (
            "right" if lay["right"] else "WRONG",
            ", ".join("%s=%s" % kv for kv in lay["wire"].items()),
            ", ".join("%s=%s" % kv for kv in lay["inferred_layout"].items()),
            "; truth %s" % ", ".join("%s=%s" % kv for kv in lay["truth"].items())
            if any(v is not None for v in lay["truth"].values()) else ""))
        sh = lay["sharded"]
        if sh["truth"] is not None:
            print("    sharded %s (truth %s, inferred %s)"
                  % ("right" if sh["right"] else "WRONG", sh["truth"], sh["inferred"]))
        for cls, c in lay["classes"].items():
            if c["groups"] or c["found"]:
                print("    %-12s groups %d, found %d, %d of them exactly%s"
                      % (cls, c["groups"], c["found"], c["groups_found"],
                         " (same)" if c["same"] else ""))


def case_figures(res, method="signatures"):
    """The figures of one case for the summary: its method's, the layout's."""
    s = dict(res["methods"][method])
    lay = res.get("layout") or {}
    s["layout_right"] = lay.get("right_with_sharded")
    return s


def totals(results):
    """Over the cases, with no profile: the summary (mean and worst case per
    figure), layouts right and the pooled reliability table."""
    named = [(r["case"], case_figures(r)) for r in results]
    table = figures.pool_reliability(s["reliability"] for _, s in named)
    lays = [s["layout_right"] for _, s in named if s["layout_right"] is not None]
    return {"summary": figures.summary(named),
            "layout_right": {"right": sum(lays), "cases": len(lays)},
            "reliability": figures.reliability_rows(table), "reliability_bytes": table}


def show_totals(t):
    print("== %d case(s), no profile" % t["layout_right"]["cases"])
    print("  " + figures.show_summary(t["summary"]))
    print("  layout right (with sharded where the truth says) in %d of %d"
          % (t["layout_right"]["right"], t["layout_right"]["cases"]))
    print(figures.show_reliability(t["reliability_bytes"], "  pooled "))


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    want_period = "--no-period" not in args
    args = [a for a in args if a not in ("--json", "--no-period")]
    json_out = None
    if len(args) > 1 and args[0] == "--json-out":  # the text on stdout, the JSON to a file
        json_out, args = args[1], args[2:]
    if len(args) < 2:
        sys.stderr.write("usage: corpus_accuracy.py [--json | --json-out FILE] [--no-period] "
                         "COMMTAP CASE...\n")
        return 2
    commtap, cases = args[0], args[1:]
    results = []
    for spec in cases:
        try:
            results.append(run_case(commtap, spec, want_period))
        except (OSError, ValueError, RuntimeError) as e:
            sys.stderr.write("corpus_accuracy: %s\n" % e)
            return 1
        if not as_json:
            show(results[-1])
    overall = totals(results)
    if not as_json:
        show_totals(overall)
    doc = {"schema": "commtap.accuracy/v1", "cases": results}
    doc.update(overall)
    if as_json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    if json_out:
        with open(json_out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
