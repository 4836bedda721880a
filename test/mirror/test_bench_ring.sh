#!/bin/bash
# SPDX-License-Identifier: MIT
# commtap-mirror --bench-ring: a capture fed through a ring PMD by a generator
# lcore reaches the engine whole (the report's flows are the capture's, as
# `commtap analyze` reads them), over and over (more packets received than the
# capture holds); bad input gives one line naming it.
# usage: test_bench_ring.sh COMMTAP COMMTAP-MIRROR
set -u
commtap=$1 mirror=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eal=(--no-huge -m 512 --no-pci --file-prefix "ct-bench-ring-$$")
fail=0

"$commtap" bench --packets 20000 --qps 100 --pcap "$tmp/a.pcap" >/dev/null || exit 1
"$commtap" analyze --json "$tmp/analyze.json" "$tmp/a.pcap" >/dev/null || exit 1
timeout 60 "$mirror" "${eal[@]}" --lcores 0,1 -- --bench-ring "$tmp/a.pcap" --duration 1 \
	--bench --mbuf-data 256 --json "$tmp/mirror.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL run: rc $rc"
	cat "$tmp/err"
	exit 1
fi
cat "$tmp/out"
python3 - "$tmp/analyze.json" "$tmp/mirror.json" "$tmp/out" <<'PY' || fail=1
import json, re, sys
want = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
out = open(sys.argv[3]).read()
key = lambda f: (f["src"], f["dst"], f.get("qpn", f.get("id")))
a, b = {key(f) for f in want["flows"]}, {key(f) for f in got["flows"]}
rx = int(re.search(r"worker 0 \(lcore \d+\): engine: (\d+) packets", out).group(1))
sent = int(re.search(r"generator \(lcore \d+\): (\d+) packets enqueued", out).group(1))
ok = a == b and rx > 20000 and sent >= rx
print("%s flows: %d from analyze, %d from the ring feed (%d in common); %d packets "
      "received of %d enqueued (the capture holds 20000)" %
      ("ok  " if ok else "FAIL", len(a), len(b), len(a & b), rx, sent))
sys.exit(0 if ok else 1)
PY

expect_error() { # name pattern args...
	local name=$1 pattern=$2
	shift 2
	timeout 30 "$mirror" "$@" >/dev/null 2>"$tmp/err2"
	local rc=$?
	if [ $rc -eq 0 ] || [ "$(wc -l <"$tmp/err2")" -ne 1 ] || ! grep -q -- "$pattern" "$tmp/err2"; then
		echo "FAIL $name: rc $rc, want one line matching '$pattern':"
		cat "$tmp/err2"
		fail=1
	else
		echo "ok   $name: $(cat "$tmp/err2")"
	fi
}
expect_error no-generator-lcore "needs an lcore for its generator" "${eal[@]}" --lcores 0 -- \
	--bench-ring "$tmp/a.pcap"
expect_error missing-capture "$tmp/none.pcap" "${eal[@]}" --lcores 0,1 -- \
	--bench-ring "$tmp/none.pcap"
head -c 100 "$tmp/a.pcap" >"$tmp/cut.pcap"
expect_error truncated-capture "cut.pcap" "${eal[@]}" --lcores 0,1 -- --bench-ring "$tmp/cut.pcap"
exit $fail
