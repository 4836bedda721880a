#!/usr/bin/env python3
"""dev_report.py scores the development share and refuses the frozen one.

  test_dev_report.py COMMTAP PROFILE

Refused (exit 2, nothing scored): a --real list naming a directory under
test/accuracy/frozen/, --negctl-seed 1 (the frozen negative controls'
seed) and a matrix subset holding frozen cases. Scored: the ci subset, the
RoCE negative controls when scapy is there, and one development
"recording" (PROFILE synthesized with --truth-operations into a case
directory as corpus_accuracy.py takes it): the table has a row per ci
layout, the recording's row with its operation figure, the worst row and
the goal row, in under one screen (60 lines).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_matrix  # noqa: E402

SCREEN_LINES = 60


def dev_report(commtap, *args):
    return subprocess.run([sys.executable, os.path.join(HERE, "dev_report.py"), commtap,
                           *args], capture_output=True, text=True)


def main():
    commtap, profile = sys.argv[1:3]
    failures = []
    with tempfile.TemporaryDirectory(prefix="commtap-dev-report-test-") as tmp:
        frozen_list = os.path.join(tmp, "frozen.list")
        with open(frozen_list, "w") as f:
            f.write("# a frozen recording\n%s\n" % os.path.join(HERE, "frozen", "real", "ddp"))
        for why, args in (("a frozen recording", ["--real", frozen_list]),
                          ("seed 1 of the negative controls", ["--negctl-seed", "1"]),
                          ("the frozen subset", ["--subset", "frozen"]),
                          ("the full subset", ["--subset", "full"])):
            r = dev_report(commtap, "--cache", tmp, "--no-tcp", *args)
            if r.returncode != 2 or r.stdout:
                failures.append("%s: exit %d, %d bytes on stdout (want 2, none)"
                                % (why, r.returncode, len(r.stdout)))
            print("refused %s: %s" % (why, r.stderr.strip()))

        case = os.path.join(tmp, "recording")
        os.makedirs(case)
        subprocess.run([commtap, "synth", profile, "-o", os.path.join(case, "capture.pcap"),
                        "--truth", os.path.join(case, "truth.json"), "--iterations", "12",
                        "--transport", "tcp", "--snaplen", "128", "--truth-operations",
                        "--scale", "0.001", "--time-scale", "0.01"],
                       check=True, capture_output=True)
        dev_list = os.path.join(tmp, "dev.list")
        with open(dev_list, "w") as f:
            f.write("recording\n")
        r = dev_report(commtap, "--cache", os.path.join(tmp, "cache"), "--no-tcp",
                       "--subset", "ci", "--real", dev_list)
        print(r.stdout)
        lines = r.stdout.splitlines()
        if r.returncode:
            failures.append("scoring the ci subset: exit %d: %s"
                            % (r.returncode, r.stderr.strip()[-300:]))
        layouts = {c["layout"] for c in make_matrix.subset("ci")}
        missing = [lay for lay in layouts if not any(ln.startswith(lay + " ") for ln in lines)]
        if missing:
            failures.append("no row for %s" % missing)
        real = [ln for ln in lines if ln.startswith("real recording")]
        if not real or real[0].split()[4] == "-":
            failures.append("the recording's row has no operation figure: %s" % real)
        for head in ("worst ", "goal "):
            if not any(ln.startswith(head) for ln in lines):
                failures.append("no %srow" % head)
        if len(lines) > SCREEN_LINES:
            failures.append("%d lines, more than a screen" % len(lines))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
