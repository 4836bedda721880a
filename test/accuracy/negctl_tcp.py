#!/usr/bin/env python3
"""Negative controls over TCP, sent for real between two network namespaces
joined by a veth pair: traffic where the right answer is "no training job
here" and every flow's class is Other.

  negctl_tcp.py OUTDIR [SCENARIO ...]      (default: all of them)

writes OUTDIR/SCENARIO.pcap, captured by tcpdump on the client's veth at a
snap length of 128 (as a truncating mirror session delivers it), and
OUTDIR/SCENARIO.truth.json (commtap.truth/v1). Needs root, `ip netns` and
tcpdump: without them it exits 77 (meson's SKIP) saying which is missing.

Addresses 198.18.77.1 (client) and 198.18.77.2 (server), MTU 9000 (jumbo
frames, as storage and training fabrics run them);
gso_max_segs 1 keeps the kernel from handing tcpdump 64 KB
super-frames, so the capture sees the wire's 9014-byte frames. The
namespaces and the veth are removed afterwards, also on failure. A capture
from which tcpdump dropped packets is rejected.

Scenarios:
  iperf-bulk        one bulk stream, 48 MiB, with iperf3's control
                    connection beside it on the same port (5201)
  storage-rw        NFS-style reads and writes to port 2049 at random
                    times: a read is a short request and 64 KiB..1 MiB back,
                    a write the reverse
  checkpoint-burst  a 6 MiB checkpoint written to port 2049 every 0.4 s,
                    eight times, over one connection (periodic, as a
                    training job's checkpoints are)
"""
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import truthfile  # noqa: E402

CLIENT, SERVER = "198.18.77.1", "198.18.77.2"
SNAPLEN = 128
MTU = 9000
SCENARIOS = ["iperf-bulk", "storage-rw", "checkpoint-burst"]
PORTS = {"iperf-bulk": 5201, "storage-rw": 2049, "checkpoint-burst": 2049}


def sh(*cmd, ns=None, check=True):
    if ns:
        cmd = ("ip", "netns", "exec", ns) + cmd
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def preflight():
    if os.geteuid() != 0:
        skip("needs root for network namespaces")
    for tool in ("ip", "tcpdump"):
        if not shutil.which(tool):
            skip("%s is not installed" % tool)
    probe = "ctprobe%d" % os.getpid()
    if sh("ip", "netns", "add", probe, check=False).returncode:
        skip("cannot create a network namespace")
    sh("ip", "netns", "del", probe)


class Net:
    """Two namespaces, a veth pair between them; removed on exit."""

    def __init__(self):
        tag = os.getpid()
        self.cli, self.srv = "ctnc%d" % tag, "ctns%d" % tag
        self.vc, self.vs = "ctc%d" % tag, "cts%d" % tag

    def __enter__(self):
        try:
            sh("ip", "netns", "add", self.cli)
            sh("ip", "netns", "add", self.srv)
            sh("ip", "link", "add", self.vc, "netns", self.cli, "type", "veth",
               "peer", "name", self.vs, "netns", self.srv)
            for ns, dev, addr in ((self.cli, self.vc, CLIENT), (self.srv, self.vs, SERVER)):
                sh("ip", "link", "set", "dev", dev, "mtu", str(MTU), "gso_max_segs", "1",
                   ns=ns)
                sh("ip", "addr", "add", addr + "/30", "dev", dev, ns=ns)
                sh("ip", "link", "set", "dev", dev, "up", ns=ns)
                sh("ip", "link", "set", "dev", "lo", "up", ns=ns)
        except subprocess.CalledProcessError as e:
            self.__exit__()
            raise SystemExit("negctl_tcp.py: %s: %s" % (" ".join(e.cmd), e.stderr.strip()))
        return self

    def __exit__(self, *exc):
        for ns in (self.cli, self.srv):
            sh("ip", "netns", "del", ns, check=False)


# ---- the traffic: run inside the namespaces as `negctl_tcp.py --serve|--client` ----

