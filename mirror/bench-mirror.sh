#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmark of commtap-mirror on net_pcap infinite_rx replays of `commtap bench`'s
# stream: 128-byte copies of 4 KiB-MTU RDMA WRITEs over 10,000 QPs (64 sending at
# once, ACKs on the reverse flows: 20,000 flows). Per run, side by side:
#   1 worker:  bare (receive and free) and engine, one rx_pcap with every QP;
#   2 workers: bare and engine, each worker on its own queue (two rx_pcap files,
#              each QP whole in one of them, as symmetric RSS would split them),
#              the main lcore sharing a CPU with the second worker.
# Prints Mpps per core by the wall clock and per second of CPU the worker got (on
# a shared machine the second is the one that compares), the engine's ns/packet,
# and the 2-worker/1-worker ratio. net_pcap's infinite_rx holds the whole capture
# in mbufs: the pool is sized to it, with small mbufs (--mbuf-data).
# FEED ring instead feeds the workers through --bench-ring: the same captures
# as mbufs built once, enqueued again and again by a generator lcore (the last
# one, sharing the main lcore's CPU) through a ring PMD, so that bare is the
# PMD's floor and engine the engine's cost, without net_pcap's copy.
# usage: bench-mirror.sh BUILD-DIR [SECONDS] [RUNS] [PACKETS] [FEED: pcap|ring]
set -eu
build=${1:-build} secs=${2:-4} runs=${3:-3} packets=${4:-400000} feed=${5:-pcap}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/cli/commtap" bench --packets "$packets" --qps 10000 --pcap "$tmp/all.pcap"
"$build/cli/commtap" bench --packets "$packets" --qps 10000 --pcap "$tmp/q0.pcap" --pcap "$tmp/q1.pcap"
mbufs=$((packets + 16384))
run() { # lcores rx_pcap-args mode-flags...
	local lcores=$1 pcaps=$2 files
	shift 2
	if [ "$feed" = ring ]; then
		files=$(echo "$pcaps" | sed 's/rx_pcap=//g')
		"$build/mirror/commtap-mirror" --no-huge -m 1536 --no-pci --lcores "$lcores,9@1" \
			--file-prefix "ct-bench-$$" -- --bench-ring "$files" \
			--duration "$secs" --bench --mbuf-data 256 "$@" 2>/dev/null |
			grep '^worker [0-9]* (lcore'
		return
	fi
	"$build/mirror/commtap-mirror" --no-huge -m 1536 --no-pci --lcores "$lcores" \
		--file-prefix "ct-bench-$$" --vdev "net_pcap0,${pcaps},infinite_rx=1" -- \
		--duration "$secs" --bench --mbufs "$mbufs" --mbuf-data 256 "$@" 2>/dev/null |
		grep '^worker [0-9]* (lcore'
}
# one line per run and setup: setup mode workers wall-Mpps-sum cpu-Mpps-sum engine-ns-mean
summarize() { # setup mode
	awk -v setup="$1" -v mode="$2" '
		{ for (i = 1; i <= NF; i++) {
			if ($(i + 1) == "Mpps," || ($(i + 1) == "Mpps" && $(i + 2) != "per")) wall += $i
			if ($(i + 1) == "Mpps" && $(i + 2) == "per") cpu += $i
			if ($(i + 1) == "ns/packet,") { ns += $i; nn++ } } n++ }
		END { printf "%s %s %d %.2f %.2f %.1f\n", setup, mode, n, wall, cpu, nn ? ns / nn : 0 }'
}
for i in $(seq "$runs"); do
	run 0@1,1@0 "rx_pcap=$tmp/all.pcap" --bare | summarize 1w bare
	run 0@1,1@0 "rx_pcap=$tmp/all.pcap" --json "$tmp/report.json" | summarize 1w engine
	run 0@1,1@0,2@1 "rx_pcap=$tmp/q0.pcap,rx_pcap=$tmp/q1.pcap" --bare | summarize 2w bare
	run 0@1,1@0,2@1 "rx_pcap=$tmp/q0.pcap,rx_pcap=$tmp/q1.pcap" --json "$tmp/report.json" |
		summarize 2w engine
done | tee "$tmp/all"
awk 'function med(key,  n, i, j, t, a) { n = split(v[key], a, " ");
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)] }
	{ k = $1 " " $2; v[k "w"] = v[k "w"] " " $4; v[k "c"] = v[k "c"] " " $5; v[k "n"] = v[k "n"] " " $6 }
	END {
		printf "medians of %d runs (wall clock / per CPU second, Mpps), fed by %s:\n", NR / 4, feed
		printf "  1 worker:  bare %.2f / %.2f, engine %.2f / %.2f (%.1f ns/packet in the engine)\n",
			med("1w barew"), med("1w barec"), med("1w enginew"), med("1w enginec"), med("1w enginen")
		printf "  2 workers: bare %.2f / %.2f, engine %.2f / %.2f in all (%.1f ns/packet)\n",
			med("2w barew"), med("2w barec"), med("2w enginew"), med("2w enginec"), med("2w enginen")
		printf "  engine, 2 workers / 1 worker: %.2fx by the wall clock, %.2fx per CPU second\n",
			med("2w enginew") / med("1w enginew"), med("2w enginec") / med("1w enginec")
	}' feed="$feed" "$tmp/all"
