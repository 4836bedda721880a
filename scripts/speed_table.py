#!/usr/bin/env python3
"""The speed table of docs/performance.md (issue 32): each row is one
command that measures a ratio against an anchor timed in the same run; the
rows run in turn, ROUNDS times (alternating, so the machine's drift falls
on every row alike), and the table gives each row's median with the load
average before and after.

  scripts/speed_table.py BUILD [--rounds N] [--rows a,b,...] [--example SO]

Rows that need what the machine lacks (root for BPF test runs, NVIDIA's
example plugin built outside the tree: --example or
$COMMTAP_NCCL_EXAMPLE_PLUGIN) say so and are left out.
"""
import os
import re
import shlex
import statistics
import subprocess
import sys


def engine(active):
    def parse(out):
        m = re.search(r"engine / baseline: ([0-9.]+)x", out)
        w = re.search(r"work done: ([0-9]+) packets, ([0-9]+) messages", out)
        b = re.search(r"baseline \(read headers\): +([0-9.]+) ns/packet", out)
        return (float(m.group(1)) if m else None,
                "header reads %s ns a packet; the engine: %s packets, %s messages" %
                ((b.group(1) if b else "?",) + w.groups()) if w else "no work line")
    cmd = ["{b}/cli/commtap", "bench", "--cpu-time", "--runs", "3"]
    if active:
        cmd += ["--active", str(active)]
    return cmd, parse


def mirror_parse(out):
    m = re.search(r"1 worker:  bare [0-9.]+ / ([0-9.]+), engine [0-9.]+ / ([0-9.]+)", out)
    if not m:
        return None, "no summary"
    bare, eng = float(m.group(1)), float(m.group(2))
    return eng / bare if bare else None, "bare %.2f, engine %.2f Mpps per CPU s" % (bare, eng)


def mirror2_parse(out):
    m = re.search(r"2 workers / 1 worker: [0-9.]+x by the wall clock, ([0-9.]+)x per CPU", out)
    return (float(m.group(1)) if m else None), "per CPU second"


def probe(column):
    """XDP or TC probe over the empty program of its hook, RoCE WRITE middle."""
    def parse(out):
        for line in out.splitlines():
            if line.startswith("RoCE WRITE middle (1 KiB)"):
                v = [int(x) for x in line.split()[5:]]
                empty, clock, xdp, tc_emp, tc_clk, tc = v[:6]
                if column == "xdp":
                    return xdp / empty, "%d vs %d ns, clock alone %d" % (xdp, empty, clock - empty)
                return tc / tc_emp, "%d vs %d ns, clock alone %d" % (tc, tc_emp, tc_clk - tc_emp)
        return None, "no RoCE WRITE middle row"
    return ["{b}/agent/commtap-bench-bpf", "--repeat", "500000", "--runs", "3"], parse


def plugin_parse(out):
    """commtap's ratio to the example, rep by rep, and what each recorded."""
    lines = [ln for ln in out.splitlines() if re.search(r"mask +[0-9]+ .* recorded", ln)]
    if len(lines) < 2:
        return None, "no summary"
    share = [re.search(r"recorded +([0-9.]+)%", ln).group(1) for ln in lines]
    ratio = re.search(r"ratio ([0-9.]+)", lines[1])
    return (float(ratio.group(1)) if ratio else None), (
        "the example recorded %s%% of the events, commtap %s%%" % (share[0], share[1]))


def slow_parse(out):
    m = re.search(r"sort \+ pairing \+ periodicity: ([0-9.]+) M header reads", out)
    a = re.search(r"anchor, header reads: +([0-9.]+) ns/packet.*?([0-9]+) packets a run", out)
    return (float(m.group(1)) if m else None), (
        "anchor %s ns over %s packets" % a.groups() if a else "no anchor line")


