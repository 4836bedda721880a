#!/usr/bin/python3
"""The realtrain suite: one scenario's capture and truth, checked; the runner's figures.

  check_scenario.py COMMTAP SCENARIO

Makes the capture when the cache has none, one made by other sources or
another version of the scenario (its truth's generator_sha256), or when
COMMTAP_REALTRAIN_FRESH=1 (${COMMTAP_CORPUS_CACHE:-/var/tmp/commtap-corpus}/real/SCENARIO),
then gates on the truth and the harness:

  - tcpdump dropped nothing, no frame longer than the MTU (segmented before
    the mirror), at least 12 measured iterations;
  - both ends of every connection recorded the same group;
  - the truth labels >= 99% of the job's bytes (frames between ranks);
  - the period truth agrees with the capture: in every measured iteration
    the first job data frame after the iteration's start comes before the
    next start, and the period of those first frames (least-squares slope
    over the iterations) is within 10% of the starts' (the first frame of
    a DDP iteration waits for the backward pass: a few hundred ms of
    spread on a loaded machine); for every job of the capture.

A recording that fails these gates is not kept in the cache (moved to
SCENARIO.rejected for a look): issue 29 item 6, a bad recording made under
load stayed cached and failed every later run. A recording that passes them
stays, whatever commtap makes of it: its figures are commtap's to answer for.

Then prints corpus_accuracy.py's figures for the case and gates on the
bytes classified right with no profile, on the bytes wrong at confidence
0.8 or more, and on the period found with no profile after 12 iterations
against the framework's own mean, each per scenario (GATES: the worst of
five fresh recordings on this machine, with a margin; docs/accuracy.md).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_scenario  # noqa: E402
import pcapio  # noqa: E402

LABELLED_MIN = 0.99
PERIOD_TOLERANCE = 0.10
MIN_ITERATIONS = 12
# Gates per scenario, set from five fresh recordings each on this loaded
# 2-core machine (test/realtrain/spread.py, docs/accuracy.md "Issue 29"):
# (least bytes right with no profile, most period error after 12
# iterations, most bytes wrong at confidence >= 0.8), each the worst of the
# five with a margin; None: not gated, for the reason in NOT_GATED. A gate
# on the luckiest recording would fail one CI run in five.
GATES = {
    "ddp": (None, 0.05, 0.01),
    "ptd": (0.50, 0.03, 0.25),
    "moe": (0.95, None, 0.01),
    "ddp-noise": (None, None, None),
    "ddp8": (0.95, 0.03, 0.01),
    "zero3": (0.75, 0.05, 0.25),
    "ps": (None, None, 0.01),
    "pp4": (None, None, 0.15),
    "tp4": (0.80, 0.03, 0.01),
    "two-jobs": (0.15, 0.03, 0.01),
    "gradacc": (0.95, 0.03, 0.01),
    "mpi": (0.95, 0.03, 0.01),
}
NOT_GATED = {
    "ddp": ("bytes: no period over the whole capture in 1 of 5 recordings (then no flow "
            "is classified)"),
    "moe": "period: a nested rhythm read as the iteration in 1 of 5 recordings (286% off)",
    "ddp-noise": ("the whole capture's period is lost beside the noise in some runs (the "
                  "recorded frozen run has none), and with no period no flow is classified"),
    "ps": "bytes and period: no period in 1 of 5 recordings, 3-6 times the iteration in 3",
    "pp4": "bytes and period: no period in 2 of 5 recordings",
}


def cache_dir(scenario):
    root = os.environ.get("COMMTAP_CORPUS_CACHE") or "/var/tmp/commtap-corpus"
    return os.path.join(root, "real", scenario)


def current(case):
    try:
        with open(os.path.join(case, "truth.json")) as f:
            t = json.load(f)
    except (OSError, ValueError):
        return None
    digest = make_scenario.generator_digest(os.path.basename(case))
    return t if t.get("generator_sha256") == digest else None


def first_frames(pcap, truth):
    """Per measured iteration, the time of the first job data frame at or after its start."""
    job = set(truth["layout"]["ranks"])
    bounds = truth["iteration_starts_ns"] + [truth["end_ns"]]
    first = [None] * len(truth["iteration_starts_ns"])
    i = 0
    for fr in pcapio.tcp_frames(pcap):  # frames are in time order
        if fr.payload <= 0 or fr.src not in job or fr.dst not in job:
            continue
        while i < len(first) and fr.ts_ns >= bounds[i + 1]:
            i += 1
        if i == len(first):
            break
        if fr.ts_ns >= bounds[i] and first[i] is None:
            first[i] = fr.ts_ns
    return first


def slope(times):
    """Least-squares ns per iteration: every iteration counts, not only the two ends."""
    n = len(times)
    mx, my = (n - 1) / 2, sum(times) / n
    return sum((i - mx) * (t - my) for i, t in enumerate(times)) / sum(
        (i - mx) ** 2 for i in range(n))


def check(case, t):
    fails = []
    cap = t["capture"]
    if cap["tcpdump"].get("dropped by kernel", 0):
        fails.append("tcpdump dropped %d packets" % cap["tcpdump"]["dropped by kernel"])
    if cap["max_frame"] > cap["mtu"] + 14:
        fails.append("a frame of %d bytes: super-frames reach the mirror" % cap["max_frame"])
    if t["iterations"] < MIN_ITERATIONS:
        fails.append("%d measured iterations, fewer than %d" % (t["iterations"], MIN_ITERATIONS))
    for p in t["label_problems"]:
        fails.append("ends disagree: " + p)
    share = 1 - t["unlabelled_job_bytes"] / t["job_bytes"] if t["job_bytes"] else 0
    print("truth: %d iterations, mean period %.4f s; %.3f%% of %d job bytes labelled "
          "(limit %.0f%%); capture %d frames, longest %d bytes, MTU %d, snap %d, dropped %d"
          % (t["iterations"], t["mean_period_s"], 100 * share, t["job_bytes"], 100 * LABELLED_MIN,
             cap["tcpdump"]["captured"], cap["max_frame"], cap["mtu"], cap["snaplen"],
             cap["tcpdump"].get("dropped by kernel", 0)))
    if share < LABELLED_MIN:
        fails.append("the truth labels %.2f%% of the job's bytes" % (100 * share))
    for job in t.get("jobs") or [t]:
        if job.get("iterations", MIN_ITERATIONS) < MIN_ITERATIONS:
            fails.append("%s: %d measured iterations" % (job["name"], job["iterations"]))
        fails += check_period(case, job, job.get("name", t["scenario"]))
    return fails


def check_period(case, job, name):
    """The first bursts of every measured iteration against the job's own starts."""
    starts = job["iteration_starts_ns"]
    first = first_frames(os.path.join(case, "capture.pcap"), job)
    missing = [i for i, f in enumerate(first) if f is None]
    if missing:
        return ["%s: no job traffic in iterations %s" % (name, missing)]
    offsets = [(f - s) / 1e6 for f, s in zip(first, starts)]
    truth_mean, burst_mean = slope(starts), slope(first)
    err = abs(burst_mean - truth_mean) / truth_mean
    print("period of %s: first job frame %.1f..%.1f ms after each start (median %.1f); "
          "their period (least squares) %.4f s, the starts' %.4f s, %.2f%% apart (limit %.0f%%)"
          % (name, min(offsets), max(offsets), sorted(offsets)[len(offsets) // 2],
             burst_mean / 1e9, truth_mean / 1e9, 100 * err, 100 * PERIOD_TOLERANCE))
    if err > PERIOD_TOLERANCE:
        return ["%s: the first bursts' period is %.2f%% from the truth's" % (name, 100 * err)]
    return []


def gate_period(acc, scenario):
    row = acc["cases"][0].get("period", {}).get("12") or {}
    err = row.get("error")
    gate = GATES[scenario][1]
    if gate is None:
        print("period after 12 iterations: %s (not gated: %s)"
              % ("%.2f%% off" % (100 * err) if err is not None else
                 "none found (%s)" % (row.get("reason") or "none"), NOT_GATED[scenario]))
        return []
    if err is None:
        return ["no period found after 12 iterations (%s)" % (row.get("reason") or "none")]
    print("period after 12 iterations: %.4f s against %.4f s, %.2f%% (gate %.0f%%)"
          % (row["period_s"], row["truth_s"], 100 * err, 100 * gate))
    if abs(err) > gate:
        return ["the period after 12 iterations is %.2f%% off (gate %.0f%%)"
                % (100 * err, 100 * gate)]
    return []


def gate_bytes(acc, scenario):
    s = acc["cases"][0]["methods"]["signatures"]
    least, _, wrong_max = GATES[scenario]
    fails = []
    right, wrong = s["accuracy"] or 0, s.get("confident_wrong") or 0
    if least is None:
        print("bytes right with no profile: %.1f%% (not gated: %s)"
              % (100 * right, NOT_GATED[scenario]))
    else:
        print("bytes right with no profile: %.1f%% (gate %.0f%%)" % (100 * right, 100 * least))
        if right < least:
            fails.append("%.1f%% of the bytes right with no profile (gate %.0f%%)"
                         % (100 * right, 100 * least))
    if wrong_max is not None:
        print("bytes wrong at confidence >= 0.8: %.1f%% (gate %.0f%%)"
              % (100 * wrong, 100 * wrong_max))
        if wrong > wrong_max:
            fails.append("%.1f%% of the bytes wrong at confidence >= 0.8 (gate %.0f%%)"
                         % (100 * wrong, 100 * wrong_max))
    return fails


# Anomalies on a clean run (issue 30): every finding at 0.5 or more is
# printed (the goal: none in 1,000 iterations; the 67 development and spread
# recordings held 5 in 1,144, at 0.51-0.89); one that blames a host, a link
# or a receiver at ANOMALY_GATE or more fails the run: a clean job
# confidently called faulty. A rhythm break is printed, not gated: it says
# an iteration lasted longer than the job's, which a loaded machine does
# (the cached ptd recording: one iteration of 281 ms against a median of
# 159 ms, its compute grown, at 1.0). pp4's findings are printed only: its
# pipeline pairs on the loaded 2-core machine read slow links at 0.83 and
# 0.89 in one of its six recordings, at the gate's edge.
ANOMALY_GATE = 0.9
ANOMALY_NOT_GATED_KINDS = ("rhythm",)
ANOMALY_NOT_GATED = {"pp4": "slow links at 0.83-0.89 in one of six clean recordings"}


def gate_anomalies(commtap, case, scenario):
    r = subprocess.run([commtap, "analyze", "--json", "-", os.path.join(case, "capture.pcap")],
                       capture_output=True, text=True)
    if r.returncode not in (0, 2):
        return ["analyze failed: " + r.stderr.strip()[-300:]]
    a = json.loads(r.stdout).get("anomalies") or {}
    found = [f for f in a.get("findings", []) if f["confidence"] >= 0.5]
    print("anomalies on the clean run: %d iterations, %d findings at 0.5 or more%s" %
          (a.get("iterations", 0), len(found),
           "".join("\n  %s at %.2f: %s" % (f["kind"], f["confidence"], f["evidence"][:160])
                   for f in found)))
    if scenario in ANOMALY_NOT_GATED:
        print("anomalies not gated: " + ANOMALY_NOT_GATED[scenario])
        return []
    return ["%s: a %s finding at %.2f on a clean run (gate: below %.1f)" %
            (scenario, f["kind"], f["confidence"], ANOMALY_GATE)
            for f in found if f["confidence"] >= ANOMALY_GATE and
            f["kind"] not in ANOMALY_NOT_GATED_KINDS]


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: check_scenario.py COMMTAP SCENARIO\n")
        return 2
    commtap, scenario = sys.argv[1:]
    case = cache_dir(scenario)
    t = None if os.environ.get("COMMTAP_REALTRAIN_FRESH") == "1" else current(case)
    if t is None:
        r = subprocess.run([sys.executable, os.path.join(HERE, "make_scenario.py"), scenario,
                            case])
        if r.returncode:
            return r.returncode  # 77: SKIP, the reason printed
        t = current(case)
    else:
        print("capture from the cache: %s" % case)
    fails = check(case, t)
    if fails:
        shutil.rmtree(case + ".rejected", ignore_errors=True)
        os.rename(case, case + ".rejected")
        print("the recording failed its own gates: not kept in the cache (%s.rejected)" % case)
        for f in fails:
            print("FAIL %s: %s" % (scenario, f))
        return 1
    runner = os.path.join(HERE, "..", "accuracy", "corpus_accuracy.py")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = subprocess.run([sys.executable, runner, "--json-out", out.name, commtap, case])
        if r.returncode:
            fails.append("corpus_accuracy.py failed")
        else:
            acc = json.load(out)
            fails += gate_period(acc, scenario) + gate_bytes(acc, scenario)
    fails += gate_anomalies(commtap, case, scenario)
    for f in fails:
        print("FAIL %s: %s" % (scenario, f))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
