#!/usr/bin/env python3
"""One job, one ct_job at every probe, on a real Prometheus server (issue 23).

    test_fleet_identity.py COMMTAP DDP_PROFILE.json RULES.yml

A DDP job on 8 hosts (the bundled ResNet-50 profile on 64 GPUs): its
all-reduce ring gives each host's agent a view of its ring neighbours only.
Each host's agent view is the frames to or from that host; a mirror sees
them all. Every view is served by `commtap analyze --listen` on loopback
and scraped by Debian's prometheus with the shipped rules loaded.

- Without labels, three agents' views name the job by the hosts each sees:
  they disagree (the limit docs/metrics.md states), and the rules cannot
  join them.
- With labels naming the job (each host's file names the flows its own
  processes send, as a host agent writes it; the mirror reads the directory
  of all of them), all nine probes give the one ct_job: the rules count 9
  probes of the job, the period's median is the whole capture's, and the
  job's bytes over the eight agents, each host pair counted once, are the
  capture's (a plain sum counts every pair twice), and so are the rules'
  (per class, and in all, over the nine probes).

The server and the probes are stopped and the data removed however the
test ends (test_fleet.py's harness). SKIP (77) only where the prometheus
binary is missing.
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_fleet import free_port, run_with_prometheus, start_prometheus, wait_for  # noqa: E402

HOSTS = 8
JOB = "slurm:4242"  # what the hosts' agents read from their processes
SPLIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "html",
                     "split_by_hosts.py")


def host(i):
    return f"198.18.0.{i + 1}"


def main():
    commtap, ddp, rules = sys.argv[1:4]
    return run_with_prometheus("commtap-identity-", lambda t, procs: run(
        commtap, ddp, rules, t, procs))


def serve(commtap, procs, pcap, report, port, labels=None):
    cmd = [commtap, "analyze", "--listen", f"127.0.0.1:{port}", "--json", report]
    if labels:
        cmd += ["--labels", labels]
    p = subprocess.Popen(cmd + [pcap], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    procs.append(p)
    line = p.stderr.readline()
    assert f"port {port}" in line, f"{pcap}: analyze did not listen: {line}"
    return f"127.0.0.1:{port}"


def run(commtap, ddp, rules, t, procs):
    prof = json.load(open(ddp))
    prof["name"], prof["placement"]["gpus"] = "ddp-8-hosts", 8 * HOSTS
    json.dump(prof, open(t("job.json"), "w"))
    subprocess.run([commtap, "synth", t("job.json"), "-o", t("mirror.pcap"), "--iterations",
                    "12", "--scale", "1e-3", "--snaplen", "128", "--channels", "1",
                    "--jitter", "0.02"], check=True, capture_output=True)
    truth = json.load(open(t("mirror.truth.json")))
    os.mkdir(t("labels"))
    for i in range(HOSTS):
        subprocess.run([sys.executable, SPLIT, t("mirror.pcap"), host(i), t(f"host-{i}.pcap"),
                        t("rest.pcap")], check=True, capture_output=True)
        own = [{k: v for k, v in f.items() if k in ("transport", "src", "dst", "qpn", "sport",
                                                     "dport")} | {"job": JOB}
               for f in truth["flows"] if f["src"] == host(i)]
        json.dump({"schema": "commtap.labels/v1", "flows": own},
                  open(t(f"labels/host-{i}.json"), "w"))
    os.unlink(t("rest.pcap"))
    subprocess.run([commtap, "analyze", "--json", t("whole.json"), t("mirror.pcap")],
                   check=True, capture_output=True)
    whole = json.load(open(t("whole.json")))
    want_period = whole["job"]["iteration_period_s"]
    want_bytes = sum(f["bytes"] for f in whole["flows"])

    with open(rules) as src, open(t("rules.yml"), "w") as dst:
        dst.write(re.sub(r"(\bfor: )\d+[smh]", r"\g<1>3s", src.read()))
    targets = {"nolabels": [], "labels": []}
    for i in range(3):  # three agents without labels
        targets["nolabels"].append(serve(commtap, procs, t(f"host-{i}.pcap"),
                                         t(f"bare-{i}.json"), free_port()))
    for i in range(HOSTS):  # every host's agent, its own labels
        targets["labels"].append(serve(commtap, procs, t(f"host-{i}.pcap"),
                                       t(f"named-{i}.json"), free_port(),
                                       t(f"labels/host-{i}.json")))
    targets["labels"].append(serve(commtap, procs, t("mirror.pcap"), t("named-mirror.json"),
                                   free_port(), t("labels")))
    prom = start_prometheus(t, procs, [{"targets": addrs, "labels": {"round": r}}
                                       for r, addrs in targets.items()])
    started = time.time()
    n_probes = len(targets["nolabels"]) + len(targets["labels"])
    # every probe up and serving its final report, then a rule evaluation
    wait_for("every probe's final report", lambda: prom.values(
        "count(commtap_capture_complete == 1)").get(frozenset()) == n_probes, 120)
    time.sleep(3)

    failures = []
    fail = failures.append
    bare = prom.values('count by (ct_job) (commtap_job_period_seconds{round="nolabels"})')
    bare_ids = sorted(dict(k)["ct_job"] for k in bare)
    if len(bare_ids) < 2:
        fail(f"without labels the agents of a ring name the job {bare_ids}: expected their "
             "neighbourhoods to differ (the test no longer shows the limit)")
    probes = prom.values("commtap:job_period_seconds:probes").get(frozenset({("ct_job", JOB)}))
    if probes != HOSTS + 1:
        fail(f"job {JOB} seen by {probes} probes, want {HOSTS + 1}; ct_job values: "
             f"{prom.values('count by (ct_job, round) (commtap_job_period_seconds)')}")
    median = prom.values("commtap:job_period_seconds:median").get(frozenset({("ct_job", JOB)}))
    if median is None or abs(median / want_period - 1) > 0.02:
        fail(f"period median {median}, want {want_period} (whole capture) within 2 %")
    agents = f'ct_job="{JOB}",vantage=~"pcap:host-.*"'
    dedup = prom.values(f"sum(max by (class, src, dst) (commtap_host_pair_bytes_total{{{agents}}}))"
                        ).get(frozenset(), 0)
    plain = prom.values(f"sum(commtap_host_pair_bytes_total{{{agents}}})").get(frozenset(), 0)
    rule = sum(prom.values(f'commtap:job_class_bytes:dedup{{ct_job="{JOB}"}}').values())
    if dedup != want_bytes:
        fail(f"the job's bytes over the {HOSTS} agents, each pair once: {dedup}, want the "
             f"capture's {want_bytes}")
    if plain != 2 * want_bytes:
        fail(f"plain sum over the agents {plain}: every pair is seen by two agents, want "
             f"{2 * want_bytes}")
    if rule != want_bytes:
        fail(f"commtap:job_class_bytes:dedup of {JOB} sums to {rule}, want {want_bytes}")
    total = prom.values(f'commtap:job_bytes:dedup{{ct_job="{JOB}"}}').get(
        frozenset({("ct_job", JOB)}))
    if total != want_bytes:
        fail(f"commtap:job_bytes:dedup of {JOB} is {total}, want {want_bytes}")
    print(f"without labels 3 agents give {len(bare_ids)} names {bare_ids}; with labels "
          f"{probes:.0f} probes give {JOB}: period {median} s (whole {want_period:.4f} s), "
          f"bytes {dedup:.0f} once per pair (plain sum {plain:.0f}, capture {want_bytes}); "
          f"{time.time() - started:.0f} s")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
