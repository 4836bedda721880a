"""The TCP connections of this network namespace, read from /proc/net/tcp{,6}.

One rank runs per namespace, so the namespace's connections are the rank's.
Sockets of family AF_INET6 carrying IPv4 (v4-mapped addresses, as the
rendezvous store uses) are read from tcp6 and given as IPv4.
"""
import ipaddress
import os
import struct

ESTABLISHED = "01"


def _endpoint(field):
    addr, port = field.split(":")
    # /proc prints each 32-bit word of the address in host order (little endian here)
    raw = b"".join(struct.pack("<I", int(addr[i:i + 8], 16)) for i in range(0, len(addr), 8))
    ip = ipaddress.ip_address(raw)
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return str(ip), int(port, 16)


def established():
    """Set of (local_ip, local_port, remote_ip, remote_port) in state ESTABLISHED."""
    out = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == ESTABLISHED:
                    out.add(_endpoint(cols[1]) + _endpoint(cols[2]))
    return out


def _socket_inodes():
    """The inodes of this process's sockets."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(int(link[8:-1]))
    return out


def established_split():
    """(this process's ESTABLISHED connections, the namespace's others)."""
    own_inodes = _socket_inodes()
    own, others = set(), set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == ESTABLISHED:
                    c = _endpoint(cols[1]) + _endpoint(cols[2])
                    (own if int(cols[9]) in own_inodes else others).add(c)
    return own, others
