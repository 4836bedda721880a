#!/usr/bin/python3
"""Record one realtrain scenario: real PyTorch training traffic and its truth.

  make_scenario.py SCENARIO OUTDIR

Builds the fabric (fabric.py), captures span0 with tcpdump at snap length
128, runs one rank per namespace (rank.py), and writes into OUTDIR:

  capture.pcap   every frame that entered the switch, header-only copies
  truth.json     commtap.truth/v1: iteration starts from rank 0, every
                 connection's class from the process group that opened it,
                 flow bytes and packets counted in the capture itself
  ranks/         what each rank recorded; tcpdump.txt, logs

A capture from which tcpdump dropped packets is rejected. Exits 77 (SKIP)
when root, network namespaces, tcpdump or torch are missing.
"""
import collections
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fabric  # noqa: E402
import pcapio  # noqa: E402

TORCH_PYTHON = "/usr/bin/python3"
ITERATIONS, WARMUP = 16, 3
PORT = 29500
DEADLINE_S = 170
SNAPLEN = 128
# world size, rank.py scenario, noise beside the job
SCENARIOS = {
    "ddp": (4, "ddp", False),
    "ptd": (8, "ptd", False),
    "moe": (4, "moe", False),
    "ddp-noise": (4, "ddp", True),
}
NOISE = {"bulk_rate": 1500000, "ckpt_bytes": 2 << 20, "ckpt_every_s": 1.5}
SOURCES = ("rank.py", "make_scenario.py", "fabric.py", "noise.py", "pcapio.py", "conns.py")


