#!/usr/bin/env python3
"""Golden test of everything a report becomes: the JSON report, the /metrics
text, the trace and the page's text, diffed against committed files.

For one capture (or, with --synth PROFILE, a job synthesized here with fixed
options and seed) it writes, from the capture's own directory so the report
names the file and not where the checkout lies:

  NAME.report.json   commtap analyze --json
  NAME.metrics.txt   /metrics of commtap analyze --listen 127.0.0.1:0 (the final report)
  NAME.trace.json    commtap trace
  NAME.page.html     commtap report, without the generator line (the version)
  NAME.summary.txt   commtap analyze's default text output (the summary)

and diffs each against EXPECTED_DIR/NAME.*. Classification and the report's
shape change on purpose (issue 34 and the collectives issue): after an
intended change, regenerate every golden file with one command,

  COMMTAP_REGEN_GOLDEN=1 meson test -C BUILD --suite golden

(or pass --regen), and review the diff in the commit. Exit 77 (skip) where
the capture is absent (../shared/pcaps is not beside the checkout).

  run_golden_outputs.py [--regen] COMMTAP CAPTURE EXPECTED_DIR NAME
  run_golden_outputs.py [--regen] --synth PROFILE COMMTAP EXPECTED_DIR NAME
"""
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

# the synthesized job: small, and every option fixed (the seed too)
SYNTH_ARGS = ["--iterations", "3", "--scale", "1e-3", "--noise", "--seed", "7"]
GENERATOR = re.compile(r'<p class="generator">[^<]*</p>')


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))


def metrics(commtap, capture, cwd, tmp):
    """The final report's /metrics, scraped from analyze --listen, then SIGTERM."""
    report = os.path.join(tmp, "listen.report.json")  # never beside the capture
    p = subprocess.Popen([commtap, "analyze", "--json", report, "--listen", "127.0.0.1:0",
                          capture], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r"serving /metrics on port (\d+)", line)
        if not m:
            sys.exit("FAIL: analyze --listen said %r" % line)
        url = "http://127.0.0.1:%s/metrics" % m.group(1)
        deadline = time.monotonic() + 60
        while not os.path.exists(report):  # the final report is written, then served
            if time.monotonic() > deadline or p.poll() is not None:
                sys.exit("FAIL: no final report from analyze --listen")
            time.sleep(0.05)
        # the same text twice in a row: the final report's, not one being replaced
        last = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    text = r.read().decode()
            except urllib.error.HTTPError as e:
                if e.code != 503:  # 503: no report published yet
                    raise
                text = None
            if text is not None and text == last:
                return text
            last = text
            time.sleep(0.2)
        sys.exit("FAIL: /metrics did not settle")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)


def outputs(commtap, capture, tmp):
    """NAME's five outputs as text, keyed by suffix."""
    cwd, name = os.path.dirname(capture), os.path.basename(capture)
    report = os.path.join(tmp, "report.json")
    run([commtap, "analyze", "--json", report, name], cwd)
    run([commtap, "trace", report, "-o", os.path.join(tmp, "trace.json")], cwd)
    run([commtap, "report", report, "-o", os.path.join(tmp, "page.html")], cwd)
    got = {}
    for suffix, path in (("report.json", report), ("trace.json", "trace.json"),
                         ("page.html", "page.html")):
        with open(os.path.join(tmp, path)) as f:
            got[suffix] = f.read()
    got["page.html"] = GENERATOR.sub('<p class="generator"></p>', got["page.html"])
    # the summary a person reads first: analyze's default text output
    p = subprocess.run([commtap, "analyze", name], cwd=cwd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("FAIL: analyze %s exited %d: %s" % (name, p.returncode, p.stderr.strip()))
    got["summary.txt"] = p.stdout
    got["metrics.txt"] = metrics(commtap, name, cwd, tmp)
    return got


def main():
    args = sys.argv[1:]
    regen = bool(os.environ.get("COMMTAP_REGEN_GOLDEN"))
    if args and args[0] == "--regen":
        regen, args = True, args[1:]
    synth = None
    if args and args[0] == "--synth":
        synth, args = args[1], args[2:]
        if len(args) != 3:
            sys.exit(__doc__)
        commtap, expected_dir, name = args
    else:
        if len(args) != 4:
            sys.exit(__doc__)
        commtap, capture, expected_dir, name = args
        if not os.access(capture, os.R_OK):
            print("SKIP: %s not found (../shared/pcaps is absent)" % capture)
            return 77
    commtap = os.path.abspath(commtap)
    with tempfile.TemporaryDirectory(prefix="commtap-golden-") as tmp:
        if synth:
            capture = os.path.join(tmp, name + ".pcap")
            run([commtap, "synth", os.path.abspath(synth), "-o", capture] + SYNTH_ARGS, tmp)
        got = outputs(commtap, os.path.abspath(capture), tmp)
    bad = 0
    for suffix in sorted(got):
        path = os.path.join(expected_dir, "%s.%s" % (name, suffix))
        if regen:
            with open(path, "w") as f:
                f.write(got[suffix])
            print("regenerated", path)
            continue
        with open(path) as f:
            want = f.read()
        if want != got[suffix]:
            bad += 1
            diff = difflib.unified_diff(want.splitlines(True), got[suffix].splitlines(True),
                                        path, "now", n=2)
            sys.stdout.writelines(list(diff)[:80])
            print("FAIL: %s differs" % path)
        else:
            print("ok: %s" % path)
    if bad:
        print("if the change is intended: COMMTAP_REGEN_GOLDEN=1 meson test -C BUILD --suite golden")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
