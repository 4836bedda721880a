#!/bin/sh
# The memory and time figures of docs/performance.md (issue 24): commtap
# analyze OUTPUT of a capture of FLOWS distinct one-packet RoCE flows
# (test/cli/many_flows.py), RUNS times: wall seconds and maximum RSS
# (/usr/bin/time), their medians, then the smallest address-space limit
# (ulimit -v, found by bisection to 8 MiB) under which it still succeeds:
# exit 0 and nothing on stderr (out of memory in the slow path drops a part
# of the report with a warning and may still exit 0).
#
#   scripts/memory_budget.sh COMMTAP FLOWS [RUNS] [OUTPUT...]
#   scripts/memory_budget.sh build/cli/commtap 2000000 3 --json
# OUTPUT: --json (default), --lines, or any analyze options; a file in a
# temporary directory is named after --json/--lines.
set -eu
commtap=$1 flows=$2 runs=${3:-3}
shift 2
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- --json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$(dirname "$0")
python3 "$here/../test/cli/many_flows.py" "$flows" "$tmp/flows.pcap"
args=""
for a in "$@"; do
	case $a in
	--json | --lines) args="$args $a $tmp/out" ;;
	*) args="$args $a" ;;
	esac
done
echo "commtap analyze$args (capture of $flows flows)"
i=0
while [ $i -lt "$runs" ]; do
	/usr/bin/time -f "%e %M" -o "$tmp/t" "$commtap" analyze $args "$tmp/flows.pcap" 2>/dev/null
	read -r s kb <"$tmp/t"
	echo "run $((i + 1)): $s s, max RSS $((kb / 1024)) MiB"
	echo "$s $kb" >>"$tmp/all"
	i=$((i + 1))
done
sort -n "$tmp/all" | awk -v n="$runs" 'NR == int((n + 1) / 2) { printf "median: %s s,", $1 }'
cut -d' ' -f2 "$tmp/all" | sort -n |
	awk -v n="$runs" 'NR == int((n + 1) / 2) { printf " max RSS %d MiB\n", $1 / 1024 }'
# smallest ulimit -v (MiB) that succeeds, between lo (fails) and hi (succeeds)
lo=16 hi=65536
while [ $((hi - lo)) -gt 8 ]; do
	mid=$(((lo + hi) / 2))
	if (ulimit -v $((mid * 1024)) && "$commtap" analyze $args "$tmp/flows.pcap") \
		>/dev/null 2>"$tmp/err" && ! [ -s "$tmp/err" ]; then
		hi=$mid
	else
		lo=$mid
	fi
done
echo "smallest ulimit -v that succeeds: $hi MiB (fails at $lo MiB)"
