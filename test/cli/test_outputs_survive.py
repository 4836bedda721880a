#!/usr/bin/env python3
"""Outputs that exist and are not regular files survive every writer (issue 33).

    test_outputs_survive.py COMMTAP PROFILE.json [COMMTAP_MIRROR]

In the test's own temporary directory, each writer's output path is made in
turn (1) a private character device (a copy of /dev/null's 1:3, made with
mknod: never the real /dev/null), (2) a FIFO with a reader that checks it got
the whole output, (3) a symbolic link to a file. After the run the device is
still that device and the run succeeded; the FIFO is still a FIFO and its
reader got a document of the right kind; the link is still the same link,
its target's bytes untouched, and the run failed naming the path. Writers:
analyze --json, --lines and --report-dir (an interval report's name), report
-o, merge -o, trace -o, commtap-mirror --json and --report-dir (its final
report; net_null, no NIC), and commtap agent --report-dir (its final report)
in a network namespace of its own when the machine allows one. On the last
landed commit every path was replaced by a regular file (a link by the
report, its target kept; a FIFO's reader got nothing). Root only (mknod).
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading

NULL_DEV = os.makedev(1, 3)
KEEP = b"the link's target, untouched\n"
RUN_S = 120  # the slowest writer here (the sanitizers' mirror) takes a few seconds


class FifoReader(threading.Thread):
    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.data = path, None
        self.start()

    def run(self):
        with open(self.path, "rb") as f:  # blocks until the writer opens it
            self.data = f.read()

    def finish(self):
        if self.is_alive():  # the writer never opened it: release the reader
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        self.join(5)
        return self.data


def looks_like(kind, data):
    if not data:
        return False
    text = data.decode(errors="replace")
    if kind == "json":
        try:
            json.loads(text)
            return True
        except ValueError:
            return False
    if kind == "html":
        return "<html" in text and "</html>" in text
    return text.endswith("\n")  # lines: whole lines


def plant(path, kind):
    if kind == "device":
        os.mknod(path, 0o600 | stat.S_IFCHR, NULL_DEV)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    else:
        target = path + ".target"
        with open(target, "wb") as f:
            f.write(KEEP)
        os.symlink(target, path)


def survived(path, kind):
    st = os.lstat(path)
    if kind == "device":
        return stat.S_ISCHR(st.st_mode) and st.st_rdev == NULL_DEV
    if kind == "fifo":
        return stat.S_ISFIFO(st.st_mode)
    target = path + ".target"
    return (stat.S_ISLNK(st.st_mode) and os.readlink(path) == target
            and open(target, "rb").read() == KEEP)


def remove(path, kind):
    for p in (path, path + ".target") if kind == "link" else (path,):
        if os.path.lexists(p):
            os.unlink(p)


def check(name, argv, path, doc_kind, failures, env=None):
    for kind in ("device", "fifo", "link"):
        plant(path, kind)
        reader = FifoReader(path) if kind == "fifo" else None
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_S, env=env)
            rc, err = p.returncode, p.stderr.strip()
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        got = reader.finish() if reader else None
        problems = []
        if not survived(path, kind):
            problems.append("replaced" if not os.path.lexists(path) or
                            not stat.S_ISLNK(os.lstat(path).st_mode) else "changed")
        if kind == "link":
            if rc == 0 or path not in err or "symbolic link" not in err:
                problems.append(f"exit {rc}, stderr {err[-300:]!r} (want a failure naming it)")
        elif rc != 0:
            problems.append(f"exit {rc}: {err[-300:]}")
        if kind == "fifo" and not looks_like(doc_kind, got):
            problems.append(f"its reader got {len(got or b'')} bytes, not a whole {doc_kind}")
        remove(path, kind)
        verdict = "ok" if not problems else "FAIL: " + "; ".join(problems)
        print(f"{name} -> {kind}: {verdict}")
        if problems:
            failures.append(f"{name} -> {kind}")


def agent_namespace(tmp):
    """A network namespace with a veth pair, or None and why not."""
    ns = f"ct-out-{os.getpid()}"
    cmds = [["ip", "netns", "add", ns],
            ["ip", "-n", ns, "link", "add", "ctout0", "type", "veth", "peer", "name", "ctout1"],
            ["ip", "-n", ns, "link", "set", "ctout0", "up"],
            ["ip", "-n", ns, "link", "set", "ctout1", "up"]]
    for c in cmds:
        if subprocess.run(c, capture_output=True).returncode:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            return None, f"{' '.join(c)} failed"
    return ns, None


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    mirror = sys.argv[3] if len(sys.argv) > 3 else None
    if os.geteuid() != 0:
        print("SKIP: mknod of a private device node needs root")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda *n: os.path.join(tmp, *n)
        cap = t("job.pcap")
        subprocess.run([commtap, "synth", profile, "-o", cap, "--iterations", "3", "--scale",
                        "1e-3", "--time-scale", "1e-3"], check=True, capture_output=True)
        subprocess.run([commtap, "analyze", "--json", t("report.json"), cap], check=True,
                       capture_output=True)
        os.mkdir(t("out"))
        os.mkdir(t("dir"))
        out = t("out", "x")
        check("analyze --json", [commtap, "analyze", "--json", out, cap], out, "json", failures)
        check("analyze --lines", [commtap, "analyze", "--lines", out, cap], out, "lines",
              failures)
        first = t("dir", "commtap-report-000000.json")
        check("analyze --report-dir", [commtap, "analyze", "--interval", "0.02",
                                       "--report-dir", t("dir"), cap], first, "json", failures)
        check("report -o", [commtap, "report", "-o", out, t("report.json")], out, "html",
              failures)
        check("merge -o", [commtap, "merge", "-o", out, t("report.json"), t("report.json")],
              out, "json", failures)
        check("trace -o", [commtap, "trace", "-o", out, t("report.json")], out, "json",
              failures)
        final = t("dir", "commtap-report-final.json")
        if mirror:
            eal = [mirror, "--no-huge", "-m", "256", "--no-pci", "--file-prefix",
                   f"ct-out-{os.getpid()}", "-l", "0", "--vdev", "net_null0", "--"]
            probe = subprocess.run(eal + ["--duration", "0.01"], capture_output=True,
                                   text=True, timeout=RUN_S)
            if probe.returncode:
                print(f"commtap-mirror: skipped, DPDK cannot start here: "
                      f"{probe.stderr.strip()[-200:]}")
            else:
                check("commtap-mirror --json", eal + ["--duration", "0.2", "--json", out], out,
                      "json", failures)
                check("commtap-mirror --report-dir", eal + ["--duration", "0.2", "--report-dir",
                                                            t("dir")], final, "json", failures)
        ns, why = agent_namespace(tmp)
        pin_root = "/sys/fs/bpf/commtap-test-%d" % os.getpid()  # its own, not the default
        if not ns:
            print(f"commtap agent: skipped, no network namespace: {why}")
        else:
            try:
                agent = ["nsenter", f"--net=/var/run/netns/{ns}", commtap, "agent",
                         "--pin-root", pin_root, "--iface", "ctout0", "--duration", "1", "--interval", "0.5", "--no-job-names",
                         "--report-dir", t("dir")]
                probe = subprocess.run(agent[:-2] + ["--report-dir", t("out")],
                                       capture_output=True, text=True, timeout=RUN_S)
                if probe.returncode:
                    print(f"commtap agent: skipped, it cannot attach here: "
                          f"{probe.stderr.strip()[-200:]}")
                else:
                    check("commtap agent --report-dir", agent, final, "json", failures)
            finally:
                subprocess.run(["ip", "netns", "del", ns], capture_output=True)
                shutil.rmtree(pin_root, ignore_errors=True)
    print(f"{len(failures)} failures" + (": " + ", ".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
