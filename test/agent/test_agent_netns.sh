#!/bin/sh
# SPDX-License-Identifier: MIT
# commtap agent in network namespaces the test creates (a veth pair,
# 198.18.0.0/15), fed captures replayed with tcpreplay; its reports are
# compared with `commtap analyze` on the same capture.
#
# usage: test_agent_netns.sh CASE COMMTAP PROFILE EMPTY_BPF_O COMPARE_PY
# CASE: xdp | tc | period | persist | reuse | stop | ring | lru | gpu | gpujunk | errors | twins | user | jobname
#       | kubejob | unitsandbox | hang
# (gpu also needs GPU_RINGS, the ring writer, and NCCL_PLUGIN, the plugin)
set -u
case_=$1 commtap=$2 profile=$3 empty_obj=$4 compare=$5

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (namespaces, BPF)"
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF"
for tool in ip tcpreplay nsenter python3; do
	command -v $tool >/dev/null || skip "$tool is not installed"
done

id=$$
nsa=ctA$id nsb=ctB$id nsc= nsd=
vetha=cta$id vethb=ctb$id
work=$(mktemp -d)
# the test's own pin root (--pin-root), never the machine's default
pinroot=/sys/fs/bpf/commtap-test-$id
# every agent here reads its own GPU ring directory, never the machine's
export COMMTAP_GPU_RING_DIR="$work/rings"
agent_pid=
agent2_pid=
pinsb=
twins=
cgtest=
servers=
replay_pid=
tcpdump_pid=
foreign=
stale=
cleanup() {
	# a program xdp-loader left in libxdp's dispatcher (and its pins in bpffs)
	[ -n "$foreign" ] && nsenter --net=/var/run/netns/$nsb xdp-loader unload $vethb --all >/dev/null 2>&1
	[ -n "$agent_pid" ] && kill -CONT "$agent_pid" 2>/dev/null
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	[ -n "$agent2_pid" ] && kill "$agent2_pid" 2>/dev/null && wait "$agent2_pid" 2>/dev/null
	[ -n "$replay_pid" ] && kill "$replay_pid" 2>/dev/null && wait "$replay_pid" 2>/dev/null
	for pid in $servers; do kill $pid 2>/dev/null && wait $pid 2>/dev/null; done
	[ -n "$tcpdump_pid" ] && kill "$tcpdump_pid" 2>/dev/null && wait "$tcpdump_pid" 2>/dev/null
	ip netns del $nsa 2>/dev/null
	ip netns del $nsb 2>/dev/null
	for d in $pinsb $twins $stale; do
		case $d in "$pinroot"/ns*/*) rm -rf "$d" && rmdir "${d%/*}" 2>/dev/null ;; esac
	done
	rm -rf "$pinroot"
	for ns in $nsc $nsd; do ip netns del $ns 2>/dev/null; done
	# the kubelet-like cgroups, deepest first (their processes have exited)
	case $cgtest in */commtap-test-*) find "$cgtest" -depth -type d -exec rmdir {} \; ;; esac
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add $nsa || skip "cannot create network namespaces"
make_pair() { # [ctB's ifindex]: the veth pair between ctA and ctB (again in the reuse case)
	if [ -n "${1:-}" ]; then
		ip -n $nsb link add $vethb index $1 type veth peer name $vetha netns $nsa ||
			fail "cannot create a veth pair with ifindex $1"
	else
		ip netns add $nsb || exit 1
		ip link add $vetha type veth peer name $vethb || fail "cannot create a veth pair"
		ip link set $vetha netns $nsa && ip link set $vethb netns $nsb || exit 1
	fi
	for pair in $nsa:$vetha:198.18.0.101 $nsb:$vethb:198.18.0.102; do
		ns=${pair%%:*} rest=${pair#*:} dev=${rest%%:*} addr=${rest#*:}
		ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
		ip -n $ns link set $dev mtu 9000 up || exit 1
		ip -n $ns addr add $addr/24 dev $dev || exit 1
	done
}
make_pair

# The probe's pins: per network namespace (inode) and interface index.
pins_of() { # namespace, device
	echo "$pinroot/ns$(stat -L -c %i /var/run/netns/$1)/$(ip -n $1 -o link show $2 | cut -d: -f1)"
}
pinsb=$(pins_of $nsb $vethb)

# The agent runs in ctB's network namespace but the host's mount namespace,
# so its pins in /sys/fs/bpf outlive it (ip netns exec would remount /sys).
in_b() { nsenter --net=/var/run/netns/$nsb "$@"; }

start_agent() { # report dir, options...
	dir=$1
	shift
	mkdir -p "$dir"
	: >"$work/agent.err"
	# nsenter execs the agent: $! is the agent itself, which the signals reach
	nsenter --net=/var/run/netns/$nsb "$commtap" agent --pin-root "$pinroot" --iface $vethb --interval 0.5 \
		--report-dir "$dir" "$@" 2>"$work/agent.err" &
	agent_pid=$!
	for _ in $(seq 100); do
		grep -q "commtap agent: watching" "$work/agent.err" && return 0
		kill -0 $agent_pid 2>/dev/null || { cat "$work/agent.err"; fail "agent exited"; }
		sleep 0.1
	done
	fail "the agent did not attach in 10 s"
}

stop_agent() { # signal
	kill -"$1" $agent_pid
	wait $agent_pid
	rc=$?
	agent_pid=
	cat "$work/agent.err" >>"$work/agent.log"
	[ $rc = 0 ] || { cat "$work/agent.log"; fail "agent exit status $rc after SIG$1"; }
}

synth() { # output, synth options...
	out=$1
	shift
	"$commtap" synth "$profile" -o "$out" --iterations 1 --scale 0.01 "$@" >/dev/null 2>&1 ||
		fail "commtap synth $*"
	"$commtap" analyze --json "$out.json" "$out" >/dev/null || fail "commtap analyze $out"
	# TCP messages end at idle gaps, which a replay stretches or shrinks: with
	# a gap longer than the capture, both sides see each flow's data as one
	"$commtap" analyze --tcp-gap 10000 --json "$out.gap.json" "$out" >/dev/null ||
		fail "commtap analyze $out"
}

replay() { # namespace, device, capture, tcpreplay options...
	ns=$1 dev=$2 cap=$3
	shift 3
	ip netns exec $ns tcpreplay -q -i $dev "$@" "$cap" >"$work/replay.out" 2>&1 ||
		{ cat "$work/replay.out"; fail "tcpreplay $cap"; }
}

compare() { # analyze json, agent json, options
	python3 "$compare" "$@" || { cat "$work/agent.log"; fail "the agent's report differs"; }
}

tcp_job_scripts() { # $server: a sink; $client HOST PORT: a periodic job's sender
	server=$work/server.py client=$work/client.py
	cat >"$server" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(4)
while True:
    c, _ = s.accept()
    while c.recv(1 << 20):
        pass
    c.close()
PY
	# 30 iterations of 0.15 s, each a 64 KiB message: a periodic job
	cat >"$client" <<'PY'
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
start = time.monotonic()
for i in range(30):
    c.sendall(b"x" * (64 << 10))
    time.sleep(max(0, start + (i + 1) * 0.15 - time.monotonic()))
c.close()
PY
}

final=$work/reports/commtap-report-final.json
case $case_ in
xdp) # into the interface that carries the XDP program (jumbo RoCE frames: xdp.frags)
	synth "$work/roce.pcap" --noise
	ip -n $nsb link set lo up
	# beside another XDP program through libxdp's dispatcher, where libxdp can
	# load one (docs/deploy-host.md says which kernels cannot)
	if command -v xdp-loader >/dev/null; then
		LIBXDP_DEBUG=1 in_b xdp-loader load -v -m native -n ct_empty_frags $vethb "$empty_obj" \
			>"$work/xdp-loader.out" 2>&1 ||
			{ cat "$work/xdp-loader.out"; fail "xdp-loader cannot load a program"; }
		if in_b xdp-loader status $vethb | grep -q xdp_dispatcher; then
			foreign=ct_empty_frags
			echo "dispatcher: loaded; the probe runs beside $foreign"
		else
			echo "dispatcher: libxdp cannot load it on this kernel, the probe runs alone:" \
				"$(grep -E 'dispatcher|bpffs' "$work/xdp-loader.out" | grep -v 'Falling back' | head -1)"
			in_b xdp-loader unload $vethb --all || fail "xdp-loader unload"
		fi
	else
		echo "dispatcher: not checked (xdp-loader is not installed)"
	fi
	start_agent "$work/reports" --tcp-gap 10000 --listen 127.0.0.1:9464
	if [ -n "$foreign" ]; then
		in_b xdp-loader status $vethb >"$work/xdp-status.txt"
		grep -q " ct_xdp " "$work/xdp-status.txt" && grep -q " $foreign " "$work/xdp-status.txt" ||
			{ cat "$work/xdp-status.txt"; fail "the probe and $foreign are not both in the dispatcher"; }
	elif ! grep -q "attached alone" "$work/agent.err"; then
		cat "$work/agent.err"
		ip -n $nsb link show $vethb
		fail "the probe is not attached alone, yet there is no dispatcher"
	else
		grep "dispatcher (libxdp: " "$work/agent.err" || fail "the agent's notice gives no reason"
	fi
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	# /metrics from the agent (inside its namespace's loopback) once a report has followed the replay
	sleep 1.5
	in_b curl -sf http://127.0.0.1:9464/metrics >"$work/metrics.txt" ||
		fail "no /metrics from the agent"
	grep -Eq '^commtap_packets_total [1-9]' "$work/metrics.txt" ||
		fail "/metrics counts no packets"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$work/metrics.txt" || fail "promtool rejects the agent's /metrics"
	fi
	stop_agent INT
	compare "$work/roce.pcap.gap.json" "$final" --fields packets,bytes,messages,message_bytes,msg_size_hist,cnp,ecn_ce,retransmits
	python3 -c "import json,sys; i=json.load(open(sys.argv[1]))['host']['probe']['interfaces'][0]; sys.exit(i['xdp_dispatcher'] != (sys.argv[2] != ''))" \
		"$final" "$foreign" || fail "the report's xdp_dispatcher is wrong"
	if [ -n "$foreign" ]; then
		in_b xdp-loader status $vethb >"$work/xdp-status.txt"
		grep -q " $foreign " "$work/xdp-status.txt" && ! grep -q " ct_xdp " "$work/xdp-status.txt" ||
			{ cat "$work/xdp-status.txt"; fail "the agent did not leave $foreign alone on exit"; }
	fi
	;;