ROWS = {
    "engine-64": ("engine, 10,000 QPs, 64 sending at once / header reads", "<= 2.0x",
                  *engine(0)),
    "engine-10000": ("engine, all 10,000 QPs sending at once / header reads", "<= 2.5x",
                     *engine(10000)),
    "mirror-1w": ("commtap-mirror, 1 worker, ring feed: engine / bare", ">= 0.8x",
                  ["bash", "mirror/bench-mirror.sh", "{b}", "3", "1", "400000", "ring"],
                  mirror_parse),
    "mirror-2w": ("commtap-mirror, ring feed: 2 workers / 1, engine", ">= 1.9x",
                  ["bash", "mirror/bench-mirror.sh", "{b}", "3", "1", "400000", "ring"],
                  mirror2_parse),
    "xdp": ("XDP probe / empty XDP program, RoCE WRITE middle", "<= 3x", *probe("xdp")),
    "tc": ("TC probe / empty TC program, RoCE WRITE middle", "<= 3x", *probe("tc")),
    "plugin": ("NCCL plugin / NVIDIA's example, per event above a null plugin (v5)",
               "<= 0.5x", ["{b}/host_gpu/test/gpu-plugin-cost", "{example}",
                           "{b}/host_gpu/libnccl-profiler-commtap.so", "--version", "5",
                           "--colls", "20000", "--reps", "5"], plugin_parse),
    "slow-100k": ("slow path, 100,000 flows, in header reads (M)", "<= 164 M",
                  ["{b}/cli/commtap", "bench", "--slow-path", "--runs", "1", "--cpu-time",
                   "--flows", "100000"], slow_parse),
    "slow-1m": ("slow path, 1,000,000 flows, in header reads (M)", "<= 11x of 100k",
                ["{b}/cli/commtap", "bench", "--slow-path", "--runs", "1", "--cpu-time",
                 "--flows", "1000000"], slow_parse),
}


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        raise SystemExit(__doc__)
    build = a[0]
    rounds = int(a[a.index("--rounds") + 1]) if "--rounds" in a else 5
    rows = a[a.index("--rows") + 1].split(",") if "--rows" in a else list(ROWS)
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        raise SystemExit("speed_table: unknown rows %s (rows: %s)" % (unknown, ", ".join(ROWS)))
    left_out = {}
    example = a[a.index("--example") + 1] if "--example" in a else \
        os.environ.get("COMMTAP_NCCL_EXAMPLE_PLUGIN")
    if not example or not os.path.exists(example):
        left_out["plugin"] = ("NVIDIA's example plugin is built outside the tree "
                              "(docs/performance.md): --example SO")
    else:
        # its pools as docs/performance.md says: its defaults do not allocate
        os.environ.setdefault("NCCL_PROFILE_GROUP_API_POOL_SIZE", "16")
        os.environ.setdefault("NCCL_PROFILE_COLL_POOL_SIZE", "24")
    if os.geteuid() != 0:
        for r in ("xdp", "tc", "mirror-1w", "mirror-2w"):
            left_out[r] = "needs root (BPF test runs, DPDK)"
    # the mirror's two rows come from one command: run it once a round
    shared = {"mirror-2w": "mirror-1w", "tc": "xdp"}
    left_out = {r: why for r, why in left_out.items() if r in rows}
    rows = [r for r in rows if r not in left_out]
    got = {r: [] for r in rows}
    note = {}
    load = [loadavg()]
    for k in range(rounds):
        outputs = {}
        for r in rows:
            title, goal, cmd, parse = ROWS[r]
            src = shared.get(r) if shared.get(r) in rows else None
            if src and src in outputs:
                out = outputs[src]
            else:
                argv = [x.format(b=build, example=example) for x in cmd]
                p = subprocess.run(argv, capture_output=True, text=True)
                out = p.stdout + p.stderr
                outputs[r] = out
            v, what = parse(out)
            if v is None:
                note[r] = "round %d: no figure (%s): %s" % (k + 1, what, out.strip()[-200:])
            else:
                got[r].append(v)
                note.setdefault(r + ":did", what)
            print("round %d %-13s %s (%s)" % (k + 1, r, "%.3g" % v if v is not None else "-",
                                              what), flush=True)
        load.append(loadavg())
    print("\nspeed table: medians of %d alternating rounds, load average %s" %
          (rounds, " -> ".join("%.2f" % x for x in load)))
    print("| row | command | median | runs | goal | what the anchor did |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        title, goal, cmd, _ = ROWS[r]
        v = got[r]
        print("| %s | `%s` | %s | %s | %s | %s |" % (
            title, " ".join(shlex.quote(x.format(b=build, example=example or "EXAMPLE.so"))
                     for x in cmd),
            "%.3g" % statistics.median(v) if v else "none",
            ", ".join("%.3g" % x for x in v), goal, note.get(r + ":did", note.get(r, ""))))
    for r, why in left_out.items():
        print("| %s | left out: %s | | | %s | |" % (ROWS[r][0], why, ROWS[r][1]))
    return 0 if all(got[r] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
