#!/bin/sh
# commtap analyze on broken and unusual input: clear one-line errors, the
# right exit status, and never a lost report for what was read.
#   test_analyze_input.sh COMMTAP SAMPLE.pcap
set -u
commtap=$1 sample=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passed=0

ok() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { fails=$((fails + 1)); echo "FAIL: $1"; }

# expect_status WHAT STATUS CMD...: run, check the exit status and that stderr
# is at most one line.
expect_status() {
	what=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$got" -ne "$want" ]; then
		fail "$what: exit $got, expected $want ($(cat "$tmp/err"))"
	elif [ "$lines" -gt 1 ]; then
		fail "$what: more than one line on stderr: $(cat "$tmp/err")"
	else
		ok "$what (exit $got${lines:+, }$(head -c 160 "$tmp/err"))"
	fi
}

expect_status "missing file" 1 "$commtap" analyze "$tmp/nope.pcap"
grep -q "nope.pcap" "$tmp/err" || fail "missing file: error does not name the file"

expect_status "no capture argument" 1 "$commtap" analyze
expect_status "unknown flag" 1 "$commtap" analyze --bogus "$sample"
expect_status "bad number" 1 "$commtap" analyze --memory lots "$sample"
expect_status "budget too small" 1 "$commtap" analyze --memory 0 "$sample"
expect_status "unknown command" 1 "$commtap" analyse "$sample"

printf 'this is not a capture file at all, just text\n' >"$tmp/text.pcap"
expect_status "not a capture" 1 "$commtap" analyze "$tmp/text.pcap"

# A pcap header with link type 101 (raw IP) and no packets.
printf '\324\303\262\241\002\000\004\000\000\000\000\000\000\000\000\000\377\377\000\000\145\000\000\000' >"$tmp/raw.pcap"
expect_status "non-Ethernet link type" 1 "$commtap" analyze "$tmp/raw.pcap"
grep -q "link type .*RAW" "$tmp/err" || fail "link type error does not name the link type"

# Header only: a valid, empty capture.
head -c 24 "$sample" >"$tmp/empty.pcap"
expect_status "empty capture" 0 "$commtap" analyze --lines "$tmp/empty.lines" "$tmp/empty.pcap"
grep -q "packets=0 .*flows=0 complete=yes" "$tmp/empty.lines" || fail "empty capture: wrong summary"

# Cut in the middle of a packet: exit 2, the report keeps what was read.
size=$(wc -c <"$sample")
head -c $((size / 2 + 7)) "$sample" >"$tmp/cut.pcap"
expect_status "truncated capture" 2 "$commtap" analyze --json "$tmp/cut.json" --lines "$tmp/cut.lines" "$tmp/cut.pcap"
grep -q "breaks off after packet" "$tmp/err" || fail "truncated capture: error does not say where"
if grep -q "complete=no" "$tmp/cut.lines" && grep -q '"complete":false' "$tmp/cut.json"; then
	read_pkts=$(sed -n 's/^# capture packets=\([0-9]*\) .*/\1/p' "$tmp/cut.lines")
	if [ "$read_pkts" -gt 100 ]; then ok "truncated capture: report of $read_pkts packets kept"; else fail "truncated capture: only $read_pkts packets"; fi
else
	fail "truncated capture: report not written or not marked incomplete"
fi

# Report destination that cannot be written.
expect_status "unwritable report" 1 "$commtap" analyze --json /nonexistent/dir/r.json "$sample"

# Flows evicted early (idle, or a table too small) are merged back: the same
# packets and bytes per flow as with room for all.
counts() { sed -n 's/^[0-9]* \(.*\) packets=\([0-9]*\) bytes=\([0-9]*\) .*/\1 \2 \3/p' "$1" | sort; }
"$commtap" analyze --lines "$tmp/full.lines" "$sample"
"$commtap" analyze --idle-timeout 0.000001 --lines "$tmp/idle.lines" "$sample"
"$commtap" analyze --memory 0.008 --json "$tmp/small.json" --lines "$tmp/small.lines" "$sample"
if [ "$(counts "$tmp/full.lines")" = "$(counts "$tmp/idle.lines")" ]; then
	ok "idle eviction keeps every flow's packets and bytes"
else
	fail "idle eviction changed per-flow counts"
fi
if [ "$(counts "$tmp/full.lines")" = "$(counts "$tmp/small.lines")" ] &&
	grep -q '"evicted_full":[1-9]' "$tmp/small.json"; then
	ok "a full table evicts ($(grep -o '"evicted_full":[0-9]*' "$tmp/small.json")) and keeps every flow's packets and bytes"
else
	fail "a full table lost counts or did not evict"
fi

# Interval reports: cumulative, written whole, the last no larger than the final one;
# one report per interval that has traffic (the sample's 20 ms hold 10 intervals of 2 ms,
# of which the iterations' bursts fill at least 4 after the first).
mkdir -p "$tmp/reports"
expect_status "interval reports" 0 "$commtap" analyze --interval 0.002 --report-dir "$tmp/reports" \
	--json "$tmp/final.json" "$sample"
n_reports=$(ls "$tmp/reports" | grep -c '^commtap-report-[0-9]*\.json$')
counts=$(for f in "$tmp/reports"/commtap-report-*.json; do
	sed -n 's/^ *"packets":\([0-9]*\),$/\1/p' "$f" | head -1
done)
final=$(sed -n 's/^ *"packets":\([0-9]*\),$/\1/p' "$tmp/final.json" | head -1)
if [ "$n_reports" -ge 4 ] && [ "$n_reports" -le 10 ] && [ "$(printf '%s\n' $counts | sort -n | tr '\n' ' ')" = "$(printf '%s\n' $counts | tr '\n' ' ')" ] &&
	[ "$(printf '%s\n' $counts | tail -1)" -le "$final" ] && ! ls "$tmp/reports" | grep -q tmp; then
	ok "$n_reports interval reports, packet counts rising to at most the final $final"
