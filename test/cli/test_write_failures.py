#!/usr/bin/env python3
"""A failed write is a non-zero exit status that names its cause (issue 33).

    test_write_failures.py COMMTAP PROFILE.json SANITIZE

(1) root: a 1 MiB tmpfs mounted by the test in its own directory (unmounted
after), filled to the last byte, as --report-dir of analyze --interval with
--json elsewhere: exit 1, "No space left on device" (never "Input/output
error"), every interval report counted as not written, and the final report
said to be written to --json; then with --json on the full tmpfs too: exit
1, ENOSPC named in one line. (2) The table to /dev/full as stdout: exit 1, ENOSPC
named. (3) root: a private copy of /dev/full (mknod 1:7 in the test's
directory) as --json: exit 1, ENOSPC named, the node still a device; a FIFO
no process reads as --json: exit 1 after a bounded wait (10 s), still a FIFO.
(4) --json OK --lines in a missing directory: exit 1 after OK is written
whole, and said so. (5) report, merge and trace of a 3,000-flow report under
RLIMIT_AS from 384 MiB down (x0.85 a step, until the dynamic loader itself
fails): every failed run exits 1 and says "out of memory" (the last landed
commit: "not valid JSON (json_tokener_parse_ex failed: success)"), and at
least one run of each fails so. SANITIZE: meson's b_sanitize; the sanitizers
reserve terabytes of address space, so (5) is skipped under them.
"""
import json
import os
import resource
import stat
import struct
import subprocess
import sys
import tempfile

ENOSPC = "No space left on device"
EIO = "Input/output error"
T0 = 1_700_000_000
FLOWS = 3000
FULL_DEV = os.makedev(1, 7)


