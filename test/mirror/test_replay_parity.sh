#!/bin/bash
# SPDX-License-Identifier: MIT
# Replay parity: commtap-mirror on net_pcap replays of synthesized captures and
# of the real captures in ../shared/pcaps reports the same flows, packets,
# bytes, messages, classes and period as `commtap analyze` of the same file.
# usage: test_replay_parity.sh COMMTAP COMMTAP-MIRROR COMPARE.py PROFILES-DIR SHARED-PCAPS-DIR
set -u
commtap=$1 mirror=$2 compare=$3 profiles=$4 shared=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$mirror" --no-huge -m 256 --no-pci --file-prefix "ct-mirror-$$" -l 0 --vdev net_null0 -- --duration 0.01 \
	>"$tmp/probe.log" 2>&1; then
	echo "SKIP: DPDK cannot start here: $(tail -1 "$tmp/probe.log")"
	exit 77
fi

fail=0
check() { # name pcap lcores [analyze/mirror extra options]
	local name=$1 pcap=$2 lcores=$3
	shift 3
	"$commtap" analyze "$pcap" --json "$tmp/$name.analyze.json" "$@" || { echo "FAIL $name: analyze"; fail=1; return; }
	if ! timeout 120 "$mirror" --no-huge -m 512 --no-pci --file-prefix "ct-mirror-$$" -l "$lcores" \
		--vdev "net_pcap0,rx_pcap=$pcap" -- --exit-on-idle 0.5 \
		--json "$tmp/$name.mirror.json" "$@" 2>"$tmp/$name.err"; then
		echo "FAIL $name: commtap-mirror: $(tail -1 "$tmp/$name.err")"
		fail=1
		return
	fi
	if python3 "$compare" "$tmp/$name.analyze.json" "$tmp/$name.mirror.json" >"$tmp/$name.cmp"; then
		echo "ok   $name: $(tail -1 "$tmp/$name.cmp")"
	else
		echo "FAIL $name:"
		cat "$tmp/$name.cmp"
		fail=1
	fi
}

"$commtap" synth "$profiles/ddp-resnet50-32gpu.json" -o "$tmp/ddp.pcap" --iterations 4 \
	--snaplen 128 --noise --scale 0.05 >/dev/null || exit 1
"$commtap" synth "$profiles/gpt-1.5b-custom.json" -o "$tmp/gpt.pcap" --iterations 3 \
	--scale 0.01 >/dev/null || exit 1
"$commtap" synth "$profiles/ddp-resnet50-32gpu.json" -o "$tmp/tcp.pcap" --iterations 3 \
	--transport tcp --scale 0.02 >/dev/null || exit 1
check ddp-inline "$tmp/ddp.pcap" 0
check ddp-worker "$tmp/ddp.pcap" 0-1
check ddp-profile "$tmp/ddp.pcap" 0-1 --profile "$profiles/ddp-resnet50-32gpu.json"
check gpt "$tmp/gpt.pcap" 0-1 --profile "$profiles/gpt-1.5b-custom.json"
check tcp "$tmp/tcp.pcap" 0-1

# a comparison that must fail: another capture
"$commtap" analyze "$tmp/gpt.pcap" --json "$tmp/other.json"
if python3 "$compare" "$tmp/other.json" "$tmp/ddp-worker.mirror.json" >/dev/null; then
	echo "FAIL the comparison does not see a different capture"
	fail=1
fi

if [ -d "$shared" ]; then
	for p in "$shared"/*.pcap "$shared"/*.pcapng; do
		[ -f "$p" ] || continue
		check "shared-$(basename "$p")" "$p" 0-1
	done
else
	echo "note: $shared absent: the real captures were not replayed"
fi
exit $fail
