#!/bin/bash
# SPDX-License-Identifier: MIT
# Live mirror: two host namespaces joined by a veth, host A's port mirrored
# (tc mirred, both directions) to a veth whose far end sits in a monitor
# namespace where commtap-mirror reads it with net_af_packet. Crafted RoCEv2
# flows and a TCP transfer must appear with their exact counts.
# Addresses from 198.18.0.0/15 only; namespaces removed on exit.
# usage: test_live_mirror.sh COMMTAP-MIRROR SEND_ROCE.py
set -u
mirror=$1 send_roce=$2
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
command -v ip >/dev/null && command -v tc >/dev/null || { echo "SKIP: needs ip and tc (iproute2)"; exit 77; }
sfx=$$
A=ct-mir-a-$sfx B=ct-mir-b-$sfx M=ct-mir-m-$sfx
tmp=$(mktemp -d)
cleanup() {
	[ -n "${mpid:-}" ] && kill "$mpid" 2>/dev/null
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	ip netns del "$M" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$A" && ip netns add "$B" && ip netns add "$M" || { echo "SKIP: cannot create network namespaces"; exit 77; }
# made in the root namespace under unique names, moved, then renamed
link() { # ns1 name1 ns2 name2
	ip link add "cta$sfx" type veth peer name "ctb$sfx" || exit 1
	ip link set "cta$sfx" netns "$1" && ip link set "ctb$sfx" netns "$3" || exit 1
	ip -n "$1" link set "cta$sfx" name "$2" && ip -n "$3" link set "ctb$sfx" name "$4" || exit 1
}
link "$A" a0 "$B" b0
link "$A" mir0 "$M" mon0
for ns in "$A" "$B" "$M"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$ns" link set lo up
done
ip -n "$A" addr add 198.18.1.1/24 dev a0
ip -n "$B" addr add 198.18.1.2/24 dev b0
ip -n "$A" link set a0 up && ip -n "$B" link set b0 up
ip -n "$A" link set mir0 up && ip -n "$M" link set mon0 up
ip netns exec "$A" tc qdisc add dev a0 clsact || { echo "SKIP: no clsact qdisc"; exit 77; }
ip netns exec "$A" tc filter add dev a0 egress protocol all u32 match u32 0 0 action mirred egress mirror dev mir0 || exit 1
ip netns exec "$A" tc filter add dev a0 ingress protocol all u32 match u32 0 0 action mirred egress mirror dev mir0 || exit 1
bmac=$(ip netns exec "$B" cat /sys/class/net/b0/address)
amac=$(ip netns exec "$A" cat /sys/class/net/a0/address)
ip -n "$A" neigh add 198.18.1.2 lladdr "$bmac" dev a0
ip -n "$B" neigh add 198.18.1.1 lladdr "$amac" dev b0

ip -n "$M" link set lo up
mkdir -p "$tmp/reports"
ip netns exec "$M" "$mirror" --no-huge -m 512 --no-pci -l 0 --file-prefix "ct-mir-$sfx" \
	--vdev net_af_packet0,iface=mon0 -- --json "$tmp/report.json" \
	--interval 0.5 --report-dir "$tmp/reports" --listen 127.0.0.1:9464 2>"$tmp/err" &
mpid=$!
for _ in $(seq 100); do
	grep -q "worker" "$tmp/err" && break
	kill -0 "$mpid" 2>/dev/null || break
	sleep 0.1
done
grep -q "worker" "$tmp/err" || { echo "FAIL commtap-mirror did not start:"; cat "$tmp/err"; exit 1; }

# RoCE: A -> B on QP 0x101 (300 x 1 KiB), B -> A on QP 0x202 (120 x 256 B)
ip netns exec "$A" python3 "$send_roce" a0 "$bmac" 198.18.1.1 198.18.1.2 0x101 300 1024 || exit 1
ip netns exec "$B" python3 "$send_roce" b0 "$amac" 198.18.1.2 198.18.1.1 0x202 120 256 || exit 1
# TCP: 2 MB from A to B port 5001, in 64 KiB writes 5 ms apart: a mirror
# slowed down by ASan drains net_af_packet's ring between them
ip netns exec "$B" python3 -c '
import socket
s = socket.socket(); s.bind(("198.18.1.2", 5001)); s.listen(1); c, _ = s.accept(); n = 0
while True:
    d = c.recv(65536)
    if not d: break
    n += len(d)
print(n)' >"$tmp/tcp_rx" &
spid=$!
sleep 0.3
ip netns exec "$A" python3 -c '
import socket, time
s = socket.create_connection(("198.18.1.2", 5001)); left = 2000000
while left:
    n = min(left, 65536); s.sendall(bytes(n)); left -= n; time.sleep(0.005)
s.close()' || exit 1
wait "$spid"
sleep 1
# live counters through rte_telemetry while it runs
python3 - "/var/run/dpdk/ct-mir-$sfx/dpdk_telemetry.v2" <<'PY' || exit 1
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.recv(1024)
s.send(b"/commtap/counters")
c = json.loads(s.recv(16384))["/commtap/counters"]
ok = c["roce_packets"] == 420 and c["tcp_packets"] > 0
print(("ok  " if ok else "FAIL"), "telemetry /commtap/counters:", c)
sys.exit(0 if ok else 1)
PY
# Prometheus /metrics from the interval reports (inside the mirror's namespace)
ip netns exec "$M" curl -sf http://127.0.0.1:9464/metrics >"$tmp/metrics.txt" ||
	{ echo "FAIL no /metrics from commtap-mirror"; exit 1; }
grep -Eq '^commtap_packets_total [1-9]' "$tmp/metrics.txt" ||
	{ echo "FAIL /metrics counts no packets"; exit 1; }
if command -v promtool >/dev/null; then
	promtool check metrics <"$tmp/metrics.txt" || { echo "FAIL promtool rejects /metrics"; exit 1; }
fi
echo "ok   /metrics: $(grep -c '^commtap_' "$tmp/metrics.txt") series"
kill -TERM "$mpid"
wait "$mpid"
rc=$?
mpid=
[ $rc = 0 ] || { echo "FAIL commtap-mirror exited $rc:"; cat "$tmp/err"; exit 1; }
python3 - "$tmp/report.json" "$(cat "$tmp/tcp_rx")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tcp_rx = int(sys.argv[2])
flows = r["flows"]
fail = 0
def roce(src, dst, qpn):
    return [f for f in flows if f["transport"] == "roce" and f["src"] == src and f["dst"] == dst and f.get("qpn") == qpn]
for src, dst, qpn, n, payload in (("198.18.1.1", "198.18.1.2", 0x101, 300, 1024),
                                  ("198.18.1.2", "198.18.1.1", 0x202, 120, 256)):
    fs = roce(src, dst, qpn)
    pk = sum(f["packets"] for f in fs); msgs = sum(f["messages"] for f in fs)
    by = sum(f["bytes"] for f in fs); want_bytes = n * (14 + 20 + 8 + 12 + payload + 4)
    ok = pk == n and msgs == n and by == want_bytes
    print(("ok  " if ok else "FAIL"), f"roce {src}>{dst} qpn {qpn:#x}: {pk} packets (want {n}), {msgs} messages, {by} bytes (want {want_bytes})")
    fail |= not ok
t = [f for f in flows if f["transport"] == "tcp" and f["src"] == "198.18.1.1" and f["dst"] == "198.18.1.2" and f.get("dport") == 5001]
tb = sum(f.get("message_bytes", 0) for f in t)
ok = len(t) >= 1 and tb == tcp_rx == 2000000
print(("ok  " if ok else "FAIL"), f"tcp 198.18.1.1>198.18.1.2:5001: {len(t)} flow(s), {tb} payload bytes (receiver got {tcp_rx})")
if not ok:
    print("     the mirror's own losses:", {k: v for k, v in r.get("mirror", {}).items() if "drop" in k or "miss" in k or "loss" in k})
fail |= not ok
other = [f for f in flows if not (f["src"].startswith("198.18.") and f["dst"].startswith("198.18."))]
if other:
    print("FAIL flows outside 198.18.0.0/15:", other[:2]); fail = 1
m = r["mirror"]
print("mirror:", m["driver"], "rx", m["rx_packets"], "imissed", m["port_imissed"])
sys.exit(fail)
PY
