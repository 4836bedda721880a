#!/usr/bin/python3
"""The spread of commtap's figures over fresh recordings of one real scenario
(issue 29 item 6: gate on the worst recording made under load, not the luckiest).

  spread.py COMMTAP SCENARIO N DIR [--score-only] [--json-out FILE]

DIR "cache": ${COMMTAP_CORPUS_CACHE:-/var/tmp/commtap-corpus}/real-spread (meson's
realtrain-spread suite).

Records N fresh recordings of SCENARIO (make_scenario.py) into
DIR/SCENARIO-1 ... DIR/SCENARIO-N, one after the other, checks each
against the harness gates of check_scenario.py (a recording that fails
them is no measurement of commtap: listed, left out of the figures), and
scores each with test/accuracy/corpus_accuracy.py --json. Prints per
recording, then min / median / max over them:

  bytes     share of bytes classified right with no profile
  period    |error| of the period found after 12 iterations (and whole capture)
  conf      share of bytes reported with confidence >= 0.8, and the share of
            those that is right; wrong@0.8: bytes wrong at >= 0.8, of all
  layout    whether the inferred layout was right
  op        the operations recognised right (bytes-weighted), where the
            runner reports it (issue 29)

--score-only scores the recordings already in DIR instead of recording.
Exits 77 (SKIP) when make_scenario.py cannot record here (root, namespaces,
torch), 1 when fewer than N recordings could be measured.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_scenario  # noqa: E402
import make_scenario  # noqa: E402

RUNNER = os.path.join(HERE, "..", "accuracy", "corpus_accuracy.py")
MIN_RECORDINGS = 5  # issue 29: the spread over at least five recordings


def score(commtap, case):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = subprocess.run([sys.executable, RUNNER, "--json-out", out.name, commtap, case],
                           stdout=subprocess.DEVNULL)
        if r.returncode:
            return None
        c = json.load(out)["cases"][0]
    s = c["methods"]["signatures"]
    period = c.get("period") or {}
    err12 = (period.get("12") or {}).get("error")
    err_all = (period.get("all") or {}).get("error")
    share, right = s.get("confident_share"), s.get("confident_accuracy")
    op = next((v for k, v in s.items() if k.startswith("operation") and
               isinstance(v, (int, float))), None)
    return {"bytes_right": s.get("accuracy") or 0.0,
            "period12_error": abs(err12) if err12 is not None else None,
            "period_all_error": abs(err_all) if err_all is not None else None,
            "confident_share": share, "confident_right": right,
            "wrong_confident": (share * (1 - right) if right is not None else
                                0.0 if share == 0 else None),
            "layout_right": bool(c.get("layout") and c["layout"].get("right")),
            "operation_right": op}


def pct(v):
    return "  -   " if v is None else "%5.1f%%" % (100 * v)


def row(name, m):
    return ("%-16s bytes %s  period@12 %s (whole %s)  conf %s right %s wrong@0.8 %s  "
            "layout %s  op %s" % (name, pct(m["bytes_right"]), pct(m["period12_error"]),
                                  pct(m["period_all_error"]), pct(m["confident_share"]),
                                  pct(m["confident_right"]), pct(m["wrong_confident"]),
                                  "right" if m["layout_right"] else "wrong",
                                  pct(m["operation_right"])))


def summary(figures):
    out = {}
    for k in ("bytes_right", "period12_error", "period_all_error", "confident_share",
              "confident_right", "wrong_confident", "operation_right"):
        vals = [m[k] for m in figures if m[k] is not None]
        out[k] = ({"min": min(vals), "median": statistics.median(vals), "max": max(vals),
                   "n": len(vals)} if vals else None)
    out["layout_right"] = sum(m["layout_right"] for m in figures)
    return out


def main():
    args = sys.argv[1:]
    score_only = "--score-only" in args
    args = [a for a in args if a != "--score-only"]
    json_out = None
    if "--json-out" in args:
        i = args.index("--json-out")
        json_out = args[i + 1]
        del args[i:i + 2]
    if len(args) != 4 or args[1] not in make_scenario.SCENARIOS:
        sys.stderr.write(__doc__)
        return 2
    commtap, scenario, n, outdir = (os.path.abspath(args[0]), args[1], int(args[2]),
                                    os.path.abspath(args[3]))
    if args[3] == "cache":
        outdir = os.path.join(os.path.dirname(check_scenario.cache_dir(scenario)) + "-spread")
    if not score_only:
        why = make_scenario.skip_reason(scenario)
        if why:
            print("SKIP: " + why)
            return 77
    os.makedirs(outdir, exist_ok=True)
    figures, rejected = [], []
    for i in range(1, n + 1):
        case = os.path.join(outdir, "%s-%d" % (scenario, i))
        if not score_only:
            r = subprocess.run([sys.executable, os.path.join(HERE, "make_scenario.py"),
                                scenario, case], stdout=subprocess.DEVNULL)
            if r.returncode:
                rejected.append("%s: not recorded (make_scenario.py exit %d)"
                                % (case, r.returncode))
                continue
        with open(os.path.join(case, "truth.json")) as f:
            t = json.load(f)
        fails = check_scenario.check(case, t)
        if fails:
            rejected.append("%s: %s" % (case, "; ".join(fails)))
            continue
        m = score(commtap, case)
        if m is None:
            rejected.append("%s: corpus_accuracy.py failed" % case)
            continue
        m["case"], m["truth_period_s"] = case, t["mean_period_s"]
        figures.append(m)
        print(row("%s-%d" % (scenario, i), m), flush=True)
    for r in rejected:
        print("left out: " + r)
    if not figures:
        return 1
    s = summary(figures)
    p12 = s["period12_error"]
    print("period found after 12 iterations in %d of %d" % (p12["n"] if p12 else 0, len(figures)))
    for stat in ("min", "median", "max"):
        print(row(stat, {k: (v[stat] if isinstance(v, dict) else None) for k, v in s.items()
                         if k != "layout_right"} | {"layout_right": False}).replace(
            "layout wrong", "layout %d/%d" % (s["layout_right"], len(figures))))
    if json_out:
        with open(json_out, "w") as f:
            json.dump({"scenario": scenario, "recordings": figures, "rejected": rejected,
                       "summary": s}, f, indent=1)
    if n < MIN_RECORDINGS:
        print("note: %d recordings; issue 29's spread takes at least %d" % (n, MIN_RECORDINGS))
    return 0 if len(figures) == n else 1


if __name__ == "__main__":
    sys.exit(main())