def generator_digest():
    h = hashlib.sha256()
    for name in SOURCES:
        with open(os.path.join(HERE, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def skip_reason():
    if os.geteuid() != 0:
        return "needs root (network namespaces, tc)"
    for tool in ("ip", "tc", "tcpdump"):
        if not shutil.which(tool):
            return "%s is not installed" % tool
    if not os.path.exists(TORCH_PYTHON):
        return "%s is missing" % TORCH_PYTHON
    r = subprocess.run([TORCH_PYTHON, "-c", "import torch.distributed as d; "
                        "assert d.is_available()"], capture_output=True)
    if r.returncode:
        return "torch with torch.distributed is not importable by %s (python3-torch)" % TORCH_PYTHON
    probe = "%s%dprobe" % (fabric.PREFIX, os.getpid())
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode:
        return "cannot create network namespaces"
    subprocess.run(["ip", "netns", "del", probe])
    return None


class Run:
    """The processes of one recording; stop() ends them all, in reverse order."""

    def __init__(self, work):
        self.work = work
        self.procs = []

    def start(self, ns, argv, log, env=()):
        cmd = ["ip", "netns", "exec", ns, "env"] + list(env) + argv
        with open(os.path.join(self.work, log), "w") as out:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=HERE)
        self.procs.append(p)
        return p

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


def start_capture(run, tor, pcap):
    log = os.path.join(run.work, "tcpdump.txt")
    p = subprocess.Popen(["ip", "netns", "exec", tor, "tcpdump", "-i", "span0", "-n",
                          "-s", str(SNAPLEN), "-B", "65536", "--time-stamp-precision", "nano",
                          "-w", pcap], stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    for _ in range(100):
        if "listening on" in open(log).read():
            return p, log
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    raise SystemExit("tcpdump did not start: " + open(log).read().strip())


def stop_capture(p, log):
    # libpcap hands frames over in blocks retired after tcpdump's 1 s timeout:
    # frames of a block not yet retired at SIGINT are received but not written
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    p.wait(10)
    text = open(log).read()
    stats = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 3 and words[1] == "packets":
            stats[" ".join(words[2:])] = int(words[0])
    if "captured" not in stats:
        raise SystemExit("tcpdump printed no statistics: " + text.strip())
    return stats


def record(scenario, out):
    world, kind, noisy = SCENARIOS[scenario]
    work = out + ".part"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "ranks"))
    fab = fabric.Fabric()
    run = Run(work)
    pcap = os.path.join(work, "capture.pcap")
    cap = None
    try:
        fab.up()
        ranks = [fab.host("r%d" % r, 1 + r) for r in range(world)]
        master = "%s.1" % fabric.SUBNET
        noise_files = []
        if noisy:
            storage = fab.host("s", 200)
            src, dst = fab.host("a", 101), fab.host("b", 102)
        cap, caplog = start_capture(run, fab.tor, pcap)
        if noisy:
            run.start(storage, [TORCH_PYTHON, "noise.py", "sink", fabric.SUBNET + ".200", "9000"],
                      "storage.log")
            run.start(dst, [TORCH_PYTHON, "noise.py", "sink", fabric.SUBNET + ".102", "9001"],
                      "sink.log")
            noise_files = [os.path.join(work, n) for n in ("bulk.json", "checkpoint.json")]
            run.start(src, [TORCH_PYTHON, "noise.py", "bulk", fabric.SUBNET + ".102", "9001",
                            str(NOISE["bulk_rate"]), noise_files[0]], "bulk.log")
            run.start(ranks[0], [TORCH_PYTHON, "noise.py", "checkpoint", fabric.SUBNET + ".200",
                                 "9000", str(NOISE["ckpt_bytes"]), str(NOISE["ckpt_every_s"]),
                                 noise_files[1]], "checkpoint.log")
        trainers = [run.start(ns, [TORCH_PYTHON, "rank.py", kind, str(r), str(world), master,
                                   str(PORT), str(ITERATIONS), str(WARMUP),
                                   os.path.join(work, "ranks", "%d.json" % r)],
                              "ranks/%d.log" % r,
                              env=["GLOO_SOCKET_IFNAME=eth0", "OMP_NUM_THREADS=1"])
                    for r, ns in enumerate(ranks)]
        t0 = time.monotonic()
        while any(p.poll() is None for p in trainers):
            bad = [r for r, p in enumerate(trainers) if p.poll() not in (None, 0)]
            if bad or time.monotonic() - t0 > DEADLINE_S:
                log = os.path.join(work, "ranks", "%d.log" % (bad[0] if bad else 0))
                why = "rank %d failed" % bad[0] if bad else "past %d s" % DEADLINE_S
                raise SystemExit("%s: %s; %s:\n%s" % (scenario, why, log,
                                                      open(log).read()[-3000:]))
            time.sleep(0.2)
        run.stop()  # the noise: nothing may be in flight when the capture stops
        stats = stop_capture(cap, caplog)
    finally:
        run.stop()
        if cap and cap.poll() is None:  # a recording that failed or was interrupted
            cap.kill()
            cap.wait()
        fab.close()
    dropped = stats.get("dropped by kernel", 0)
    unwritten = stats.get("received by filter", 0) - stats["captured"]
    if dropped or unwritten:
        raise SystemExit("%s: tcpdump dropped %d packets and wrote %d fewer than it received "
                         "(%s): capture rejected" % (scenario, dropped, unwritten, caplog))
    truth = build_truth(scenario, work, pcap, noise_files, stats, time.monotonic() - t0)
    with open(os.path.join(work, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(work, out)
    return truth


def canon(c):
    a, b = (c[0], c[1]), (c[2], c[3])
    return a + b if a <= b else b + a


def label_connections(rank_files, noise_files, store):
    """{canonical 4-tuple: (class, group)}, and the disagreements between both ends.

    Connections to the rendezvous store (STORE, an (address, port)) are Other
    whether or not a rank saw them: some open and close within a call."""
    seen = collections.defaultdict(list)  # key -> [(recording address, class, group)]
    for r in rank_files:
        for g in r["groups"]:
            for c in g["conns"]:
                seen[canon(c)].append((c[0], g["class"], g["name"]))
    labels, problems = {}, []
    for key, recs in seen.items():
        kinds = {(cls, name) for _, cls, name in recs}
        ends = {addr for addr, _, _ in recs}
        if len(kinds) > 1:
            problems.append("%s: labelled %s" % (key, sorted(kinds)))
        elif ends != {key[0], key[2]} or (key[0] == key[2] and len(recs) < 2):
            problems.append("%s: recorded only by %s" % (key, sorted(ends)))
        labels[key] = sorted(kinds)[0]
    labels = StoreLabels(labels, store)
    for path in noise_files:
        with open(path) as f:
            n = json.load(f)
        labels[canon(n["conn"])] = ("Other", n["role"])
    return labels, problems


class StoreLabels(dict):
    def __init__(self, labels, store):
        super().__init__(labels)
        self.store = store

    def get(self, key, default=None):
        if key in self:
            return self[key]
        if key[:2] == self.store or key[2:] == self.store:
            return ("Other", "store")
        return default


def build_truth(scenario, work, pcap, noise_files, stats, seconds):
    world = SCENARIOS[scenario][0]
    ranks = []
    for r in range(world):
        with open(os.path.join(work, "ranks", "%d.json" % r)) as f:
            ranks.append(json.load(f))
    addr = [r["address"] for r in ranks]
    job = set(addr)
    labels, problems = label_connections(ranks, noise_files, (addr[0], PORT))
    warm = ranks[0]["warmup"]
    starts = ranks[0]["iteration_starts_ns"][warm:]
    bounds = starts + [ranks[0]["end_ns"]]
    n = len(starts)

    flows = collections.OrderedDict()  # (src, dst, sport, dport) -> [packets, bytes]
    per_iter = collections.defaultdict(lambda: [0.0] * n)
    job_bytes = unlabelled = unlabelled_pkts = 0
    unl_flows = collections.Counter()
    import bisect
    for fr in pcapio.tcp_frames(pcap):
        k = (fr.src, fr.dst, fr.sport, fr.dport)
        label = labels.get(canon((fr.src, fr.sport, fr.dst, fr.dport)))
        is_job = fr.src in job and fr.dst in job
        job_bytes += fr.wire if is_job else 0
        if label is None:
            if is_job:
                unlabelled += fr.wire
                unlabelled_pkts += 1
                unl_flows[k] += fr.wire
            continue
        f = flows.setdefault(k, [0, 0])
        f[0] += 1
        f[1] += fr.wire
        i = bisect.bisect_right(bounds, fr.ts_ns) - 1
        if 0 <= i < n:
            per_iter[label[0]][i] += fr.wire
    out_flows = []
    for k, (pkts, nbytes) in flows.items():
        cls, group = labels.get(canon((k[0], k[2], k[1], k[3])))
        back = flows.get((k[1], k[0], k[3], k[2]), [0, 0])
        direction = "data" if (nbytes, k) >= (back[1], (k[1], k[0], k[3], k[2])) else "reverse"
        out_flows.append({"transport": "tcp", "src": k[0], "dst": k[1], "sport": k[2],
                          "dport": k[3], "class": cls, "group": group, "direction": direction,
                          "packets": pkts, "bytes": nbytes})
    layout = dict(ranks[0]["layout"])
    layout["groups"] = {cls: [[addr[r] for r in g] for g in lists]
                        for cls, lists in layout["groups"].items()}
    layout["ranks"] = addr
    return {
        "schema": "commtap.truth/v1",
        "profile": None,
        "scenario": scenario,
        "generator": "test/realtrain (PyTorch %s, gloo over TCP)" % torch_version(),
        "generator_sha256": generator_digest(),
        "transport": "tcp",
        "capture": {"snaplen": SNAPLEN, "mtu": fabric.MTU, "tcpdump": stats,
                    "max_frame": pcapio.max_wire(pcap), "seconds": round(seconds, 2)},
        "iterations": n,
        "warmup_iterations": warm,
        "iteration_starts_ns": starts,
        "end_ns": bounds[-1],
        "mean_period_s": (bounds[-1] - starts[0]) / n / 1e9,
        "bytes_per_class_per_iteration": dict(per_iter),
        "layout": layout,
        "wire_visible": {cls: True for cls in layout["groups"]},
        "job_bytes": job_bytes,
        "unlabelled_job_bytes": unlabelled,
        "unlabelled_job_packets": unlabelled_pkts,
        "unlabelled_flows": [{"src": k[0], "dst": k[1], "sport": k[2], "dport": k[3],
                              "bytes": b} for k, b in unl_flows.most_common(20)],
        "label_problems": problems,
        "noise": NOISE if SCENARIOS[scenario][2] else None,
        "flows": out_flows,
    }


def torch_version():
    r = subprocess.run([TORCH_PYTHON, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True)
    return r.stdout.strip()


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SCENARIOS:
        sys.stderr.write("usage: make_scenario.py %s OUTDIR\n" % "|".join(SCENARIOS))
        return 2
    why = skip_reason()
    if why:
        print("SKIP: " + why)
        return 77

    def stop(*_):
        raise SystemExit("make_scenario: interrupted")

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    truth = record(sys.argv[1], os.path.abspath(sys.argv[2]))
    print("%s: %d iterations, mean period %.4f s, %d job bytes, %d unlabelled, capture %s"
          % (truth["scenario"], truth["iterations"], truth["mean_period_s"], truth["job_bytes"],
             truth["unlabelled_job_bytes"], truth["capture"]["tcpdump"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
