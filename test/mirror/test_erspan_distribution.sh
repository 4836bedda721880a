#!/bin/bash
# SPDX-License-Identifier: MIT
# ERSPAN copies in the software distribution mode: the workers are chosen by
# the mirrored (inner) frame's addresses, not by the one GRE tunnel every copy
# of a session shares, and the same packet mirrored by two sessions (type II
# and type III, a hop apart) is de-duplicated on its inner frame.
# usage: test_erspan_distribution.sh COMMTAP COMMTAP-MIRROR COMPARE.py MAKE_ERSPAN.py
set -u
commtap=$1 mirror=$2 compare=$3 make=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$mirror" --no-huge -m 256 --no-pci --file-prefix "ct-erspan-$$" -l 0 --vdev net_null0 -- --duration 0.01 \
	>"$tmp/probe.log" 2>&1; then
	echo "SKIP: DPDK cannot start here: $(tail -1 "$tmp/probe.log")"
	exit 77
fi
for k in plain ii iii both; do
	python3 "$make" "$k" "$tmp/$k.pcap" || exit 1
done

# main lcore, a distributor and two engine lcores; this machine may have two CPUs
lcores="--lcores 0@0,1@1,2@1,3@0"
run_mirror() { # name pcap [options]
	local name=$1 pcap=$2
	shift 2
	timeout 120 "$mirror" --no-huge -m 1024 --no-pci --file-prefix "ct-erspan-$$" $lcores \
		--vdev "net_pcap0,rx_pcap=$pcap" -- --exit-on-idle 0.5 --wait-on-full --bench \
		--json "$tmp/$name.mirror.json" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}

fail=0
for k in ii iii; do
	"$commtap" analyze "$tmp/$k.pcap" --json "$tmp/$k.analyze.json" || exit 1
	if ! run_mirror "$k" "$tmp/$k.pcap"; then
		echo "FAIL erspan-$k: commtap-mirror: $(tail -1 "$tmp/$k.err")"
		fail=1
		continue
	fi
	# every engine lcore gets some of the 16 inner address pairs; none is split
	if python3 "$compare" "$tmp/$k.analyze.json" "$tmp/$k.mirror.json" >"$tmp/$k.cmp" &&
		python3 - "$tmp/$k.out" "$tmp/$k.mirror.json" "$tmp/$k.analyze.json" <<'PY'
import json, re, sys
out = open(sys.argv[1]).read()
rep = json.load(open(sys.argv[2]))
ana = json.load(open(sys.argv[3]))
assert rep["mirror"]["mode"] == "software distribution", rep["mirror"]["mode"]
pkts = {int(w): int(n) for w, n in re.findall(r"^worker (\d+) \(lcore \d+\): engine: (\d+) packets", out, re.M)}
flows = {int(w): int(n) for w, n in re.findall(r"^worker (\d+): flows (\d+)", out, re.M)}
engines = sorted(w for w in pkts if w in flows)
assert len(engines) == 2, f"expected two engine workers: {out}"
assert all(pkts[w] > 0 for w in engines), f"one worker got every copy: {pkts}"
assert sum(pkts[w] for w in engines) == ana["capture"]["packets"], pkts
assert sum(flows[w] for w in engines) == len(ana["flows"]), f"a flow was split: {flows}"
print("packets per engine worker %s, flows %s" % ([pkts[w] for w in engines],
                                                  [flows[w] for w in engines]))
PY
	then
		echo "ok   erspan-$k: $(tail -1 "$tmp/$k.cmp")"
	else
		echo "FAIL erspan-$k:"
		cat "$tmp/$k.out" "$tmp/$k.err" "$tmp/$k.cmp" 2>/dev/null
		fail=1
	fi
done

# two sessions' copies of every packet: one of each pair is dropped
if run_mirror both "$tmp/both.pcap" --dedup 50 &&
	python3 "$compare" "$tmp/ii.analyze.json" "$tmp/both.mirror.json" >"$tmp/both.cmp" &&
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); d=r["mirror"]["duplicates_dropped"]; assert d == r["capture"]["packets"] == 144, (d, r["capture"]["packets"])' "$tmp/both.mirror.json"; then
	echo "ok   erspan-dedup: $(tail -1 "$tmp/both.cmp")"
else
	echo "FAIL erspan-dedup:"
	cat "$tmp/both.err" "$tmp/both.cmp" 2>/dev/null
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("duplicates_dropped", r["mirror"]["duplicates_dropped"], "packets", r["capture"]["packets"])' "$tmp/both.mirror.json" 2>/dev/null
	fail=1
fi
exit $fail