def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            raise ConnectionError("peer closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return bytes(buf)


def serve(port):
    """Requests are (op, length): 'W' sends length bytes and gets 64 back;
    'R' asks for length bytes; 'C' is a control message answered in kind."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((SERVER, port))
    ls.listen(8)
    print("ready", flush=True)
    conns = 0
    while True:
        s, _ = ls.accept()
        conns += 1
        if os.fork() == 0:
            ls.close()
            try:
                while True:
                    head = s.recv(5, socket.MSG_WAITALL)
                    if len(head) < 5:
                        break
                    op, n = head[:1], struct.unpack("!I", head[1:])[0]
                    if op == b"W":
                        recv_exact(s, n)
                        s.sendall(b"\0" * 64)
                    elif op == b"R":
                        s.sendall(b"\0" * n)
                    else:
                        s.sendall(b"C" + recv_exact(s, n))
            finally:
                os._exit(0)
        s.close()


def client(scenario, port):
    rng = random.Random(scenario)
    blob = b"\x5a" * (1 << 20)

    def write(s, n):
        s.sendall(b"W" + struct.pack("!I", n))
        for off in range(0, n, len(blob)):
            s.sendall(blob[: min(len(blob), n - off)])
        recv_exact(s, 64)

    def read(s, n):
        s.sendall(b"R" + struct.pack("!I", n))
        recv_exact(s, n)

    if scenario == "iperf-bulk":
        ctl = socket.create_connection((SERVER, port))
        msg = b'{"tcp":true,"omit":0,"time":10,"parallel":1,"len":131072}'
        ctl.sendall(b"C" + struct.pack("!I", len(msg)) + msg)
        recv_exact(ctl, 1 + len(msg))
        data = socket.create_connection((SERVER, port))
        write(data, 48 << 20)
        data.close()
        ctl.sendall(b"C" + struct.pack("!I", 16) + b"\0" * 16)
        recv_exact(ctl, 17)
        ctl.close()
    elif scenario == "storage-rw":
        s = socket.create_connection((SERVER, port))
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            n = rng.choice([64, 128, 256, 512, 1024]) << 10
            (read if rng.random() < 0.6 else write)(s, n)
            time.sleep(rng.expovariate(1 / 0.03))
        s.close()
    elif scenario == "checkpoint-burst":
        s = socket.create_connection((SERVER, port))
        t0 = time.monotonic()
        for k in range(8):
            time.sleep(max(0.0, t0 + 0.4 * k - time.monotonic()))
            write(s, 6 << 20)
        s.close()
    else:
        raise SystemExit("negctl_tcp.py: unknown scenario %r (known: %s)"
                         % (scenario, ", ".join(SCENARIOS)))


# ---- one scenario: server, capture, client, truth ----

def run(net, scenario, outdir):
    port = PORTS[scenario]
    pcap = os.path.join(outdir, scenario + ".pcap")
    me = os.path.abspath(__file__)
    srv = subprocess.Popen(["ip", "netns", "exec", net.srv, sys.executable, me, "--serve",
                            str(port)], stdout=subprocess.PIPE, text=True)
    dump = subprocess.Popen(["ip", "netns", "exec", net.cli, "tcpdump", "-i", net.vc, "-s",
                             str(SNAPLEN), "-B", "65536", "-U", "-n", "-w", pcap, "tcp"],
                            stderr=subprocess.PIPE, text=True)
    try:
        if srv.stdout.readline().strip() != "ready":
            raise SystemExit("negctl_tcp.py: %s: the server did not start" % scenario)
        line = dump.stderr.readline()
        if "listening" not in line:
            raise SystemExit("negctl_tcp.py: %s: tcpdump: %s" % (scenario, line.strip()))
        r = sh(sys.executable, me, "--client", scenario, str(port), ns=net.cli, check=False)
        if r.returncode:
            raise SystemExit("negctl_tcp.py: %s: client failed: %s"
                             % (scenario, r.stderr.strip()[-300:]))
        time.sleep(0.3)
    finally:
        dump.send_signal(signal.SIGTERM)
        err = dump.communicate(timeout=30)[1]
        srv.kill()
        srv.wait()
    dropped = [ln for ln in err.splitlines() if "dropped by kernel" in ln]
    if not dropped or not dropped[0].startswith("0 "):
        raise SystemExit("negctl_tcp.py: %s: tcpdump dropped packets (%s): capture rejected"
                         % (scenario, "; ".join(dropped) or err.strip()))
    truthfile.write(pcap, os.path.join(outdir, scenario + ".truth.json"), scenario, "tcp",
                    lambda key: "Other",
                    "real TCP between network namespaces, MTU %d, snap %d; no training job"
                    % (MTU, SNAPLEN))
    return pcap


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--serve":
        return serve(int(sys.argv[2]))
    if len(sys.argv) >= 4 and sys.argv[1] == "--client":
        return client(sys.argv[2], int(sys.argv[3]))
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    preflight()
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    with Net() as net:
        for s in sys.argv[2:] or SCENARIOS:
            print(run(net, s, outdir), flush=True)


if __name__ == "__main__":
    sys.exit(main())
