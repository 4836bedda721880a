#!/bin/sh
# SPDX-License-Identifier: MIT
# commtap analyze --live on a veth pair in network namespaces the test
# creates (198.18.0.0/15), fed a synthesized job replayed with tcpreplay,
# beside tcpdump on the same interface at the same time.
#
# usage: test_live_netns.sh CASE COMMTAP PROFILE COMPARE_PY
# CASE: wire   one worker (--interval, --listen, SIGINT) and two workers
#              (--user nobody, SIGTERM) beside tcpdump: packets analysed >=
#              tcpdump's, kernel drops <= tcpdump's, every flow and the
#              period the wire's (tcpdump's capture analysed), the flows
#              the sent job's (packets, bytes); the two runs' reports alike
#       vlan   the job tagged (VLAN 100, priority 3): the kernel takes the tag
#              off before a packet socket sees the frame; --live puts it back,
#              so every flow's bytes (14 + 4 per tag + IP length) and pcp are
#              the tagged capture's
#       hang   a job stopped mid-iteration while other traffic goes on:
#              an interval report put as its silence pages (the hang watch)
#       errors an interface that does not exist, one that is down, no
#              CAP_NET_RAW, a bad filter: exit 1, the message naming it;
#              --duration 1: exit 0, the final report written
set -u
case_=$1 commtap=$2 profile=$3 compare=$4

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, packet sockets)"
for tool in ip tcpreplay tcprewrite tcpdump nsenter setpriv curl python3 flock; do
	command -v $tool >/dev/null || skip "$tool is not installed"
done
# one test at a time in namespaces: replays at full rate disturb each other
exec 9>/tmp/commtap-netns.lock
flock 9