tc) # out of the interface that carries the TC egress program
	synth "$work/roce.pcap" --noise
	start_agent "$work/reports" --tcp-gap 10000
	replay $nsb $vethb "$work/roce.pcap" --topspeed
	stop_agent TERM
	compare "$work/roce.pcap.gap.json" "$final" --fields packets,bytes,messages,message_bytes,msg_size_hist,cnp,ecn_ce,retransmits
	# NCCL's socket transport at capture speed
	synth "$work/tcp.pcap" --transport tcp
	rm -f "$work"/reports/*.json
	start_agent "$work/reports" --tcp-gap 10000
	replay $nsb $vethb "$work/tcp.pcap"
	stop_agent TERM
	compare "$work/tcp.pcap.gap.json" "$final" --fields packets,bytes,messages,message_bytes,retransmits
	;;
period) # real-time replay: the period of what crossed the wire, within 1%
	command -v tcpdump >/dev/null || skip "tcpdump is not installed"
	"$commtap" synth "$profile" -o "$work/p.pcap" --iterations 4 --scale 0.01 --time-scale 5 \
		>/dev/null 2>&1 ||
		fail "commtap synth"
	# a replay's pacing moves packets by up to about a millisecond here: bursts
	# end at gaps of 10 ms on both sides
	"$commtap" analyze --burst-gap 10 --json "$work/p.pcap.json" "$work/p.pcap" >/dev/null ||
		fail "analyze"
	# tcpreplay paces each packet after the one before, so its lag adds up (a
	# 7.3 s capture takes 7.6-8.3 s here, its period stretched alike): the
	# wire itself, captured beside the agent, is the reference for the period
	nsenter --net=/var/run/netns/$nsb tcpdump -i $vethb -Q in -s 128 -B 32768 --immediate-mode -nn -w "$work/wire.pcap" 2>"$work/tcpdump.err" &
	tcpdump_pid=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$work/tcpdump.err" && break
		sleep 0.1
	done
	start_agent "$work/reports" --interval 5 --burst-gap 10
	replay $nsa $vetha "$work/p.pcap"
	stop_agent INT
	kill -TERM $tcpdump_pid
	wait $tcpdump_pid
	grep -q "^0 packets dropped by kernel" "$work/tcpdump.err" ||
		{ cat "$work/tcpdump.err"; fail "tcpdump lost packets: no reference for the period"; }
	compare "$work/p.pcap.json" "$final" --totals-only
	"$commtap" analyze --burst-gap 10 --json "$work/wire.json" "$work/wire.pcap" >/dev/null ||
		fail "analyze the wire's capture"
	python3 -c "import json,sys; p=[json.load(open(f))['job']['iteration_period_s'] for f in sys.argv[1:]]; print('period: capture %.6f s, wire (tcpreplay) %.6f s, agent %.6f s' % tuple(p))" \
		"$work/p.pcap.json" "$work/wire.json" "$final" || fail "a report has no period"
	compare "$work/wire.json" "$final" --totals-only --period-tolerance 0.01
	;;
hang) # a DDP job (iterations of 1.2 s) stopped in the middle of iteration 7
	# while other traffic goes on (test/anomaly/hung_job.py), replayed at its
	# own pace; interval reports every 6.2 periods, the first before the stop,
	# the next 4.5 periods or more after it. The first report holding the hang
	# says the job silent 3.5 periods or less: put as the silence paged (the
	# hang watch), not at the interval's end.
	hung=$(dirname "$0")/../anomaly/hung_job.py
	period=$(python3 "$hung" make "$commtap" "$(dirname "$profile")/ddp-resnet50-32gpu.json" \
		"$work") || fail "making the hung job"
	start_agent "$work/reports" --interval "$(python3 -c "print(6.2 * $period)")"
	replay $nsa $vetha "$work/hung.pcap"
	stop_agent INT
	said=$(python3 "$hung" said "$work/reports")
	echo "the first interval report holding the hang: the job silent $said periods"
	[ "$said" != none ] || fail "no interval report holds the hang"
	python3 -c "import sys; sys.exit(0 if $said <= 3.5 else 1)" ||
		fail "the hang said $said periods into the silence, not as it paged (3.5 or less)"
	;;
persist) # an agent restarted mid-replay with --persist loses no counts
	synth "$work/roce.pcap" --noise
	start_agent "$work/reports" --persist --tcp-gap 10000
	replay $nsa $vetha "$work/roce.pcap" --pps 20000 &
	replay_pid=$!
	sleep 0.7
	stop_agent TERM
	[ -e $pinsb/flows ] || fail "--persist left no pinned maps in $pinsb"
	ip -n $nsb link show $vethb | grep -q "prog/xdp" || fail "--persist left no XDP program"
	rm -f "$work"/reports/*.json
	# killed with -9 while holding the pins: its lock goes with it
	start_agent "$work/reports" --persist --tcp-gap 10000
	grep -q "continuing the pinned probe's counters" "$work/agent.err" ||
		fail "the second agent did not take over the pinned probe"
	kill -KILL $agent_pid
	wait $agent_pid
	agent_pid=
	start_agent "$work/reports" --tcp-gap 10000
	grep -q "continuing the pinned probe's counters" "$work/agent.err" ||
		fail "the agent after kill -9 did not take over the pinned probe"
	wait $replay_pid || fail "tcpreplay"
	replay_pid=
	stop_agent INT
	compare "$work/roce.pcap.gap.json" "$final"
	if [ -e $pinsb/flows ] || [ -e $pinsb ]; then
		fail "maps still pinned after a clean exit"
	fi
	if ip -n $nsb link show $vethb | grep -q "prog/xdp"; then
		fail "XDP still attached after a clean exit"
	fi
	if nsenter --net=/var/run/netns/$nsb tc filter show dev $vethb egress | grep -q ct_tc_egress; then
		fail "TC egress program still attached after a clean exit"
	fi
	;;
reuse) # the pins an agent left with --persist in a namespace since deleted are not
	# continued by an agent in a new namespace that has the same inode and ifindex
	synth "$work/roce.pcap" --noise
	start_agent "$work/reports" --persist
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	stop_agent TERM
	[ -e $pinsb/flows ] || fail "--persist left no pinned maps in $pinsb"
	stale=$pinsb
	old_ino=$(stat -L -c %i /var/run/netns/$nsb) old_if=${pinsb##*/}
	ip netns del $nsb # and with it both ends of the pair
	# the kernel frees a namespace's inode number a moment after its last
	# user: new namespaces until one gets it back (the lowest free number)
	for try in $(seq 50); do
		ip netns add $nsb || exit 1
		[ "$(stat -L -c %i /var/run/netns/$nsb)" = "$old_ino" ] && break
		[ $try = 50 ] && break # not reused in 10 s: go on with another number
		ip netns del $nsb
		sleep 0.2
	done
	make_pair "$old_if" # the same interface index, in the new namespace
	pinsb=$(pins_of $nsb $vethb)
	if [ "$pinsb" = "$stale" ]; then
		echo "reuse: the new namespace has the old one's inode and ifindex ($pinsb)"
	else
		echo "reuse: numbers not reused this time ($stale -> $pinsb)"
	fi
	rm -f "$work"/reports/*.json
	start_agent "$work/reports"
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	stop_agent INT
	cat "$work/agent.err"
	python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print('packets sent', a['capture']['packets'], 'reported', b['capture']['packets']); sys.exit(a['capture']['packets'] != b['capture']['packets'])" "$work/roce.pcap.json" "$final" ||
		fail "the agent in the new namespace counted packets it did not see"
	compare "$work/roce.pcap.json" "$final" --totals-only
	;;
stop) # the final report after SIGTERM within the shutdown deadline + 1 s, with
	# STOP_FLOWS one-packet RoCE flows (default 20,000; the issue's figure is
	# 200,000), STOP_RUNS stops (default 3; the issue's 20), STOP_DEADLINE
	# seconds (default 2: the issue's 10 s is for ten times the flows)
	flows=${STOP_FLOWS:-20000} runs=${STOP_RUNS:-3} deadline=${STOP_DEADLINE:-2}
	python3 - "$work/flows.pcap" "$flows" <<'PY'
import struct, sys
# one packet per flow (a destination QP of its own), 198.18.0.101 -> .102
out, n = open(sys.argv[1], "wb"), int(sys.argv[2])
out.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
for i in range(n):
    bth = struct.pack("!BBHII", 0x04, 0x40, 0xffff, (i + 16) & 0xffffff, i & 0xffffff)
    udp = struct.pack("!HHHH", 49152 + i % 16000, 4791, 8 + len(bth) + 68, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(bth) + 68, i & 0xffff, 0x4000, 64, 17, 0,
                     bytes([198, 18, 0, 101]), bytes([198, 18, 0, 102]))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    f = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + udp + bth + bytes(68)
    t = 1700000000 * 10**6 + i * 5
    out.write(struct.pack("<IIII", t // 10**6, t % 10**6, len(f), len(f)) + f)
PY
	worst=0
	for run in $(seq "$runs"); do
		rm -rf "$work/reports"
		start_agent "$work/reports" --interval 3600 --flows $((flows + flows / 4)) \
			--shutdown-deadline "$deadline"
		replay $nsa $vetha "$work/flows.pcap" --topspeed
		# the CPU time the stop took too: on a loaded machine the wall time
		# is mostly waiting for a core
		cpu_of() { awk '{print $14 + $15}' /proc/$agent_pid/stat 2>/dev/null; }
		cpu0=$(cpu_of) cpu1=$cpu0
		t0=$(date +%s.%N)
		kill -TERM $agent_pid
		while kill -0 $agent_pid 2>/dev/null; do
			c=$(cpu_of)
			[ -n "$c" ] && cpu1=$c
			sleep 0.05
		done
		wait $agent_pid
		rc=$?
		t1=$(date +%s.%N)
		agent_pid=
		[ $rc = 0 ] || { cat "$work/agent.err"; fail "agent exit status $rc after SIGTERM"; }
		took=$(python3 -c "print('%.2f' % ($t1 - $t0))")
		cpu=$(python3 -c "import os; print('%.2f' % (($cpu1 - $cpu0) / os.sysconf('SC_CLK_TCK')))")
		python3 -c "import json,sys; r=json.load(open(sys.argv[1])); n=len(r['flows']); print('stop %s: %d flows, the final report %s s after SIGTERM (%s s of CPU)%s' % (sys.argv[2], n, sys.argv[3], sys.argv[5], ', cut short' if 'analysis_cut_short' in r else '')); sys.exit(n < int(sys.argv[4]) * 0.99)" \
			"$final" "$run" "$took" "$flows" "$cpu" || fail "the final report lacks flows"
		worst=$(python3 -c "print(max($worst, $took))")
	done
	python3 -c "import sys; sys.exit($worst > $deadline + 1)" ||
		fail "the slowest stop took $worst s, over the deadline ($deadline s) + 1 s"
	echo "slowest of $runs stops: $worst s (deadline $deadline s)"
	;;
ring) # a tiny ring overflows: drops counted, totals and flows still exact
	synth "$work/roce.pcap" --noise
	start_agent "$work/reports" --ring-kib 4 --interval 30 --tcp-gap 10000
	# a stalled reader (stopped during the replay) overflows the ring however
	# fast this machine drains it
	kill -STOP $agent_pid
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	kill -CONT $agent_pid
	stop_agent INT
	compare "$work/roce.pcap.gap.json" "$final"
	python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['host']['probe']; print('ring drops', p['ring_drops']); sys.exit(p['ring_drops'] == 0)" "$final" ||
		fail "no ring-buffer drops reported with a 4 KiB ring"
	;;
lru) # a tiny flow table: evictions reported, totals exact
	synth "$work/roce.pcap" --noise
	start_agent "$work/reports" --flows 16
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	stop_agent INT
	compare "$work/roce.pcap.json" "$final" --totals-only
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); p=r['host']['probe']; print('evictions', p['evictions'], 'inserted', p['flows_inserted']); sys.exit(not (p['evictions'] > 0 and r['engine']['evicted_full'] == p['evictions'] and sum(f['packets'] for f in r['flows']) <= r['capture']['packets']))" "$final" ||
		fail "no evictions reported with 16 entries for 76 flows"
	;;
gpu) # rings the NCCL profiler plugin wrote, joined in the final report
	[ -x "${GPU_RINGS:-}" ] && [ -r "${NCCL_PLUGIN:-}" ] || skip "no ring writer or plugin"
	mkdir -p "$work/rings"
	COMMTAP_GPU_RING_DIR="$work/rings" COMMTAP_GPU_RING_KEEP=1 "$GPU_RINGS" "$NCCL_PLUGIN" >"$work/rings.out" 2>&1 ||
		{ cat "$work/rings.out"; fail "the plugin wrote no rings"; }
	synth "$work/roce.pcap" --noise
	start_agent "$work/reports" --gpu "$work/rings"
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	stop_agent INT
	grep -q "GPU rings in $work/rings joined" "$work/agent.err" ||
		{ cat "$work/agent.err"; fail "the agent did not join the rings"; }
	python3 - "$final" <<'PY' || fail "the final report's gpu section"
import json, sys
gpu = json.load(open(sys.argv[1]))["gpu"]
comms = {c["comm"]: c for c in gpu["communicators"]}
print("gpu: %d ring(s), %d dropped, communicators %s" % (gpu["rings"], gpu["records_dropped"],
      {h: (c["class"], c["nranks"], c["collectives"]) for h, c in comms.items()}))
assert gpu["schema"] == "commtap.gpu/v1" and gpu["rings"] >= 1 and gpu["records_dropped"] == 0
assert comms["0xd0d0"]["collectives"] == 6 and comms["0x7070"]["collectives"] == 6
assert comms["0x7070"]["class"] == "TP", "a communicator inside one node is TP"
assert "clocks" in gpu and "sync" in gpu["clocks"]
PY
	# the labels beside the report load in analyze
	"$commtap" analyze --labels "$work/reports/commtap-labels.json" --json "$work/labels-check.json" \
		"$work/roce.pcap" || fail "commtap analyze rejects the agent's labels"
	;;
gpujunk) # rings the agent cannot read, beside one without records: skipped and
	# counted, the run ends well (a job of no operations passed NULL to qsort:
	# UBSan in the sanitizer build), the readable ring of an ended process removed
	mkdir -p "$work/rings"
	python3 - "$work/rings" <<'PY'
import struct, sys
d = sys.argv[1]
def ring(version=1, size=None, pid=4194305):  # above any pid_max: a process that has ended
    hdr = struct.pack("<QIIIIIIIIiI", 0x31524750544d4d43, version, 4096, 128, 64, 1, 64, 1, 1, pid, 0)
    data = hdr.ljust(4096 + 64 * 128, b"\0")
    return data[:size] if size is not None else data
open(d + "/commtap-nccl.11", "wb").close()                               # empty
open(d + "/commtap-nccl.12", "wb").write(ring(version=2))                # another version
open(d + "/commtap-nccl.13", "wb").write(ring(size=4096 + 100))          # truncated
open(d + "/commtap-nccl.14", "wb").write(ring())                         # no records
PY
	synth "$work/roce.pcap"
	start_agent "$work/reports"
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	stop_agent INT
	cat "$work/agent.err"
	grep -q "3 GPU ring file(s) skipped" "$work/agent.err" || fail "the bad rings are not counted"
	grep -q "runtime error" "$work/agent.err" && fail "undefined behaviour"
	[ -e "$work/rings/commtap-nccl.14" ] && fail "the read ring of an ended process is still there"
	[ -e "$work/rings/commtap-nccl.12" ] || fail "a ring the agent could not read was removed"
	;;
errors) # the loader's error paths
	out=$(in_b "$commtap" agent --pin-root "$pinroot" --iface nosuch$id --duration 1 2>&1) && fail "agent accepted a missing interface"
	echo "$out" | grep -q "no such interface: nosuch$id" || fail "unclear error: $out"
	ip -n $nsb link set dev $vethb xdpgeneric obj "$empty_obj" sec xdp || fail "cannot attach the foreign program"
	out=$(in_b "$commtap" agent --pin-root "$pinroot" --iface $vethb --duration 1 --report-dir "$work" 2>&1) &&
		fail "agent replaced someone else's XDP program"
	echo "$out" | grep -q "already attached by someone else" || fail "unclear error: $out"
	ip -n $nsb link show $vethb | grep -q "name ct_empty" || fail "the foreign program is gone"
	ip -n $nsb link set dev $vethb xdpgeneric off
	if command -v setpriv >/dev/null; then
		out=$(in_b setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$commtap" agent --pin-root "$pinroot" --iface $vethb --duration 1 --report-dir /tmp 2>&1) &&
			fail "agent ran without privileges"
		echo "$out" | grep -q "missing capability CAP_BPF" || fail "unclear error: $out"
	fi
	# maps pinned by a probe of another layout (an older agent's --persist) are
	# refused, never misread: version 1 had one 40-byte-key flow map and no abi pin
	if command -v bpftool >/dev/null; then
		pins=$pinsb
		mkdir -p $pins
		bpftool map create $pins/flows type lru_hash key 40 value 176 entries 64 name ctp_flows ||
			fail "bpftool cannot pin a map"
		out=$(in_b "$commtap" agent --pin-root "$pinroot" --iface $vethb --duration 1 --report-dir "$work" 2>&1) &&
			fail "agent continued maps of another layout"
		echo "$out" | grep -q "has map layout version 1, this agent reads version" ||
			fail "unclear error: $out"
		rm -f $pins/flows
		bpftool map create $pins/abi type array key 4 value 4 entries 1 name ctp_abi &&
			bpftool map update pinned $pins/abi key 0 0 0 0 value 99 0 0 0 ||
			fail "bpftool cannot pin the abi map"
		out=$(in_b "$commtap" agent --pin-root "$pinroot" --iface $vethb --duration 1 --report-dir "$work" 2>&1) &&
			fail "agent continued maps of another layout"
		echo "$out" | grep -q "has map layout version 99" || fail "unclear error: $out"
		echo "refused: $out"
		rm -rf $pins
	fi
	echo "errors: as expected"
	;;
twins) # two namespaces, one interface name: each agent its own pins and flows
	nsc=ctC$id nsd=ctD$id
	ip netns add $nsc && ip netns add $nsd || fail "cannot create more namespaces"
	# ctD's end has the name of ctB's interface
	ip link add ctc$id netns $nsc type veth peer name $vethb netns $nsd ||
		fail "cannot create a second veth pair"
	for pair in $nsc:ctc$id $nsd:$vethb; do
		ip netns exec ${pair%%:*} sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
		ip -n ${pair%%:*} link set ${pair#*:} mtu 9000 up || exit 1
	done
	twins=$(pins_of $nsd $vethb)
	[ "$twins" != "$pinsb" ] || fail "both namespaces map to $pinsb"
	synth "$work/roce.pcap" --noise
	synth "$work/tcp.pcap" --transport tcp
	start_agent "$work/reports" --tcp-gap 10000
	mkdir -p "$work/reports-d"
	nsenter --net=/var/run/netns/$nsd "$commtap" agent --pin-root "$pinroot" --iface $vethb --interval 0.5 \
		--report-dir "$work/reports-d" --tcp-gap 10000 2>"$work/agent-d.err" &
	agent2_pid=$!
	for _ in $(seq 100); do
		grep -q "commtap agent: watching" "$work/agent-d.err" && break
		kill -0 $agent2_pid 2>/dev/null || { cat "$work/agent-d.err"; fail "the agent in $nsd exited"; }
		sleep 0.1
	done
	grep -q "continuing the pinned probe" "$work/agent-d.err" &&
		fail "the agent in $nsd took over the probe of $nsb"
	[ -e $pinsb/flows ] && [ -e $twins/flows ] || fail "pins missing: $pinsb, $twins"
	# a second agent on the same interface of the same namespace is refused
	out=$(in_b "$commtap" agent --pin-root "$pinroot" --iface $vethb --duration 1 --report-dir "$work" 2>&1) &&
		fail "a second agent on $vethb in $nsb ran beside the first"
	echo "$out" | grep -q "another commtap agent is running on this interface" ||
		fail "unclear error: $out"
	echo "refused: $out"
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	replay $nsc ctc$id "$work/tcp.pcap"
	stop_agent INT
	kill -INT $agent2_pid
	wait $agent2_pid || { cat "$work/agent-d.err"; fail "the agent in $nsd failed"; }
	agent2_pid=
	compare "$work/roce.pcap.gap.json" "$final" --fields packets,bytes,messages,message_bytes,msg_size_hist,cnp,ecn_ce,retransmits
	compare "$work/tcp.pcap.gap.json" "$work/reports-d/commtap-report-final.json" --fields packets,bytes,messages,message_bytes,retransmits
	[ -e $pinsb ] || [ -e $twins ] && fail "pins left after clean exits"
	echo "twins: each agent reported its own namespace's flows"
	;;
user) # least privilege: the reader drops to an ordinary user with no capability
	getent passwd nobody >/dev/null || skip "there is no user nobody"
	uid=$(id -u nobody) gid=$(id -g nobody)
	synth "$work/roce.pcap" --noise
	chmod 0711 "$work" # nobody reaches its report directory, nothing else
	mkdir -p "$work/reports" && chown nobody:$gid "$work/reports"
	# an unknown user is refused before anything is attached
	out=$(in_b "$commtap" agent --pin-root "$pinroot" --iface $vethb --duration 1 --user nosuch$id \
		--report-dir "$work/reports" 2>&1) && fail "agent accepted --user nosuch$id"
	echo "$out" | grep -q "no such user" || fail "unclear error: $out"
	ip -n $nsb link show $vethb | grep -q "prog/xdp" && fail "XDP attached for an unknown user"
	# a report directory the user cannot write: the reader says so, the root process detaches
	mkdir -p "$work/rootonly"
	out=$(in_b "$commtap" agent --pin-root "$pinroot" --iface $vethb --duration 1 --user nobody \
		--report-dir "$work/rootonly" 2>&1) && fail "agent ran with a report dir nobody cannot write"
	echo "$out" | grep -q "report-dir $work/rootonly: Permission denied as user nobody" ||
		fail "unclear error: $out"
	ip -n $nsb link show $vethb | grep -q "prog/xdp" && fail "XDP left attached after the reader failed"
	[ -e $pinsb ] && fail "pins left after the reader failed"

	ip -n $nsb link set lo up
	start_agent "$work/reports" --tcp-gap 10000 --user nobody --listen 127.0.0.1:9465
	reader=$(sed -n 's/.*reading as user nobody (uid [0-9]*, pid \([0-9]*\)).*/\1/p' "$work/agent.err")
	[ -n "$reader" ] || { cat "$work/agent.err"; fail "the agent names no reader"; }
	st=/proc/$reader/status
	grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|PPid):' $st | tr '\t' ' '
	grep -Eq "^Uid:\s+$uid\s+$uid\s+$uid\s+$uid$" $st || fail "the reader's uid is not $uid"
	grep -Eq "^Gid:\s+$gid\s+$gid\s+$gid\s+$gid$" $st || fail "the reader's gid is not $gid"
	for set in CapInh CapPrm CapEff CapBnd CapAmb; do
		grep -Eq "^$set:\s+0+$" $st || fail "the reader keeps capabilities ($set)"
	done
	grep -Eq '^NoNewPrivs:\s+1$' $st || fail "the reader lacks no_new_privs"
	grep -Eq "^PPid:\s+$agent_pid$" $st || fail "the reader is not the agent's child"
	# not dumpable (no ptrace by nobody's other processes): its /proc files stay root's
	[ "$(stat -c %u /proc/$reader/mem)" = 0 ] || fail "the reader is dumpable"
	grep -Eq '^Uid:\s+0\s' /proc/$agent_pid/status || fail "the detaching process is not root"
	# the /metrics server runs in the reader: no thread of the root process listens
	ls /proc/$agent_pid/task | wc -l | grep -qx 1 || fail "the root process runs threads"
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	# an interval report (every 0.5 s) after the replay: within 10 s on a loaded machine
	# (before the first report /metrics has nothing to serve)
	for _ in $(seq 40); do
		sleep 0.25
		in_b curl -sf http://127.0.0.1:9465/metrics >"$work/metrics.txt" &&
			grep -Eq '^commtap_packets_total [1-9]' "$work/metrics.txt" && break
	done
	grep -Eq '^commtap_packets_total [1-9]' "$work/metrics.txt" ||
		fail "no /metrics with the replayed packets from the unprivileged reader in 10 s"
	stop_agent INT
	compare "$work/roce.pcap.gap.json" "$final" --fields packets,bytes,messages,message_bytes,msg_size_hist,cnp,ecn_ce,retransmits
	ls -ln "$work/reports"
	others=$(find "$work/reports" -mindepth 1 ! -uid $uid)
	[ -z "$others" ] || fail "report files not owned by nobody: $others"
	[ -n "$(find "$work/reports" -name 'commtap-report-0*.json' -uid $uid)" ] ||
		fail "no interval report written by nobody"
	ip -n $nsb link show $vethb | grep -q "prog/xdp" && fail "XDP still attached after a clean exit"
	in_b tc filter show dev $vethb egress | grep -q ct_tc_egress &&
		fail "TC egress program still attached after a clean exit"
	[ -e $pinsb ] && fail "maps still pinned after a clean exit"

	# without --user: the report directory's owner; kill -9 of the root process takes the reader along
	start_agent "$work/reports" --persist
	grep -q "reading as user nobody" "$work/agent.err" ||
		{ cat "$work/agent.err"; fail "the agent did not drop to the report directory's owner"; }
	reader=$(sed -n 's/.*reading as user nobody (uid [0-9]*, pid \([0-9]*\)).*/\1/p' "$work/agent.err")
	kill -KILL $agent_pid
	wait $agent_pid
	agent_pid=
	for _ in $(seq 50); do
		kill -0 $reader 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $reader 2>/dev/null && fail "the reader outlived its root process"
	start_agent "$work/reports" --user root
	grep -q "continuing the pinned probe's counters" "$work/agent.err" ||
		fail "the agent after kill -9 did not take over the pinned probe"
	grep -q "running as root throughout (--user root)" "$work/agent.err" ||
		fail "--user root did not keep root: $(cat "$work/agent.err")"
	stop_agent TERM
	[ -e $pinsb ] && fail "maps still pinned after a clean exit"
	echo "user: the reader ran as nobody without capabilities and reported its flows"
	;;
