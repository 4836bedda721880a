#!/usr/bin/python3
"""Realtrain scenarios with an anomaly injected (issue 22), opt-in: the
harness of make_scenario.py (real PyTorch gloo ranks in namespaces behind
a mirrored bridge), new scenario names, the existing ones untouched.

  injected.py record NAME      (as root, holding /tmp/commtap-netns.lock)
  injected.py score COMMTAP [NAME ...]
  injected.py check COMMTAP NAME   (the meson test: records NAME when the
                                    cache lacks it, holding the lock, then scores)

  moe-straggler  rank 2 sleeps STRAGGLER_S before each step from iteration
                 STRAGGLER_FROM on (inject_rank.py); every rank records
                 when it entered its first collective of each iteration
  ddp-straggler  the same in a DDP job (gloo's ring all-reduce)
  moe-straggler-r3, moe-straggler-r1, moe-straggler-r0
                 development twins of moe-straggler (which is scored, not
                 tuned on): another rank, delay and onset each (STRAGGLERS)
  moe-straggler-r2b  a second held-out case (rank 2, 35 ms, from iteration
                 6), recorded before the step matching of issue 30 and
                 scored once after it
  ddp8-straggler rank 5 of a DDP ring of 8 sleeps 30 ms from iteration 6
  ddp8-straggler-100, -r1, -r4, -r7, -r3, -long, -h1, -h2
                 more rings of 8 (STRAGGLERS: rank, sleep, onset; -long
                 and -h2 measure 40 iterations, MEASURED): recorded after
                 ddp8-straggler was missed, to tell the detector from the
                 recording (docs/accuracy.md, Stragglers in a ring of 8)
  ddp-bucket-straggler
                 a DDP job of 4 with two buckets an iteration (its first
                 bucket made 256 KiB: FIRST_BUCKET); rank 2 sleeps 30 ms
                 inside its backward pass, before the gradient of its first
                 layer, from iteration 6: its first bucket goes out on
                 time, its last late. Judged by every rank's entry into the
                 iteration's last all-reduce (BACKWARD)
  ddp-bucket-straggler-h1  its twin held out (rank 1, 40 ms, from iteration
                 7): recorded with it, before any rule reads the last
                 bucket, to be scored once after one does
  ddp-bucket-straggler-r1, -r3  development twins (rank 1, 50 ms, from 5;
                 rank 3, 40 ms, from 7)
  ddp-bucket-clean-1, -2  the job of two buckets with nothing injected:
                 its false alarms are test/anomaly/clean_real.py's to count
  ptd-straggler  rank 3 of the 2-2-2 hybrid (pipeline, tensor and data
                 groups of two each) sleeps 40 ms from iteration 6
  ptd-straggler-r6  held out for the pairs' straggler (rank 6, 50 ms, from
                 iteration 7): recorded before its rule was settled, scored
                 once after
  ddp-slowlink   rank 2's eth0 sends through tbf at SLOW_RATE
  ddp-lossy      ranks 2 and 3 drop 1 in DROP_ONE_IN of the packets from
                 each other on input (nftables numgen: past the mirror, which sees
                 them and their retransmissions; this kernel has no netem,
                 tc has no gact); needs nft (apt install nftables)
  ddp-pause      every rank sleeps PAUSE_S once before step PAUSE_AT (a
                 checkpoint's stall): a rhythm break there
  ddp-hang       with other traffic going on (the noise of ddp-noise), rank
                 HANG_RANK stops itself (SIGSTOP) before step HANG_AT; the
                 capture ends HANG_WAIT_S later: a hang, the others waiting

Captures go to $COMMTAP_CORPUS_CACHE/real-injected/NAME (default
/var/tmp/commtap-corpus). `score` analyzes each and prints, per case, the
findings against the truth: for the straggler the ranks' own entries into
their collectives (8 ranks on 2 cores make stragglers of their own: a
finding on another rank is true when that rank's own entries were late),
each entry the moment the rank could begin the exchange: its call, or the
end of its previous collective on the group where its call was queued
behind that one (ready_ns: DDP's last bucket), the calls alone printed
beside.
"""
import bisect
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fabric  # noqa: E402
import make_scenario  # noqa: E402

