#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmark of commtap-mirror: net_pcap infinite_rx on 128-byte copies of
# 4 KiB-MTU RoCE traffic, bare mode (receive and free) then engine mode, in
# one run; prints Mpps per core, the engine/bare ratio and the engine's
# ns/packet. net_pcap holds the whole capture in mbufs in infinite_rx mode:
# it stays under the pool (8191). usage: bench-mirror.sh BUILD-DIR [SECONDS] [RUNS]
set -eu
build=${1:-build} secs=${2:-5} runs=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$(cd "$(dirname "$0")/../.." && pwd)
"$build/cli/commtap" synth "$src/profiles/bundled/ddp-resnet50-32gpu.json" -o "$tmp/roce.pcap" \
	--iterations 2 --snaplen 128 --mtu 4096 --scale 0.015 >/dev/null
run() { # mode-flag
	"$build/dataplane/dpdk/commtap-mirror" --no-huge -m 1024 --no-pci -l 0-1 \
		--file-prefix "ct-bench-$$" --vdev "net_pcap0,rx_pcap=$tmp/roce.pcap,infinite_rx=1" -- \
		--duration "$secs" --bench "$@" 2>/dev/null
}
for i in $(seq "$runs"); do
	run --bare | sed -n 's/.*: \([0-9.]*\) Mpps.*/bare \1/p'
	run --json /dev/null | tee "$tmp/engine.$i" | sed -n 's/.*: \([0-9.]*\) Mpps, engine \([0-9.]*\) ns.*/engine \1 \2/p'
done | tee "$tmp/all"
awk '/^bare/{b[nb++]=$2} /^engine/{e[ne++]=$2; n[ne-1]=$3}
function med(a,k,  i,j,t){for(i=0;i<k;i++)for(j=i+1;j<k;j++)if(a[j]<a[i]){t=a[i];a[i]=a[j];a[j]=t} return a[int(k/2)]}
END{mb=med(b,nb); me=med(e,ne); mn=med(n,ne);
printf "median of %d runs: bare %.2f Mpps/core, engine %.2f Mpps/core, engine/bare %.2f, engine %.1f ns/packet\n", nb, mb, me, me/mb, mn}' "$tmp/all"
grep -h "state\|memory" "$tmp/engine.1"
