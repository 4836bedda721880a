#!/bin/sh
# Golden test: `commtap analyze --lines` on a capture, diffed against the
# committed expected file. With --regen, rewrite the expected file instead.
# With --snap N, every frame is first cut to N bytes (a SPAN session's copy).
#   run_golden.sh [--regen] [--snap N] COMMTAP CAPTURE EXPECTED
set -eu
regen=0 snap=
if [ "${1:-}" = "--regen" ]; then regen=1; shift; fi
if [ "${1:-}" = "--snap" ]; then snap=$2; shift 2; fi
commtap=$1 capture=$2 expected=$3

if [ ! -r "$capture" ]; then
	echo "SKIP: $capture not found (../shared/pcaps is absent)"
	exit 77
fi
out=$(mktemp)
cut=$(mktemp)
trap 'rm -f "$out" "$cut"' EXIT
if [ -n "$snap" ]; then
	python3 "$(dirname "$0")/cut_pcap.py" "$snap" "$capture" "$cut"
	capture=$cut
fi
"$commtap" analyze --lines "$out" "$capture"
if [ "$regen" = 1 ] || [ -n "${COMMTAP_REGEN_GOLDEN:-}" ]; then
	cp "$out" "$expected"
	echo "regenerated $expected"
	exit 0
fi
if ! diff -u "$expected" "$out"; then
	echo "FAIL: $(basename "$capture") differs from $(basename "$expected");" \
		"if the change is intended: COMMTAP_REGEN_GOLDEN=1 meson test -C BUILD --suite golden"
	exit 1
fi
echo "ok: $(basename "$capture") matches $(basename "$expected")"