STRAGGLER_RANK, STRAGGLER_S, STRAGGLER_FROM = 2, 0.03, 6  # of 3 warm-up + 16 iterations
# per straggler case: (rank, seconds slept, first iteration slept in)
STRAGGLERS = {
    "moe-straggler": (STRAGGLER_RANK, STRAGGLER_S, STRAGGLER_FROM),
    "ddp-straggler": (STRAGGLER_RANK, STRAGGLER_S, STRAGGLER_FROM),
    "moe-straggler-r3": (3, 0.02, 8),
    "moe-straggler-r1": (1, 0.04, 5),
    "moe-straggler-r0": (0, 0.025, 7),
    "moe-straggler-r2b": (2, 0.035, 6),
    "ddp8-straggler": (5, 0.03, 6),
    "ddp8-straggler-100": (6, 0.1, 7),
    "ddp8-straggler-r1": (1, 0.06, 6),
    "ddp8-straggler-r4": (4, 0.08, 8),
    "ddp8-straggler-r7": (7, 0.12, 5),
    "ddp8-straggler-r3": (3, 0.09, 7),
    "ddp8-straggler-long": (2, 0.06, 16),
    "ddp8-straggler-h1": (0, 0.07, 8),
    "ddp8-straggler-h2": (5, 0.08, 18),
    "ptd-straggler": (3, 0.04, 6),
    "ptd-straggler-r6": (6, 0.05, 7),
    "ddp-bucket-straggler": (2, 0.03, 6),
    "ddp-bucket-straggler-h1": (1, 0.04, 7),
    "ddp-bucket-straggler-r1": (1, 0.05, 5),
    "ddp-bucket-straggler-r3": (3, 0.04, 7),
}
# stragglers slowed inside the backward pass, judged at the iteration's last collective
BACKWARD = {n for n in STRAGGLERS if n.startswith("ddp-bucket-")}
# the same job of two buckets with nothing injected: its false alarms (clean_real.py)
BUCKET_CLEAN = {"ddp-bucket-clean-1", "ddp-bucket-clean-2"}
# held out and not yet scored: `score` with no names leaves them alone
UNSCORED = {"ddp-bucket-straggler-h1"}
FIRST_BUCKET = 256 * 1024  # bytes: the model's 1,001,512 B in two buckets (605 KB, 394 KB)
# measured iterations where not make_scenario's 16 (15 and 17 before the onset)
MEASURED = {"ddp8-straggler-long": 40, "ddp8-straggler-h2": 40}
SLOW_RANK, SLOW_RATE = 2, "50mbit"
DROP_AT, DROP_FROM, DROP_ONE_IN = 3, 2, 50
PAUSE_AT, PAUSE_S = 9, 1.0  # a stall of several iterations (one is ~0.2 s here)
HANG_RANK, HANG_AT, HANG_WAIT_S = 2, 9, 3.0
CASES = {
    "moe-straggler": (4, "moe"),
    "ddp-straggler": (4, "ddp"),
    "moe-straggler-r3": (4, "moe"),
    "moe-straggler-r1": (4, "moe"),
    "moe-straggler-r0": (4, "moe"),
    "moe-straggler-r2b": (4, "moe"),
    "ptd-straggler": (8, "ptd"),
    "ptd-straggler-r6": (8, "ptd"),
    "ddp-slowlink": (4, "ddp"),
    "ddp-lossy": (4, "ddp"),
    "ddp-pause": (4, "ddp"),
    "ddp-hang": (4, "ddp"),
}
# every ring of 8 (ddp8-straggler and its twins) is a DDP job of 8 ranks
CASES.update({n: (8, "ddp") for n in STRAGGLERS if n.startswith("ddp8-")})
# and every job of two buckets a DDP job of 4
CASES.update({n: (4, "ddp") for n in sorted(BACKWARD | BUCKET_CLEAN)})


def addr(rank):
    return "%s.%d" % (fabric.SUBNET, 1 + rank)


def cache(name):
    root = os.environ.get("COMMTAP_CORPUS_CACHE") or "/var/tmp/commtap-corpus"
    return os.path.join(root, "real-injected", name)


