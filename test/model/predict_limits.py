#!/usr/bin/env python3
"""predict, synth and analyze --profile on profiles at the loader's limits
(issue 24): each either works or refuses with one line naming the profile
field (or option) to lower, in at most 1 GiB of address space and 60 s;
none is killed, none aborts.

usage: predict_limits.py COMMTAP BUNDLED_DIR SANITIZE
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

AS_LIMIT = 1 << 30
TIME_LIMIT = 60


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def profiles(bundled):
    def load(name):
        with open(os.path.join(bundled, name + ".json")) as f:
            return json.load(f)

    moe, gpt, ddp = load("moe-125m-2hosts"), load("gpt-3b-deepspeed-default"), load(
        "ddp-bert-base-32gpu")
    out = {}
    m = json.loads(json.dumps(moe))
    m["name"] = "moe-ep4096"
    m["model"].update(experts=4096, global_batch=4096 * 4 * 2)
    m["parallelism"].update(d=4096, ep=4096)
    m["placement"].update(gpus=4096, gpus_per_host=8)
    out["moe-ep4096"] = (m, "$.parallelism.ep")
    g = json.loads(json.dumps(gpt))
    g["name"] = "gpt-1m-micro-batches"
    g["model"].update(micro_batch=1, micro_batches=1 << 20, global_batch=(1 << 20) * 4)
    out["gpt-1m-micro-batches"] = (g, "$.model.micro_batches")
    g = json.loads(json.dumps(gpt))
    g["name"] = "gpt-p4096"
    g["model"].update(layers=4096 * 2, micro_batch=1, micro_batches=4096, global_batch=4096 * 4)
    g["parallelism"].update(p=4096, t=1, d=4)
    g["placement"].update(gpus=4096 * 4)
    out["gpt-p4096"] = (g, "$.model.micro_batches")
    for n, ok in ((16384, True), (65536, True), (1 << 20, False)):
        d = json.loads(json.dumps(ddp))
        d["name"] = "ddp-%d" % n
        d["placement"]["gpus"] = n
        out[d["name"]] = (d, None if ok else "$.placement.gpus")
    return out


def run(args):
    try:
        r = subprocess.run(args, preexec_fn=limit, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return None, "over %d s" % TIME_LIMIT
    return r.returncode, r.stderr.strip()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    commtap, bundled, sanitize = sys.argv[1:]
    if sanitize not in ("", "none"):
        print("SKIP: the sanitizers reserve terabytes of address space; RLIMIT_AS cannot "
              "measure this build")
        sys.exit(77)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (prof, field) in profiles(bundled).items():
            path = os.path.join(tmp, name + ".json")
            with open(path, "w") as f:
                json.dump(prof, f)
            for cmd in (["predict", path], ["predict", "--json", path]):
                rc, err = run([commtap] + cmd)
                want = "exit 0" if field is None else "exit 1 naming " + field
                ok = rc == 0 if field is None else (rc == 1 and (": %s: " % field) in err
                                                    and len(err.splitlines()) == 1)
                print("%-4s %-24s %-10s %s (%s)" % ("ok" if ok else "FAIL", name, cmd[1],
                                                    want, "rc %s: %s" % (rc, err[-160:])))
                failures += not ok
        # synth renders an iteration whole: a scale that makes it too big is
        # refused before any output is created
        out = os.path.join(tmp, "big.pcap")
        rc, err = run([commtap, "synth", os.path.join(bundled, "gpt-3b-deepspeed-default.json"),
                       "-o", out, "--iterations", "1", "--scale", "1000"])
        ok = rc == 1 and "--scale 1000:" in err and not os.path.exists(out)
        print("%-4s synth --scale 1000: exit 1 naming --scale, no output (rc %s: %s)" % (
            "ok" if ok else "FAIL", rc, err[-160:]))
        failures += not ok
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
