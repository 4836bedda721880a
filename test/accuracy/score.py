#!/usr/bin/env python3
"""A minimal accuracy scorer for one capture against its commtap.truth/v1
truth (for the layout matrix and the negative controls; the full runner
with period-after-N and layout checks is corpus_accuracy.py where present).

  score.py COMMTAP CAPTURE TRUTH [--profile PROFILE] [--json]

Prints, for `commtap analyze` with no profile, with the profile (when
given) and with the truth as labels: the bytes-weighted share of the
truth's bytes in flows given their true class (a flow analyze did not
report counts as wrong), the confusion (truth -> reported, bytes), the
period against the truth's mean (or, where the truth says there is no job,
whether a period was claimed anyway), and calibration: the share of bytes
right among flows reported with confidence >= 0.8. Also (issue 29,
figures.py): the operation recognised right (bytes-weighted, where the
truth names operations) and its confusion, the bytes wrong at confidence
>= 0.8, a reliability table (bytes right per confidence bin) and whether
the inferred layout's `sharded` is right where the truth says.

Exit status 0 when it scored; the figures are measurements, not pass/fail.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

CLASSES = ["TP", "PP", "DP", "EP", "EmbTableSyn", "Other"]


def flow_key(f):
    if f["transport"] == "roce":
        return ("roce", f["src"], f["dst"], f["qpn"])
    return (f["transport"], f["src"], f["dst"], f["sport"], f["dport"])


def analyze(commtap, capture, *extra):
    r = subprocess.run([commtap, "analyze", "--json", "-", *extra, capture],
                       capture_output=True, text=True)
    if r.returncode not in (0, 2):
        raise SystemExit("score.py: %s: commtap analyze failed: %s"
                         % (capture, r.stderr.strip()[-300:]))
    return json.loads(r.stdout)


def score(truth, report):
    got = {flow_key(f): f for f in report["flows"]}
    total = right = 0
    confusion = {}
    conf_total = conf_right = 0
    missing = 0
    for f in truth["flows"]:
        g = got.get(flow_key(f))
        cls = g["class"] if g else "(not found)"
        if g is None:
            missing += f["bytes"]
        total += f["bytes"]
        ok = cls == f["class"]
        right += f["bytes"] if ok else 0
        row = confusion.setdefault(f["class"], {})
        row[cls] = row.get(cls, 0) + f["bytes"]
        if g and g.get("class_confidence", 0) >= 0.8:
            conf_total += f["bytes"]
            conf_right += f["bytes"] if ok else 0
    job = report["job"]
    period = job["iteration_period_s"] if job["periodic"] else None
    want = truth.get("mean_period_s")
    out = {
        "accuracy": right / total if total else None,
        "bytes": total,
        "missing_bytes": missing,
        "confusion": confusion,
        "period_s": period,
        "period_reason": job.get("reason"),
        "truth_period_s": want,
        "period_error": (abs(period - want) / want) if period and want else None,
        "calibration": conf_right / conf_total if conf_total else None,
        "confident_share": conf_total / total if total else None,
        "method": report["classification"]["method"],
        "inferred_layout": report["classification"].get("inferred_layout"),
    }
    out["operation_accuracy"], out["operation_confusion"] = figures.operations(truth, got)
    out["confident_wrong"] = figures.confident_wrong(truth, got)
    out["reliability"] = figures.reliability(truth, got)
    out["sharded"] = figures.sharded(truth, report)
    return out


def pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def fmt_confusion(conf):
    parts = []
    for t in sorted(conf, key=CLASSES.index):
        row = conf[t]
        tot = sum(row.values())
        cells = ", ".join("%s %.1f%%" % (c, 100 * b / tot)
                          for c, b in sorted(row.items(), key=lambda kv: -kv[1]))
        parts.append("%s -> %s" % (t, cells))
    return "; ".join(parts)


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    if as_json:
        args.remove("--json")
    profile = None
    if "--profile" in args:
        i = args.index("--profile")
        profile = args[i + 1]
        del args[i : i + 2]
    if len(args) != 3:
        raise SystemExit(__doc__)
    commtap, capture, truth_path = args
    truth = json.load(open(truth_path))
    result = {"capture": capture, "truth": truth_path,
              "no_profile": score(truth, analyze(commtap, capture))}
    if profile:
        result["profile"] = score(truth, analyze(commtap, capture, "--profile", profile))
    result["labels"] = score(truth, analyze(commtap, capture, "--labels", truth_path))
    if as_json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return 0
    for mode in ("no_profile", "profile", "labels"):
        s = result.get(mode)
        if not s:
            continue
        per = ("period %s (truth %s, error %s)"
               % ("%.4g s" % s["period_s"] if s["period_s"] else "none",
                  "%.4g s" % s["truth_period_s"] if s["truth_period_s"] else "no job",
                  "%.2f%%" % (100 * s["period_error"]) if s["period_error"] is not None
                  else "-"))
        print("%-10s accuracy %5.1f%%  %s  calibration %s  [%s]"
              % (mode, 100 * s["accuracy"], per,
                 "%.1f%%" % (100 * s["calibration"]) if s["calibration"] is not None else "-",
                 fmt_confusion(s["confusion"])))
        print("%-10s operation right %s  confident wrong %s  sharded %s  [%s]"
              % ("", pct(s["operation_accuracy"]), pct(s["confident_wrong"]),
                 "-" if s["sharded"]["right"] is None
                 else "right" if s["sharded"]["right"] else "WRONG",
                 figures.show_op_confusion(s["operation_confusion"])))
        print(figures.show_reliability(s["reliability"], " " * 11))
    return 0


if __name__ == "__main__":
    sys.exit(main())