def record(name):
    why = make_scenario.skip_reason()
    if why:
        print("SKIP: " + why)
        return 77
    world, kind = CASES[name]
    make_scenario.ITERATIONS = MEASURED.get(name, make_scenario.ITERATIONS)
    make_scenario.SCENARIOS[name] = ([(kind, world)], name == "ddp-hang")
    make_scenario.TORCH_PYTHON = os.path.join(HERE, "inject_rank.py")
    if name in STRAGGLERS:
        os.environ["CT_INJECT_STRAGGLER"] = "%d:%g:%d" % STRAGGLERS[name] + (
            ":backward" if name in BACKWARD else "")
    if name in BACKWARD or name in BUCKET_CLEAN:
        os.environ["CT_INJECT_FIRST_BUCKET"] = str(FIRST_BUCKET)
    if name == "ddp-pause":
        os.environ["CT_INJECT_PAUSE"] = "%d:%g" % (PAUSE_AT, PAUSE_S)
    if name == "ddp-hang":
        os.environ["CT_INJECT_HANG"] = "%d:%d" % (HANG_RANK, HANG_AT)
    host = fabric.Fabric.host

    def shaped(self, hname, host_id):
        ns = host(self, hname, host_id)
        if name == "ddp-slowlink" and host_id == 1 + SLOW_RANK:
            fabric.sh("tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "tbf", "rate",
                      SLOW_RATE, "burst", "64kb", "latency", "200ms")
        if name == "ddp-lossy" and host_id in (1 + DROP_AT, 1 + DROP_FROM):
            # both ways: which way of the pair carries the ring's data is gloo's choice
            nft = ["ip", "netns", "exec", ns, "nft"]
            peer = addr(DROP_FROM if host_id == 1 + DROP_AT else DROP_AT)
            fabric.sh(*nft, "add", "table", "inet", "ctloss")
            fabric.sh(*nft, "add chain inet ctloss in { type filter hook input priority 0; }")
            fabric.sh(*nft, "add", "rule", "inet", "ctloss", "in", "ip", "saddr", peer,
                      "numgen", "random", "mod", str(DROP_ONE_IN), "==", "0", "drop")
        return ns
    fabric.Fabric.host = shaped
    truth = make_scenario.record(name, cache(name),
                                 hung_for(HANG_WAIT_S) if name == "ddp-hang" else None)
    print("%s: %d iterations, mean period %.4f s" % (name, truth["iterations"],
                                                     truth["mean_period_s"]))
    return 0


def hung_for(seconds):
    """ended(work) for make_scenario.record: the stopped rank's mark is seconds old."""
    def ended(work):
        try:
            with open(os.path.join(work, "ranks", "%d.stopped" % HANG_RANK)) as f:
                return time.time_ns() - int(f.read()) > seconds * 1e9
        except (OSError, ValueError):
            return False
    return ended


def ready_ns(ops, called):
    """When a rank could begin the exchange of the collective it called at
    `called` (ns, its own clock): the call, or the end of its previous
    collective on the same group where that is later (gloo runs a group's
    collectives in turn: DDP's second bucket, called while the first is
    still running, waits for it). ops: the rank's log of its collectives
    (ranks/N.json: op, group, start, end); the one called nearest."""
    i = min(range(len(ops)), key=lambda k: abs(ops[k][2] - called))
    prev = [o[3] for o in ops[:i] if o[1] == ops[i][1]]
    return max(called, prev[-1]) if prev else called


def rank_logs(case):
    """Each rank's logs, read once: (ranks/N.entries.json, ranks/N.json's ops)."""
    logs, ops = [], []
    for r in range(CASES[os.path.basename(case)][0]):
        with open(os.path.join(case, "ranks", "%d.entries.json" % r)) as f:
            logs.append(json.load(f))
        with open(os.path.join(case, "ranks", "%d.json" % r)) as f:
            ops.append(json.load(f)["ops"])
    return logs, ops


def entry_of(name, log, it):
    """A rank's entry in iteration it into the collective judged (None: not
    logged): its first of the iteration, or for a straggler slowed inside
    its backward pass (BACKWARD) the last."""
    if name in BACKWARD:
        return log["entries_ns"][it][-1] if log["entries_ns"][it] else None
    return log["entry_ns"][it]


