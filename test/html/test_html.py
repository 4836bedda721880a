#!/usr/bin/env python3
"""commtap report: the HTML page rendered in headless Chromium, network disabled.

    test_html.py COMMTAP PROFILE.json [SCREENSHOT.png]

Synthesizes a job, analyzes it with its profile, draws the page and loads it
in Chromium with every request sent to a dead proxy. The rendered DOM must
have one heatmap cell per ordered host pair in each class's heatmap, one
CDF curve per class with messages, one periodicity row for the job, each
class and each listed flow, burst times that are exact nanosecond offsets,
and nothing that refers outside the file. Two vantage points' reports drawn
together cover every host. A screenshot is taken (and kept when a path is
given). Skips (77) without Chromium.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(browser, page, tmp, *mode):
    """Run headless Chromium offline (every request goes to a closed port)."""
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
           "--disable-background-networking", "--no-first-run",
           f"--user-data-dir={os.path.join(tmp, 'profile')}", *mode, "file://" + page]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


class Dom(HTMLParser):
    """Elements of interest, with their ancestors' heatmap class."""

    def __init__(self):
        super().__init__()
        self.heatmaps = {}  # class -> cells
        self.current = None
        self.cdfs = []
        self.period_rows = []
        self.bursts = []
        self.boundaries = 0
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("src", "href", "xlink:href", "action", "data"):
            if name in a and not (a[name] or "").startswith(("#", "data:")):
                self.external.append((tag, name, a[name]))
        cls = (a.get("class") or "").split()
        if tag == "figure" and "heatmap" in cls:
            self.current = a["data-class"]
            self.heatmaps[self.current] = []
        elif tag == "rect" and "cell" in cls:
            self.heatmaps[self.current].append((a["data-src"], a["data-dst"]))
        elif tag == "path" and "cdf" in cls:
            self.cdfs.append(a["data-class"])
        elif tag == "tr" and "period-row" in cls:
            self.period_rows.append(a["data-scope"])
        elif tag == "rect" and "burst" in cls:
            self.bursts.append(int(a["data-start-ns"]))
        elif tag == "line" and "iter-boundary" in cls:
            self.boundaries += 1

    def handle_endtag(self, tag):
        if tag == "figure":
            self.current = None


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True)


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    keep = sys.argv[3] if len(sys.argv) > 3 else None
    browser = chromium()
    if not browser:
        print("SKIP: no chromium (apt-get install chromium)")
        return SKIP
    failures = []
    fail = failures.append
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        run(commtap, "synth", profile, "-o", t("job.pcap"), "--iterations", 5, "--scale", "1e-3",
            "--time-scale", "1e-3", "--jitter", "0.05", "--snaplen", 128, "--noise")
        run(commtap, "analyze", "--profile", profile, "--json", t("job.json"), t("job.pcap"))
        run(commtap, "report", t("job.json"), "--profile", profile, "--scale", "1e-3",
            "--time-scale", "1e-3", "--title", "GPT-3B (synthesized)", "-o", t("job.html"))
        report = json.load(open(t("job.json")))
        text = open(t("job.html"), encoding="utf-8").read()

        # nothing refers outside the file (checked on the file, then on the rendered DOM)
        urls = re.findall(r"(?:https?|ftp|wss?)://", text)
        if urls:
            fail(f"the page names {len(urls)} external URLs")
        planted = text.replace("</body>", '<img src="http://198.18.0.1/x.png"></body>')
        probe = Dom()
        probe.feed(planted)
        if not probe.external:
            fail("the external-reference check does not see a planted <img src=http://...>")

        r = browse(browser, t("job.html"), tmp, "--dump-dom")
        if r.returncode != 0 or "<svg" not in r.stdout:
            fail(f"chromium --dump-dom failed: {r.returncode} {r.stderr[-400:]}")
        dom = Dom()
        dom.feed(r.stdout)
        if dom.external:
            fail(f"external references in the DOM: {dom.external[:3]}")

        flows = report["flows"]
        hosts = {f["src"] for f in flows} | {f["dst"] for f in flows}
        classes = {f["class"] for f in flows}
        pairs = {(a, b) for a in hosts for b in hosts if a != b}
        print(f"{len(flows)} flows, {len(hosts)} hosts, classes {sorted(classes)}")
        if set(dom.heatmaps) != classes:
            fail(f"heatmaps for {sorted(dom.heatmaps)}, classes {sorted(classes)}")
        for cls, cells in dom.heatmaps.items():
            if len(cells) != len(pairs) or set(cells) != pairs:
                fail(f"{cls} heatmap: {len(cells)} cells, {len(pairs)} host pairs")
        with_msgs = {f["class"] for f in flows if f["msg_size_hist"]}
        if sorted(dom.cdfs) != sorted(with_msgs):
            fail(f"CDF curves {dom.cdfs}, classes with messages {sorted(with_msgs)}")
        want_rows = ["job"] + ["class"] * len(classes) + ["flow"] * min(40, len(flows))
        if dom.period_rows != want_rows:
            fail(f"periodicity rows {len(dom.period_rows)}, expected {len(want_rows)}")
        t0 = report["capture"]["first_ts"]
        starts = {b[0] - t0 for f in flows for b in f["periodicity"].get("first_bursts", [])}
        if not dom.bursts or not set(dom.bursts) <= starts:
            fail(f"{len(dom.bursts)} timeline bursts, {len(set(dom.bursts) - starts)} not at "
                 "an exact burst start")
        if dom.boundaries < 2:
            fail(f"{dom.boundaries} iteration boundaries in the timeline")
        for section in ("summary", "heatmaps", "sizes", "timeline", "periodicity", "cc",
                        "expected", "gpu"):
            if f'id="{section}"' not in r.stdout:
                fail(f"section {section} missing")
        print(f"DOM: {len(dom.heatmaps)} heatmaps of {len(pairs)} cells, {len(dom.cdfs)} CDF "
              f"curves, {len(dom.period_rows)} period rows, {len(dom.bursts)} bursts, "
              f"{dom.boundaries} boundaries")

        shot = keep or t("shot.png")
        r = browse(browser, t("job.html"), tmp, "--window-size=1400,2000", f"--screenshot={shot}")
        if r.returncode or not os.path.exists(shot) or open(shot, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
            fail(f"no screenshot: {r.stderr[-300:]}")
        else:
            print(f"screenshot: {shot} ({os.path.getsize(shot)} bytes)")

        # two vantage points drawn together: the matrix covers every host
        addrs = sorted(hosts, key=lambda a: tuple(int(x) for x in a.split(".")))
        run(sys.executable, os.path.join(HERE, "split_by_hosts.py"), t("job.pcap"),
            ",".join(addrs[:2]), t("a.pcap"), t("b.pcap"))
        for part in ("a", "b"):
            run(commtap, "analyze", "--profile", profile, "--json", t(part + ".json"),
                t(part + ".pcap"))
        run(commtap, "report", t("a.json"), t("b.json"), "-o", t("cluster.html"))
        cluster = Dom()
        cluster.feed(open(t("cluster.html"), encoding="utf-8").read())
        for cls, cells in cluster.heatmaps.items():
            if set(cells) != pairs:
                fail(f"cluster {cls} heatmap: {len(cells)} cells, {len(pairs)} host pairs")
        print(f"cluster view of 2 reports: {len(cluster.heatmaps)} heatmaps over {len(hosts)} hosts")

        for what, args in (("missing report", [t("nope.json"), "-o", t("x.html")]),
                           ("not a report", [t("job.pcap"), "-o", t("x.html")]),
                           ("bad profile", [t("job.json"), "--profile", t("job.pcap"), "-o",
                                            t("x.html")]),
                           ("bad scale", [t("job.json"), "--scale", "-1", "-o", t("x.html")]),
                           ("unwritable", [t("job.json"), "-o", "/nonexistent/x.html"])):
            p = subprocess.run([commtap, "report"] + args, capture_output=True, text=True)
            if p.returncode != 1 or len(p.stderr.strip().splitlines()) != 1:
                fail(f"report {what}: exit {p.returncode}, stderr {p.stderr!r}")
            else:
                print(f"ok: report {what}: {p.stderr.strip()}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
