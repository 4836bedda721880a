#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages (suite package, opt-in: a whole build again, about
# a minute or two on two cores: 97 s here, its unit suite included):
# dpkg-buildpackage -b on a copy of the source
# tree, lintian on the result (no error, no warning but those
# debian/*.lintian-overrides explains), the packages unpacked into a
# scratch root (dpkg -x) and the installed commtap run on a shared capture.
#
# usage: test_debian_packages.sh SOURCE_ROOT CAPTURE
set -u
src=$1 capture=$2

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

for tool in dpkg-buildpackage dh lintian git; do
	command -v $tool >/dev/null || skip "$tool is not installed (scripts/setup.sh package)"
done
[ -r "$capture" ] || skip "no capture at $capture (../shared/pcaps)"
# the build dependencies, as dpkg-checkbuilddeps reads them from debian/control
(cd "$src" && dpkg-checkbuilddeps) >/dev/null 2>&1 ||
	skip "build dependencies missing: $(cd "$src" && dpkg-checkbuilddeps 2>&1 | tail -1)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

# the tree as git has it (tracked and new files, not the ignored build dirs)
mkdir "$work/commtap"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 cp --parents -t "$work/commtap") 2>/dev/null ||
	fail "cannot copy the source tree"
# the package build runs the unit suite (debian/rules); the others run
# from the source tree
(cd "$work/commtap" && DEB_BUILD_OPTIONS="parallel=2" dpkg-buildpackage -b -us -uc) \
	>"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "dpkg-buildpackage -b failed"; }
ls "$work"/*.deb >/dev/null 2>&1 || fail "no package was built"
for pkg in commtap commtap-gpu commtap-mirror; do
	ls "$work/${pkg}_"*.deb >/dev/null 2>&1 || fail "package $pkg was not built"
done

# lintian: no error and no warning (overrides say why each one stays)
lintian --fail-on error,warning "$work"/*.changes \
	>"$work/lintian.log" 2>&1 || { cat "$work/lintian.log"; fail "lintian finds errors or warnings"; }
cat "$work/lintian.log"

# unpacked into a scratch root, as an operator's machine would hold them
root=$work/root
for deb in "$work"/*.deb; do
	dpkg -x "$deb" "$root" || fail "dpkg -x $deb"
done
for f in usr/bin/commtap usr/bin/commtap-gpu usr/bin/commtap-mirror \
	usr/lib/systemd/system/commtap-agent.service usr/lib/systemd/system/commtap-mirror.service \
	etc/default/commtap-agent usr/share/commtap/prometheus/commtap.rules.yml \
	usr/share/commtap/grafana/commtap.json usr/share/man/man1/commtap-analyze.1.gz; do
	[ -e "$root/$f" ] || fail "the packages do not install /$f"
done
ls "$root"/usr/lib/*/commtap/libnccl-profiler-commtap.so >/dev/null 2>&1 ||
	fail "no NCCL plugin in the packages"
ls "$root"/usr/lib/*/commtap/bpf/probe.bpf.o >/dev/null 2>&1 || fail "no eBPF probe object in the packages"

# the installed commtap on a shared capture: a JSON report with flows
"$root/usr/bin/commtap" --version || fail "the installed commtap does not run"
"$root/usr/bin/commtap" analyze --json "$work/report.json" "$capture" >"$work/analyze.out" ||
	fail "the installed commtap analyze failed on $capture"
python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
n = len(r.get("flows", []))
print("installed commtap analyze:", n, "flows")
sys.exit(0 if n > 0 else 1)' "$work/report.json" || fail "the installed commtap's report has no flows"
echo "packages: $(cd "$work" && ls *.deb | tr '\n' ' ')"
