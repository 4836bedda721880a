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
check() { # name pcap "EAL core options" [analyze/mirror extra options]
	local name=$1 pcap=$2 lcores=$3
	shift 3
	"$commtap" analyze "$pcap" --json "$tmp/$name.analyze.json" "$@" || { echo "FAIL $name: analyze"; fail=1; return; }
	if ! timeout 120 "$mirror" --no-huge -m 1024 --no-pci --file-prefix "ct-mirror-$$" $lcores \
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
check ddp-inline "$tmp/ddp.pcap" "-l 0"
check ddp-worker "$tmp/ddp.pcap" "-l 0-1"
check ddp-profile "$tmp/ddp.pcap" "-l 0-1" --profile "$profiles/ddp-resnet50-32gpu.json"
check gpt "$tmp/gpt.pcap" "-l 0-1" --profile "$profiles/gpt-1.5b-custom.json"
check tcp "$tmp/tcp.pcap" "-l 0-1"

# software distribution (one RX lcore hashing to two engine lcores; lcores
# share the CPUs here), with cumulative interval reports into a directory
"$commtap" analyze "$tmp/ddp.pcap" --json "$tmp/dist.analyze.json"
mkdir "$tmp/rd"
if timeout 120 "$mirror" --no-huge -m 1024 --no-pci --file-prefix "ct-mirror-$$" \
	--lcores 0@0,1@1,2@1,3@0 --vdev "net_pcap0,rx_pcap=$tmp/ddp.pcap" -- --exit-on-idle 0.5 \
	--wait-on-full --interval 0.1 --report-dir "$tmp/rd" 2>"$tmp/dist.err" &&
	python3 "$compare" "$tmp/dist.analyze.json" "$tmp/rd/commtap-report-final.json" >"$tmp/dist.cmp" &&
	python3 - "$tmp/rd" <<'PY'
import glob, json, os, sys
d = sys.argv[1]
final = json.load(open(os.path.join(d, "commtap-report-final.json")))
assert final["mirror"]["mode"] == "software distribution", final["mirror"]["mode"]
assert final["mirror"]["final"] is True
assert not glob.glob(os.path.join(d, "*.tmp")), "a report left half written"
inter = sorted(glob.glob(os.path.join(d, "commtap-report-0*.json")))
assert inter, "no interval report"
last = 0
for p in inter:
    r = json.load(open(p))
    assert r["mirror"]["final"] is False
    assert r["capture"]["packets"] >= last, "interval reports are not cumulative"
    last = r["capture"]["packets"]
assert last <= final["capture"]["packets"]
print(f"{len(inter)} interval reports, cumulative")
PY
then
	echo "ok   ddp-distribution: $(tail -1 "$tmp/dist.cmp")"
else
	echo "FAIL ddp-distribution:"
	cat "$tmp/dist.err" "$tmp/dist.cmp" 2>/dev/null
	fail=1
fi

# a queue per worker: commtap bench's stream of 2,000 QPs as one capture and
# split over two (each QP whole in one file), one rx_pcap per worker
"$commtap" bench --packets 40000 --qps 2000 --pcap "$tmp/bench.pcap" &&
	"$commtap" bench --packets 40000 --qps 2000 --pcap "$tmp/bench0.pcap" --pcap "$tmp/bench1.pcap" &&
	"$commtap" analyze "$tmp/bench.pcap" --json "$tmp/queues.analyze.json" || exit 1
if timeout 120 "$mirror" --no-huge -m 1024 --no-pci --file-prefix "ct-mirror-$$" \
	--lcores 0@0,1@1,2@0 --vdev "net_pcap0,rx_pcap=$tmp/bench0.pcap,rx_pcap=$tmp/bench1.pcap" -- \
	--exit-on-idle 0.5 --json "$tmp/queues.mirror.json" 2>"$tmp/queues.err" &&
	python3 "$compare" "$tmp/queues.analyze.json" "$tmp/queues.mirror.json" >"$tmp/queues.cmp" &&
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["mirror"]["mode"]; assert m == "queue per worker", m' "$tmp/queues.mirror.json"; then
	echo "ok   queue-per-worker: $(tail -1 "$tmp/queues.cmp")"
else
	echo "FAIL queue-per-worker:"
	cat "$tmp/queues.err" "$tmp/queues.cmp" 2>/dev/null
	fail=1
fi

# de-duplication: every frame twice (a session mirroring both ends of a link,
# the second copy one hop on: TTL one less, checksum changed) reads as the
# original with --dedup
python3 - "$tmp/ddp.pcap" "$tmp/twice.pcap" <<'PY'
import struct, sys
src = open(sys.argv[1], "rb").read()
out = [src[:24]]
little = src[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
fmt = "<IIII" if little else ">IIII"
off = 24
while off + 16 <= len(src):
    sec, frac, caplen, wirelen = struct.unpack(fmt, src[off:off + 16])
    frame = src[off + 16:off + 16 + caplen]
    out.append(src[off:off + 16 + caplen])
    other = bytearray(frame)
    if len(other) > 26 and other[12:14] == b"\x08\x00":
        other[22] = (other[22] - 1) & 0xff  # TTL
        other[24] ^= 0x5a                   # header checksum
    out.append(struct.pack(fmt, sec, frac, caplen, wirelen) + bytes(other))
    off += 16 + caplen
open(sys.argv[2], "wb").write(b"".join(out))
PY
"$commtap" analyze "$tmp/ddp.pcap" --json "$tmp/dedup.analyze.json"
if timeout 120 "$mirror" --no-huge -m 1024 --no-pci --file-prefix "ct-mirror-$$" -l 0-1 \
	--vdev "net_pcap0,rx_pcap=$tmp/twice.pcap" -- --exit-on-idle 0.5 --dedup 50 \
	--json "$tmp/dedup.mirror.json" 2>"$tmp/dedup.err" &&
	python3 "$compare" "$tmp/dedup.analyze.json" "$tmp/dedup.mirror.json" >"$tmp/dedup.cmp" &&
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); d=r["mirror"]["duplicates_dropped"]; assert d == r["capture"]["packets"], d' "$tmp/dedup.mirror.json"; then
	echo "ok   dedup: $(tail -1 "$tmp/dedup.cmp")"
else
	echo "FAIL dedup:"
	cat "$tmp/dedup.err" "$tmp/dedup.cmp" 2>/dev/null
	fail=1
fi

# a comparison that must fail: another capture
"$commtap" analyze "$tmp/gpt.pcap" --json "$tmp/other.json"
if python3 "$compare" "$tmp/other.json" "$tmp/ddp-worker.mirror.json" >/dev/null; then
	echo "FAIL the comparison does not see a different capture"
	fail=1
fi

if [ -d "$shared" ]; then
	for p in "$shared"/*.pcap "$shared"/*.pcapng; do
		[ -f "$p" ] || continue
		check "shared-$(basename "$p")" "$p" "-l 0-1"
	done
else
	echo "note: $shared absent: the real captures were not replayed"
fi
exit $fail
