#!/usr/bin/python3
"""Stand-in for the torch python in injected realtrain scenarios
(injected.py): run rank.py unchanged, with, when CT_INJECT_STRAGGLER names
this rank, a sleep before each step from iteration FROM on (extra compute:
a straggler), and in every rank the truth a straggler is judged by: when
the rank entered its first collective of each iteration, and how long its
compute before it took, and every collective it entered
(ranks/N.entries.json). Anything else (noise.py)
runs as it would.

  CT_INJECT_STRAGGLER=RANK:SECONDS:FROM[:backward]
                               backward: the sleep is inside the backward
                               pass instead, in the gradient hook of the DDP
                               module's first parameter (the last gradient
                               the backward computes): the buckets before
                               it go out on time, the last one late
  CT_INJECT_FIRST_BUCKET=BYTES DDP's first bucket holds BYTES, not 1 MiB
                               (torch's default, which holds the whole model
                               here): several buckets an iteration
  CT_INJECT_PAUSE=IT:SECONDS   every rank sleeps SECONDS once before step IT
                               (a checkpoint's stall: a rhythm break)
  CT_INJECT_HANG=RANK:IT       RANK writes ranks/RANK.stopped and stops itself
                               (SIGSTOP) before step IT: the others wait in
                               its collective for good (a hang)
"""
import json
import os
import runpy
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    if len(sys.argv) < 2 or os.path.basename(sys.argv[1]) != "rank.py":
        sys.argv = sys.argv[1:]
        runpy.run_path(os.path.join(HERE, sys.argv[0]), run_name="__main__")
        return
    sys.path.insert(0, HERE)
    import torch.distributed as dist

    import rank
    me, out = int(sys.argv[3]), sys.argv[9]
    spec = os.environ.get("CT_INJECT_STRAGGLER", "")
    late_rank, late_s, late_from, where = ((spec.split(":") + ["", "", "", ""])[:4] if spec
                                           else (-1, 0, 0, ""))
    late_rank, late_s, late_from = int(late_rank), float(late_s or 0), int(late_from or 0)
    in_backward = where == "backward"
    pause = os.environ.get("CT_INJECT_PAUSE", "")
    pause_at, pause_s = (int(pause.split(":")[0]), float(pause.split(":")[1])) if pause else (-1, 0)
    hang = os.environ.get("CT_INJECT_HANG", "")
    hang_rank, hang_at = (int(hang.split(":")[0]), int(hang.split(":")[1])) if hang else (-1, -1)
    rec = {"rank": me, "iteration_starts_ns": [], "entry_ns": [], "entries_ns": [],
           "slept_s": []}
    state = {"it": -1}

    def timed(fn):
        def call(*a, **k):
            if state["it"] >= 0:
                t = time.time_ns()
                if not rec["entries_ns"][-1]:  # its first collective of the iteration
                    rec["entry_ns"][-1] = t
                rec["entries_ns"][-1].append(t)
            return fn(*a, **k)
        return call

    first_bucket = os.environ.get("CT_INJECT_FIRST_BUCKET", "")
    if first_bucket:
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(first_bucket)
    if in_backward and me == late_rank:
        from torch.nn.parallel import DistributedDataParallel
        built = DistributedDataParallel.__init__

        def late_in_backward(grad):
            if state["it"] >= late_from:
                rec["slept_s"][-1] = late_s
                time.sleep(late_s)
            return grad

        def init(self, *a, **k):
            built(self, *a, **k)
            next(self.module.parameters()).register_hook(late_in_backward)
        DistributedDataParallel.__init__ = init

    for name in ("all_reduce", "all_to_all_single", "all_to_all", "send", "recv", "isend",
                 "irecv", "broadcast", "all_gather", "reduce_scatter"):
        if hasattr(dist, name):
            setattr(dist, name, timed(getattr(dist, name)))
    make = rank.SCENARIOS

    def wrap(kind):
        def build(groups, r, world):
            step, layout = make[kind](groups, r, world)

            def injected():
                state["it"] += 1
                rec["iteration_starts_ns"].append(time.time_ns())
                rec["entry_ns"].append(None)
                rec["entries_ns"].append([])
                slept = (late_s if me == late_rank and state["it"] >= late_from and
                         not in_backward else 0)
                rec["slept_s"].append(slept)
                if slept:
                    time.sleep(slept)
                if state["it"] == pause_at:
                    rec["paused_ns"] = [time.time_ns(), None]
                    time.sleep(pause_s)
                    rec["paused_ns"][1] = time.time_ns()
                if me == hang_rank and state["it"] == hang_at:
                    with open(out[:-5] + ".stopped", "w") as f:
                        f.write("%d\n" % time.time_ns())
                    os.kill(os.getpid(), signal.SIGSTOP)
                step()
            return injected, layout
        return build

    rank.SCENARIOS = {k: wrap(k) for k in make}
    sys.argv = sys.argv[1:]
    rank.main()
    with open(out[:-5] + ".entries.json", "w") as f:
        json.dump(rec, f)


if __name__ == "__main__":
    main()
