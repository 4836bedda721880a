#!/bin/bash
# SPDX-License-Identifier: MIT
# commtap-mirror on bad input: a one-line error naming what, non-zero exit;
# a capture of malformed frames is counted, never fatal.
# usage: test_bad_input.sh COMMTAP-MIRROR
set -u
mirror=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eal=(--no-huge -m 256 --file-prefix "ct-mirror-bad-$$")
fail=0

expect_error() { # name pattern args... (each run bounded: a hang is a failure)
	local name=$1 pattern=$2
	shift 2
	timeout 30 "$mirror" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$? lines
	lines=$(wc -l <"$tmp/err")
	if [ $rc -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$pattern" "$tmp/err"; then
		echo "FAIL $name: rc $rc, $lines lines on stderr (want one matching '$pattern'):"
		cat "$tmp/err"
		fail=1
	else
		echo "ok   $name: $(cat "$tmp/err")"
	fi
}

expect_error missing-port "port 0: no such port" "${eal[@]}" -l 0 --no-pci -- --duration 0.1
expect_error port-out-of-range "port 3: no such port" "${eal[@]}" -l 0 --no-pci --vdev net_null0 -- --port 3
expect_error bad-core-list "invalid core list" "${eal[@]}" -l 0,100 --no-pci --vdev net_null0 --
expect_error garbled-core-list "EAL init failed" "${eal[@]}" -l x,y --no-pci --vdev net_null0 --
expect_error vdev-probe "Couldn't open $tmp/none.pcap" "${eal[@]}" -l 0 --no-pci \
	--vdev "net_pcap0,rx_pcap=$tmp/none.pcap" --
expect_error report-dir "report-dir $tmp/nodir" "${eal[@]}" -l 0 --no-pci --vdev net_null0 -- \
	--report-dir "$tmp/nodir" --interval 1
touch "$tmp/file"
expect_error report-dir-file "report-dir $tmp/file: not a directory" "${eal[@]}" -l 0 --no-pci \
	--vdev net_null0 -- --report-dir "$tmp/file"
mkdir "$tmp/ro" && chmod 500 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
	expect_error report-dir-readonly "report-dir $tmp/ro" "${eal[@]}" -l 0 --no-pci \
		--vdev net_null0 -- --report-dir "$tmp/ro"
fi
expect_error bad-option "unknown or incomplete option '--frobnicate'" "${eal[@]}" -l 0 -- --frobnicate
expect_error bad-interval "--interval: 'soon' is not a number" "${eal[@]}" -l 0 -- --interval soon
expect_error bad-mbufs "--mbufs: '5' is not a number" "${eal[@]}" -l 0 -- --mbufs 5
expect_error pool-too-big "cannot create the mbuf pool" "${eal[@]}" -l 0 --no-pci --vdev net_null0 -- \
	--mbufs 4000000 --duration 0.1

# malformed frames: a pcap of random bytes as Ethernet frames, counted, exit 0
python3 - "$tmp/junk.pcap" <<'PY'
import random, struct, sys
random.seed(7)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(2000):
        n = random.choice([1, 13, 14, 40, 60, 200])
        frame = bytes(random.getrandbits(8) for _ in range(n))
        if i % 2:  # IPv4 carrying UDP to 4791 with a broken header
            frame = bytes(12) + b"\x08\x00" + bytes([0x45]) + frame[:30]
        f.write(struct.pack("<IIII", 1700000000, i, len(frame), len(frame)) + frame)
PY
if "$mirror" "${eal[@]}" -l 0 --no-pci --vdev "net_pcap0,rx_pcap=$tmp/junk.pcap" -- \
	--exit-on-idle 0.3 --json "$tmp/junk.json" 2>"$tmp/err" &&
	python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["capture"]; assert c["packets"]==2000, c; assert c["malformed"]["total"]>0, c; print("ok   malformed: 2000 frames,", c["malformed"]["total"], "malformed")' "$tmp/junk.json"; then
	:
else
	echo "FAIL malformed frames:"
	cat "$tmp/err"
	fail=1
fi
exit $fail
