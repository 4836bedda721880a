#!/usr/bin/env python3
"""Classification in each host's own view, as its agent sees the traffic.

    host_views.py COMMTAP RUN_DIR...

RUN_DIR holds a recording as test/accuracy/frozen/real/ has it
(capture.pcap.gz or capture.pcap, truth.json). For every host of the
truth, the frames to or from it alone (test/html/split_by_hosts.py) are
analysed with no profile, and each flow's class is compared with the
truth's; prints the bytes right per host's view and over all views of the
run (docs/accuracy.md, "Host views").
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

SPLIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "html",
                     "split_by_hosts.py")


def key(f):
    return (f["transport"], f["src"], f["dst"], f.get("qpn"), f.get("sport"), f.get("dport"))


def capture_in(run, tmp):
    plain = os.path.join(run, "capture.pcap")
    if os.path.exists(plain):
        return plain
    out = os.path.join(tmp, "capture.pcap")
    with gzip.open(plain + ".gz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def score(commtap, run):
    truth = json.load(open(os.path.join(run, "truth.json")))
    want = {key(f): f["class"] for f in truth["flows"]}
    hosts = sorted({f["src"] for f in truth["flows"]} | {f["dst"] for f in truth["flows"]})
    per, total, right = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="commtap-hostviews-") as tmp:
        pcap = capture_in(run, tmp)
        view, rest, report = (os.path.join(tmp, n) for n in ("view.pcap", "rest.pcap", "r.json"))
        for h in hosts:
            subprocess.run([sys.executable, SPLIT, pcap, h, view, rest], check=True,
                           capture_output=True)
            subprocess.run([commtap, "analyze", "--json", report, view], check=True,
                           capture_output=True)
            t = r = 0
            for f in json.load(open(report))["flows"]:
                if key(f) in want:
                    t += f["bytes"]
                    r += f["bytes"] * (f["class"] == want[key(f)])
            per.append("%s %.1f%%" % (h, 100 * r / t) if t else "%s -" % h)
            total += t
            right += r
    print("%s: bytes right per host's view: %s; all views %.1f%%"
          % (os.path.basename(run.rstrip("/")), ", ".join(per),
             100 * right / total if total else 0))


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    for run in sys.argv[2:]:
        score(sys.argv[1], run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
