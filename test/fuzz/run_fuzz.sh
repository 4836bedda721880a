#!/bin/sh
# Run a libFuzzer target for a bounded time (FUZZ_SECONDS, default 60) on a
# copy of its seed corpus, keeping artefacts out of the source tree.
#   run_fuzz.sh TARGET SEED_DIR WORK_DIR
set -eu
target=$1 seeds=$2 work=$3
seconds=${FUZZ_SECONDS:-60}
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
[ -d "$seeds" ] && cp "$seeds"/* "$work/corpus/" 2>/dev/null || true
echo "fuzzing $(basename "$target") for $seconds s"
exec "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus"
