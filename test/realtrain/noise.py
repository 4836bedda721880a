#!/usr/bin/python3
"""Traffic that is not training, for scenario ddp-noise.

  noise.py sink ADDR PORT                          accept and discard
  noise.py bulk DST PORT BYTES_PER_S OUT.json      a steady stream, 64 KiB writes
  noise.py checkpoint DST PORT BYTES EVERY_S OUT.json
                                                   a burst of BYTES every EVERY_S s

Senders write their connection's endpoints to OUT.json once connected (the
truth labels it Other) and run until SIGTERM.
"""
import json
import signal
import socket
import sys
import threading
import time

CHUNK = 65536


def sink(addr, port):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, int(port)))
    srv.listen(8)

    def drain(c):
        while c.recv(1 << 20):
            pass

    while True:
        c, _ = srv.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def connect(dst, port, role, out):
    for _ in range(100):  # the sink may still be starting
        try:
            s = socket.create_connection((dst, int(port)))
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    else:
        sys.exit("noise: cannot connect to %s:%s" % (dst, port))
    (lip, lport), (rip, rport) = s.getsockname(), s.getpeername()
    with open(out, "w") as f:
        json.dump({"role": role, "conn": [lip, lport, rip, rport]}, f)
    return s


def bulk(dst, port, rate, out):
    s = connect(dst, port, "bulk", out)
    buf = b"\0" * CHUNK
    gap = CHUNK / float(rate)
    t = time.monotonic()
    while True:
        s.sendall(buf)
        t += gap
        time.sleep(max(0.0, t - time.monotonic()))


def checkpoint(dst, port, size, every, out):
    s = connect(dst, port, "checkpoint", out)
    buf = b"\0" * int(size)
    while True:
        time.sleep(float(every))
        s.sendall(buf)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    cmd, args = sys.argv[1], sys.argv[2:]
    {"sink": sink, "bulk": bulk, "checkpoint": checkpoint}[cmd](*args)


if __name__ == "__main__":
    main()