jobname) # each flow's job from the environment of the process that owns its socket
	tcp_job_scripts
	ip -n $nsa link set lo up
	ip netns exec $nsa python3 "$server" 198.18.0.101 29511 &
	replay_pid=$!
	sleep 0.5
	start_agent "$work/reports" --user root
	# a torchrun-like launch: the rendezvous is in the environment of every rank
	in_b env -i PATH="$PATH" MASTER_ADDR=198.18.0.101 MASTER_PORT=29500 \
		python3 "$client" 198.18.0.101 29511 || fail "the client could not send"
	stop_agent TERM
	# the name the agent gave the sender's flows in the commtap-job-labels.json
	# beside the report (the naming itself); where it wrote none, the name of
	# the report's first job that has flows ("-" unnamed), or "no job". A
	# loaded run may find no period, or a job of no flows (a period read
	# from bursts it could not place): the report's jobs are the periodicity's.
	job_name() {
		python3 -c 'import json, os, sys
jobs = [j for j in json.load(open(sys.argv[1])).get("jobs", []) if j.get("flows", 0) > 0]
print(jobs, file=sys.stderr)
labels = os.path.join(os.path.dirname(sys.argv[1]), "commtap-job-labels.json")
names = set()
if os.path.exists(labels):
    names = {f["job"] for f in json.load(open(labels))["flows"] if 29511 in (f["sport"], f["dport"])}
if len(names) == 1:
    name = names.pop()
    # the report agrees where its job carries the name at all
    named = {j["name"] for j in jobs if j.get("name")}
    print(name if not named or name in named else "report: %s" % sorted(named))
elif jobs:
    print(jobs[0].get("name", "-"))
else:
    print("no job")' "$1"
	}
	got=$(job_name "$final")
	[ "$got" = torch:198.18.0.101:29500 ] ||
		fail "the job is named \"$got\", not from its process's environment"
	# the names beside the reports, as labels other probes read
	python3 -c 'import json, sys
