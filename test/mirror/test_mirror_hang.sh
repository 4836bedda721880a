#!/bin/bash
# SPDX-License-Identifier: MIT
# commtap-mirror's hang watch: a synthesized DDP job (iterations of 1.2 s)
# stopped in the middle of iteration 7 while other traffic goes on
# (test/anomaly/hung_job.py), replayed at its own pace into a veth whose far
# end the mirror reads with net_af_packet, in namespaces the test makes.
# Interval reports every 6.2 periods: the first before the stop, the next 4.5
# periods or more after it. The first report holding the hang says the job
# silent 3.5 periods or less: put as the silence paged, not at the interval's
# end. Addresses from 198.18.0.0/15 only; namespaces removed on exit.
# usage: test_mirror_hang.sh COMMTAP COMMTAP-MIRROR PROFILES_DIR
set -u
commtap=$1 mirror=$2 profiles=$3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
for tool in ip tcpreplay python3 flock; do
	command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
# one test at a time in namespaces: replays at full rate disturb each other
exec 9>/tmp/commtap-netns.lock
flock 9
sfx=$$
F=ct-hang-f-$sfx M=ct-hang-m-$sfx
tmp=$(mktemp -d)
cleanup() {
	[ -n "${mpid:-}" ] && kill "$mpid" 2>/dev/null && wait "$mpid" 2>/dev/null
	ip netns del "$F" 2>/dev/null
	ip netns del "$M" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ip netns add "$F" && ip netns add "$M" || { echo "SKIP: cannot create network namespaces"; exit 77; }
ip link add "ctf$sfx" type veth peer name "ctm$sfx" || fail "cannot create a veth pair"
ip link set "ctf$sfx" netns "$F" && ip link set "ctm$sfx" netns "$M" || exit 1
ip -n "$F" link set "ctf$sfx" name feed0 && ip -n "$M" link set "ctm$sfx" name mon0 || exit 1
for ns in "$F" "$M"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$ns" link set lo up
done
ip -n "$F" link set feed0 mtu 9000 up && ip -n "$M" link set mon0 mtu 9000 up || exit 1

hung=$(dirname "$0")/../anomaly/hung_job.py
period=$(python3 "$hung" make "$commtap" "$profiles/ddp-resnet50-32gpu.json" "$tmp") ||
	fail "making the hung job"
mkdir -p "$tmp/reports"
ip netns exec "$M" "$mirror" --no-huge -m 512 --no-pci -l 0 --file-prefix "ct-hang-$sfx" \
	--vdev net_af_packet0,iface=mon0 -- --json "$tmp/report.json" \
	--interval "$(python3 -c "print(6.2 * $period)")" --report-dir "$tmp/reports" \
	2>"$tmp/err" &
mpid=$!
for _ in $(seq 100); do
	grep -q "worker" "$tmp/err" && break
	kill -0 "$mpid" 2>/dev/null || break
	sleep 0.1
done
grep -q "worker" "$tmp/err" || { cat "$tmp/err"; fail "commtap-mirror did not start"; }
ip netns exec "$F" tcpreplay -q -i feed0 "$tmp/hung.pcap" >"$tmp/replay.out" 2>&1 ||
	{ cat "$tmp/replay.out"; fail "tcpreplay"; }
kill -TERM "$mpid"
wait "$mpid"
rc=$?
mpid=
[ $rc = 0 ] || { cat "$tmp/err"; fail "commtap-mirror exited $rc"; }
said=$(python3 "$hung" said "$tmp/reports")
echo "the first interval report holding the hang: the job silent $said periods"
[ "$said" != none ] || fail "no interval report holds the hang"
python3 -c "import sys; sys.exit(0 if $said <= 3.5 else 1)" ||
	fail "the hang said $said periods into the silence, not as it paged (3.5 or less)"
echo "PASS: mirror-hang"
