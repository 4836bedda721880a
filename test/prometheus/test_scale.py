#!/usr/bin/env python3
"""Series per probe for a 1,000-host job (issue 23, scale).

    test_scale.py COMMTAP DDP_PROFILE.json

Synthesizes a DDP job on 1,000 hosts of 8 GPUs (the bundled ResNet-50
profile with 8,000 GPUs; 12 iterations, sizes x 1e-4, one channel), and
serves /metrics for two vantages of it: a mirror that sees all of it and
one host's agent (frames to or from 198.18.0.1). Each scrape must pass the
strict text-format parse, stay under the per-probe bound docs/metrics.md
states (700 series), keep host pairs to the top 64 plus one `_other` per
(ct_job, class), and still sum to the report's bytes. Prints series and
bytes per scrape (docs/deploy-fleet.md quotes them).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "html"))
from test_metrics import parse  # noqa: E402  the strict 0.0.4 parser

BOUND = 700


def serve_and_scrape(commtap, pcap, report):
    proc = subprocess.Popen([commtap, "analyze", "--listen", "127.0.0.1:0", "--json", report,
                             pcap], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        m = re.search(r"port (\d+)", proc.stderr.readline())
        assert m, "analyze did not say its port"
        for _ in range(120):
            r = subprocess.run(["curl", "-sf", "--max-time", "5",
                                f"http://127.0.0.1:{m.group(1)}/metrics"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return r.stdout
            subprocess.run(["sleep", "0.5"])
        raise AssertionError(f"{pcap}: no /metrics within 60 s")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main():
    commtap, ddp = sys.argv[1:3]
    if not shutil.which("curl"):
        print("SKIP: no curl")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="commtap-scale-") as tmp:
        t = lambda name: os.path.join(tmp, name)
        prof = json.load(open(ddp))
        prof["name"], prof["placement"]["gpus"] = "ddp-1000-hosts", 8000
        json.dump(prof, open(t("job.json"), "w"))
        subprocess.run([commtap, "synth", t("job.json"), "-o", t("mirror.pcap"),
                        "--iterations", "12", "--scale", "1e-4", "--snaplen", "128",
                        "--channels", "1", "--jitter", "0.02", "--noise"],
                       check=True, capture_output=True)
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "html",
                                                     "split_by_hosts.py"),
                        t("mirror.pcap"), "198.18.0.1", t("host.pcap"), t("rest.pcap")],
                       check=True, capture_output=True)
        os.unlink(t("rest.pcap"))
        for view in ("mirror", "host"):
            text = serve_and_scrape(commtap, t(view + ".pcap"), t(view + ".report.json"))
            rep = json.load(open(t(view + ".report.json")))
            samples, _ = parse(text)
            n = len(samples)
            pairs = [(dict(k[1]), v) for k, v in samples.items()
                     if k[0] == "commtap_host_pair_bytes_total"]
            named = [p for p, _ in pairs if p["src"] != "_other"]
            others = [p for p, _ in pairs if p["src"] == "_other"]
            total = sum(f["bytes"] for f in rep["flows"])
            hosts = max((len(j["hosts"]) for j in rep.get("jobs", [])), default=0)
            print(f"{view}: {len(rep['flows'])} flows, job of {hosts} hosts: {n} series, "
                  f"{len(text.encode())} bytes per scrape")
            if view == "mirror" and (len(rep["flows"]) < 4000 or hosts < 1000):
                failures.append(f"mirror: the synthesized job is not 1,000 hosts ({hosts})")
            if n >= BOUND:
                failures.append(f"{view}: {n} series, the bound is {BOUND}")
            if len(named) > 64 or len(others) > 10 * 6:
                failures.append(f"{view}: {len(named)} pairs and {len(others)} _other series")
            if sum(v for _, v in pairs) != total:
                failures.append(f"{view}: host pairs sum to {sum(v for _, v in pairs)}, "
                                f"the report's flows to {total}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