l = json.load(open(sys.argv[1]))
named = [f for f in l["flows"] if f["job"] == "torch:198.18.0.101:29500" and 29511 in (f["sport"], f["dport"])]
sys.exit(0 if l["schema"] == "commtap.labels/v1" and len(named) == 2 else 1)' \
		"$work/reports/commtap-job-labels.json" ||
		fail "commtap-job-labels.json does not name both directions: $(cat "$work/reports/commtap-job-labels.json")"
	synth "$work/any.pcap"
	"$commtap" analyze --labels "$work/reports/commtap-job-labels.json" --json "$work/any.json" \
		"$work/any.pcap" || fail "commtap analyze does not read the agent's job labels"
	# --no-job-names: not named
	start_agent "$work/reports2" --user root --no-job-names
	in_b env -i PATH="$PATH" SLURM_JOB_ID=4242 python3 "$client" 198.18.0.101 29511 ||
		fail "the client could not send"
	stop_agent TERM
	got=$(job_name "$work/reports2/commtap-report-final.json")
	# no name, and no names beside the reports (a loaded machine may find
	# no period in this short run: then there is no job to name at all)
	[ "$got" = - ] || [ "$got" = "no job" ] || fail "--no-job-names: the job is named \"$got\""
	[ ! -e "$work/reports2/commtap-job-labels.json" ] ||
		fail "--no-job-names: the agent wrote commtap-job-labels.json"
	# SLURM_JOB_ID first
	start_agent "$work/reports3" --user root
	in_b env -i PATH="$PATH" SLURM_JOB_ID=4242 MASTER_ADDR=198.18.0.101 MASTER_PORT=29500 \
		python3 "$client" 198.18.0.101 29511 || fail "the client could not send"
	stop_agent TERM
	got=$(job_name "$work/reports3/commtap-report-final.json")
	[ "$got" = slurm:4242 ] || fail "SLURM_JOB_ID does not name the job: \"$got\""
	echo "jobname: the job named from its process's environment"
	;;
