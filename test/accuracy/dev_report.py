#!/usr/bin/env python3
"""The development share scored against the goals of issue 29, on one
screen: the classification work's daily tool (frozen/README.md: tune on
the development share, score the frozen share once, at the end).

  dev_report.py COMMTAP [--real LISTFILE] [--negctl-seed N] [--no-tcp]
                [--jobs N] [--cache DIR] [--subset dev|ci] [--cases] [--json FILE]

Scores, with no profile:
  - the layout matrix's development cases (make_matrix.py --subset dev,
    or the quicker ci subset: no other subset, as both hold no frozen case),
    made in its cache when absent (synthesized with --truth-operations);
  - the negative controls made afresh: negctl_roce.py at seed N (default 2;
    1 is the frozen copies' seed and is refused) when /usr/bin/python3 has
    scapy, and a fresh negctl_tcp.py recording (root and network
    namespaces; --no-tcp leaves it out). Their truth says there is no
    job: every flow's operation is Other;
  - the development recordings LISTFILE names, one case directory a line
    (capture.pcap[.gz] and truth.json, as corpus_accuracy.py takes them;
    '#' starts a comment).
It refuses to score anything under test/accuracy/frozen/.

Per row: bytes right, operation right (bytes-weighted), bytes wrong at
confidence >= 0.8, bytes right among those at >= 0.8 / their share of all
bytes, layout right (with `sharded` where the truth says) and the period's
error (after 12 iterations for the recordings, the whole capture of 12 for
the matrix; a negative control's is "none" when no period is claimed). The
matrix is shown a row per layout, each figure the worst of its seeds and
transports (--cases: a row per case); then the worst case of each figure
over everything, and the goal. A figure that misses its goal is marked '!'.
Exit status 0 when it scored (the figures are measurements), 2 on misuse.
"""
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FROZEN = os.path.join(HERE, "frozen")
sys.path.insert(0, HERE)

import corpus_accuracy  # noqa: E402
import figures  # noqa: E402
import make_matrix  # noqa: E402
import score  # noqa: E402

SCAPY_PYTHON = "/usr/bin/python3"
FROZEN_NEGCTL_SEED = 1
# Two cores on the shared machine (and other sessions building beside it).
JOBS = 2

# The goals of issue 29 ("Goals"): (column, key, goal, higher is better).
GOALS = (("bytes right", "accuracy", 0.95, True),
         ("op right", "operation_accuracy", 0.98, True),
         ("conf. wrong", "confident_wrong", 0.01, False),
         ("conf. right", "calibration", 0.98, True),
         ("conf. share", "confident_share", 0.80, True),
         ("period err", "period_error", 0.01, False))


def under_frozen(path):
    real = os.path.realpath(path)
    return real == os.path.realpath(FROZEN) or \
        real.startswith(os.path.realpath(FROZEN) + os.sep)


def row(name, group, kind, truth, report, period_error):
    s = score.score(truth, report)
    lay = corpus_accuracy.layout(truth, report)
    return {"case": name, "group": group, "kind": kind, "accuracy": s["accuracy"],
            "operation_accuracy": s["operation_accuracy"],
            "operation_confusion": s["operation_confusion"],
            "confident_wrong": s["confident_wrong"], "calibration": s["calibration"],
            "confident_share": s["confident_share"], "reliability": s["reliability"],
            "layout_right": lay["right_with_sharded"], "layout_right_plain": lay["right"],
            "period_error": period_error}


def period_error(truth_s, got_s):
    """The relative error; inf where a period is missed or claimed wrongly
    (no job in the truth), None where neither says there is one."""
    if truth_s:
        return abs(got_s - truth_s) / truth_s if got_s else math.inf
    return math.inf if got_s else None


def matrix_case(commtap, case, cache):
    pcap, truth_path, _ = make_matrix.build(commtap, case, cache)
    with open(truth_path) as f:
        truth = json.load(f)
    report = score.analyze(commtap, pcap)
    job = report["job"]
    got = job["iteration_period_s"] if job["periodic"] else None
    return row(case["name"], case["layout"], "matrix", truth, report,
               period_error(truth.get("mean_period_s"), got))


def negctl_case(commtap, pcap):
    with open(pcap[:-5] + ".truth.json") as f:
        truth = json.load(f)
    for fl in truth["flows"]:  # no job: no collective operation in any flow
        fl.setdefault("operation", "Other")
    report = score.analyze(commtap, pcap)
    job = report["job"]
    got = job["iteration_period_s"] if job["periodic"] else None
    name = "negctl " + truth["profile"]
    return row(name, name, "negctl", truth, report, period_error(None, got))


