#!/usr/bin/env python3
"""commtap merge: the reports of two vantage points equal the report of one.

    test_merge.py COMMTAP PROFILE.json

Synthesizes one job's traffic, splits the capture into what probes on two
groups of hosts see (traffic between the groups is in both), analyzes each
part and the whole with the job's profile, merges the two parts and checks
that the merge has the whole's flows with the same packets, bytes,
messages, size histograms, classes and connection pairs. Also: broken input
to merge is one line of error and exit 1.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ("packets", "bytes", "messages", "message_bytes", "msg_size_hist", "class",
          "retransmits", "cnp", "ecn_ce", "first_ts", "last_ts")


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True, **kw)


def key(f):
    return (f["transport"], f["src"], f["dst"], f.get("qpn"), f.get("sport"), f.get("dport"))


def by_key(report):
    flows = report["flows"]
    return {key(f): dict(f, reverse_key=key(flows[f["reverse"]]) if f["reverse"] is not None
                         else None) for f in flows}


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        run(commtap, "synth", profile, "-o", t("job.pcap"), "--iterations", 4, "--scale", "1e-3",
            "--time-scale", "1e-3", "--jitter", "0.05", "--noise")
        # the first half of the job's hosts on one side, the rest (and noise) on the other
        report = run(commtap, "analyze", "--profile", profile, "--json", "-", t("job.pcap"))
        whole = json.loads(report.stdout)
        addrs = sorted({f["src"] for f in whole["flows"]} | {f["dst"] for f in whole["flows"]},
                       key=lambda a: tuple(int(x) for x in a.split(".")))
        group_a = addrs[:max(1, (len(addrs) - 1) // 2)]
        print(run(sys.executable, os.path.join(HERE, "split_by_hosts.py"), t("job.pcap"),
                  ",".join(group_a), t("a.pcap"), t("b.pcap")).stdout.strip())
        for part in ("a", "b"):
            run(commtap, "analyze", "--profile", profile, "--json", t(part + ".json"),
                t(part + ".pcap"))
        run(commtap, "merge", t("a.json"), t("b.json"), "-o", t("merged.json"))
        merged = json.load(open(t("merged.json")))
        parts = [json.load(open(t(p + ".json"))) for p in ("a", "b")]

        w, m = by_key(whole), by_key(merged)
        n_parts = sum(len(p["flows"]) for p in parts)
        print(f"whole: {len(w)} flows; parts: {len(parts[0]['flows'])} + {len(parts[1]['flows'])}"
              f" = {n_parts} (shared flows seen twice); merged: {len(m)}")
        if n_parts <= len(w):
            failures.append("the split has no flow seen at both vantage points: nothing to dedup")
        if set(w) != set(m):
            failures.append(f"flow keys differ: {len(set(w) - set(m))} missing, "
                            f"{len(set(m) - set(w))} extra")
        for k in sorted(set(w) & set(m), key=str):
            for field in FIELDS + ("reverse_key",):
                if w[k].get(field) != m[k].get(field):
                    failures.append(f"flow {k}: {field} whole={w[k].get(field)} "
                                    f"merged={m[k].get(field)}")
        if [f["id"] for f in merged["flows"]] != list(range(len(merged["flows"]))):
            failures.append("merged ids are not 0..n-1 in order")
        for total in ("packets", "bytes", "messages"):
            a = sum(f[total] for f in whole["flows"])
            b = sum(f[total] for f in merged["flows"])
            print(f"flow {total}: whole {a}, merged {b}")
            if a != b:
                failures.append(f"sum of flow {total}: whole {a}, merged {b}")
        classes = lambda r: sorted((f["class"], f["bytes"]) for f in r["flows"])
        if classes(whole) != classes(merged):
            failures.append("bytes per class differ")
        vp = merged["capture"].get("vantage_points", [])
        if [v["packets"] for v in vp] != [p["capture"]["packets"] for p in parts]:
            failures.append("capture.vantage_points does not list each report's packets")
        if merged["capture"]["packets"] != sum(p["capture"]["packets"] for p in parts):
            failures.append("capture.packets is not the sum of the vantage points'")
        pw, pm = whole["job"]["iteration_period_s"], merged["job"]["iteration_period_s"]
        print(f"job period: whole {pw}, merged {pm} (from {merged['job'].get('source')})")
        if not pw or not pm or abs(pw - pm) > 0.05 * pw:
            failures.append(f"job period: whole {pw}, merged {pm}")
        # one entry per receiver and class (all traffic, then each class alone)
        recv = [(c["receiver"], c.get("class", "all")) for c in merged["cc"]["receivers"]]
        if len(recv) != len(set(recv)) or set(recv) != {(c["receiver"], c.get("class", "all"))
                                                        for c in whole["cc"]["receivers"]}:
            failures.append(f"cc receivers: {recv}")

        # broken input: one line on stderr, exit 1
        open(t("text.json"), "w").write("not json at all")
        open(t("other.json"), "w").write('{"schema": "something/v9", "flows": []}')
        for what, args in (("missing file", [t("nope.json"), "-o", t("x.json")]),
                           ("not JSON", [t("text.json"), "-o", t("x.json")]),
                           ("wrong schema", [t("other.json"), "-o", t("x.json")]),
                           ("no output", [t("a.json")]),
                           ("no input", ["-o", t("x.json")]),
                           ("unwritable output", [t("a.json"), "-o", "/nonexistent/x.json"])):
            p = subprocess.run([commtap, "merge"] + args, capture_output=True, text=True)
            lines = p.stderr.strip().splitlines()
            if p.returncode != 1 or len(lines) != 1:
                failures.append(f"merge {what}: exit {p.returncode}, stderr {p.stderr!r}")
            else:
                print(f"ok: merge {what}: {lines[0]}")
    for f in failures[:30]:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
