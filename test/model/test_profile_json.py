#!/usr/bin/env python3
"""commtap predict: a profile that is not exactly one JSON object is refused with its position.

    test_profile_json.py COMMTAP PROFILE.json

The bundled profile predicts; the same with trailing garbage after the object,
with invalid UTF-8 inside a string, or with a key repeated in one object
(json-c would keep the last value silently; "\u0074" is "t") is one line of
error naming the line and byte, exit 1. Braces, quotes and a repeated key
inside a string, and the same key in two objects, are no duplicates; every
bundled profile beside PROFILE still predicts.
"""
import glob
import os
import subprocess
import sys
import tempfile


def main():
    commtap, profile = sys.argv[1], sys.argv[2]
    good = open(profile, "rb").read()
    name_at = good.index(b'"name"') + len(b'"name": "')
    par_at = good.index(b"{", good.index(b'"parallelism"')) + 1

    def at(data, off, fmt="line %d (byte %d)"):  # the line and byte the error must name
        return fmt % (data.count(b"\n", 0, off) + 1, off)

    # a second "t" in $.parallelism, before the profile's own: that one is the repeat
    extra_t = b'\n    "t": 2,'
    dup_t = good[:par_at] + extra_t + good[par_at:]
    repeat = good.index(b'"t"', par_at) + len(extra_t)
    # "name" again at the end of the top object, spelled with an escape
    end = good.rindex(b"}")
    dup_name = good[:end] + b', "na\\u006de": "again"' + good[end:]
    # keys, braces and quotes inside a string value are text
    in_string = good[:name_at] + b'}{\\"t\\": 1, \\"t\\": [' + good[name_at:]
    cases = {
        "clean": (good, None),
        "trailing garbage": (good + b'\n{"name": "second"}\n', "trailing data after the JSON object"),
        "invalid UTF-8": (good[:name_at] + b"\xff\xfe" + good[name_at:], "invalid utf-8"),
        "duplicate key": (dup_t, '%s: duplicate key "t" (first at %s)'
                          % (at(dup_t, repeat), at(dup_t, par_at + extra_t.index(b'"'), "line %d, byte %d"))),
        "duplicate key, escaped": (dup_name, '%s: duplicate key "name" (first at %s)'
                                   % (at(dup_name, dup_name.rindex(b'"na')),
                                      at(dup_name, good.index(b'"name"'), "line %d, byte %d"))),
        "keys inside a string": (in_string, None),
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
    others = sorted(glob.glob(os.path.join(os.path.dirname(profile), "*.json")))
    for path in others:
        p = subprocess.run([commtap, "predict", path], capture_output=True, text=True)
        if p.returncode != 0:
            failures.append(f"bundled {os.path.basename(path)}: exit {p.returncode}, {p.stderr.strip()!r}")
    print(f"bundled: {len(others)} profiles predicted")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
