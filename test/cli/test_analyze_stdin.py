#!/usr/bin/env python3
"""`commtap analyze -`: a capture on standard input (issue 31, item 2), as
`tcpdump -w - | commtap analyze -` gives it. Each capture through a pipe
gives the report the file gives (the capture's name aside), classic pcap and
pcapng alike (pcapng made by editcap, where installed); a stream cut short
exits 2 with the error named and the report of the packets read before; a
stream that is no capture exits 1.

  test_analyze_stdin.py COMMTAP CAPTURE...
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def analyze(commtap, src, out, data=None):
    """Run analyze on src ("-": data on stdin); (exit status, stderr, report or None)."""
    r = subprocess.run([commtap, "analyze", "--json", out, src], input=data,
                       capture_output=True, timeout=120)
    doc = None
    if os.path.exists(out):
        with open(out) as f:
            doc = json.load(f)
        os.unlink(out)
    return r.returncode, r.stderr.decode(errors="replace"), doc


def without_capture_name(doc):
    doc = dict(doc)
    cap = dict(doc.pop("capture"))
    cap.pop("file", None)
    return json.dumps(doc, sort_keys=True), json.dumps(cap, sort_keys=True)


def main():
    commtap, captures = sys.argv[1], [c for c in sys.argv[2:] if os.path.exists(c)]
    if not captures:
        print("SKIP: no capture (../shared/pcaps absent)")
        return 77
    fail = 0
    tmp = tempfile.mkdtemp(prefix="commtap-stdin-")
    out = os.path.join(tmp, "r.json")
    try:
        inputs = list(captures)
        if shutil.which("editcap"):
            ng = os.path.join(tmp, "first.pcapng")
            subprocess.run(["editcap", "-F", "pcapng", captures[0], ng], check=True)
            inputs.append(ng)
        else:
            print("note: no editcap, pcapng not tried")
        for cap in inputs:
            with open(cap, "rb") as f:
                data = f.read()
            rc_f, err_f, file_doc = analyze(commtap, cap, out)
            rc_p, err_p, pipe_doc = analyze(commtap, "-", out, data)
            same = file_doc is not None and pipe_doc is not None and \
                without_capture_name(file_doc) == without_capture_name(pipe_doc)
            ok = rc_f == rc_p == 0 and same
            print("%s %s: file %d, pipe %d, reports %s" % ("ok  " if ok else "FAIL",
                  os.path.basename(cap), rc_f, rc_p, "the same" if same else "differ"))
            if not ok:
                print(err_f, err_p)
                fail = 1
        # cut short: exit 2, the error named, the packets before reported
        with open(captures[0], "rb") as f:
            data = f.read()
        rc, err, doc = analyze(commtap, "-", out, data[:len(data) * 2 // 3])
        ok = rc == 2 and "standard input" in err and doc is not None and \
            doc["capture"]["packets"] > 0 and not doc["capture"]["complete"]
        print("%s cut short: exit %d, %s packets reported, stderr: %s" %
              ("ok  " if ok else "FAIL", rc, doc and doc["capture"]["packets"], err.strip()))
        fail |= not ok
        rc, err, doc = analyze(commtap, "-", out, b"this is no capture\n" * 10)
        ok = rc == 1 and "standard input" in err and "not a readable" in err
        print("%s not a capture: exit %d, stderr: %s" % ("ok  " if ok else "FAIL", rc,
                                                          err.strip()))
        fail |= not ok
    finally:
        shutil.rmtree(tmp)
    return fail


if __name__ == "__main__":
    sys.exit(main())
