#!/usr/bin/env python3
"""The layout matrix: job profiles that vary what real clusters vary,
synthesized with `commtap synth --truth` at a few seeds, over RoCEv2 and
NCCL's socket transport, and scored against their truth.

  make_matrix.py list  [--subset S]
  make_matrix.py build COMMTAP [--subset S] [--cache DIR]
  make_matrix.py score COMMTAP [--subset S] [--cache DIR] [--json] [--markdown]
  make_matrix.py check COMMTAP [--subset S] [--cache DIR]
  make_matrix.py specs COMMTAP [--subset S] [--cache DIR]   (CAPTURE:TRUTH[:PROFILE] per
                                         case, for corpus_accuracy.py)
  make_matrix.py table SCORES.json       (docs/accuracy.md's table from score --json)

Subsets: `full` (every case), `ci` (a fixed deterministic handful, a
couple of minutes on 2 cores), `frozen` (the held-out share: every case of
seed 3 and every case of the layouts in HELD_OUT_LAYOUTS; see
test/accuracy/frozen/README.md), `dev` (full minus frozen).

Development cases (not frozen) are synthesized with --truth-operations:
their truth names each flow's operation and the layout with `sharded`.
Frozen cases are not: frozen/SHA256SUMS holds their truths as frozen, so
their operations are not scored until those truths are frozen again.

Profiles and captures go to the cache (default
$COMMTAP_ACCURACY_CACHE or ~/.cache/commtap-accuracy), outside the tree;
synth is deterministic per seed, so a case is made again when absent
(remove the cache after changing synth). `check` makes its cases afresh
in a temporary directory unless --cache is given.

`check` fails when a case cannot be built, when `commtap analyze` does
not account for exactly the truth's flows, packets and bytes, when labels
from the truth do not give every byte its class, or when a frozen case's
capture or truth no longer has the checksum in frozen/SHA256SUMS. The
class accuracy itself is a measurement: it is printed, never a verdict.
"""
import copy
import hashlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import figures  # noqa: E402
import score  # noqa: E402

ITERATIONS = 12
# As test/model/period_accuracy.py does: times scaled so an iteration lasts
# about 50 ms, sizes scaled down to about TARGET_BYTES of NIC traffic.
ITERATION_S = 0.05
TARGET_BYTES = 48e6
SEEDS = [1, 2, 3]
FROZEN_SEED = 3
TRANSPORTS = ["roce", "tcp"]
# layouts held out whole (every seed and transport): the classification
# work must not look at them while tuning
HELD_OUT_LAYOUTS = ["gpt-p3t2d2-1gph", "gpt-p2t4d2-4gph-tp-across", "two-gpt-jobs",
                    "gpt-p4t8d1-8gph-rail-ds", "gpt-p1t2d4-1gph-zero3",
                    "gpt-p2t2d2-1gph-nccl-ll128"]
# the CI subset: seed 1, one transport each, spread over the axes
CI_CASES = [
    "gpt-p2t2d2-1gph-roce-s1",
    "gpt-p2t2d2-1gph-tcp-s1",
    "gpt-p1t8d1-1gph-roce-s1",
    "gpt-p8t1d1-1gph-tcp-s1",
    "gpt-p4t2d2-4gph-custom-roce-s1",
    "moe-d4ep4-1gph-roce-s1",
    "gpt-and-ddp-roce-s1",
    "gpt-p2t8d2-8gph-rail-custom-roce-s1",
    "gpt-p2t2d2-1gph-zero1-overlap-tcp-s1",
    "gpt-p1t1d8-2gph-zero3-roce-s1",
    "gpt-p4t1d2-1gph-vpp2-roce-s1",
    "gpt-p2t2d2-1gph-nccl-ll-tcp-s1",
]


