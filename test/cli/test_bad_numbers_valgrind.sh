#!/bin/sh
# Every producer's bad numeric option, run under valgrind: one line naming the
# option and the value, exit 1, and no read of an uninitialised value (an
# earlier `commtap analyze --interval abc` read the number it failed to parse;
# the sanitizers do not see that, memcheck does).
#   test_bad_numbers_valgrind.sh COMMTAP [COMMTAP_MIRROR]
set -u
commtap=$1
mirror=${2:-}
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }
sample=$(dirname "$0")/../golden/captures/commtap_sample.pcap
passed=0 failed=0
# outputs named in a directory of the test's own, never a device (issue 33): none is written
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name option value expected-text command...
	name=$1 option=$2 value=$3 want=$4
	shift 4
	out=$(valgrind -q --error-exitcode=99 --track-origins=yes "$@" 2>&1)
	rc=$?
	lines=$(printf '%s\n' "$out" | grep -c .)
	if [ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && printf '%s' "$out" | grep -q -- "$want"; then
		echo "ok: $name: $out"
		passed=$((passed + 1))
	else
		echo "FAIL: $name: exit $rc, $lines lines (want exit 1, one line with '$want'):"
		printf '%s\n' "$out"
		failed=$((failed + 1))
	fi
}

check "analyze --interval abc" --interval abc "--interval: 'abc' is not a number" \
	"$commtap" analyze --interval abc --report-dir "$tmp" "$sample"
check "analyze --interval 0" --interval 0 "--interval: '0' is not a number" \
	"$commtap" analyze --interval 0 --report-dir "$tmp" "$sample"
check "analyze --memory lots" --memory lots "--memory: 'lots' is not a number" \
	"$commtap" analyze --memory lots "$sample"
check "analyze --window -1" --window -1 "--window: '-1' is not a number" \
	"$commtap" analyze --window -1 "$sample"
check "synth --scale abc" --scale abc "--scale: 'abc' is not a number" \
	"$commtap" synth --scale abc -o "$tmp/out" x.json
check "report --scale 0" --scale 0 "--scale: '0' is not a number" \
	"$commtap" report --scale 0 -o "$tmp/out" x.json
# counts are whole: 2.5 flows is refused, never truncated to 2
check "report --top-flows 2.5" --top-flows 2.5 "--top-flows: '2.5' is not a whole number" \
	"$commtap" report --top-flows 2.5 -o "$tmp/out" x.json
check "trace --flows 2.5" --flows 2.5 "--flows: '2.5' is not a whole number" \
	"$commtap" trace --flows 2.5 -o "$tmp/out" x.json
check "agent --flows 2.5" --flows 2.5 "--flows: '2.5' is not a whole number" \
	"$commtap" agent --flows 2.5 veth-none
check "merge --bogus" --bogus '' "unknown or incomplete option '--bogus'" \
	"$commtap" merge --bogus -o "$tmp/out" x.json
if [ -n "$mirror" ]; then
	# the mirror parses its options before the EAL starts
	check "commtap-mirror --interval abc" --interval abc "--interval: 'abc' is not a number" \
		"$mirror" -- --interval abc
	check "commtap-mirror --port 70000" --port 70000 "--port: '70000' is not a number" \
		"$mirror" -- --port 70000
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