id=$$
nsa=ctlA$id nsb=ctlB$id
vetha=ctla$id vethb=ctlb$id
work=$(mktemp -d)
chmod 755 "$work" # two's reader, nobody, writes under it
pids=
cleanup() {
	for pid in $pids; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
	ip netns del $nsa 2>/dev/null
	ip netns del $nsb 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add $nsa || skip "cannot create network namespaces"
ip netns add $nsb || fail "cannot create a second namespace"
ip link add $vetha type veth peer name $vethb || fail "cannot create a veth pair"
ip link set $vetha netns $nsa && ip link set $vethb netns $nsb || exit 1
for pair in $nsa:$vetha:198.18.0.101 $nsb:$vethb:198.18.0.102; do
	ns=${pair%%:*} rest=${pair#*:} dev=${rest%%:*} addr=${rest#*:}
	ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip -n $ns link set $dev mtu 9000 up || exit 1
	ip -n $ns addr add $addr/24 dev $dev || exit 1
done
ip -n $nsb link set lo up

in_b() { nsenter --net=/var/run/netns/$nsb "$@"; }

# start_live NAME options...: commtap analyze --live in ctB, its stderr in NAME.err
start_live() {
	name=$1
	shift
	: >"$work/$name.err"
	# nsenter execs commtap: $! is commtap itself, which the signals reach
	# (not through in_b: a function in the background is a subshell)
	nsenter --net=/var/run/netns/$nsb "$commtap" analyze --live $vethb "$@" 2>"$work/$name.err" &
	eval "${name}_pid=$!"
	pids="$pids $!"
	for _ in $(seq 100); do
		grep -q "capturing on" "$work/$name.err" && return 0
		kill -0 $! 2>/dev/null || { cat "$work/$name.err"; fail "$name: exited at start"; }
		sleep 0.1
	done
	fail "$name: did not start in 10 s"
}

# stop_live NAME SIGNAL: the exit status must be 0 and the final report there
stop_live() {
	eval "pid=\$${1}_pid"
	kill -"$2" "$pid"
	wait "$pid"
	rc=$?
	cat "$work/$1.err"
	[ $rc = 0 ] || fail "$1: exit status $rc after SIG$2"
}

field() { # report, python expression on r
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

case $case_ in
wire)
	"$commtap" synth "$profile" -o "$work/job.pcap" --iterations 6 --scale 0.01 \
		--time-scale 3 >/dev/null 2>&1 || fail "commtap synth"
	# the replay moves packets by up to about a millisecond: bursts end at gaps of 10 ms
	"$commtap" analyze --burst-gap 10 --json "$work/job.json" "$work/job.pcap" >/dev/null ||
		fail "analyze the sent job"
	mkdir -p "$work/one" "$work/two"
	chown nobody "$work/two"
	# --window: the final report's periodicity over the whole replay, as the wire's
	start_live one --burst-gap 10 --interval 0.5 --window 60 --report-dir "$work/one" \
		--listen 127.0.0.1:9464 --json "$work/one.json"
	start_live two --burst-gap 10 --workers 2 --user nobody --report-dir "$work/two" \
		--json "$work/two/final.json"
	# the reader of two: no capability, uid nobody
	status=$(cat /proc/$two_pid/status)
	echo "$status" | grep -Eq '^Uid:[[:space:]]+65534[[:space:]]+65534[[:space:]]+65534' ||
		fail "--user nobody: $(echo "$status" | grep ^Uid)"
	echo "$status" | grep -Eq '^CapEff:[[:space:]]+0+$' && echo "$status" | grep -Eq '^CapPrm:[[:space:]]+0+$' ||
		fail "--user nobody kept capabilities: $(echo "$status" | grep ^Cap)"
	nsenter --net=/var/run/netns/$nsb tcpdump -i $vethb -Q in -nn -w "$work/wire.pcap" \
		2>"$work/tcpdump.err" &
	tcpdump_pid=$!
	pids="$pids $tcpdump_pid"
	for _ in $(seq 100); do
		grep -q "listening on" "$work/tcpdump.err" && break
		sleep 0.1
	done
	ip netns exec $nsa tcpreplay -q -i $vetha "$work/job.pcap" >"$work/replay.out" 2>&1 ||
		{ cat "$work/replay.out"; fail "tcpreplay"; }
	sleep 1 # an interval report after the replay, for /metrics
	in_b curl -sf http://127.0.0.1:9464/metrics >"$work/metrics.txt" || fail "no /metrics"
	grep -Eq '^commtap_packets_total [1-9]' "$work/metrics.txt" ||
		fail "/metrics counts no packets"
	grep -Eq '^commtap_kernel_drops_total [0-9]+$' "$work/metrics.txt" ||
		fail "/metrics has no commtap_kernel_drops_total"
	ls "$work/one"/commtap-report-0000*.json >/dev/null 2>&1 || fail "no interval report"
	kill -INT $tcpdump_pid
	wait $tcpdump_pid
	pids=
	cat "$work/tcpdump.err"
	stop_live one INT
	stop_live two TERM
	pids=
	captured=$(sed -n 's/^\([0-9]*\) packets captured$/\1/p' "$work/tcpdump.err")
	dropped=$(sed -n 's/^\([0-9]*\) packets dropped by kernel$/\1/p' "$work/tcpdump.err")
	[ -n "$captured" ] && [ -n "$dropped" ] || fail "tcpdump's counts not found"
	"$commtap" analyze --burst-gap 10 --json "$work/wire.json" "$work/wire.pcap" >/dev/null ||
		fail "analyze tcpdump's capture"
	for run in one two/final; do
		r=$work/$run.json
		analysed=$(field "$r" "r['capture']['packets']")
		drops=$(field "$r" "r['capture']['kernel_drops']")
		echo "$run: analysed $analysed (tcpdump $captured), kernel drops $drops (tcpdump $dropped)"
		[ "$analysed" -ge "$captured" ] || fail "$run analysed fewer packets than tcpdump captured"
		[ "$drops" -le "$dropped" ] || fail "$run: more kernel drops than tcpdump's"
		[ "$(field "$r" "r['capture']['format']")" = live ] || fail "$run: capture.format"
		# the same packets at the same kernel timestamps: the wire's report, period and all
		python3 "$compare" "$work/wire.json" "$r" --period-tolerance 0.001 ||
			fail "$run: the report differs from tcpdump's capture analysed"
		# and the job that was sent: every flow, its packets and bytes
		python3 "$compare" "$work/job.json" "$r" --fields packets,bytes ||
			fail "$run: the flows differ from the sent job's"
		# tcpreplay paces each packet after the one before, so its lag adds up
		# (1.10 s sent, 1.40 s on the wire on a loaded machine): the period is
		# checked against the wire's above, the sent one printed
		field "$r" "'period: sent %.4f s, %s %.4f s' % (json.load(open('$work/job.json'))['job']['iteration_period_s'], '$run', r['job']['iteration_period_s'])"
	done
	python3 "$compare" "$work/one.json" "$work/two/final.json" ||
		fail "two workers' flows differ from one's"
	[ "$(stat -c %U "$work/two/final.json")" = nobody ] || fail "two's report is not nobody's"
	;;
vlan)
	"$commtap" synth "$profile" -o "$work/job.pcap" --iterations 2 --scale 0.01 >/dev/null 2>&1 ||
		fail "commtap synth"
	tcprewrite --enet-vlan=add --enet-vlan-tag=100 --enet-vlan-pri=3 -i "$work/job.pcap" \
		-o "$work/tagged.pcap" || fail "tcprewrite"
	"$commtap" analyze --tcp-gap 10000 --json "$work/tagged.json" "$work/tagged.pcap" >/dev/null ||
		fail "analyze the tagged job"
	start_live tagged --tcp-gap 10000 --json "$work/live.json"
	ip netns exec $nsa tcpreplay -q -i $vetha --topspeed "$work/tagged.pcap" \
		>"$work/replay.out" 2>&1 || { cat "$work/replay.out"; fail "tcpreplay"; }
	sleep 0.5
	stop_live tagged INT
	python3 "$compare" "$work/tagged.json" "$work/live.json" --fields packets,bytes,pcp ||
		fail "the tagged flows differ"
	[ "$(field "$work/live.json" "sorted(set(f['pcp'] for f in r['flows']))")" = "[3]" ] ||
		fail "a flow's pcp is not the tag's 3"
	;;
hang)
	# A DDP job (iterations of 1.2 s) stopped in the middle of iteration 7
	# while other traffic goes on (test/anomaly/hung_job.py), replayed
	# at its own pace; interval reports every 6.2 periods, the first before
	# the stop, the next 4.5 periods or more after it. The first report
	# holding the hang says the job silent 3.5 periods or less: put as the
	# silence paged (the hang watch), not at the interval's end.
	hung=$(dirname "$0")/../anomaly/hung_job.py
	period=$(python3 "$hung" make "$commtap" "$(dirname "$profile")/ddp-resnet50-32gpu.json" \
		"$work") || fail "making the hung job"
	mkdir -p "$work/hang"
	start_live hang --interval "$(python3 -c "print(6.2 * $period)")" --report-dir "$work/hang" \
		--json "$work/hang.json"
	ip netns exec $nsa tcpreplay -q -i $vetha "$work/hung.pcap" >"$work/replay.out" 2>&1 ||
		{ cat "$work/replay.out"; fail "tcpreplay"; }
	stop_live hang INT
	said=$(python3 "$hung" said "$work/hang")
	echo "the first interval report holding the hang: the job silent $said periods"
	[ "$said" != none ] || fail "no interval report holds the hang"
	python3 -c "import sys; sys.exit(0 if $said <= 3.5 else 1)" ||
		fail "the hang said $said periods into the silence, not as it paged (3.5 or less)"
	;;