def entries(case, logs, ready=False):
    """Per measured iteration (numbered as the ranks count, the warm-up's
    too), each rank's lateness into the collective judged (entry_of)
    against the median of the others' (the ranks' own clocks), s: by its
    call, or where ready by when it could begin the exchange (ready_ns).
    logs: rank_logs. A dict: iteration -> a row of ranks."""
    name, (ranks, ops) = os.path.basename(case), logs
    late = {}
    for it in range(make_scenario.WARMUP, len(ranks[0]["entry_ns"])):
        e = [entry_of(name, log, it) for log in ranks]
        if None in e:
            continue
        if ready:
            e = [ready_ns(ops[r], e[r]) for r in range(len(e))]
        late[it] = [(e[r] - statistics.median(e[:r] + e[r + 1:])) / 1e9 for r in range(len(e))]
    return late


def rank_shift(logs, job):
    """What to add to the capture's iteration numbers to get the ranks':
    the capture's iterations start where the job's traffic starts after its
    longest common wait (period.c), somewhere inside the ranks' iteration,
    and it counts from its first whole one, so its iteration k is the
    ranks' k or k + 1 (ddp-straggler: k, moe-straggler: k + 1). The shift
    most of the capture's starts (report: job.iteration_starts) agree on,
    each placed among the median rank's iteration starts."""
    ranks = [statistics.median(s) for s in zip(*(log["iteration_starts_ns"] for log in logs[0]))]
    votes = [bisect.bisect_right(ranks, s) - 1 - k
             for k, s in enumerate(job.get("iteration_starts") or [])]
    return statistics.mode(votes) if votes else 0


def rank_entries(case, logs, rank):
    """When `rank` entered the collective judged, each iteration, the
    warm-up's too (ready_ns, its own clock, the capture's too: one
    machine): [(ns, the ranks' iteration)]."""
    name, log, ops = os.path.basename(case), logs[0][rank], logs[1][rank]
    return [(ready_ns(ops, e), it) for it, e in
            ((it, entry_of(name, log, it)) for it in range(len(log["entry_ns"])))
            if e is not None]


