#!/bin/sh
# commtap on a fresh Debian 12 machine:
#   scripts/setup.sh demo   install what is missing, build, synthesize a bundled job's
#                           traffic (GPT-3B) and analyze it
#   scripts/setup.sh test   install what is missing, build, run the whole test suite
#                           (unit, golden, CLI; again under ASan+UBSan; bounded fuzzing)
#   scripts/setup.sh package  install the packaging tools too, build, and build, check
#                           and run the Debian packages (suite package, docs/packaging.md)
# Run as root, or as a user who may sudo. Idempotent: installs only what is missing.
set -eu

cd "$(dirname "$0")/.."
top=$(pwd)

# Debian packages the build and the tests need.
PACKAGES="gcc clang llvm libclang-rt-14-dev meson ninja-build pkg-config python3
libpcap-dev libjson-c-dev libcmocka-dev libfftw3-dev tshark wireshark-common
libbpf-dev bpftool libxdp-dev xdp-tools tcpreplay tcpdump iproute2"
# commtap report / merge / --listen: the /metrics endpoint, its checker, the page's browser test
PACKAGES="$PACKAGES libmicrohttpd-dev prometheus curl chromium"
# host_gpu/: the RDMA QP map (netlink) needs libmnl.
PACKAGES="$PACKAGES libmnl-dev"
# commtap-mirror (DPDK) and its live-mirror test
PACKAGES="$PACKAGES libdpdk-dev dpdk"
# the bad-number tests run the programs under valgrind (memcheck)
PACKAGES="$PACKAGES valgrind"
# test/realtrain: real PyTorch training (gloo over TCP) in network namespaces;
# scapy for the RoCE negative controls of the evaluation corpus
PACKAGES="$PACKAGES python3-torch python3-psutil python3-scapy"
# the opt-in injected real runs (test/realtrain/injected.py) drop packets with nftables
PACKAGES="$PACKAGES nftables"
# test/realtrain's mpi scenario: Horovod-style DP over Open MPI's TCP transport (mpi4py)
PACKAGES="$PACKAGES openmpi-bin libopenmpi-dev python3-mpi4py"
# the dashboard's schema check: Grafana's schema and tsc from npm (an npm already
# there, e.g. with another nodejs, is used as it is)
command -v npm >/dev/null || PACKAGES="$PACKAGES nodejs npm"

# scripts/setup.sh package: debhelper builds the packages, lintian checks them
PACKAGING_PACKAGES="debhelper lintian"

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "setup: need root to install packages: $*" >&2
		exit 1
	fi
}

install_packages() {
	missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "setup: installing$missing"
	# wireshark-common asks whether to install dumpcap setuid: answer no, quietly.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		as_root debconf-set-selections
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
	# Only promtool is wanted from prometheus: no service may start while
	# installing (a policy-rc.d that says no, ours only, removed after).
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
		as_root chmod 755 "$policy"
	fi
	rc=0
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		$missing || rc=$?
	[ -z "$policy" ] || as_root rm -f "$policy"
	[ "$rc" -eq 0 ] || exit "$rc"
}

# Grafana's dashboard schema and tsc for test grafana-dashboard-schema, pinned
# in test/prometheus/package.json, into its node_modules (ignored by git).
install_node_modules() {
	[ -d test/prometheus/node_modules/@grafana/schema ] && return 0
	(cd test/prometheus && npm install --no-audit --no-fund --no-package-lock -q) ||
		echo "setup: npm install in test/prometheus failed; the dashboard's schema check will skip" >&2
}

build() {
	dir=$1
	shift
	log=$(mktemp)
	if [ -f "$dir/build.ninja" ]; then
		set -- --reconfigure "$@"
	fi
	# quiet when it works, the whole story when it does not
	if ! meson setup "$@" "$dir" >"$log" 2>&1; then
		cat "$log"
		rm -f "$log"
		echo "setup: meson setup $dir failed" >&2
		exit 1
	fi
	rm -f "$log"
	ninja -C "$dir"
}

# Sum meson's summaries into one closing line that any CI log reader understands.
passed=0 failed=0 skipped=0
run_suites() {
	dir=$1
	shift
	log=$(mktemp)
	set +e
	meson test -C "$dir" --print-errorlogs "$@" 2>&1 | tee "$log"
	rc=$?
	set -e
	ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -1)
	bad=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" | tail -1)
	to=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" | tail -1)
	sk=$(sed -n 's/^Skipped: *\([0-9]*\).*/\1/p' "$log" | tail -1)
	rm -f "$log"
	passed=$((passed + ${ok:-0}))
	failed=$((failed + ${bad:-0} + ${to:-0}))
	skipped=$((skipped + ${sk:-0}))
	[ "$rc" -eq 0 ] || failed=$((failed > 0 ? failed : 1))
}

case "${1:-}" in
demo)
	install_packages
	build build
	profile=profiles/bundled/gpt-3b-deepspeed-default.json
	mkdir -p build/demo
	echo
	echo "== commtap predict $profile (summary)"
	./build/cli/commtap predict "$profile" | sed -n '1,12p'
	echo
	echo "== commtap synth: 5 iterations, sizes and times scaled by 1e-3, header-only copies"
	./build/cli/commtap synth "$profile" -o build/demo/gpt-3b.pcap --iterations 5 \
		--scale 1e-3 --time-scale 1e-3 --jitter 0.05 --snaplen 128 --noise
	echo
	echo "== commtap analyze build/demo/gpt-3b.pcap"
	./build/cli/commtap analyze --table --json build/demo/gpt-3b.report.json build/demo/gpt-3b.pcap
	echo
	echo
	echo "== commtap report: the page (heatmaps, sizes, timeline, periodicity, cc, predicted)"
	./build/cli/commtap report build/demo/gpt-3b.report.json --profile "$profile" \
		--scale 1e-3 --time-scale 1e-3 --title "GPT-3B, DeepSpeed defaults (synthesized)" \
		-o build/demo/gpt-3b.report.html
	./build/cli/commtap trace build/demo/gpt-3b.report.json -o build/demo/gpt-3b.trace.json
	echo
	echo "JSON report: $top/build/demo/gpt-3b.report.json"
	echo "HTML report: $top/build/demo/gpt-3b.report.html"
	echo "trace (ui.perfetto.dev, chrome://tracing): $top/build/demo/gpt-3b.trace.json"
	echo "ground truth: $top/build/demo/gpt-3b.truth.json"
	;;
test)
	install_packages
	install_node_modules
	echo "== build and test"
	build build
	run_suites build --no-suite fuzz --no-suite accuracy --no-suite accuracy-full \
		--no-suite realtrain-spread --no-suite realtrain-injected --no-suite package
	echo "== ASan + UBSan"
	build build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		run_suites build-asan --no-suite fuzz --no-suite accuracy --no-suite accuracy-full \
		--no-suite package
	echo "== fuzzing (${FUZZ_SECONDS:-60} s per target)"
	CC=clang build build-fuzz -Dfuzz=true
	run_suites build-fuzz --suite fuzz
	echo
	echo "commtap: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	;;
package)
	PACKAGES="$PACKAGES $PACKAGING_PACKAGES"
	install_packages
	build build
	run_suites build --suite install --suite package
	echo
	echo "commtap packages: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	;;
*)
	echo "usage: scripts/setup.sh demo|test|package" >&2
	exit 1
	;;
esac
