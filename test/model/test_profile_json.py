#!/usr/bin/env python3
"""commtap predict: a profile that is not exactly one JSON object is refused with its position.

    test_profile_json.py COMMTAP PROFILE.json

The bundled profile predicts; the same with trailing garbage after the object,
or with invalid UTF-8 inside a string, is one line of error naming the line
and byte, exit 1.
"""
import os
import subprocess
import sys
import tempfile


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    good = open(profile, "rb").read()
    name_at = good.index(b'"name"') + len(b'"name": "')
    cases = {
        "clean": (good, None),
        "trailing garbage": (good + b'\n{"name": "second"}\n', "trailing data after the JSON object"),
        "invalid UTF-8": (good[:name_at] + b"\xff\xfe" + good[name_at:], "invalid utf-8"),
    }
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, (data, want) in cases.items():
            path = os.path.join(tmp, "p.json")
            open(path, "wb").write(data)
            p = subprocess.run([commtap, "predict", path], capture_output=True, text=True)
            err = p.stderr.strip()
            ok = p.returncode == 0 if want is None else (
                p.returncode == 1 and len(err.splitlines()) == 1 and want in err
                and "line " in err and "byte " in err)
            print(f"{what}: exit {p.returncode} {err}")
            if not ok:
                failures.append(f"{what}: exit {p.returncode}, stderr {err!r}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