def gpt(name, p, t, d, gph, mapping="deepspeed-default", hosts_base=0, rank_hosts=None,
        micro_batches=8, desc="", par=None, place=None, nccl=None):
    prof = {
        "name": name,
        "description": desc or "GPT-350M-like, (p,t,d)=(%d,%d,%d), %d GPU(s) per host, %s"
        % (p, t, d, gph, mapping),
        "model": {"kind": "gpt", "layers": 24, "hidden": 1024, "seq_len": 1024,
                  "vocab": 50257, "global_batch": 4 * micro_batches * d, "micro_batch": 4,
                  "micro_batches": micro_batches, "precision": "fp16"},
        "parallelism": {"p": p, "t": t, "d": d, "schedule": "1f1b", "recompute": True},
        "placement": {"gpus": p * t * d, "gpus_per_host": gph, "mapping": mapping},
        "hardware": {"platform": "A100"},
    }
    prof["parallelism"].update(par or {})
    prof["placement"].update(place or {})
    if nccl is not None:
        prof["nccl"] = nccl
    if rank_hosts is not None:
        prof["placement"]["rank_hosts"] = rank_hosts
    if hosts_base:
        nhosts = (max(rank_hosts) + 1) if rank_hosts else -(-p * t * d // gph)
        prof["placement"]["hosts"] = ["198.18.%d.%d" % (hosts_base, i + 1)
                                      for i in range(nhosts)]
    return prof


def moe(name, d, ep, gph, hosts_base=0):
    prof = {
        "name": name,
        "description": "MoE-125M, d=%d, ep=%d, %d GPU(s) per host" % (d, ep, gph),
        "model": {"kind": "moe", "layers": 12, "hidden": 768, "seq_len": 1024,
                  "vocab": 50257, "global_batch": 4 * 2 * d, "micro_batch": 4,
                  "micro_batches": 2, "precision": "fp16", "experts": 8, "top_k": 2,
                  "moe_interval": 2},
        "parallelism": {"p": 1, "t": 1, "d": d, "ep": ep, "recompute": False},
        "placement": {"gpus": d, "gpus_per_host": gph, "mapping": "deepspeed-default"},
        "hardware": {"platform": "V100-NVLink"},
    }
    if hosts_base:
        prof["placement"]["hosts"] = ["198.18.%d.%d" % (hosts_base, i + 1)
                                      for i in range(-(-d // gph))]
    return prof


def ddp(name, arch, gpus, gph, hosts_base=0):
    prof = {
        "name": name,
        "description": "DDP %s on %d GPUs, %d per host" % (arch, gpus, gph),
        "model": {"kind": "ddp", "architecture": arch, "batch_per_gpu": 32,
                  "precision": "fp32", "bucket_mb": 25, "first_bucket_mb": 1},
        "placement": {"gpus": gpus, "gpus_per_host": gph},
        "hardware": {"platform": "A100"},
    }
    if hosts_base:
        prof["placement"]["hosts"] = ["198.18.%d.%d" % (hosts_base, i + 1)
                                      for i in range(-(-gpus // gph))]
    return prof


def tp_across_hosts(p, t, d):
    """rank_hosts putting each TP rank of a (stage, dp) on its own host: host
    = tp, so TP crosses the NIC and every host holds one rank of each group."""
    return [r % t for r in range(p * t * d)]


def layouts():
    """{layout name: [profile, ...]}: several profiles share the fabric."""
    L = {}

    def add(*profiles, name=None):
        L[name or profiles[0]["name"]] = list(profiles)

    # one GPU per host: every class crosses the NIC
    for p, t, d in [(2, 2, 2), (1, 2, 2), (2, 4, 1), (1, 8, 1), (3, 2, 2), (4, 2, 1),
                    (4, 1, 2), (8, 1, 1), (8, 2, 1)]:
        add(gpt("gpt-p%dt%dd%d-1gph" % (p, t, d), p, t, d, 1))
    # several GPUs per host, the two mappings
    for mapping in ("deepspeed-default", "custom"):
        short = "ds" if mapping == "deepspeed-default" else "custom"
        add(gpt("gpt-p2t2d2-2gph-%s" % short, 2, 2, 2, 2, mapping))
        add(gpt("gpt-p4t2d2-4gph-%s" % short, 4, 2, 2, 4, mapping))
    # TP across hosts with 4 GPUs per host (explicit placement)
    add(gpt("gpt-p2t4d2-4gph-tp-across", 2, 4, 2, 4, "explicit",
            rank_hosts=tp_across_hosts(2, 4, 2)))
    # rail-optimized hosts: 8 GPUs, 8 NICs, each GPU's traffic on its own NIC
    rail = {"nics_per_host": 8}
    add(gpt("gpt-p2t8d2-8gph-rail-custom", 2, 8, 2, 8, "custom", place=rail))
    add(gpt("gpt-p4t8d1-8gph-rail-ds", 4, 8, 1, 8, place=rail))
    # ZeRO-1 (distributed optimizer, plain and overlapped) and ZeRO-3 / FSDP
    add(gpt("gpt-p2t2d2-1gph-zero1", 2, 2, 2, 1, par={"zero": 1}))
    add(gpt("gpt-p2t2d2-1gph-zero1-overlap", 2, 2, 2, 1,
            par={"zero": 1, "zero_overlap": True}))
    add(gpt("gpt-p1t2d4-1gph-zero3", 1, 2, 4, 1, par={"zero": 3}))
    add(gpt("gpt-p1t1d8-2gph-zero3", 1, 1, 8, 2, par={"zero": 3}))
    # interleaved 1F1B: the pipeline wraps from the last stage to the first
    vpp = {"schedule": "interleaved-1f1b", "virtual_stages": 2}
    add(gpt("gpt-p2t2d2-1gph-vpp2", 2, 2, 2, 1, par=vpp))
    add(gpt("gpt-p4t1d2-1gph-vpp2", 4, 1, 2, 1, par=vpp))
    add(gpt("gpt-p8t1d1-1gph-vpp3", 8, 1, 1, 1,
            par={"schedule": "interleaved-1f1b", "virtual_stages": 3}))
    # NCCL's chunking: protocol, algorithm, buffer, p2p chunk, channels
    for tag, nccl in [("ring", {}), ("tree", {"algorithm": "tree"}),
                      ("ll128", {"protocol": "LL128"}),
                      ("ll", {"protocol": "LL", "channels": 4}),
                      ("1mib-p2p512k", {"buffsize": 1 << 20, "p2p_chunksize": 512 << 10,
                                        "channels": 1})]:
        add(gpt("gpt-p2t2d2-1gph-nccl-" + tag, 2, 2, 2, 1, nccl=nccl))
    add(moe("moe-d4ep4-1gph", 4, 4, 1))
    add(moe("moe-d8ep4-2gph", 8, 4, 2))
    add(ddp("ddp-resnet50-4gpu-1gph", "resnet50", 4, 1))
    add(ddp("ddp-bert-base-8gpu-2gph", "bert-base", 8, 2))
    # several jobs sharing the fabric (disjoint hosts)
    add(gpt("gpt-p2t2d2-1gph-job-a", 2, 2, 2, 1, hosts_base=10),
        ddp("ddp-resnet50-4gpu-job-b", "resnet50", 4, 1, hosts_base=11), name="gpt-and-ddp")
    add(gpt("gpt-p4t1d2-1gph-job-a", 4, 1, 2, 1, hosts_base=12),
        gpt("gpt-p2t2d1-1gph-job-b", 2, 2, 1, 1, hosts_base=13, micro_batches=4),
        name="two-gpt-jobs")
    return L


def cases():
    out = []
    for layout, profiles in layouts().items():
        for transport in TRANSPORTS:
            for seed in SEEDS:
                out.append({"name": "%s-%s-s%d" % (layout, transport, seed), "layout": layout,
                            "profiles": profiles, "transport": transport, "seed": seed,
                            "frozen": seed == FROZEN_SEED or layout in HELD_OUT_LAYOUTS})
    return out


def subset(name):
    all_cases = cases()
    if name == "full":
        return all_cases
    if name == "frozen":
        return [c for c in all_cases if c["frozen"]]
    if name == "dev":
        return [c for c in all_cases if not c["frozen"]]
    if name == "ci":
        by_name = {c["name"]: c for c in all_cases}
        return [by_name[n] for n in CI_CASES]
    raise SystemExit("make_matrix.py: unknown subset %r (full, ci, frozen, dev)" % name)


def cache_dir(args):
    if "--cache" in args:
        return args[args.index("--cache") + 1]
    return os.environ.get("COMMTAP_ACCURACY_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "commtap-accuracy"))


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()[-400:]))
    return r.stdout


def synth_cmd(commtap, profile, out, case, size_scale, time_scale, noise):
    """With --noise: storage TCP, ECN marks with CNPs, a retransmission. The
    capture is the same either way; only a development case's truth names
    operations (a frozen one stays as frozen)."""
    return [commtap, "synth", profile, "-o", out, "--iterations", str(ITERATIONS),
            "--transport", case["transport"], "--scale", "%.9g" % size_scale,
            "--time-scale", "%.9g" % time_scale, "--jitter", "0.05", "--snaplen", "128",
            "--seed", str(case["seed"])] + (["--noise"] if noise else []) + \
        ([] if case["frozen"] else ["--truth-operations"])


def cached(case, pcap, truth):
    """Whether the cache holds the case as synth makes it now: a development
    case's truth made before --truth-operations is made again."""
    if not (os.path.exists(pcap) and os.path.exists(truth)):
        return False
    if case["frozen"]:
        return True
    with open(truth, "rb") as f:
        return b'"operation_bytes"' in f.read()


def merge(parts, pcap, truth_path, layout):
    """Several jobs' captures into one (by time) and their truths into one:
    the flows together; the period of the job with the most bytes, which is
    the one `analyze` reports at the top level."""
    import heapq

    import pcapio
    streams = [pcapio.read(p) for p, _ in parts]
    with pcapio.Writer(pcap, 128) as w:
        for ts, frame, wire in heapq.merge(*streams, key=lambda r: r[0]):
            w.write(ts, frame, wire)
    truths = [json.load(open(t)) for _, t in parts]
    main = max(truths, key=lambda t: sum(f["bytes"] for f in t["flows"]))
    merged = copy.deepcopy(main)
    merged["profile"] = layout
    merged["jobs"] = [{k: t[k] for k in ("profile", "iterations", "iteration_starts_ns",
                                          "mean_period_s")} for t in truths]
    merged["flows"] = [f for t in truths for f in t["flows"]]
    if all("layout" in t for t in truths):  # several jobs: sharded when any is
        merged["layout"]["sharded"] = any(t["layout"]["sharded"] for t in truths)
    per = {}
    for t in truths:
        for cls, v in t["bytes_per_class_per_iteration"].items():
            per.setdefault(cls, [0.0] * len(v))
            per[cls] = [a + b for a, b in zip(per[cls], v)]
    merged["bytes_per_class_per_iteration"] = per
    with open(truth_path, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")


def build(commtap, case, cache):
    """Write the case's profiles and synthesize it; returns (pcap, truth,
    profile paths). Made again only when absent."""
    d = os.path.join(cache, "matrix", case["name"])
    pcap, truth = os.path.join(d, "capture.pcap"), os.path.join(d, "capture.truth.json")
    os.makedirs(d, exist_ok=True)
    profiles = []
    for prof in case["profiles"]:
        path = os.path.join(d, prof["name"] + ".json")
        with open(path, "w") as f:
            json.dump(prof, f, indent=2)
            f.write("\n")
        profiles.append(path)
    if cached(case, pcap, truth):
        return pcap, truth, profiles
    # one pair of scales for all the case's jobs, so shared-fabric jobs keep their ratios
    preds = [json.loads(run(commtap, "predict", "--json", p)) for p in profiles]
    nic = sum(pr["nic_bytes_per_iteration"] for pr in preds)
    time_scale = ITERATION_S / preds[0]["time_s"]["iteration_schedule"]
    size_scale = min(time_scale, TARGET_BYTES / (nic * ITERATIONS)) if nic else time_scale
    if len(profiles) == 1:
        run(*synth_cmd(commtap, profiles[0], pcap + ".tmp", case, size_scale, time_scale,
                       True), "--truth", truth + ".tmp")
    else:
        parts = []
        for i, p in enumerate(profiles):
            part = os.path.join(d, "job%d.pcap" % i)
            # noise from the first job only: the storage flows would share keys
            run(*synth_cmd(commtap, p, part, case, size_scale, time_scale, i == 0))
            parts.append((part, os.path.join(d, "job%d.truth.json" % i)))
        merge(parts, pcap + ".tmp", truth + ".tmp", case["layout"])
        for part, t in parts:
            os.unlink(part)
            os.unlink(t)
    os.replace(truth + ".tmp", truth)
    os.replace(pcap + ".tmp", pcap)
    return pcap, truth, profiles


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def frozen_sums():
    path = os.path.join(HERE, "frozen", "SHA256SUMS")
    sums = {}
    if os.path.exists(path):
        for line in open(path):
            if line.strip() and not line.startswith("#"):
                digest, name = line.split()
                sums[name] = digest
    return sums


def score_case(commtap, case, cache):
    pcap, truth_path, profiles = build(commtap, case, cache)
    truth = json.load(open(truth_path))
    res = {"case": case["name"], "layout": case["layout"], "transport": case["transport"],
           "seed": case["seed"], "frozen": case["frozen"],
           "pcap": pcap, "truth": truth_path}
    res["no_profile"] = score.score(truth, score.analyze(commtap, pcap))
    if len(profiles) == 1:  # analyze takes one profile: a shared fabric has none
        res["profile"] = score.score(truth, score.analyze(commtap, pcap, "--profile",
                                                          profiles[0]))
    res["labels"] = score.score(truth, score.analyze(commtap, pcap, "--labels", truth_path))
    return res


def check_case(commtap, case, cache, sums):
    """The things that must hold whatever the classifier says."""
    errors = []
    pcap, truth_path, _ = build(commtap, case, cache)
    truth = json.load(open(truth_path))
    report = score.analyze(commtap, pcap)
    want = {score.flow_key(f): f for f in truth["flows"]}
    got = {score.flow_key(f): f for f in report["flows"]}
    if set(want) != set(got):
        errors.append("flows: %d in the truth only, %d in analyze only"
                      % (len(set(want) - set(got)), len(set(got) - set(want))))
    for k in set(want) & set(got):
        if (want[k]["packets"], want[k]["bytes"]) != (got[k]["packets"], got[k]["bytes"]):
            errors.append("%s: truth %d packets %d bytes, analyze %d, %d"
                          % (k, want[k]["packets"], want[k]["bytes"], got[k]["packets"],
                             got[k]["bytes"]))
            break
    labelled = score.score(truth, score.analyze(commtap, pcap, "--labels", truth_path))
    if labelled["accuracy"] != 1.0:
        errors.append("with the truth as labels only %.2f%% of bytes have their class"
                      % (100 * labelled["accuracy"]))
    if case["frozen"]:
        errors += check_frozen(commtap, case, cache, sums)
    return errors


def check_frozen(commtap, case, cache, sums):
    """A frozen case made again must have the checksums it was frozen with."""
    errors = []
    pcap, truth_path, _ = build(commtap, case, cache)
    for path, tag in ((pcap, "capture.pcap"), (truth_path, "capture.truth.json")):
        key = "matrix/%s/%s" % (case["name"], tag)
        if key not in sums:
            errors.append("%s: not in frozen/SHA256SUMS" % key)
        elif sums[key] != sha256(path):
            errors.append("%s: checksum %s, frozen/SHA256SUMS has %s"
                          % (key, sha256(path)[:16], sums[key][:16]))
    return errors


def pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def row_markdown(r):
    def period(s):
        if not s["period_s"]:
            return "none"
        return "%.4g s (%s)" % (s["period_s"], pct(s["period_error"]))

    prof = r.get("profile")
    return "| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
        r["layout"], r["transport"], r["seed"], "yes" if r["frozen"] else "",
        pct(r["no_profile"]["accuracy"]), pct(prof["accuracy"]) if prof else "-",
        period(r["no_profile"]), pct(r["no_profile"]["calibration"]),
        score.fmt_confusion(r["no_profile"]["confusion"]))


def table(rows):
    """docs/accuracy.md's matrix table from `score --json` rows: one line per
    development layout and transport (seeds side by side), the frozen share
    as totals only, so that nobody tunes on its cases."""
    dev = {}
    for r in rows:
        if not r["frozen"]:
            dev.setdefault((r["layout"], r["transport"]), []).append(r)
    out = ["| layout | transport | no profile (per seed) | with profile | labels | period "
           "(error) | calibration | where the bytes went (no profile, first seed) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (layout, transport), rs in dev.items():
        rs.sort(key=lambda r: r["seed"])

        def per(mode):
            return " / ".join(pct(r[mode]["accuracy"]) if mode in r else "-" for r in rs)

        def period(r):
            s = r["no_profile"]
            return ("%.4g s (%s)" % (s["period_s"], pct(s["period_error"])) if s["period_s"]
                    else "none")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            layout, transport, per("no_profile"), per("profile"), per("labels"),
            " / ".join(period(r) for r in rs),
            " / ".join(pct(r["no_profile"]["calibration"]) for r in rs),
            score.fmt_confusion(rs[0]["no_profile"]["confusion"])))
    frozen = [r for r in rows if r["frozen"]]
    if frozen:
        def weighted(mode):
            have = [r for r in frozen if mode in r]
            tot = sum(r[mode]["bytes"] for r in have)
            return sum(r[mode]["accuracy"] * r[mode]["bytes"] for r in have) / tot, len(have)
        np_acc, n = weighted("no_profile")
        pr_acc, m = weighted("profile")
        periods = sum(1 for r in frozen if r["no_profile"]["period_s"])
        out.append("")
        out.append("Frozen share (%d cases, not shown case by case): %s of bytes classed right "
                   "with no profile, %s with the profile (%d cases with one), a period "
                   "claimed in %d of %d." % (n, pct(np_acc), pct(pr_acc), m, periods, n))
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    if args[:1] == ["table"] and len(args) == 2:
        print(table(json.load(open(args[1]))))
        return 0
    if not args:
        raise SystemExit(__doc__)
    cmd = args[0]
    sub = args[args.index("--subset") + 1] if "--subset" in args else "full"
    chosen = subset(sub)
    if cmd == "list":
        for c in chosen:
            print("%s%s" % (c["name"], "  (frozen)" if c["frozen"] else ""))
        return 0
    if len(args) < 2:
        raise SystemExit(__doc__)
    commtap, cache = args[1], cache_dir(args)
    if cmd == "build":
        for c in chosen:
            print(build(commtap, c, cache)[0], flush=True)
        return 0
    if cmd == "specs":  # cases as corpus_accuracy.py takes them
        for c in chosen:
            pcap, truth, profiles = build(commtap, c, cache)
            print(":".join([pcap, truth] + (profiles if len(profiles) == 1 else [])))
        return 0
    if cmd == "score":
        rows = []
        for c in chosen:
            r = score_case(commtap, c, cache)
            rows.append(r)
            if "--markdown" in args:
                print(row_markdown(r), flush=True)
            elif "--json" not in args:
                print("%-40s no profile %6s  profile %6s  labels %6s  period %s  "
                      "op %s  conf. wrong %s"
                      % (c["name"], pct(r["no_profile"]["accuracy"]),
                         pct(r["profile"]["accuracy"]) if "profile" in r else "-",
                         pct(r["labels"]["accuracy"]),
                         "%.4g s" % r["no_profile"]["period_s"]
                         if r["no_profile"]["period_s"] else "none",
                         pct(r["no_profile"]["operation_accuracy"]),
                         pct(r["no_profile"]["confident_wrong"])), flush=True)
        named = [(r["case"], r["no_profile"]) for r in rows]
        if "--json" in args:
            json.dump(rows, sys.stdout, indent=1)
            print()
        else:
            print(figures.show_summary(figures.summary(named)))
            print(figures.show_reliability(
                figures.pool_reliability(s["reliability"] for _, s in named), "pooled "))
        return 0
    if cmd == "check":
        if "--cache" not in args:  # check what synth makes now, not a cached copy
            tmp = tempfile.TemporaryDirectory(prefix="commtap-matrix-")
            cache = tmp.name
        sums = frozen_sums()
        failed = 0
        for c in chosen:
            try:
                errors = check_case(commtap, c, cache, sums)
            except RuntimeError as e:
                errors = [str(e)]
            r = score_case(commtap, c, cache) if not errors else None
            status = "FAIL" if errors else "ok"
            print("%-40s %s%s" % (c["name"], status, "" if errors else
                                  "  (no profile %s, profile %s, period %s)"
                                  % (pct(r["no_profile"]["accuracy"]),
                                     pct(r["profile"]["accuracy"]) if "profile" in r else "-",
                                     "%.4g s" % r["no_profile"]["period_s"]
                                     if r["no_profile"]["period_s"] else "none")),
                  flush=True)
            for e in errors:
                print("  " + e)
            failed += bool(errors)
        print("%d of %d cases failed" % (failed, len(chosen)))
        return 1 if failed else 0
    raise SystemExit("make_matrix.py: unknown command %r (list, build, score, check)" % cmd)


if __name__ == "__main__":
    sys.exit(main())
