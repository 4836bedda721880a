#!/usr/bin/python3
"""Record one realtrain scenario: real PyTorch training traffic and its truth.

  make_scenario.py SCENARIO OUTDIR

Builds the fabric (fabric.py), captures span0 with tcpdump at snap length
128, runs one rank per namespace (rank.py), and writes into OUTDIR:

  capture.pcap   every frame that entered the switch, header-only copies
  truth.json     commtap.truth/v1: iteration starts from rank 0, every
                 connection's class from the process group that opened it,
                 flow bytes and packets counted in the capture itself, and
                 each flow's operation: every frame on a group's connection
                 belongs to the call its sender had in flight on that group
                 at the frame's time (ops.py logs every call)
  ranks/         what each rank recorded; tcpdump.txt, logs

A capture from which tcpdump dropped packets is rejected. Exits 77 (SKIP)
when root, network namespaces, tcpdump or torch are missing.
"""
import bisect
import collections
import hashlib
import itertools
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
PORT_STEP = 10  # the next job's master port: each job has its own store
DEADLINE_S = 170
SNAPLEN = 128
# the jobs (rank.py scenario, world size) on consecutive hosts, noise beside them
SCENARIOS = {
    "ddp": ([("ddp", 4)], False),
    "ptd": ([("ptd", 8)], False),
    "moe": ([("moe", 4)], False),
    "ddp-noise": ([("ddp", 4)], True),
    # issue 29: layouts the classification was not built around
    "ddp8": ([("ddp", 8)], False),
    "zero3": ([("zero3", 4)], False),
    "ps": ([("ps", 6)], False),
    "pp4": ([("pp4", 8)], False),
    "tp4": ([("tp4", 8)], False),
    "two-jobs": ([("ddp", 4), ("moe", 4)], False),
    "gradacc": ([("gradacc", 4)], False),
    "mpi": ([("mpi", 4)], False),
}
# how ReduceScatter runs where gloo has none (the truth says what is on the wire)
OPERATION_NOTES = {
    "zero3": "ReduceScatter: torch 1.13's gloo has no reduce_scatter; each layer's gradient "
             "goes out as all_to_all_single (chunk j to rank j) and the received chunks are "
             "summed locally: a ReduceScatter's traffic, logged as ReduceScatter",
    "ps": "PushPull: workers isend each gradient shard to its server and irecv the shard's "
          "parameters back; servers irecv every worker's push, average, step, isend",
    "mpi": "Open MPI over TCP (btl tcp,self), mpi4py: Allreduce of the gradients and "
           "Allgather per iteration; the launcher's out-of-band traffic is Other",
}
NOISE = {"bulk_rate": 1500000, "ckpt_bytes": 2 << 20, "ckpt_every_s": 1.5}
SOURCES = ("rank.py", "make_scenario.py", "fabric.py", "noise.py", "pcapio.py", "conns.py",
           "ops.py", "mpi_rank.py", "mpi_agent.sh")


