#!/usr/bin/env python3
"""commtap report: no string from a report can add an element to the page.

    test_html_escape.py COMMTAP PROFILE.json

Analyzes a synthesized job, then walks the report and rewrites every string
(and every null, which a later report may fill with a string) into two twins
of the same shape: a clean one ("s17") and a crafted one ("s17" followed by
markup: <script>, an attribute break-out with onerror, </style>, </title>, an
SVG onload, a comment opener...). The walk is generic, so fields added to the
report later are covered without touching this test. Only `schema` is kept,
since a report with another schema is refused before any drawing.

Both twins are drawn (alone, and after `commtap merge` of two copies under
crafted file names) and loaded in headless Chromium; the element counts of the
rendered DOMs must be equal and the crafted DOM must have no event-handler
attribute and no script element. Skips (77) without Chromium.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

SKIP = 77
MARKUP = ("<script>alert(1)</script>\"><img src=x onerror=alert(2)>'><svg onload=alert(3)>"
          "</style></title></textarea><b>bold</b><!--")
KEEP = {"schema"}
# nulls where the report has numbers: the loader (export/report_load.c) refuses a string there
NUMBERS = set(re.findall(r'\bFH?\(struct \w+, "(\w+)", T_(?:U64|NUM|I64|BOOL)',
                         open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                           "export", "report_load.c")).read()))


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def dump_dom(browser, page, tmp):
    profile = tempfile.mkdtemp(dir=tmp)
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--proxy-server=http://127.0.0.1:9",
           f"--user-data-dir={profile}", "--dump-dom", "file://" + page]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if r.returncode or "<body" not in r.stdout:
        raise RuntimeError(f"chromium --dump-dom {page}: {r.returncode} {r.stderr[-400:]}")
    return r.stdout


class Elements(HTMLParser):
    """Tags counted, event-handler attributes collected."""

    def __init__(self):
        super().__init__()
        self.tags = collections.Counter()
        self.handlers = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        self.handlers += [(tag, k) for k, _ in attrs if k.startswith("on")]

    handle_startendtag = handle_starttag


def twins(node, path, count):
    """(clean, crafted) copies of node, every string and null rewritten."""
    if isinstance(node, dict):
        pairs = {}
        for k, v in node.items():
            pairs[k] = (v, v) if k in KEEP else twins(v, f"{path}.{k}", count)
        return ({k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items()})
    if isinstance(node, list):
        pairs = [twins(v, f"{path}[{i}]", count) for i, v in enumerate(node)]
        return ([p[0] for p in pairs], [p[1] for p in pairs])
    if node is None and path.rsplit(".", 1)[-1] in NUMBERS:
        return node, node
    if isinstance(node, str) or node is None:
        count.append(path)
        token = f"s{len(count)}"
        return token, token + MARKUP
    return node, node


def strings(node):
    if isinstance(node, dict):
        node = list(node.values())
    if isinstance(node, list):
        return [s for v in node for s in strings(v)]
    return [node] if isinstance(node, str) else []


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True)


def compare(what, clean_dom, crafted_dom, fail):
    clean, crafted = Elements(), Elements()
    clean.feed(clean_dom)
    crafted.feed(crafted_dom)
    extra = crafted.tags - clean.tags
    missing = clean.tags - crafted.tags
    if extra or missing:
        fail(f"{what}: crafted page has extra elements {dict(extra)}, missing {dict(missing)}")
    if crafted.handlers or crafted.tags["script"]:
        fail(f"{what}: event handlers {crafted.handlers[:4]}, {crafted.tags['script']} scripts")
    if "alert(" in clean_dom or "alert(1)" not in crafted_dom:
        fail(f"{what}: the crafted text is not shown as text")
    print(f"{what}: {sum(clean.tags.values())} elements in both, "
          f"{len(clean.tags)} kinds, no handler")


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    browser = chromium()
    if not browser:
        print("SKIP: no chromium (apt-get install chromium)")
        return SKIP
    failures = []
    fail = failures.append
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        run(commtap, "synth", profile, "-o", t("job.pcap"), "--iterations", 4, "--scale", "1e-3",
            "--time-scale", "1e-3", "--jitter", "0.05", "--snaplen", 128, "--noise")
        run(commtap, "analyze", "--profile", profile, "--json", t("job.json"), t("job.pcap"))
        report = json.load(open(t("job.json")))
        report.setdefault("classification", {}).setdefault("method", None)
        fields = []
        clean, crafted = twins(report, "", fields)
        print(f"{len(fields)} string or null fields rewritten, e.g. {fields[:3]}")
        if not any(p.endswith("classification.method") for p in fields):
            fail("the walk missed classification.method")
        for name, doc in (("clean", clean), ("crafted", crafted)):
            with open(t(name + ".json"), "w") as f:
                json.dump(doc, f)

        # drawn alone
        doms = {}
        for name in ("clean", "crafted"):
            title = "t" + (MARKUP if name == "crafted" else "")
            run(commtap, "report", t(name + ".json"), "--title", title, "-o", t(name + ".html"))
            doms[name] = dump_dom(browser, t(name + ".html"), tmp)
        compare("one report", doms["clean"], doms["crafted"], fail)

        # merged under file names that are markup too, then drawn
        names = {"clean": ("a.json", "b.json"),
                 "crafted": ("a<img src=x onerror=alert(4)>.json", "b<script>x<\\script>.json")}
        for name, (a, b) in names.items():
            for part in (a, b):
                shutil.copy(t(name + ".json"), t(part))
            run(commtap, "merge", t(a), t(b), "-o", t(name + "-merged.json"))
            run(commtap, "report", t(name + "-merged.json"), "-o", t(name + "-merged.html"))
            doms[name] = dump_dom(browser, t(name + "-merged.html"), tmp)
        merged = json.load(open(t("crafted-merged.json")))
        if not any(MARKUP in s for s in strings(merged)):
            fail("merge dropped every crafted string: the merged page proves nothing")
        compare("merged reports", doms["clean"], doms["crafted"], fail)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