else
	fail "interval reports: $n_reports files, counts $counts, final $final"
fi
# A capture with a one-hour gap: one interval report covers the gap, not one per empty second.
if command -v editcap >/dev/null && command -v mergecap >/dev/null; then
	mkdir -p "$tmp/gap"
	editcap -t 3600 "$sample" "$tmp/later.pcap" && mergecap -w "$tmp/gap.pcap" "$sample" "$tmp/later.pcap"
	expect_status "capture with a gap" 0 timeout 60 "$commtap" analyze --interval 1 \
		--report-dir "$tmp/gap" --json "$tmp/gap.json" "$tmp/gap.pcap"
	n_gap=$(ls "$tmp/gap" | grep -c '^commtap-report-[0-9]*\.json$')
	if [ "$n_gap" -eq 1 ] && grep -q '"kind":"interval"' "$tmp/gap"/commtap-report-000000.json; then
		ok "a one-hour gap at --interval 1 gives 1 interval report"
	else
		fail "a one-hour gap at --interval 1 gave $n_gap interval reports (want 1)"
	fi
else
	echo "skip: editcap/mergecap missing: no gap case"
fi
expect_status "interval too short" 1 "$commtap" analyze --interval 1e-9 --report-dir "$tmp" "$sample"
expect_status "interval without a report dir" 1 "$commtap" analyze --interval 1 "$sample"
expect_status "unwritable report dir" 1 "$commtap" analyze --interval 1 --report-dir /nonexistent "$sample"
expect_status "interval of zero" 1 "$commtap" analyze --interval 0 --report-dir "$tmp" "$sample"

# pcapng and microsecond pcap give the same flows as the nanosecond pcap.
if command -v editcap >/dev/null; then
	"$commtap" analyze --lines "$tmp/ns.lines" "$sample"
	editcap -F pcapng "$sample" "$tmp/s.pcapng" && "$commtap" analyze --lines "$tmp/ng.lines" "$tmp/s.pcapng"
	if cmp -s "$tmp/ns.lines" "$tmp/ng.lines"; then ok "pcapng equals pcap"; else fail "pcapng differs from pcap"; fi
	editcap -F pcap "$sample" "$tmp/us.pcap" && "$commtap" analyze --lines "$tmp/us.lines" "$tmp/us.pcap"
	strip_ts() { sed 's/ first=.*//' "$1"; }
	if [ "$(strip_ts "$tmp/ns.lines")" = "$(strip_ts "$tmp/us.lines")" ] &&
		grep -q 'first=[0-9]*000 last=[0-9]*000$' "$tmp/us.lines"; then
		ok "microsecond pcap: same flows, timestamps in whole microseconds"
	else
		fail "microsecond pcap differs"
	fi
else
	echo "SKIP part: editcap not installed (pcapng/microsecond checks)"
fi


# classification knowledge: broken labels and profiles are named with their JSON path
printf '{"schema": "commtap.labels/v1", "flows": [{"transport": "roce", "src": "198.18.0.1", "dst": "198.18.0.2", "qpn": 257, "class": "Gossip"}]}\n' >"$tmp/badclass.json"
expect_status "labels: unknown class" 1 "$commtap" analyze --labels "$tmp/badclass.json" "$sample"
grep -q 'flows\[0\]' "$tmp/err" || fail "labels: unknown class: error does not give the JSON path"
printf '{"schema": "commtap.labels/v1", "flows": [{"transport": "roce", "src": "198.18.0.999", "dst": "198.18.0.2", "qpn": 257, "class": "PP"}]}\n' >"$tmp/badaddr.json"
expect_status "labels: bad address" 1 "$commtap" analyze --labels "$tmp/badaddr.json" "$sample"
printf '{"schema": "commtap.labels/v1", "flows": [{"transport": "roce", "src": "198.18.0.1", "dst": "198.18.0.2", "class": "PP"}]}\n' >"$tmp/noqpn.json"
expect_status "labels: RoCE flow without qpn" 1 "$commtap" analyze --labels "$tmp/noqpn.json" "$sample"
printf '{"schema": "commtap.labels/v1", "flows": [' >"$tmp/truncated.json"
expect_status "labels: truncated JSON" 1 "$commtap" analyze --labels "$tmp/truncated.json" "$sample"
expect_status "labels: missing file" 1 "$commtap" analyze --labels "$tmp/none.json" "$sample"
printf '{"name": "x", "model": {"kind": "gpt"}}\n' >"$tmp/badprofile.json"
expect_status "profile: incomplete" 1 "$commtap" analyze --profile "$tmp/badprofile.json" "$sample"
printf '{"schema": "commtap.labels/v1", "flows": [{"transport": "roce", "src": "198.18.0.1", "dst": "198.18.0.2", "qpn": 257, "class": "PP", "comm": "0x1f"}]}\n' >"$tmp/good.json"
expect_status "labels: good file" 0 "$commtap" analyze --labels "$tmp/good.json" --json "$tmp/labelled.json" "$sample"
grep -q '"class_source":"label"' "$tmp/labelled.json" ||
	grep -q '"class_source": *"label"' "$tmp/labelled.json" || fail "labels: no flow took its label"

echo "$passed passed, $fails failed"
[ "$fails" -eq 0 ]
