#!/usr/bin/env python3
"""commtap analyze --listen: idle clients cannot starve /metrics.

    test_metrics_idle.py COMMTAP PROFILE.json

Serves a synthesized job's interval report on 127.0.0.1, then on loopback
only: (1) one client address (127.0.0.2) opens 200 connections and sends
nothing: a scrape from 127.0.0.1 is answered (200) within 2 s, the server
keeps at most 64 connections waiting for a request (one more evicts the
oldest; issue 33 replaced a limit of 16 per address, which refused a scraper
of the same address), and the ones it kept are closed within 4 s as they
never sent a request; (2) 200 addresses
(127.0.1.1-200) open one idle connection each: a scrape is still answered
within 2 s.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

IDLE = 200
MAX_WAITING = 64  # metrics_server.c
ANSWER_S = 2.0
CLOSE_S = 4.0


def scrape(port, timeout):
    """(status, seconds) of GET /metrics from 127.0.0.1, or (error text, seconds)."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            r.read()
            status = r.status
    except OSError as e:
        status = f"{type(e).__name__}: {e}"
    return status, time.monotonic() - start


def final_served(port):
    """Whether /metrics serves the final report (the whole capture read)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
            text = r.read().decode()
    except OSError:
        return False
    return any(line.startswith("commtap_capture_complete") and line.split()[-1] == "1"
               for line in text.splitlines())


def idle_from(addr, port):
    s = socket.socket()
    s.bind((addr, 0))
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    return s


def closed_by_server(sock):
    """True when the peer closed or reset the connection, False while it is open."""
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def settle(socks, seconds):
    """Wait until the server closed every socket or the time is up: how many stay open."""
    end = time.monotonic() + seconds
    while True:
        open_ = sum(not closed_by_server(s) for s in socks)
        if not open_ or time.monotonic() > end:
            return open_
        time.sleep(0.1)


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    failures = []
    fail = failures.append
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        subprocess.run([commtap, "synth", profile, "-o", t("job.pcap"), "--iterations", "3",
                        "--scale", "1e-3", "--time-scale", "1e-3"], check=True,
                       capture_output=True)
        os.mkfifo(t("feed"))
        os.mkdir(t("reports"))
        proc = subprocess.Popen([commtap, "analyze", "--interval", "0.02", "--report-dir",
                                 t("reports"), "--listen", "127.0.0.1:0", t("feed")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        socks = []
        try:
            feed = open(t("feed"), "wb")
            data = open(t("job.pcap"), "rb").read()
            feed.write(data[:len(data) // 2])  # kept open: the server stays up
            feed.flush()
            m = re.search(r"port (\d+)", proc.stderr.readline())
            if not m:
                fail("no port announced")
                return 1
            port = int(m.group(1))
            for _ in range(100):
                if scrape(port, 2)[0] == 200:
                    break
                time.sleep(0.1)
            else:
                fail("no interval report served")
                return 1

            # (1) one address, many idle connections
            socks = [idle_from("127.0.0.2", port) for _ in range(IDLE)]
            time.sleep(0.3)
            status, took = scrape(port, 10)
            print(f"{IDLE} idle connections from 127.0.0.2: scrape {status} in {took:.2f} s")
            if status != 200 or took > ANSWER_S:
                fail(f"scrape beside {IDLE} idle connections of one address: {status} "
                     f"in {took:.2f} s")
            kept = settle(socks, 0.5)
            print(f"kept open by the server: {kept} of {IDLE}")
            if kept > MAX_WAITING:
                fail(f"{kept} connections wait for a request (limit {MAX_WAITING})")
            left = settle(socks, CLOSE_S)
            if left:
                fail(f"{left} connections that sent nothing still open after {CLOSE_S} s")
            else:
                print(f"every idle connection closed within {CLOSE_S} s")
            for s in socks:
                s.close()

            # (2) many addresses, one idle connection each
            socks = [idle_from(f"127.0.1.{i}", port) for i in range(1, IDLE + 1)]
            time.sleep(0.3)
            status, took = scrape(port, 10)
            print(f"{IDLE} idle connections from {IDLE} addresses: scrape {status} in "
                  f"{took:.2f} s")
            if status != 200 or took > ANSWER_S:
                fail(f"scrape beside {IDLE} idle clients: {status} in {took:.2f} s")
            for s in socks:
                s.close()
            if proc.poll() is not None:
                fail("the server exited")
            feed.write(data[len(data) // 2:])
            feed.close()
            # SIGTERM once the final report is served: a slower build (the
            # sanitizers') may still be reading, and a stop then is exit 2
            for _ in range(300):
                if final_served(port):
                    break
                time.sleep(0.1)
            else:
                fail("the final report was not served within 30 s")
        finally:
            for s in socks:
                s.close()
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = "hung"
        if rc != 0:
            fail(f"exit after SIGTERM: {rc}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