def score(commtap, name):
    case = cache(name)
    report = os.path.join(case, "report.json")
    subprocess.run([commtap, "analyze", os.path.join(case, "capture.pcap"), "--json", report],
                   capture_output=True, check=False)
    with open(report) as f:
        whole = json.load(f)
    a = whole["anomalies"]
    found = a["findings"]
    print("%s: %d iterations, straggler spread %.3g ms, %d findings" %
          (name, a["iterations"], (a.get("straggler_jitter_s") or 0) * 1e3, len(found)))
    for f in found:
        where = f.get("host") or "%s>%s" % (f.get("src"), f.get("dst"))
        print("  %-10s %-28s conf %.2f onset %s: %s" % (f["kind"], where, f["confidence"],
                                                        f.get("onset_iteration"), f["evidence"]))
    if name in BUCKET_CLEAN:  # nothing injected: any alarm is a false one
        return 1 if any(f["confidence"] >= 0.5 for f in found) else 0
    late_rank, late_s, late_from = STRAGGLERS.get(name, (-1, 0, 0))
    want = {"straggler": ("straggler", {addr(late_rank)}),
            "ddp-slowlink": ("slow_link", {addr(SLOW_RANK)}),
            "ddp-lossy": ("loss", {addr(DROP_FROM), addr(DROP_AT)}),
            "ddp-pause": ("rhythm", None),
            "ddp-hang": ("hang", {addr(HANG_RANK)})}["straggler" if name in STRAGGLERS
                                                     else name]
    hit = [f for f in found if f["kind"] == want[0] and
           (want[1] is None or
            {f.get("host"), f.get("src"), f.get("dst"), f.get("silent_host")} & want[1])]
    if name == "ddp-pause":
        # the long iteration is the one the ranks slept in (their own clocks)
        with open(os.path.join(case, "ranks", "0.entries.json")) as f:
            slept = json.load(f)["paused_ns"]
        hit = [f for f in hit if f["confidence"] >= 0.5 and f.get("onset_ns") and
               abs(f["onset_ns"] - slept[0]) <= 3 * a["period_s"] * 1e9]
        print("  truth: every rank slept %.3g s from %d ns" % ((slept[1] - slept[0]) / 1e9,
                                                             slept[0]))
    if name == "ddp-hang":
        # an alarm, naming the rank that stopped first
        hit = [f for f in hit if f["confidence"] >= 0.5]
    if name in STRAGGLERS:
        # by when each rank could begin the exchange: its call, or where its
        # call was queued behind the one before (BACKWARD's last bucket), that
        # one's end; the calls alone printed beside
        logs = rank_logs(case)
        ready, called = entries(case, logs, ready=True), entries(case, logs)
        mine = [row[late_rank] for it, row in ready.items() if it >= late_from]
        shift = rank_shift(logs, whole.get("job") or {})
        entered = rank_entries(case, logs, late_rank)

        def rank_it(seen):
            """The ranks' iteration of one the finding names: the one the
            late rank entered nearest to when the finding says it did
            (at_ns: a late entry lies either side of where an iteration
            starts on the wire), else by the capture's numbering."""
            if seen.get("at_ns") and entered:
                return min(entered, key=lambda e: abs(e[0] - seen["at_ns"]))[1]
            return seen["iteration"] + shift

        def onset_of(f):
            per = f.get("per_iteration") or [{}]
            return rank_it(per[0] if per[0].get("iteration") == f["onset_iteration"]
                           else {"iteration": f["onset_iteration"]})

        def truth_of(f):
            """The ranks' own lateness in the iterations the finding names."""
            named = [rank_it(p) for p in f.get("per_iteration") or []]
            return [ready[it][late_rank] for it in named if it in ready]

        def agrees(f):
            truth = truth_of(f)
            return bool(truth) and abs(f["delay_s"] / statistics.median(truth) - 1) <= 0.10

        # found means: from the injection on (in the ranks' iterations, which
        # count the warm-up's too: the sleep starts at their iteration
        # late_from), within 3 iterations, and as late as the ranks' own
        # entries say in the iterations it names, within 10%
        hit = [f for f in hit if f.get("onset_iteration") is not None and
               abs(onset_of(f) - late_from) <= 3 and agrees(f)]
    print("  injected %s at %s: %s" % (want[0], sorted(want[1] or ["the job"]),
                                         "found" if hit else "MISSED"))
    if name in STRAGGLERS:
        print("  truth: rank %d's own lateness from iteration %d: median %.3g ms "
              "(by its calls alone %.3g ms; slept %.3g ms); the capture's iteration k "
              "is mostly the ranks' k%+d" %
              (late_rank, late_from, statistics.median(mine) * 1e3,
               statistics.median(row[late_rank] for it, row in called.items()
                                 if it >= late_from) * 1e3, late_s * 1e3, shift))
        near = [f for f in found if f["kind"] == "straggler" and f.get("host") == addr(late_rank)]
        if near:
            d, truth = near[0]["delay_s"], truth_of(near[0])
            off = [abs(p["delay_s"] - ready[rank_it(p)][late_rank])
                   for p in near[0].get("per_iteration") or [] if rank_it(p) in ready]
            print("  its finding (onset %s, the ranks' %d): %.3g ms, %s against the ranks' own "
                  "lateness in its %d iterations (each within a median %.3g ms), %+.1f%% "
                  "against their lateness since the onset, %+.1f%% against the sleep" %
                  (near[0]["onset_iteration"], onset_of(near[0]), d * 1e3,
                   "%+.1f%%" % (100 * (d / statistics.median(truth) - 1)) if truth else "nothing",
                   len(truth), statistics.median(off) * 1e3 if off else float("nan"),
                   100 * (d / statistics.median(mine) - 1), 100 * (d / late_s - 1)))
    return 0 if hit else 1


def check(commtap, name):
    if not os.path.exists(os.path.join(cache(name), "capture.pcap")):
        import fcntl
        with open("/tmp/commtap-netns.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            rc = record(name)
        if rc:
            return rc
    return score(commtap, name)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "record" and sys.argv[2] in CASES:
        return record(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "check" and sys.argv[3] in CASES:
        return check(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 3 and sys.argv[1] == "score":
        names = sys.argv[3:] or [n for n in CASES
                                 if os.path.exists(cache(n)) and n not in UNSCORED]
        return max([score(sys.argv[2], n) for n in names] or [0])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
