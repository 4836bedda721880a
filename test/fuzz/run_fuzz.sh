#!/bin/sh
# Run a libFuzzer target for a bounded time (FUZZ_SECONDS, default 60) on a
# copy of its seed corpus, keeping what it writes (the grown corpus, crash
# artefacts) in the build directory, never in the source tree.
#   run_fuzz.sh TARGET SEED_DIR WORK_DIR [DICTIONARY]
set -eu
target=$1 seeds=$2 work=$3 dict=${4:-}
seconds=${FUZZ_SECONDS:-60}
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
if [ -d "$seeds" ]; then
	cp "$seeds"/* "$work/corpus/" 2>/dev/null || true
fi
set -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$work/artifacts/" -print_final_stats=1
[ -n "$dict" ] && set -- "$@" -dict="$dict"
echo "fuzzing $(basename "$target") for $seconds s (artefacts: $work/artifacts/)"
exec "$target" "$@" "$work/corpus"