def generator_digest(scenario):
    """The cache key: the recorder's sources and the scenario's own entry."""
    h = hashlib.sha256()
    h.update(json.dumps([scenario, SCENARIOS[scenario], OPERATION_NOTES.get(scenario)]).encode())
    for name in SOURCES:
        with open(os.path.join(HERE, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def skip_reason(scenario=None):
    if scenario and any(k == "mpi" for k, _ in SCENARIOS[scenario][0]):
        if not shutil.which("mpirun"):
            return "mpirun is not installed (openmpi-bin)"
        r = subprocess.run([TORCH_PYTHON, "-c", "import mpi4py.MPI"], capture_output=True)
        if r.returncode:
            return "mpi4py is not importable by %s (python3-mpi4py)" % TORCH_PYTHON
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


MPI_LAUNCHER_HOST = 100  # mpirun's own namespace on the fabric: its traffic is Other


def job_hosts(scenario):
    """[(kind, world, first host id, master port, rank files' folder)] of the scenario's jobs."""
    out, first = [], 1
    for j, (kind, world) in enumerate(SCENARIOS[scenario][0]):
        out.append((kind, world, first, PORT + PORT_STEP * j, "ranks" if j == 0 else "ranks%d" % j))
        first += world
    return out


def start_job(run, fab, work, kind, world, first, port, folder):
    """The ranks of one job, each in its namespace; the processes to wait for."""
    os.makedirs(os.path.join(work, folder), exist_ok=True)
    nss = [fab.host("r%d" % (first + r), first + r) for r in range(world)]
    addrs = ["%s.%d" % (fabric.SUBNET, first + r) for r in range(world)]
    if kind == "mpi":
        launcher = fab.host("l", MPI_LAUNCHER_HOST)
        nsmap = " ".join("%s=%s" % (a, ns) for a, ns in zip(addrs, nss))
        argv = ["mpirun", "--allow-run-as-root", "-np", str(world),
                "--host", ",".join(a + ":1" for a in addrs), "--bind-to", "none",
                "--mca", "plm_rsh_agent", os.path.join(HERE, "mpi_agent.sh"),
                "--mca", "plm_rsh_no_tree_spawn", "1",
                "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "eth0",
                "--mca", "oob_tcp_if_include", "eth0", "--mca", "pml", "ob1",
                "-wdir", HERE, "-x", "OMP_NUM_THREADS=1",
                TORCH_PYTHON, "mpi_rank.py", ",".join(addrs), str(ITERATIONS), str(WARMUP),
                os.path.join(work, folder)]
        return [run.start(launcher, argv, folder + "/mpirun.log",
                          env=["CTRT_NS_MAP=" + nsmap, "OMPI_ALLOW_RUN_AS_ROOT=1",
                               "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"])], folder + "/mpirun.log"
    master = addrs[0]
    return [run.start(ns, [TORCH_PYTHON, "rank.py", kind, str(r), str(world), master,
                           str(port), str(ITERATIONS), str(WARMUP),
                           os.path.join(work, folder, "%d.json" % r)],
                      "%s/%d.log" % (folder, r),
                      env=["GLOO_SOCKET_IFNAME=eth0", "OMP_NUM_THREADS=1"])
            for r, ns in enumerate(nss)], None


def record(scenario, out, ended=None):
    """Record the scenario into out. ended(work): where given, a callable
    that says when the job is over though its processes still run (a rank
    stopped for good): they are killed then and the capture ends as usual."""
    noisy = SCENARIOS[scenario][1]
    work = out + ".part"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fab = fabric.Fabric()
    run = Run(work)
    pcap = os.path.join(work, "capture.pcap")
    cap, hung = None, False
    try:
        fab.up()
        jobs = job_hosts(scenario)
        noise_files = []
        if noisy:
            storage = fab.host("s", 200)
            src, dst = fab.host("a", 101), fab.host("b", 102)
        cap, caplog = start_capture(run, fab.tor, pcap)
        trainers, logs = [], []
        for kind, world, first, port, folder in jobs:
            procs, log = start_job(run, fab, work, kind, world, first, port, folder)
            trainers += procs
            logs += [log or "%s/%d.log" % (folder, r) for r in range(len(procs))]
        if noisy:
            rank0 = fab.ns("r1")
            run.start(storage, [TORCH_PYTHON, "noise.py", "sink", fabric.SUBNET + ".200", "9000"],
                      "storage.log")
            run.start(dst, [TORCH_PYTHON, "noise.py", "sink", fabric.SUBNET + ".102", "9001"],
                      "sink.log")
            noise_files = [os.path.join(work, n) for n in ("bulk.json", "checkpoint.json")]
            run.start(src, [TORCH_PYTHON, "noise.py", "bulk", fabric.SUBNET + ".102", "9001",
                            str(NOISE["bulk_rate"]), noise_files[0]], "bulk.log")
            run.start(rank0, [TORCH_PYTHON, "noise.py", "checkpoint", fabric.SUBNET + ".200",
                              "9000", str(NOISE["ckpt_bytes"]), str(NOISE["ckpt_every_s"]),
                              noise_files[1]], "checkpoint.log")
        t0 = time.monotonic()
        while any(p.poll() is None for p in trainers) and not (ended and ended(work)):
            bad = [r for r, p in enumerate(trainers) if p.poll() not in (None, 0)]
            if bad or time.monotonic() - t0 > DEADLINE_S:
                log = os.path.join(work, logs[bad[0] if bad else 0])
                why = "%s failed" % logs[bad[0]] if bad else "past %d s" % DEADLINE_S
                raise SystemExit("%s: %s; %s:\n%s" % (scenario, why, log,
                                                      open(log).read()[-3000:]))
            time.sleep(0.2)
        hung = bool(ended and ended(work))
        if hung:
            # the job hangs: the noise stops, then the capture, then the
            # ranks (their sockets closing as they are killed would read as
            # traffic resumed)
            for p in run.procs:
                if p not in trainers and p.poll() is None:
                    p.terminate()
                    p.wait(5)
            stats = stop_capture(cap, caplog)
            run.stop()
        else:
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
    # a hung job's zero-window probes may still come as the capture stops:
    # frames of its last block, after the hang, that need not be written
    if dropped or (unwritten and not hung):
        raise SystemExit("%s: tcpdump dropped %d packets and wrote %d fewer than it received "
                         "(%s): capture rejected" % (scenario, dropped, unwritten, caplog))
    if hung:  # no rank finished, none wrote what it did: the capture alone
        truth = {"scenario": scenario, "hung": True, "iterations": 0, "mean_period_s": 0,
                 "capture": {"snaplen": SNAPLEN, "mtu": fabric.MTU, "tcpdump": stats}}
    else:
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


def label_connections(jobs, noise_files, others):
    """{canonical 4-tuple: (class, group, job)}, and the disagreements between both ends.

    jobs: [(job name, [rank file])]. Connections to an endpoint of OTHERS
    (rendezvous stores as (address, port), a launcher as (address, None))
    are Other whether or not a rank saw them: some open and close within a
    call."""
    seen = collections.defaultdict(list)  # key -> [(recording address, class, group, job)]
    for job, rank_files in jobs:
        for r in rank_files:
            for g in r["groups"]:
                for c in g["conns"]:
                    seen[canon(c)].append((c[0], g["class"], g["name"], job))
    labels, problems = {}, []
    for key, recs in seen.items():
        kinds = {rec[1:] for rec in recs}
        ends = {rec[0] for rec in recs}
        if len(kinds) > 1:
            problems.append("%s: labelled %s" % (key, sorted(kinds)))
        elif ends != {key[0], key[2]} or (key[0] == key[2] and len(recs) < 2):
            problems.append("%s: recorded only by %s" % (key, sorted(ends)))
        labels[key] = sorted(kinds)[0]
    labels = OtherLabels(labels, others)
    for path in noise_files:
        with open(path) as f:
            n = json.load(f)
        labels[canon(n["conn"])] = ("Other", n["role"], None)
    return labels, problems


class OtherLabels(dict):
    def __init__(self, labels, others):
        super().__init__(labels)
        self.others = others  # {(address, port or None): (group, job)}

    def get(self, key, default=None):
        if key in self:
            return self[key]
        for end in (key[:2], key[2:]):
            hit = self.others.get(end) or self.others.get((end[0], None))
            if hit:
                return ("Other",) + hit
        return default


class Operations:
    """Which operation each frame of a group's connection belongs to.

    On a group whose calls are all one operation (a pipeline's sends, a
    parameter server's pushes and pulls, TP's all-reduces), that one. On a
    group of several (ZeRO's all-gathers and reduce-scatters, DDP's
    broadcast then all-reduces, MPI's allreduce and allgather) every rank
    makes the same sequence of collective calls, and a data frame from S to
    R belongs to a call k with k_r <= k <= k_s: k_s the last call S had
    started (it sends nothing of a later one), k_r the first call R had
    not finished (it has every byte of the earlier ones). When those calls
    are not all one operation the frame goes to R's (the stream is FIFO: the
    bytes R still waits for come first) and counts in ambiguous_bytes (per
    flow: operation_ambiguous_bytes, {"OpA|OpB": bytes it may be either}). A
    frame without payload (an acknowledgement) is placed as the data it
    acknowledges, the other way. A frame outside every call (S started none,
    or R finished all) goes to the group's operation with the most bytes
    in the logs and counts in fallback_bytes."""

    def __init__(self, jobs):
        self.calls = {}  # (job, address, group) -> (starts, ends, ops)
        per_group = collections.defaultdict(collections.Counter)
        for job, rank_files in jobs:
            for r in rank_files:
                mine = collections.defaultdict(list)
                for op, group, start, end, size in r.get("ops", []):
                    if op == "Barrier":
                        continue
                    mine[group].append((start, end if end is not None else r["end_ns"], op))
                    per_group[(job, group)][op] += size
                for group, calls in mine.items():
                    calls.sort()
                    ends = list(itertools.accumulate((c[1] for c in calls), max))
                    self.calls[(job, r["address"], group)] = ([c[0] for c in calls], ends,
                                                              [c[2] for c in calls])
        self.common = {k: c.most_common(1)[0][0] for k, c in per_group.items()}
        self.only = {k: next(iter(c)) for k, c in per_group.items() if len(c) == 1}
        self.fallback_bytes = self.ambiguous_bytes = 0

    def of(self, fr, cls, group, job):
        """(operation, the operations it may be when ambiguous, else None)."""
        if cls == "Other":
            return "Other", None
        if (job, group) in self.only:
            return self.only[(job, group)], None
        sender, receiver = (fr.src, fr.dst) if fr.payload > 0 else (fr.dst, fr.src)
        s_starts, _, s_ops = self.calls.get((job, sender, group), ((), (), ()))
        _, r_ends, r_ops = self.calls.get((job, receiver, group), ((), (), ()))
        k_s = bisect.bisect_right(s_starts, fr.ts_ns) - 1
        k_r = bisect.bisect_left(r_ends, fr.ts_ns)
        if k_s < 0 or k_r >= len(r_ops):
            self.fallback_bytes += fr.wire
            return self.common.get((job, group), "Other"), None
        if k_r >= k_s:  # the two ends agree (k_r > k_s: within the clocks' reach of it)
            return s_ops[k_s], None
        maybe = set(s_ops[k_r:k_s + 1])
        if len(maybe) > 1:
            self.ambiguous_bytes += fr.wire
            return r_ops[k_r], "|".join(sorted(maybe))
        return r_ops[k_r], None


def load_job(work, kind, world, folder):
    if kind == "mpi":
        names = sorted(n for n in os.listdir(os.path.join(work, folder)) if n.endswith(".json"))
        files = [os.path.join(work, folder, n) for n in names]
    else:
        files = [os.path.join(work, folder, "%d.json" % r) for r in range(world)]
    ranks = []
    for path in files:
        with open(path) as f:
            ranks.append(json.load(f))
    ranks.sort(key=lambda r: r["rank"])
    if len(ranks) != world:
        raise SystemExit("%s: %d rank files for %d ranks" % (folder, len(ranks), world))
    return ranks


def job_layout(ranks):
    addr = [r["address"] for r in ranks]
    layout = dict(ranks[0]["layout"])
    layout.setdefault("sharded", False)
    layout["groups"] = {cls: [[addr[r] for r in g] for g in lists]
                        for cls, lists in layout["groups"].items()}
    for role in ("workers", "servers"):
        if role in layout:
            layout[role] = [addr[r] for r in layout[role]]
    layout["ranks"] = addr
    return layout


def build_truth(scenario, work, pcap, noise_files, stats, seconds):
    jobs, others = [], {}
    for j, (kind, world, first, port, folder) in enumerate(job_hosts(scenario)):
        name = "job%d-%s" % (j, kind)
        ranks = load_job(work, kind, world, folder)
        jobs.append((name, ranks))
        others[(ranks[0]["address"], port)] = ("store", name)
        if kind == "mpi":
            others[("%s.%d" % (fabric.SUBNET, MPI_LAUNCHER_HOST), None)] = ("launcher", name)
    labels, problems = label_connections(jobs, noise_files, others)
    opsof = Operations(jobs)
    job_addr = {r["address"]: name for name, ranks in jobs for r in ranks}
    info = {}
    for name, ranks in jobs:
        warm = ranks[0]["warmup"]
        starts = ranks[0]["iteration_starts_ns"][warm:]
        info[name] = {"warm": warm, "starts": starts, "bounds": starts + [ranks[0]["end_ns"]],
                      "per_iter": collections.defaultdict(lambda n=len(starts): [0.0] * n),
                      "bytes": 0}

    flows = collections.OrderedDict()  # (src, dst, sport, dport) -> [packets, bytes, ops, job]
    job_bytes = unlabelled = unlabelled_pkts = 0
    unl_flows = collections.Counter()
    for fr in pcapio.tcp_frames(pcap):
        k = (fr.src, fr.dst, fr.sport, fr.dport)
        label = labels.get(canon((fr.src, fr.sport, fr.dst, fr.dport)))
        is_job = fr.src in job_addr and fr.dst in job_addr
        job_bytes += fr.wire if is_job else 0
        if label is None:
            if is_job:
                unlabelled += fr.wire
                unlabelled_pkts += 1
                unl_flows[k] += fr.wire
            continue
        cls, group, job = label
        f = flows.setdefault(k, [0, 0, collections.Counter(), job, collections.Counter()])
        f[0] += 1
        f[1] += fr.wire
        op, maybe = opsof.of(fr, cls, group, job)
        f[2][op] += fr.wire
        if maybe:
            f[4][maybe] += fr.wire
        if job in info:
            ji = info[job]
            ji["bytes"] += fr.wire
            i = bisect.bisect_right(ji["bounds"], fr.ts_ns) - 1
            if 0 <= i < len(ji["starts"]):
                ji["per_iter"][cls][i] += fr.wire
    out_flows = []
    for k, (pkts, nbytes, opbytes, job, ambiguous) in flows.items():
        cls, group, _ = labels.get(canon((k[0], k[2], k[1], k[3])))
        back = flows.get((k[1], k[0], k[3], k[2]), [0, 0])
        direction = "data" if (nbytes, k) >= (back[1], (k[1], k[0], k[3], k[2])) else "reverse"
        flow = {"transport": "tcp", "src": k[0], "dst": k[1], "sport": k[2], "dport": k[3],
                "class": cls, "group": group, "job": job,
                "operation": opbytes.most_common(1)[0][0], "operation_bytes": dict(opbytes),
                "operation_ambiguous_bytes": dict(ambiguous), "direction": direction,
                "packets": pkts, "bytes": nbytes}
        if job is None:  # noise: no job (commtap's --labels takes "job" as a job's name)
            del flow["job"]
        out_flows.append(flow)
    job_list = []
    for name, ranks in jobs:
        ji = info[name]
        job_list.append({
            "name": name, "iterations": len(ji["starts"]), "warmup_iterations": ji["warm"],
            "iteration_starts_ns": ji["starts"], "end_ns": ji["bounds"][-1],
            "mean_period_s": (ji["bounds"][-1] - ji["starts"][0]) / len(ji["starts"]) / 1e9,
            "bytes": ji["bytes"], "bytes_per_class_per_iteration": dict(ji["per_iter"]),
            "layout": job_layout(ranks), "operation_calls": operation_calls(ranks, ji)})
    # the top level is the job with the most bytes (as make_matrix.py merges jobs)
    main = max(job_list, key=lambda j: j["bytes"])
    return {
        "schema": "commtap.truth/v1",
        "profile": None,
        "scenario": scenario,
        "generator": generator_name(scenario),
        "generator_sha256": generator_digest(scenario),
        "transport": "tcp",
        "capture": {"snaplen": SNAPLEN, "mtu": fabric.MTU, "tcpdump": stats,
                    "max_frame": pcapio.max_wire(pcap), "seconds": round(seconds, 2)},
        "job": main["name"],
        "iterations": main["iterations"],
        "warmup_iterations": main["warmup_iterations"],
        "iteration_starts_ns": main["iteration_starts_ns"],
        "end_ns": main["end_ns"],
        "mean_period_s": main["mean_period_s"],
        "bytes_per_class_per_iteration": main["bytes_per_class_per_iteration"],
        "layout": main["layout"],
        "jobs": job_list,
        "wire_visible": {cls: True for j in job_list for cls in j["layout"]["groups"]},
        "operation_notes": OPERATION_NOTES.get(scenario),
        "operation_fallback_bytes": opsof.fallback_bytes,
        "operation_ambiguous_bytes": opsof.ambiguous_bytes,
        "job_bytes": job_bytes,
        "unlabelled_job_bytes": unlabelled,
        "unlabelled_job_packets": unlabelled_pkts,
        "unlabelled_flows": [{"src": k[0], "dst": k[1], "sport": k[2], "dport": k[3],
                              "bytes": b} for k, b in unl_flows.most_common(20)],
        "label_problems": problems,
        "noise": NOISE if SCENARIOS[scenario][1] else None,
        "flows": out_flows,
    }


def operation_calls(ranks, ji):
    """{group: {operation: {calls, bytes}}} over every rank's measured iterations."""
    t0, t1 = ji["starts"][0], ji["bounds"][-1]
    out = collections.defaultdict(lambda: collections.defaultdict(lambda: {"calls": 0,
                                                                           "bytes": 0}))
    for r in ranks:
        for op, group, start, _, size in r.get("ops", []):
            if op != "Barrier" and t0 <= start < t1:
                out[group][op]["calls"] += 1
                out[group][op]["bytes"] += size
    return {g: dict(v) for g, v in out.items()}


def generator_name(scenario):
    kinds = {k for k, _ in SCENARIOS[scenario][0]}
    if kinds == {"mpi"}:
        return "test/realtrain (Open MPI %s over TCP, mpi4py)" % mpi_version()
    return "test/realtrain (PyTorch %s, gloo over TCP)" % torch_version()


def mpi_version():
    r = subprocess.run(["mpirun", "--version"], capture_output=True, text=True)
    return (r.stdout.split("\n")[0].split() or ["?"])[-1]


def torch_version():
    r = subprocess.run([TORCH_PYTHON, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True)
    return r.stdout.strip()


def retruth(scenario, case):
    """The truth of a recording made again from what it kept (capture, ranks/, noise
    files) by this build_truth; its generator_sha256 stays the recording's, the
    rebuilding sources' digest goes in truth_rebuilt_by."""
    path = os.path.join(case, "truth.json")
    with open(path) as f:
        old = json.load(f)
    noise = [os.path.join(case, n) for n in ("bulk.json", "checkpoint.json")
             if SCENARIOS[scenario][1]]
    t = build_truth(scenario, case, os.path.join(case, "capture.pcap"), noise,
                    old["capture"]["tcpdump"], old["capture"]["seconds"])
    t["generator_sha256"] = old["generator_sha256"]
    t["truth_rebuilt_by"] = generator_digest(scenario)
    with open(path, "w") as f:
        json.dump(t, f, indent=1)
        f.write("\n")
    return t


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--retruth" and sys.argv[2] in SCENARIOS:
        t = retruth(sys.argv[2], os.path.abspath(sys.argv[3]))
        print("%s: truth rebuilt, operation fallback %d bytes, ambiguous %d of %d"
              % (sys.argv[3], t["operation_fallback_bytes"], t["operation_ambiguous_bytes"],
                 t["job_bytes"]))
        return 0
    if len(sys.argv) != 3 or sys.argv[1] not in SCENARIOS:
        sys.stderr.write("usage: make_scenario.py %s OUTDIR\n"
                         "       make_scenario.py --retruth SCENARIO DIR\n" % "|".join(SCENARIOS))
        return 2
    why = skip_reason(sys.argv[1])
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