def real_case(commtap, spec):
    res = corpus_accuracy.run_case(commtap, spec, True)
    sig = res["methods"]["signatures"]
    per = res["period"]
    p = per["12"] if per["12"]["truth_s"] else per["all"]
    return {"case": "real " + res["case"], "group": "real " + res["case"], "kind": "real",
            "accuracy": sig["accuracy"], "operation_accuracy": sig["operation_accuracy"],
            "operation_confusion": sig["operation_confusion"],
            "confident_wrong": sig["confident_wrong"], "calibration": sig["calibration"],
            "confident_share": sig["confident_share"], "reliability": sig["reliability"],
            "layout_right": res["layout"]["right_with_sharded"],
            "layout_right_plain": res["layout"]["right"],
            "period_error": period_error(p["truth_s"], p["period_s"])}


def make_negctl(tmp, seed, tcp):
    """The negative controls' captures, made afresh in tmp."""
    pcaps = []
    if subprocess.run([SCAPY_PYTHON, "-c", "import scapy.contrib.roce"],
                      capture_output=True).returncode == 0:
        r = subprocess.run([SCAPY_PYTHON, os.path.join(HERE, "negctl_roce.py"), tmp,
                            "--seed", str(seed)], capture_output=True, text=True, check=True)
        pcaps += [line.strip() for line in r.stdout.splitlines() if line.endswith(".pcap")]
    else:
        print("note: %s has no scapy: no RoCE negative controls" % SCAPY_PYTHON)
    if tcp:
        r = subprocess.run([sys.executable, os.path.join(HERE, "negctl_tcp.py"), tmp],
                           capture_output=True, text=True)
        if r.returncode == 77:
            print("note: no TCP negative controls: %s" % r.stdout.strip())
        elif r.returncode:
            raise SystemExit("dev_report.py: negctl_tcp.py failed: %s" % r.stderr.strip()[-300:])
        else:
            pcaps += [line.strip() for line in r.stdout.splitlines()
                      if line.endswith(".pcap")]
    return pcaps


# ---- the table -------------------------------------------------------------------------


def worse(a, b, higher):
    """The worse of two figures (None: not measured)."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b) if higher else max(a, b)


def merge_rows(rows):
    """A group's rows as one: each figure its worst; layout right only when all are."""
    out = {"case": rows[0]["group"], "n": len(rows)}
    for _, k, _, higher in GOALS:
        v = None
        for r in rows:
            v = worse(v, r[k], higher)
        out[k] = v
    lays = [r["layout_right"] for r in rows if r["layout_right"] is not None]
    out["layout_right"] = None if not lays else all(lays)
    out["layouts"] = (sum(lays), len(lays))
    return out


def cell(v, goal, higher, period=False):
    if v is None:
        return "-"
    if period and math.isinf(v):
        return "miss!"
    miss = v < goal if higher else v > goal
    return "%.1f%%%s" % (100 * v, "!" if miss else "")


def line(name, r):
    cells = [cell(r[k], goal, higher, k == "period_error") for _, k, goal, higher in GOALS]
    if "layouts" in r:
        lay = "%d/%d" % r["layouts"] if r["layouts"][1] else "-"
        lay += "" if r["layout_right"] in (True, None) else "!"
    else:
        lay = {True: "right", False: "WRONG!", None: "-"}[r["layout_right"]]
    return "%-34s %4s %11s %9s %11s %11s %11s %7s %10s" % (
        name[:34], r.get("n", ""), cells[0], cells[1], cells[2], cells[3], cells[4], lay,
        cells[5])