errors)
	expect_fail() { # what the message must say, options...
		want=$1
		shift
		in_b "$commtap" analyze --duration 1 "$@" >"$work/out" 2>"$work/err"
		rc=$?
		cat "$work/err"
		[ $rc = 1 ] || fail "$*: exit status $rc, not 1"
		grep -q -- "$want" "$work/err" || fail "$*: the message does not say '$want'"
	}
	expect_fail "ctnone$id: no such interface" --live ctnone$id
	ip -n $nsb link add ctdown$id type veth peer name ctdownp$id ||
		fail "cannot create a veth pair"
	expect_fail "ctdown$id: the interface is down" --live ctdown$id
	# no CAP_NET_RAW (--user drops only after the sockets are open)
	in_b setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$commtap" analyze --live $vethb --duration 1 >"$work/out" 2>"$work/err"
	rc=$?
	cat "$work/err"
	[ $rc = 1 ] && grep -q "$vethb: cannot open a packet socket.*CAP_NET_RAW" "$work/err" ||
		fail "without CAP_NET_RAW: exit $rc"
	expect_fail "--filter 'udp port x'" --live $vethb --filter 'udp port x'
	expect_fail "ctnone$id: no such interface" --live $vethb,ctnone$id --workers 2
	# and the run that works: --duration ends it with the final report, exit 0
	in_b "$commtap" analyze --live $vethb --duration 1 --json "$work/d.json" 2>"$work/err" ||
		{ cat "$work/err"; fail "--duration 1: exit status $?"; }
	[ "$(field "$work/d.json" "r['capture']['format'], r['capture']['kernel_drops']")" = "live 0" ] ||
		fail "--duration 1: no final report of the interface"
	;;
*)
	fail "unknown case $case_"
	;;
esac
echo "PASS: live-$case_"