kubejob) # a process in a pod's cgroup: named by its pod, or by its training operator's job
	tcp_job_scripts
	# cgroup v2, and a cgroup of ours to make the kubelet's tree under
	v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	[ -n "$v2" ] || skip "no cgroup v2 hierarchy is mounted"
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	cgtest=$v2${own%/}/commtap-test-$id
	mkdir "$cgtest" 2>/dev/null || { cgtest=; skip "cannot create a cgroup under $v2$own (no delegation)"; }
	# two pods as a kubelet makes them: systemd driver (UID's dashes as
	# underscores) and cgroupfs driver, each with its container under it
	uid1=0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f01 uid2=5f7a9c3d-2b1e-4f60-8d47-a1c9e0b2d302
	pod1=$cgtest/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$(echo $uid1 | tr - _).slice/cri-containerd-1.scope
	pod2=$cgtest/kubepods/besteffort/pod$uid2/c0ffee
	mkdir -p "$pod1" "$pod2" || fail "cannot create the pods' cgroups"
	pods=$work/pods
	mkdir -p "$pods/ml-team_train-a-worker-1_$uid1/trainer" "$pods/ml-team_solo-0_$uid2/trainer" \
		"$pods/other_train-a-worker-1_0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f99"
	ip -n $nsa link set lo up
	for port in 29511 29512; do
		ip netns exec $nsa python3 "$server" 198.18.0.101 $port &
		servers="$servers $!"
	done
	sleep 0.5
	start_agent "$work/reports" --user root --pod-log-root "$pods"
	# in_pod CGROUP PORT ENV...: the client, moved into the pod's cgroup before it runs
	in_pod() {
		cg=$1 port=$2
		shift 2
		in_b env -i PATH="$PATH" "$@" sh -c 'echo $$ >"$0/cgroup.procs" && exec python3 "$1" "$2" "$3"' \
			"$cg" "$client" 198.18.0.101 $port
	}
	# a Kubeflow PyTorchJob's worker (the training operator's MASTER_ADDR) and a lone pod
	in_pod "$pod1" 29511 MASTER_ADDR=train-a-master-0 MASTER_PORT=23456 RANK=1 &
	p1=$!
	in_pod "$pod2" 29512 MASTER_ADDR=198.18.0.101 MASTER_PORT=29500 || fail "the lone pod's client could not send"
	wait $p1 || fail "the PyTorchJob's client could not send"
	stop_agent TERM
	python3 -c 'import json, sys