def table(rows, per_case):
    head = "%-34s %4s %11s %9s %11s %11s %11s %7s %10s" % (
        "case (matrix: per layout, worst)", "n", "bytes right", "op right", "conf. wrong",
        "conf. right", "conf. share", "layout", "period")
    out = [head]
    groups = {}
    for r in rows:
        groups.setdefault(r["case"] if per_case else r["group"], []).append(r)
    for name, rs in groups.items():
        out.append(line(name, merge_rows(rs)))
    out.append("-" * len(head))
    worst = {"n": len(rows)}
    for _, k, _, higher in GOALS:
        pick = [r for r in rows if r[k] is not None]
        w = (min if higher else max)(pick, key=lambda r: r[k]) if pick else None
        worst[k] = w[k] if w else None
        worst[k + "_case"] = w["case"] if w else None
    lays = [r["layout_right"] for r in rows if r["layout_right"] is not None]
    plain = [r["layout_right_plain"] for r in rows if r["layout_right"] is not None]
    worst["layouts"] = (sum(lays), len(lays))
    worst["layout_right"] = all(lays) if lays else None
    out.append(line("worst", worst))
    out.append("%-34s %4s %11s %9s %11s %11s %11s %7s %10s" % (
        "goal", "", ">= 95%", ">= 98%", "<= 1%", ">= 98%", ">= 80%", "all", "<= 1%"))
    out.append("layout right: %d of %d with `sharded` (the report's absent field "
               "counts wrong), %d of %d on p, t, d, ep and the groups alone"
               % (sum(lays), len(lays), sum(plain), len(plain)))
    out.append("worst cases: " + "; ".join(
        "%s %s" % (label, worst[k + "_case"]) for label, k, _, _ in GOALS
        if worst[k + "_case"]))
    pooled = figures.pool_reliability(r["reliability"] for r in rows)
    out.append(figures.show_reliability(pooled, ""))
    return "\n".join(out), worst


def finite(d):
    """A row for JSON: a missed or wrongly claimed period (inf) as "miss"."""
    return {k: ("miss" if isinstance(v, float) and math.isinf(v) else v) for k, v in d.items()}


def options(args):
    opts = {"real": None, "seed": 2, "tcp": True, "jobs": JOBS, "cache": None,
            "cases": False, "json": None, "subset": "dev"}
    rest = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--real", "--negctl-seed", "--jobs", "--cache", "--json", "--subset"):
            if i + 1 == len(args):
                raise SystemExit("dev_report.py: %s needs a value" % a)
            v = args[i + 1]
            key = {"--real": "real", "--negctl-seed": "seed", "--jobs": "jobs",
                   "--cache": "cache", "--json": "json", "--subset": "subset"}[a]
            opts[key] = int(v) if key in ("seed", "jobs") else v
            i += 2
            continue
        if a == "--no-tcp":
            opts["tcp"] = False
        elif a == "--cases":
            opts["cases"] = True
        else:
            rest.append(a)
        i += 1
    if len(rest) != 1:
        raise SystemExit(__doc__)
    opts["commtap"] = rest[0]
    return opts


def real_specs(listfile):
    specs = []
    with open(listfile) as f:
        for ln in f:
            ln = ln.split("#", 1)[0].strip()
            if ln:
                specs.append(os.path.join(os.path.dirname(os.path.abspath(listfile)), ln)
                             if not os.path.isabs(ln) else ln)
    return specs


def main():
    o = options(sys.argv[1:])
    commtap = o["commtap"]
    specs = real_specs(o["real"]) if o["real"] else []
    refused = [s for s in specs if under_frozen(s)]
    if o["cache"] and under_frozen(o["cache"]):
        refused.append(o["cache"])
    if refused:
        sys.stderr.write("dev_report.py: refused, under test/accuracy/frozen/ (the held-out "
                         "share is scored once, at the end): %s\n" % ", ".join(refused))
        return 2
    if o["seed"] == FROZEN_NEGCTL_SEED:
        sys.stderr.write("dev_report.py: --negctl-seed 1 makes the frozen negative controls\n")
        return 2
    cache = o["cache"] or make_matrix.cache_dir([])
    if o["subset"] not in ("dev", "ci"):
        sys.stderr.write("dev_report.py: --subset dev or ci (the others hold frozen cases)\n")
        return 2
    cases = make_matrix.subset(o["subset"])
    if any(c["frozen"] for c in cases):
        sys.stderr.write("dev_report.py: the %s subset holds frozen cases\n" % o["subset"])
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="commtap-dev-report-") as tmp:
        negctl = make_negctl(tmp, o["seed"], o["tcp"])
        with concurrent.futures.ProcessPoolExecutor(max_workers=o["jobs"]) as pool:
            futs = [pool.submit(matrix_case, commtap, c, cache) for c in cases]
            futs += [pool.submit(negctl_case, commtap, p) for p in negctl]
            futs += [pool.submit(real_case, commtap, s) for s in specs]
            for fu in futs:  # in submission order: the table's order
                rows.append(fu.result())
    text, worst = table(rows, o["cases"])
    print(text)
    if o["json"]:
        with open(o["json"], "w") as f:
            json.dump({"schema": "commtap.dev-report/v1", "cases": [finite(r) for r in rows],
                       "worst": finite(worst),
                       "reliability": figures.reliability_rows(
                           figures.pool_reliability(r["reliability"] for r in rows))},
                      f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
