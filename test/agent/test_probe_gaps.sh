#!/bin/sh
# SPDX-License-Identifier: MIT
# The probe's burst edges against the sender's own times (probe_gaps.c),
# between two network namespaces the test creates (a veth pair,
# 198.18.0.0/15), with its own pin root.
#
# usage: test_probe_gaps.sh PROBE_GAPS xdp|tc
# xdp: RoCE frames into the probe's interface; tc: out of it.
set -u
probe_gaps=$1 hook=$2

skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (namespaces, BPF)"
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF"
command -v ip >/dev/null || skip "ip is not installed"

id=$$
nsa=ctgA$id nsb=ctgB$id
vetha=ctga$id vethb=ctgb$id
pinroot=/sys/fs/bpf/commtap-test-gaps-$id
cleanup() {
	ip netns del $nsa 2>/dev/null
	ip netns del $nsb 2>/dev/null
	rm -rf "$pinroot"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add $nsa || skip "cannot create network namespaces"
ip netns add $nsb || exit 1
ip link add $vetha type veth peer name $vethb || exit 1
ip link set $vetha netns $nsa && ip link set $vethb netns $nsb || exit 1
for pair in $nsa:$vetha:198.18.2.101 $nsb:$vethb:198.18.2.102; do
	ns=${pair%%:*} rest=${pair#*:} dev=${rest%%:*} addr=${rest#*:}
	ip -n $ns link set $dev up || exit 1
	ip -n $ns addr add $addr/24 dev $dev || exit 1
done
# permanent neighbours: no packet waits in an ARP queue, past its send()
maca=$(ip -n $nsa -o link show $vetha | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
macb=$(ip -n $nsb -o link show $vethb | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
ip -n $nsa neigh replace 198.18.2.102 lladdr $macb nud permanent dev $vetha || exit 1
ip -n $nsb neigh replace 198.18.2.101 lladdr $maca nud permanent dev $vethb || exit 1
case $hook in
xdp) nsenter --net=/var/run/netns/$nsb "$probe_gaps" $vethb /var/run/netns/$nsa 198.18.2.102 "$pinroot" ;;
tc) nsenter --net=/var/run/netns/$nsb "$probe_gaps" --egress $vethb /var/run/netns/$nsa 198.18.2.101 "$pinroot" ;;
*) echo "usage: test_probe_gaps.sh PROBE_GAPS xdp|tc" >&2; exit 2 ;;
esac
