#!/usr/bin/env python3
"""The burst log's memory is bounded by the number of bursts it may keep,
not by the capture's length (docs/performance.md, "Memory").

A synthetic capture of 10 RoCE flows x 400,000 one-packet bursts (4 M
bursts, twice the log's bound of 2^21) is streamed into `commtap analyze`
through a pipe:
  analyze: peak RSS within the bound, 2^21 bursts x 256 B (512 MiB), plus
      what the rest of the run takes (BASE_MIB). Before the bound, 4 M
      bursts peaked at 874 MB on this capture (the issue's 10 flows x 20 M
      bursts: 5.88 GB); the peak grows about 220 B per burst up to the bound
      and not past it.
  analyze --interval 10 --window 20: the peak RSS so far at 50, 65, 80 and
      95 % of the input stays flat (no sample above the first one
      past the first window by more than FLAT_SLACK): the interval mode
      keeps the bursts of its window only.

  test_burst_memory.py COMMTAP
"""
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time

FLOWS = 10
BURSTS = 400_000          # per flow
GAP_US = 200              # between one flow's packets: > the 100 us burst gap
LOG_MAX = 1 << 21         # CT_BURST_LOG_MAX
PEAK_BYTES = 256          # CT_BURST_PEAK_BYTES
BASE_MIB = 64             # the run without bursts: binary, flows, buffers
FLAT_SLACK = 1.10


def frames():
    out = []
    for f in range(FLOWS):
        bth = struct.pack("!BBHII", 0x04, 0x40, 0xffff, 100 + f, 0)
        udp = struct.pack("!HHHH", 49152 + f, 4791, 8 + len(bth) + 68, 0)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(bth) + 68, 0, 0x4000,
                                   64, 17, 0, bytes([198, 18, 0, 1 + f]),
                                   bytes([198, 18, 1, 1 + f])))
        s = sum(struct.unpack("!10H", bytes(ip)))
        s = (s >> 16) + (s & 0xffff)
        ip[10:12] = struct.pack("!H", ~(s + (s >> 16)) & 0xffff)
        out.append(bytes.fromhex("020000000002020000000001") + b"\x08\x00" + bytes(ip) + udp +
                   bth + bytes(68))
    return out


def write_capture(pipe, progress):
    fr = frames()
    length = len(fr[0])
    pipe.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    rec = struct.Struct("<IIII")
    t0 = 1_700_000_000 * 10**6
    chunk = []
    for b in range(BURSTS):
        t = t0 + b * GAP_US
        for f in range(FLOWS):
            chunk.append(rec.pack((t + f) // 10**6, (t + f) % 10**6, length, length))
            chunk.append(fr[f])
        if len(chunk) >= 40_000:
            pipe.write(b"".join(chunk))
            chunk = []
            progress[0] = (b + 1) / BURSTS
    pipe.write(b"".join(chunk))
    progress[0] = 1.0
    pipe.close()


def status_kib(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run(commtap, args, marks):
    """Run analyze on the stream; peak RSS so far (KiB) at each progress mark, and the peak."""
    proc = subprocess.Popen([commtap, "analyze"] + args + ["/dev/stdin"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    progress = [0.0]
    t = threading.Thread(target=write_capture, args=(proc.stdin, progress), daemon=True)
    t.start()
    rss, peak, at = [], 0, list(marks)
    while proc.poll() is None:
        hwm = status_kib(proc.pid, "VmHWM")
        peak = max(peak, hwm or 0)
        if at and progress[0] >= at[0]:
            # the high-water mark: an interval report's analysis is a
            # passing peak an instant's RSS may or may not catch
            rss.append(status_kib(proc.pid, "VmHWM"))
            at.pop(0)
        time.sleep(0.05)
    t.join()
    err = proc.stderr.read().decode()
    if proc.returncode:
        sys.exit("FAIL: commtap analyze %s exited %d: %s" % (" ".join(args), proc.returncode, err))
    return rss, peak


def main():
    commtap = sys.argv[1]
    failed = 0
    bound_kib = (LOG_MAX * PEAK_BYTES >> 10) + (BASE_MIB << 10)
    with tempfile.TemporaryDirectory() as tmp:
        _, peak = run(commtap, ["--json", os.path.join(tmp, "r.json")], [])
        ok = peak <= bound_kib
        print("%s: analyze, %d flows x %d bursts: peak RSS %d MiB, bound %d MiB" %
              ("ok" if ok else "FAIL", FLOWS, BURSTS, peak >> 10, bound_kib >> 10))
        failed += not ok
        reports = os.path.join(tmp, "reports")
        os.mkdir(reports)
        rss, peak = run(commtap, ["--interval", "10", "--window", "20", "--report-dir", reports,
                                  "--json", os.path.join(tmp, "i.json")],
                        [0.5, 0.65, 0.8, 0.95])
        rss = [r for r in rss if r]
        ok = len(rss) >= 3 and max(rss[1:]) <= rss[0] * FLAT_SLACK
        print("%s: analyze --interval 10 --window 20: peak RSS %s MiB at 50, 65, 80, 95 %% of the input; peak %d "
              "MiB" % ("ok" if ok else "FAIL", [r >> 10 for r in rss], peak >> 10))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
