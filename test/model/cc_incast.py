#!/usr/bin/env python3
"""The cc section on a synthesized incast.

An all-to-all over four hosts: every host receives from the three others at
once. With noise, host 0's NIC marks CE and returns CNPs. The report's cc
section must show the incast (degree >= 2 of 3 senders), a peak near but not
above the link rate, burst sizes and times, the start spread, and host 0's
CNPs and CE fraction.

  cc_incast.py COMMTAP PROFILE
"""
import json
import os
import subprocess
import sys
import tempfile


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "incast.pcap")
        run(commtap, "synth", profile, "-o", pcap, "--iterations", "6", "--scale", "0.01",
            "--time-scale", "0.1", "--jitter", "0.05", "--noise", "--snaplen", "128")
        report = json.loads(run(commtap, "analyze", "--json", "-", pcap))
    receivers = {r["receiver"]: r for r in report["cc"]["receivers"] if r["class"] == "all"}
    hosts = ["198.18.0.%d" % i for i in (1, 2, 3, 4)]
    for h in hosts:
        r = receivers.get(h)
        if r is None:
            errors.append("%s: no cc entry" % h)
            continue
        print("%s: senders %d, incast %d, peak %.1f Gb/s of %.0f, burst p90 %.0f B, on %.3f ms, "
              "off %.3f ms, start spread %s, CNP/s on %.0f, CE %.4f"
              % (h, r["senders"], r["incast_degree"], r["peak_gbps"], r["nic_gbps"],
                 r["burst_bytes"]["p90"], r["on_s"]["median"] * 1e3, r["off_s"]["median"] * 1e3,
                 r["start_spread_s"], r["cnp_per_s_on"], r["ecn_ce_fraction"]))
        if r["senders"] < 3:
            errors.append("%s: %d senders, expected the three other hosts" % (h, r["senders"]))
        if r["incast_degree"] < 2:
            errors.append("%s: incast degree %d, expected >= 2" % (h, r["incast_degree"]))
        if not 0 < r["peak_gbps"] <= 1.01 * r["nic_gbps"] * r["incast_degree"]:
            errors.append("%s: peak %.1f Gb/s out of range" % (h, r["peak_gbps"]))
        if not r["burst_bytes"]["p90"] > 0 or not r["on_s"]["median"] > 0:
            errors.append("%s: no burst sizes or times" % h)
        if r["start_spread_s"] is None:
            errors.append("%s: no start spread" % h)
        # the all-to-all alone (EP, by signatures): the same incast at every receiver
        ep = [c for c in report["cc"]["receivers"] if c["receiver"] == h and c["class"] == "EP"]
        if not ep:
            errors.append("%s: no cc entry for its EP traffic alone" % h)
        elif ep[0]["senders"] < 3 or ep[0]["incast_degree"] < 2:
            errors.append("%s: EP alone: %d senders, incast %d" % (h, ep[0]["senders"],
                                                                   ep[0]["incast_degree"]))
    r0 = receivers.get(hosts[0], {})
    if not r0.get("cnp_per_s_on", 0) > 0 or not r0.get("ecn_ce_fraction", 0) > 0:
        errors.append("%s: the CE marks and CNPs of the noise are missing" % hosts[0])
    for e in errors:
        print("FAIL " + e)
    print("%d passed, %d failed" % (1 if not errors else 0, 1 if errors else 0))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
