#!/usr/bin/env python3
"""The frozen held-out part (test/accuracy/frozen/README.md).

  frozen.py write  COMMTAP [NEGCTL_DIR] [--cache DIR]
  frozen.py verify COMMTAP [--cache DIR] [--matrix]

`write` (before any classification or period rule changes): builds the
frozen share of the layout matrix (make_matrix.py --subset frozen), copies
the negative controls from NEGCTL_DIR (as negctl_roce.py and negctl_tcp.py
wrote them; without it the committed ones stay) into frozen/negctl/
(captures xz-compressed, truths as they are) and writes frozen/SHA256SUMS:
the SHA-256 of every capture and truth, uncompressed, by the names below.
It only adds: an entry already frozen that would change or go stops it.

  matrix/CASE/capture.pcap, matrix/CASE/capture.truth.json
      made again from the recipe (make_matrix.py) into the cache
  negctl/NAME.pcap, negctl/NAME.truth.json
      committed under frozen/negctl/ (NAME.pcap.xz)

`verify`: every committed negative control matches its checksum; the
scapy-built RoCE ones, made again by negctl_roce.py (seed 1), still come
out byte for byte the same when /usr/bin/python3 has scapy; with
--matrix, every frozen matrix case made again (in a temporary directory
unless --cache is given) matches too.
"""
import hashlib
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FROZEN = os.path.join(HERE, "frozen")
SUMS = os.path.join(FROZEN, "SHA256SUMS")
sys.path.insert(0, HERE)

import make_matrix  # noqa: E402

SCAPY_PYTHON = "/usr/bin/python3"


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def read_sums():
    return make_matrix.frozen_sums()


def negctl_bytes(name):
    """(capture bytes, truth bytes) of a committed negative control."""
    with lzma.open(os.path.join(FROZEN, "negctl", name + ".pcap.xz")) as f:
        pcap = f.read()
    with open(os.path.join(FROZEN, "negctl", name + ".truth.json"), "rb") as f:
        truth = f.read()
    return pcap, truth


def write(commtap, negdir, cache):
    """Freeze: the negative controls of negdir (None: keep the committed ones)
    and every frozen matrix case. An entry already frozen must come out the
    same: write adds cases (new layouts), it never changes a checksum."""
    old = read_sums()
    sums = {}
    os.makedirs(os.path.join(FROZEN, "negctl"), exist_ok=True)
    if negdir:
        for name in sorted(f[:-5] for f in os.listdir(negdir) if f.endswith(".pcap")):
            with open(os.path.join(negdir, name + ".pcap"), "rb") as f:
                pcap = f.read()
            with lzma.open(os.path.join(FROZEN, "negctl", name + ".pcap.xz"), "wb",
                           preset=9) as f:
                f.write(pcap)
            shutil.copyfile(os.path.join(negdir, name + ".truth.json"),
                            os.path.join(FROZEN, "negctl", name + ".truth.json"))
    for f in sorted(os.listdir(os.path.join(FROZEN, "negctl"))):
        if f.endswith(".pcap.xz"):
            name = f[: -len(".pcap.xz")]
            pcap, truth = negctl_bytes(name)
            sums["negctl/%s.pcap" % name] = sha256_bytes(pcap)
            sums["negctl/%s.truth.json" % name] = sha256_bytes(truth)
    for case in make_matrix.subset("frozen"):
        pcap, truth, _ = make_matrix.build(commtap, case, cache)
        sums["matrix/%s/capture.pcap" % case["name"]] = make_matrix.sha256(pcap)
        sums["matrix/%s/capture.truth.json" % case["name"]] = make_matrix.sha256(truth)
    changed = sorted(k for k in old if k in sums and sums[k] != old[k])
    dropped = sorted(k for k in old if k not in sums)
    if changed or dropped:
        for k in changed:
            print("FAIL %s: would change a frozen checksum" % k)
        for k in dropped:
            print("FAIL %s: would drop a frozen entry" % k)
        return 1
    with open(SUMS, "w") as f:
        f.write("# SHA-256 of the frozen held-out captures and truths (frozen/README.md).\n")
        f.write("# negctl/*: committed in frozen/negctl/ (captures .xz-compressed; the sum\n")
        f.write("# is of the uncompressed pcap); matrix/*: made again by make_matrix.py.\n")
        for k in sorted(sums, key=lambda k: (not k.startswith("negctl/"), k)):
            f.write("%s  %s\n" % (sums[k], k))
    print("%d checksums in %s, %d of them new" % (len(sums), SUMS, len(set(sums) - set(old))))
    return 0


def verify(commtap, cache, matrix):
    sums = read_sums()
    errors = []
    names = sorted({k.split("/")[1].rsplit(".", 1)[0].replace(".truth", "")
                    for k in sums if k.startswith("negctl/")})
    for name in names:
        pcap, truth = negctl_bytes(name)
        for key, data in (("negctl/%s.pcap" % name, pcap),
                          ("negctl/%s.truth.json" % name, truth)):
            if sums.get(key) != sha256_bytes(data):
                errors.append("%s: the committed copy does not match SHA256SUMS" % key)
    roce = [n for n in names if n.startswith("perftest-")]
    have_scapy = subprocess.run([SCAPY_PYTHON, "-c", "import scapy.contrib.roce"],
                                capture_output=True).returncode == 0
    if roce and have_scapy:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([SCAPY_PYTHON, os.path.join(HERE, "negctl_roce.py"), tmp, *roce],
                           check=True, capture_output=True)
            for name in roce:
                for ext in (".pcap", ".truth.json"):
                    with open(os.path.join(tmp, name + ext), "rb") as f:
                        if sha256_bytes(f.read()) != sums["negctl/" + name + ext]:
                            errors.append("negctl/%s%s: negctl_roce.py no longer makes it "
                                          "byte for byte" % (name, ext))
    elif roce:
        print("note: %s has no scapy: the RoCE negative controls were not made again"
              % SCAPY_PYTHON)
    cases = make_matrix.subset("frozen") if matrix else []
    with tempfile.TemporaryDirectory(prefix="commtap-frozen-") as tmp:
        for case in cases:  # made afresh: what synth makes now
            errors += ["%s: %s" % (case["name"], e)
                       for e in make_matrix.check_frozen(commtap, case, cache or tmp, sums)]
    for e in errors:
        print("FAIL " + e)
    print("%d negative controls, %d matrix cases checked, %d errors"
          % (len(names), len(cases), len(errors)))
    return 1 if errors else 0


def main():
    args = sys.argv[1:]
    cache = make_matrix.cache_dir(args) if "--cache" in args or args[:1] == ["write"] else None
    if len(args) >= 2 and args[0] == "write":
        rest = [a for a in args[2:] if a != "--cache" and a != cache]
        return write(args[1], rest[0] if rest else None, cache)
    if len(args) >= 2 and args[0] == "verify":
        return verify(args[1], cache, "--matrix" in args)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main() or 0)
