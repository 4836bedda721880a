#!/usr/bin/env python3
"""commtap analyze --listen: Prometheus /metrics from a live analysis.

    test_metrics.py COMMTAP PROFILE.json

Feeds a synthesized job's capture through a FIFO in two halves into
`commtap analyze --interval --report-dir --listen 127.0.0.1:0`, scrapes
/metrics with curl while the capture is half read (an interval report) and
after it ended (the final report), validates both with `promtool check
metrics` (a strict parse of the text format here as well), checks the
figures against the final JSON report and that label sets stay bounded
(top flows and host pairs plus `_other`, summing to the totals), then sends
malformed, oversized and wrong requests: each gets an HTTP error or a
closed connection, and the server keeps answering. SIGTERM ends it with
exit 0. Bad --listen values are one line of error and exit 1.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def parse(text):
    """Strict enough parse of the 0.0.4 text format: {(name, labels): value}, types."""
    samples, types, helps = {}, {}, set()
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in helps, f"line {n}: second HELP for {name}"
            helps.add(name)
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert kind in ("counter", "gauge"), f"line {n}: type {kind}"
            assert name not in types, f"line {n}: second TYPE for {name}"
            types[name] = kind
            continue
        m = SAMPLE.match(line)
        assert m, f"line {n}: not a sample: {line!r}"
        name, _, labels, value = m.groups()
        assert name in types, f"line {n}: {name} has no TYPE before it"
        if types[name] == "counter":
            assert name.endswith("_total"), f"line {n}: counter {name} without _total"
        pairs = []
        rest = labels or ""
        while rest:
            lm = LABEL.match(rest)
            assert lm, f"line {n}: bad labels {labels!r}"
            pairs.append((lm.group(1), lm.group(2)))
            rest = rest[lm.end():]
        key = (name, tuple(sorted(pairs)))
        assert key not in samples, f"line {n}: duplicate series {key}"
        samples[key] = float(value)
    return samples, types


def scrape(port):
    r = subprocess.run(["curl", "-s", "-f", "--max-time", "10",
                        f"http://127.0.0.1:{port}/metrics"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def http_status(port, request, timeout=5):
    """Send raw bytes, return the status line ('' when the server just closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(request)
        data = s.recv(200)
    except (ConnectionResetError, BrokenPipeError):
        data = b""
    except socket.timeout:
        data = b"timeout"
    finally:
        s.close()
    return data.split(b"\r\n")[0].decode("latin-1")


def values(samples, name, **match):
    return [v for (n, labels), v in samples.items() if n == name and
            all(dict(labels).get(k) == want for k, want in match.items())]


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    if not shutil.which("curl"):
        print("SKIP: no curl")
        return 77
    promtool = shutil.which("promtool")
    failures = []
    fail = failures.append
    with tempfile.TemporaryDirectory() as tmp:
        t = lambda name: os.path.join(tmp, name)
        subprocess.run([commtap, "synth", profile, "-o", t("job.pcap"), "--iterations", "5",
                        "--scale", "1e-3", "--time-scale", "1e-3", "--jitter", "0.05",
                        "--noise"], check=True, capture_output=True)
        os.mkfifo(t("feed"))
        os.mkdir(t("reports"))
        proc = subprocess.Popen([commtap, "analyze", "--interval", "0.02", "--report-dir",
                                 t("reports"), "--listen", "127.0.0.1:0", "--profile", profile,
                                 "--json", t("final.json"), t("feed")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            # analyze opens the capture (and reads its header) before it listens
            feed = open(t("feed"), "wb")
            data = open(t("job.pcap"), "rb").read()
            half = len(data) // 2
            feed.write(data[:half])
            feed.flush()
            line = proc.stderr.readline()
            m = re.search(r"port (\d+)", line)
            if not m:
                fail(f"no port announced: {line!r}")
                return 1
            port = int(m.group(1))
            scrapes = {}
            for _ in range(100):
                text = scrape(port)
                if text and "commtap_packets_total" in text and os.listdir(t("reports")):
                    scrapes["interval"] = scrape(port)
                    break
                time.sleep(0.1)
            feed.write(data[half:])
            feed.close()
            for _ in range(100):
                text = scrape(port)
                if text and re.search(r"^commtap_capture_complete 1$", text, re.M):
                    scrapes["final"] = text
                    break
                time.sleep(0.1)
            if set(scrapes) != {"interval", "final"}:
                fail(f"scrapes: got only {sorted(scrapes)}")
                return 1

            for which, text in scrapes.items():
                open(t(which + ".prom"), "w").write(text)
                if promtool:
                    r = subprocess.run([promtool, "check", "metrics"], input=text,
                                       capture_output=True, text=True)
                    if r.returncode:
                        fail(f"promtool on the {which} scrape: {r.stdout}{r.stderr}")
                    else:
                        print(f"promtool check metrics: {which} scrape ok")
                try:
                    parse(text)
                except AssertionError as e:
                    fail(f"{which} scrape: {e}")
            if not promtool:
                print("promtool not installed: the text format checked by this test's parser only")

            final = json.load(open(t("final.json")))
            s_int, _ = parse(scrapes["interval"])
            s, _ = parse(scrapes["final"])
            packets_half = values(s_int, "commtap_packets_total")[0]
            print(f"interval scrape: {packets_half:.0f} packets, "
                  f"final: {values(s, 'commtap_packets_total')[0]:.0f}, "
                  f"{len(s)} series")
            if not 0 < packets_half < final["capture"]["packets"]:
                fail(f"interval scrape has {packets_half} packets of {final['capture']['packets']}")
            if values(s_int, "commtap_capture_complete") != [0]:
                fail("interval scrape does not say the capture goes on")
            flows = final["flows"]
            checks = {
                "commtap_packets_total": final["capture"]["packets"],
                "commtap_bytes_total": final["capture"]["bytes"],
                "commtap_flows": len(flows),
                "commtap_flows_inserted_total": final["engine"]["flows_inserted"],
                "commtap_iteration_period_seconds": final["job"]["iteration_period_s"],
                "commtap_iteration_period_confidence": final["job"]["period_confidence"],
            }
            for name, want in checks.items():
                got = values(s, name)
                if len(got) != 1 or abs(got[0] - want) > 1e-9 * max(1, abs(want)):
                    fail(f"{name}: {got}, report says {want}")
            for cls in sorted({f["class"] for f in flows}):
                want = sum(f["bytes"] for f in flows if f["class"] == cls)
                msgs = sum(f["messages"] for f in flows if f["class"] == cls)
                if values(s, "commtap_class_bytes_total", **{"class": cls}) != [want]:
                    fail(f"class {cls} bytes: {values(s, 'commtap_class_bytes_total', **{'class': cls})} != {want}")
                if values(s, "commtap_class_messages_total", **{"class": cls}) != [msgs]:
                    fail(f"class {cls} messages differ")
                if sum(values(s, "commtap_host_pair_bytes_total", **{"class": cls})) != want:
                    fail(f"class {cls}: host pair bytes do not sum to the class's")
            for name, want in (("commtap_cnp_total", "cnp"), ("commtap_ecn_ce_packets_total", "ecn_ce"),
                               ("commtap_retransmitted_packets_total", "retransmits")):
                if sum(values(s, name)) != sum(f[want] for f in flows):
                    fail(f"{name} does not sum to the flows' {want}")
            flow_series = values(s, "commtap_flow_bytes_total")
            if len(flow_series) > 21 or sum(flow_series) != sum(f["bytes"] for f in flows):
                fail(f"flow series: {len(flow_series)} (at most 20 + _other), sum "
                     f"{sum(flow_series)} vs {sum(f['bytes'] for f in flows)}")
            if len(flows) > 20 and len(values(s, "commtap_flow_bytes_total", src="_other")) != 1:
                fail("no _other flow series although flows were left out")
            pair_series = values(s, "commtap_host_pair_bytes_total")
            if len(pair_series) > 64 + 6:
                fail(f"{len(pair_series)} host-pair series")
            print(f"bounded: {len(flow_series)} flow series for {len(flows)} flows, "
                  f"{len(pair_series)} host-pair series")

            # wrong, malformed and oversized requests
            big_header = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n"
            many_headers = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-a: b\r\n" * 20000 + b"\r\n"
            cases = (
                ("garbage request line", b"GARBAGE\r\n\r\n", ("HTTP/1.1 4", "")),
                ("binary noise", bytes(range(256)) * 40 + b"\r\n\r\n", ("HTTP/1.1 4", "")),
                ("unknown HTTP version", b"GET /metrics HTTP/9.9\r\n\r\n", ("HTTP/1.1 505", "HTTP/1.1 4")),
                ("oversized header", big_header, ("HTTP/1.1 431", "HTTP/1.1 413", "HTTP/1.1 414", "")),
                ("too many headers", many_headers, ("HTTP/1.1 431", "HTTP/1.1 413", "")),
                ("POST", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
                 ("HTTP/1.1 405",)),
                ("GET with a body", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                 + b"a" * 1000, ("HTTP/1.1 413",)),
                ("unknown path", b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", ("HTTP/1.1 404",)),
            )
            for what, req, accept in cases:
                status = http_status(port, req)
                if not any(status.startswith(a) if a else status == "" for a in accept):
                    fail(f"{what}: answered {status!r}")
                else:
                    print(f"ok: {what}: {status or 'connection closed'}")
            idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
            for sock in idle:
                sock.close()
            if not scrape(port) or proc.poll() is not None:
                fail("the server stopped answering after the bad requests")
            else:
                print("ok: still serving after bad requests and 64 idle connections")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = "hung"
            rest = proc.stderr.read()
        if rc != 0:
            fail(f"exit after SIGTERM: {rc} ({rest.strip()})")

        # bad --listen values and a port already taken
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        for what, listen in (("not an address", "nowhere:80"), ("bad port", "127.0.0.1:99999"),
                             ("name, not a number", "localhost:9464"),
                             ("port taken", f"127.0.0.1:{taken.getsockname()[1]}")):
            p = subprocess.run([commtap, "analyze", "--listen", listen, t("job.pcap")],
                               capture_output=True, text=True, timeout=30)
            lines = p.stderr.strip().splitlines()
            if p.returncode != 1 or len(lines) != 1:
                fail(f"--listen {what}: exit {p.returncode}, {p.stderr!r}")
            else:
                print(f"ok: --listen {what}: {lines[0]}")
        taken.close()
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
