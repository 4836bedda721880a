#!/bin/sh
# The period estimator's named thresholds halved and doubled (issue 19):
# builds a commtap per variant from BUILD's objects with period.c and
# period_repeat.c compiled again with -DNAME=VALUE, then prints each
# variant's period errors on the tuning cases given (corpus_accuracy.py
# directories: never the frozen held-out part) and on the synthesized
# profiles (period_accuracy.py, both transports).
#   period_sensitivity.sh BUILD OUTDIR NAME=VALUE... -- CASE...
set -eu
build=$(cd "$1" && pwd) out=$2
shift 2
mkdir -p "$out"
src=$(cd "$(dirname "$0")/../.." && pwd)
variants=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do variants="$variants $1"; shift; done
[ $# -gt 0 ] && shift
cases="$*"
compile_cmd() { # the build's own command for one analysis source, -D added
	python3 - "$build" "$1" "$2" "$3" <<'PY'
import json, sys, shlex
build, name, define, obj = sys.argv[1:]
for e in json.load(open(build + "/compile_commands.json")):
    if e["file"].endswith("analysis/" + name):
        args = shlex.split(e["command"])
        args[args.index("-o") + 1] = obj
        args = [a for i, a in enumerate(args) if a not in ("-MD",) and args[i - 1] not in ("-MQ", "-MF") and a not in ("-MQ", "-MF")]
        print(" ".join(shlex.quote(a) for a in args + ["-D" + define]))
PY
}
link=$(cd "$build" && ninja -t commands cli/commtap | tail -1)
for v in $variants; do
	d="$out/$v"
	mkdir -p "$d"
	for f in period.c period_repeat.c; do
		(cd "$build" && eval "$(compile_cmd "$f" "$v" "$d/$f.o")")
	done
	# meson's archive is thin: a new one of its members, the two replaced
	rm -f "$d/libcommtap-analysis.a"
	(cd "$build" && ar t analysis/libcommtap-analysis.a | sed "s|.*/period.c.o$|$d/period.c.o|; s|.*/period_repeat.c.o$|$d/period_repeat.c.o|" |
		xargs ar rcs "$d/libcommtap-analysis.a")
	(cd "$build" && eval "$(echo "$link" | sed "s|-o cli/commtap |-o $d/commtap |; s| analysis/libcommtap-analysis.a | $d/libcommtap-analysis.a |")")
	echo "== $v"
	for c in $cases; do
		python3 "$src/test/accuracy/corpus_accuracy.py" "$d/commtap" "$c" 2>&1 | grep "==\|period" || true
	done
	for p in "$src"/profiles/bundled/*.json; do
		case $p in *-1host.json) continue ;; esac
		for t in roce tcp; do
			python3 "$src/test/model/period_accuracy.py" "$d/commtap" "$p" $t 2>&1 | grep -v "^FAIL" || true
		done
	done
done
