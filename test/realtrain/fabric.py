"""A small switched fabric in network namespaces, with a SPAN port.

Every endpoint (a training rank, or a noise host) has a namespace of its
own with one veth, eth0, whose peer is a port of a Linux bridge in the ToR
namespace. Each bridge port's ingress is mirrored onto span0 with tc clsact
and a match-all u32 filter (this kernel has no matchall or flower), so every
frame that enters the switch is copied once. The endpoints' veths have
gso_max_segs 1: TCP then hands the veth MTU-sized segments, as a NIC puts
them on the wire, instead of 64 KB super-frames. MTU 9000 on every link.

Addresses: 198.18.0.0/24. Names carry the creating process's id; close()
removes every namespace (and with them every veth), and a fabric left by a
process that no longer exists is removed when the next one starts.
"""
import os
import re
import subprocess

MTU = 9000
SUBNET = "198.18.0"
PREFIX = "ctrt"


def sh(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def netns_list():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def remove_stale():
    """Namespaces of fabrics whose creating process is gone."""
    for ns in netns_list():
        m = re.match(PREFIX + r"(\d+)[a-z]", ns)
        if m and not os.path.exists("/proc/" + m.group(1)):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


class Fabric:
    def __init__(self):
        self.id = os.getpid()
        self.tor = "%s%dt" % (PREFIX, self.id)
        self.namespaces = []
        self.ports = 0

    def ns(self, name):
        return "%s%d%s" % (PREFIX, self.id, name)

    def up(self):
        remove_stale()
        self._add_ns(self.tor)
        t = self.tor
        sh("ip", "-n", t, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", t, "link", "add", "span0", "type", "veth", "peer", "name", "span1")
        for dev in ("br0", "span0", "span1"):
            sh("ip", "-n", t, "link", "set", dev, "mtu", str(MTU), "up")

    def _add_ns(self, ns):
        sh("ip", "netns", "add", ns)
        self.namespaces.append(ns)
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
           "net.ipv6.conf.default.disable_ipv6=1")
        sh("ip", "-n", ns, "link", "set", "lo", "up")

    def host(self, name, host_id):
        """A namespace with eth0 = SUBNET.host_id on a mirrored bridge port; its name."""
        ns = self.ns(name)
        self._add_ns(ns)
        port = "p%d" % self.ports
        self.ports += 1
        a, b = "rt%d%s" % (self.id, port), "rt%d%sb" % (self.id, port)
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "netns", ns)
        sh("ip", "link", "set", b, "netns", self.tor)
        sh("ip", "-n", ns, "link", "set", a, "name", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "mtu", str(MTU), "gso_max_segs", "1", "up")
        sh("ip", "-n", ns, "addr", "add", "%s.%d/24" % (SUBNET, host_id), "dev", "eth0")
        t = self.tor
        sh("ip", "-n", t, "link", "set", b, "name", port)
        sh("ip", "-n", t, "link", "set", port, "mtu", str(MTU), "master", "br0", "up")
        sh("tc", "-n", t, "qdisc", "add", "dev", port, "clsact")
        sh("tc", "-n", t, "filter", "add", "dev", port, "ingress", "protocol", "all", "u32",
           "match", "u32", "0", "0", "action", "mirred", "egress", "mirror", "dev", "span0")
        return ns

    def close(self):
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        self.namespaces = []
