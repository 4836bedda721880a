#!/usr/bin/env python3
"""Freeze recorded realtrain scenarios as the held-out part of the corpus.

  freeze.py CACHE_REAL_DIR DEST SCENARIO...

Copies each scenario's truth.json and its capture, gzipped without a name
or time stamp (the same capture always gives the same bytes), into
DEST/SCENARIO/, and adds their lines to DEST/SHA256SUMS, which keeps the
lines of every scenario frozen before. A scenario already frozen is
refused: a held-out recording is never replaced by a later one.
"""
import gzip
import hashlib
import os
import shutil
import sys


def main():
    if len(sys.argv) < 4:
        sys.stderr.write("usage: freeze.py CACHE_REAL_DIR DEST SCENARIO...\n")
        return 2
    src, dest, scenarios = sys.argv[1], sys.argv[2], sys.argv[3:]
    sums_path = os.path.join(dest, "SHA256SUMS")
    sums = open(sums_path).readlines() if os.path.exists(sums_path) else []
    frozen = {line.split()[1].split("/")[0] for line in sums if line.strip()}
    again = [s for s in scenarios if s in frozen or os.path.exists(os.path.join(dest, s))]
    if again:
        sys.stderr.write("freeze.py: already frozen: %s\n" % " ".join(again))
        return 1
    for s in scenarios:
        os.makedirs(os.path.join(dest, s))
        shutil.copyfile(os.path.join(src, s, "truth.json"), os.path.join(dest, s, "truth.json"))
        with open(os.path.join(src, s, "capture.pcap"), "rb") as f, \
                open(os.path.join(dest, s, "capture.pcap.gz"), "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9,
                              mtime=0) as out:
            shutil.copyfileobj(f, out)
        for name in ("capture.pcap.gz", "truth.json"):
            with open(os.path.join(dest, s, name), "rb") as f:
                sums.append("%s  %s/%s\n" % (hashlib.sha256(f.read()).hexdigest(), s, name))
    with open(sums_path, "w") as f:
        f.writelines(sums)
    return 0


if __name__ == "__main__":
    sys.exit(main())