def frame(qpn, dst):
    eth = bytes(6) + bytes([2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    bth = struct.pack("!BBHII", 0x04, 0x40, 0xFFFF, qpn, 0)  # SEND only
    payload = bytes(64)
    udp_len = 8 + len(bth) + len(payload) + 4
    udp = struct.pack("!HHHH", 49152, 4791, udp_len, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                     bytes([198, 18, 0, 1]), dst)
    return eth + ip + udp + bth + payload + bytes(4)


def many_flows(path):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(FLOWS):
            fr = frame(i + 1, bytes([198, 19, i >> 8, i & 255]))
            f.write(struct.pack("<iiII", T0, i * 1000, len(fr), len(fr)) + fr)


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, name, ok, detail=""):
        print(f"{'ok' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail else ""))
        if not ok:
            self.failures.append(name)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)


def fill(mount):
    """Write a file until the file system is full, to the last block."""
    with open(os.path.join(mount, "filler"), "wb", buffering=0) as f:
        for size in (1 << 16, 4096, 512, 1):
            try:
                while True:
                    f.write(bytes(size))
            except OSError:
                pass


def full_tmpfs(c, commtap, tmp, cap):
    mount = os.path.join(tmp, "tmpfs")
    os.mkdir(mount)
    if run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", mount]).returncode:
        print("SKIP part: cannot mount a tmpfs here")
        return
    try:
        fill(mount)
        ok_json = os.path.join(tmp, "final.json")
        p = run([commtap, "analyze", "--interval", "0.02", "--report-dir", mount, "--json",
                 ok_json, cap])
        lost = [l for l in p.stderr.splitlines() if "report files were not written" in l]
        c.expect("full --report-dir: exit 1", p.returncode == 1, f"exit {p.returncode}")
        c.expect("full --report-dir: ENOSPC named, not EIO",
                 ENOSPC in p.stderr and EIO not in p.stderr, p.stderr.strip()[-300:])
        # "N of M report files were not written": N the interval reports, M one more (--json)
        counted = lost[0].split()[2:5:2] if len(lost) == 1 else None
        named = sum(f"{mount}/commtap-report-0" in l and ENOSPC in l
                    for l in p.stderr.splitlines())
        c.expect("full --report-dir: every interval report named and counted lost",
                 counted is not None and named > 0 and counted == [str(named), str(named + 1)],
                 f"{named} named; {lost}")
        c.expect("full --report-dir: the final report said written to --json",
                 f"the final report was written to --json {ok_json}" in p.stderr)
        c.expect("full --report-dir: --json written whole",
                 bool(json.load(open(ok_json))["flows"]))
        p = run([commtap, "analyze", "--json", os.path.join(mount, "final.json"), cap])
        c.expect("full --json: exit 1, ENOSPC named in its one line",
                 p.returncode == 1 and ENOSPC in p.stderr and EIO not in p.stderr
                 and len(p.stderr.splitlines()) == 1, p.stderr.strip()[-300:])
    finally:
        subprocess.run(["umount", mount])
        os.rmdir(mount)


def out_of_memory(c, commtap, tmp):
    cap, report = os.path.join(tmp, "flows.pcap"), os.path.join(tmp, "flows.json")
    many_flows(cap)
    run([commtap, "analyze", "--json", report, cap]).check_returncode()
    for cmd in (["merge", "-o", os.path.join(tmp, "merged.json"), report, report],
                ["report", "-o", os.path.join(tmp, "page.html"), report],
                ["trace", "-o", os.path.join(tmp, "trace.json"), report]):
        said, wrong, mib = 0, [], 384
        while mib > 4:
            def cap_memory(m=mib):
                resource.setrlimit(resource.RLIMIT_AS, (m << 20, m << 20))

            p = run([commtap] + cmd, preexec_fn=cap_memory)
            if p.returncode == 127 or "error while loading shared libraries" in p.stderr:
                break  # below what the program needs to start
            if p.returncode:
                if p.returncode == 1 and "out of memory" in p.stderr and \
                        "not valid JSON" not in p.stderr and "Success" not in p.stderr:
                    said += 1
                else:
                    wrong.append(f"{mib} MiB: exit {p.returncode}: {p.stderr.strip()[-200:]}")
            mib = int(mib * 0.85)
        c.expect(f"{cmd[0]} out of memory: every failure says so", not wrong and said > 0,
                 f"{said} said 'out of memory'; {wrong[:3]}")


def main():
    commtap, profile, sanitize = sys.argv[1], sys.argv[2], sys.argv[3]
    c = Checks()
    root = os.geteuid() == 0
    with tempfile.TemporaryDirectory() as tmp:
        cap = os.path.join(tmp, "job.pcap")
        run([commtap, "synth", profile, "-o", cap, "--iterations", "3", "--scale", "1e-3",
             "--time-scale", "1e-3"]).check_returncode()
        if root:
            full_tmpfs(c, commtap, tmp, cap)
        else:
            print("SKIP part: mounting a tmpfs needs root")

        with open("/dev/full", "w") as full:
            p = subprocess.run([commtap, "analyze", cap], stdout=full, stderr=subprocess.PIPE,
                               text=True, timeout=300)
        c.expect("table to /dev/full: exit 1, ENOSPC named",
                 p.returncode == 1 and ENOSPC in p.stderr, f"exit {p.returncode}: "
                 f"{p.stderr.strip()[-200:]}")

        if root:
            node = os.path.join(tmp, "full")
            os.mknod(node, 0o600 | stat.S_IFCHR, FULL_DEV)
            p = run([commtap, "analyze", "--json", node, cap])
            st = os.lstat(node)
            c.expect("--json a full device: exit 1, ENOSPC named, the node kept",
                     p.returncode == 1 and ENOSPC in p.stderr and stat.S_ISCHR(st.st_mode)
                     and st.st_rdev == FULL_DEV, f"exit {p.returncode}: "
                     f"{p.stderr.strip()[-200:]}")
        else:
            print("SKIP part: mknod needs root")

        fifo = os.path.join(tmp, "unread")
        os.mkfifo(fifo)
        p = run([commtap, "analyze", "--json", fifo, cap])
        c.expect("--json a FIFO nobody reads: exit 1 after the 10 s wait, said so, still a FIFO",
                 p.returncode == 1 and "nothing reads it" in p.stderr
                 and stat.S_ISFIFO(os.lstat(fifo).st_mode), f"exit {p.returncode}: "
                 f"{p.stderr.strip()[-200:]}")

        ok_json = os.path.join(tmp, "ok.json")
        bad = os.path.join(tmp, "missing", "lines.txt")
        p = run([commtap, "analyze", "--json", ok_json, "--lines", bad, cap])
        c.expect("--json ok --lines bad: exit 1, ok written and said so",
                 p.returncode == 1 and bool(json.load(open(ok_json))["flows"])
                 and f"written to --json {ok_json}" in p.stderr and bad in p.stderr,
                 f"exit {p.returncode}: {p.stderr.strip()[-300:]}")

        if sanitize not in ("", "none"):
            print(f"SKIP part: built with -Db_sanitize={sanitize}: no address-space limit")
        else:
            out_of_memory(c, commtap, tmp)
    print(f"{len(c.failures)} failures" + (": " + ", ".join(c.failures) if c.failures else ""))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
