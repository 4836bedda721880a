#!/bin/sh
# SPDX-License-Identifier: MIT
# Benchmark of commtap analyze --live (prints figures; not a timed test).
# In network namespaces it creates (a veth pair, 198.18.0.0/15), as root,
# a synthesized MoE job replayed with tcpreplay --topspeed (full rate):
#   A  --live (1 worker) beside tcpdump on the same interface at the same
#      time: packets analysed over tcpdump's, kernel drops of each;
#   B  --workers 1 alone, then --workers 2 alone: packets analysed per
#      CPU second of the busiest worker (the rate the pool sustains: its
#      slowest member sets it) and per CPU second of all workers.
# Rounds alternate A, B1, B2; medians over them.
#
# usage: bench_live.sh COMMTAP [ROUNDS (5)] [LOOPS (20)] [PROFILE (moe-125m-2hosts)] [ITERATIONS (6)]
set -u
commtap=$(realpath "$1")
rounds=${2:-5} loops=${3:-20}
profile=$(dirname "$0")/../../profiles/bundled/${4:-moe-125m-2hosts}.json iterations=${5:-6}

[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
for tool in ip tcpreplay tcpdump nsenter python3 flock; do
	command -v $tool >/dev/null || { echo "$tool is not installed"; exit 77; }
done
exec 9>/tmp/commtap-netns.lock
flock 9

id=$$
nsa=ctbA$id nsb=ctbB$id vetha=ctba$id vethb=ctbb$id
work=$(mktemp -d)
cleanup() {
	ip netns del $nsa 2>/dev/null
	ip netns del $nsb 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add $nsa && ip netns add $nsb || exit 1
ip link add $vetha type veth peer name $vethb || exit 1
ip link set $vetha netns $nsa && ip link set $vethb netns $nsb || exit 1
for pair in $nsa:$vetha:198.18.0.101 $nsb:$vethb:198.18.0.102; do
	ns=${pair%%:*} rest=${pair#*:} dev=${rest%%:*} addr=${rest#*:}
	ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip -n $ns link set $dev mtu 9000 up && ip -n $ns addr add $addr/24 dev $dev || exit 1
done
"$commtap" synth "$profile" -o "$work/job.pcap" --iterations "$iterations" --scale 0.01 >/dev/null 2>&1 ||
	exit 1

live() { # name, options...: start commtap analyze --live in ctB
	name=$1
	shift
	: >"$work/$name.err"
	nsenter --net=/var/run/netns/$nsb "$commtap" analyze --live $vethb --json "$work/$name.json" "$@" \
		2>"$work/$name.err" >/dev/null &
	eval "${name}_pid=$!"
	until grep -q "capturing on" "$work/$name.err"; do sleep 0.1; done
}

finish() { # name: SIGINT, then "analysed drops all_cpu busiest_cpu" into NAME.res
	# (not in $(...): a subshell cannot wait for this shell's child)
	eval "pid=\$${1}_pid"
	kill -INT $pid
	wait $pid
	sed -n "s/.*: \([0-9]*\) packets analysed, [0-9]* passed the filter, \([0-9]*\) dropped by the kernel; workers' CPU \([0-9.]*\) s (the busiest \([0-9.]*\) s)/\1 \2 \3 \4/p" \
		"$work/$1.err" >"$work/$1.res"
}

replay() {
	ip netns exec $nsa tcpreplay -q --topspeed --loop $loops -i $vetha "$work/job.pcap" \
		2>&1 | sed -n 's/.*Rated: [0-9.]* Bps, [0-9.]* Mbps, \([0-9.]*\) pps.*/\1/p'
}

for r in $(seq "$rounds"); do
	# A: beside tcpdump
	# -Z root: as root, tcpdump hands its output file to its own user, and
	# that file is /dev/null (an earlier run left /dev/null owned by tcpdump)
	nsenter --net=/var/run/netns/$nsb tcpdump -i $vethb -Q in -nn -Z root -w /dev/null \
		2>"$work/tcpdump.err" &
	tcpdump_pid=$!
	until grep -q "listening on" "$work/tcpdump.err"; do sleep 0.1; done
	live a
	pps=$(replay)
	sleep 0.5
	kill -INT $tcpdump_pid
	wait $tcpdump_pid
	finish a
	set -- $(cat "$work/a.res")
	tcap=$(sed -n 's/^\([0-9]*\) packets captured$/\1/p' "$work/tcpdump.err")
	tdrop=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$work/tcpdump.err")
	echo "A $r sent_pps=$pps live=$1 live_drops=$2 tcpdump=$tcap tcpdump_drops=$tdrop"
	for w in 1 2; do
		live b$w --workers $w
		pps=$(replay)
		sleep 0.5
		finish b$w
		set -- $(cat "$work/b$w.res")
		echo "B$w $r sent_pps=$pps live=$1 live_drops=$2 cpu_all=$3 cpu_busiest=$4"
	done
done | tee "$work/runs.txt"

python3 - "$work/runs.txt" <<'PY'
import statistics, sys
rows = [dict(kv.split("=") for kv in l.split()[2:]) | {"k": l.split()[0]} for l in open(sys.argv[1])]
med = statistics.median
a = [r for r in rows if r["k"] == "A"]
print("A: analysed / tcpdump's packets %.3f (median of %d; min %.3f), kernel drops: live %s, tcpdump %s (medians)" % (
    med(int(r["live"]) / int(r["tcpdump"]) for r in a), len(a),
    min(int(r["live"]) / int(r["tcpdump"]) for r in a),
    med(int(r["live_drops"]) for r in a), med(int(r["tcpdump_drops"]) for r in a)))
b = {w: [r for r in rows if r["k"] == "B%d" % w] for w in (1, 2)}
for w in (1, 2):
    print("B: --workers %d: %.0f packets per busiest-worker CPU second, %.0f per CPU second of all "
          "workers, drops %s (medians)" % (
          w, med(int(r["live"]) / float(r["cpu_busiest"]) for r in b[w]),
          med(int(r["live"]) / float(r["cpu_all"]) for r in b[w]),
          med(int(r["live_drops"]) for r in b[w])))
pairs = list(zip(b[1], b[2]))
print("B: --workers 2 / 1 per busiest-worker CPU second %.2fx, per CPU second of all %.2fx "
      "(medians of %d alternating pairs)" % (
      med((int(y["live"]) / float(y["cpu_busiest"])) / (int(x["live"]) / float(x["cpu_busiest"])) for x, y in pairs),
      med((int(y["live"]) / float(y["cpu_all"])) / (int(x["live"]) / float(x["cpu_all"])) for x, y in pairs),
      len(pairs)))
PY