l = json.load(open(sys.argv[1]))
names = {}
for f in l["flows"]:
    for port in (29511, 29512):
        if port in (f["sport"], f["dport"]):
            names.setdefault(port, set()).add(f["job"])
print(names)
want = {29511: {"pytorchjob:ml-team/train-a"}, 29512: {"pod:ml-team/solo-0"}}
sys.exit(0 if names == want else 1)' "$work/reports/commtap-job-labels.json" ||
		fail "the pods' flows are not named by their pods: $(cat "$work/reports/commtap-job-labels.json")"
	# the report's jobs carry those names (where the run found their periods)
	python3 -c 'import json, sys
jobs = [j for j in json.load(open(sys.argv[1])).get("jobs", []) if j.get("flows", 0) > 0]
names = {j.get("name") for j in jobs}
print(names)
sys.exit(0 if names <= {"pytorchjob:ml-team/train-a", "pod:ml-team/solo-0"} and
         (not jobs or names & {"pytorchjob:ml-team/train-a", "pod:ml-team/solo-0"}) else 1)' "$final" ||
		fail "the report names its jobs otherwise"
	echo "kubejob: the pods' jobs named from their cgroups and the pod log root"
	;;
unitsandbox) # the shipped unit's sandbox: its CapabilityBoundingSet and NoNewPrivileges are enough
	unit=$(dirname "$0")/../../packaging/systemd/commtap-agent.service.in
	[ -r "$unit" ] || fail "no unit at $unit"
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	getent passwd nobody >/dev/null || skip "there is no user nobody"
	grep -qx 'NoNewPrivileges=yes' "$unit" || fail "the unit does not set NoNewPrivileges"
	# CAP_BPF CAP_NET_ADMIN ... as setpriv's -all,+bpf,+net_admin,...
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
	[ -n "$caps" ] || fail "the unit has no CapabilityBoundingSet"
	echo "the unit's bounding set: $caps"
	synth "$work/roce.pcap" --noise
	chmod 0711 "$work"
	mkdir -p "$work/reports" && chown nobody "$work/reports"
	ip -n $nsb link set lo up
	# what systemd does with those lines: no_new_privs, and a bounding set
	# that is all root's exec keeps (its permitted and effective sets)
	in_sandbox() { # bounding set, agent options...
		bset=$1
		shift
		nsenter --net=/var/run/netns/$nsb setpriv --no-new-privs --bounding-set "-all,$bset" \
			"$commtap" agent --pin-root "$pinroot" --iface $vethb --interval 0.5 "$@"
	}
	# the control: without CAP_NET_ADMIN the agent cannot attach, and says so
	out=$(in_sandbox "$(echo "$caps" | sed 's/+net_admin,\{0,1\}//')" --duration 1 --user nobody \
		--report-dir "$work/reports" 2>&1) && fail "the agent ran without CAP_NET_ADMIN: $out"
	echo "without CAP_NET_ADMIN: $(echo "$out" | tail -1)"
	ip -n $nsb link show $vethb | grep -q "prog/xdp" && fail "XDP attached without CAP_NET_ADMIN"
	# the unit's set: attach, drop to nobody, report, detach on SIGTERM
	: >"$work/agent.err"
	# nsenter and setpriv exec: $! is the agent itself, which the signals reach
	nsenter --net=/var/run/netns/$nsb setpriv --no-new-privs --bounding-set "-all,$caps" \
		"$commtap" agent --pin-root "$pinroot" --iface $vethb --interval 0.5 --report-dir "$work/reports" \
		--user nobody 2>"$work/agent.err" &
	agent_pid=$!
	for _ in $(seq 100); do
		grep -q "commtap agent: watching" "$work/agent.err" && break
		kill -0 $agent_pid 2>/dev/null || { cat "$work/agent.err"; fail "the agent exited in the unit's sandbox"; }
		sleep 0.1
	done
	grep -q "reading as user nobody" "$work/agent.err" || { cat "$work/agent.err"; fail "no drop to nobody"; }
	# nothing the agent does in the full set is refused in the unit's (but
	# libxdp's dispatcher where the kernel refuses it to root too: its notice)
	grep -i "not permitted\|permission denied" "$work/agent.err" | grep -v "multi-program dispatcher" &&
		fail "the agent was refused something in the unit's sandbox"
	replay $nsa $vetha "$work/roce.pcap" --topspeed
	sleep 1
	# KillMode=mixed: SIGTERM to the root process, which passes it on
	stop_agent TERM
	[ -s "$final" ] || fail "no final report in the unit's sandbox"
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r.get("flows") else 1)' "$final" || fail "the final report has no flows"
	ip -n $nsb link show $vethb | grep -q "prog/xdp" && fail "XDP left attached after SIGTERM"
	echo "unitsandbox: the agent attaches, drops, reports and detaches within the unit's bounding set"
	;;
*)
	fail "unknown case $case_"
	;;
esac
exit 0
