#!/usr/bin/env python3
"""Check that no source includes a header of a higher layer or of another app.

The includes are resolved as the compiler resolved them: every object's
dependencies come from `ninja -t deps` (the headers gcc actually opened),
its source from compile_commands.json. So an include written by bare name
through an include directory is caught as surely as a relative one.

Layers, lowest first (docs/architecture.md):
  0 common/                        what every layer may use (libc only)
  1 dataplane/                     the fast path
  2 profiles/, analysis/           the model and the slow path (analysis may
                                   use profiles; profiles may not use analysis)
  3 export/, ebpf/, host_gpu/      reports people read; the host producers'
                                   own libraries
  4 app_common/                    what the apps share (their options, the
                                   command-line reader)
  5 cli/, agent/, mirror/          the apps: none includes another app's headers
Tests (test/, host_gpu/test/) may include anything and are not checked.

  check_layers.py SOURCE_ROOT BUILD_ROOT
"""
import json
import os
import subprocess
import sys

APPS = ("cli", "agent", "mirror")
LAYERS = [
    ("common", 0), ("dataplane", 1), ("profiles", 2),
    ("analysis", 2), ("export", 3), ("ebpf", 3), ("host_gpu", 3),
    ("app_common", 4), ("cli", 5), ("agent", 5), ("mirror", 5),
]
EXEMPT = ("test/", "host_gpu/test/")


def folder_of(rel):
    """The layer folder a source-relative path belongs to, or None."""
    for folder, _ in LAYERS:
        if rel == folder or rel.startswith(folder + "/"):
            return folder
    return None


def layer(folder):
    return dict(LAYERS)[folder]


def violation(src, hdr):
    """Why src may not include hdr (both source-relative), or None."""
    if src.startswith(EXEMPT):
        return None
    a, b = folder_of(src), folder_of(hdr)
    if a is None or b is None or a == b:
        return None
    if a in APPS and b in APPS:
        return "an app includes another app's header"
    if layer(b) > layer(a):
        return "includes a header of a higher layer (%s is layer %d, %s layer %d)" % (
            b, layer(b), a, layer(a))
    if a == "profiles" and b == "analysis":
        return "profiles/ may not use analysis/"
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_layers.py SOURCE_ROOT BUILD_ROOT")
    src_root, build = (os.path.realpath(p) for p in sys.argv[1:])
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    source_of = {}
    for c in commands:
        out = c.get("output")
        path = os.path.realpath(os.path.join(c["directory"], c["file"]))
        if out:
            source_of[out] = path
    deps = subprocess.run(["ninja", "-C", build, "-t", "deps"], check=True,
                          capture_output=True, text=True).stdout
    bad, checked, obj = [], 0, None
    for line in deps.splitlines():
        if line and not line.startswith(" "):
            obj = line.split(":")[0]
            continue
        dep = line.strip()
        if not dep or obj not in source_of:
            continue
        src = source_of[obj]
        hdr = os.path.realpath(os.path.join(build, dep))
        if not src.startswith(src_root + "/") or not hdr.startswith(src_root + "/"):
            continue  # system headers, generated ones in the build tree
        if hdr.startswith(build + "/"):
            continue
        rs, rh = os.path.relpath(src, src_root), os.path.relpath(hdr, src_root)
        checked += 1
        why = violation(rs, rh)
        if why:
            bad.append("%s -> %s: %s" % (rs, rh, why))
    if not source_of or not checked:
        sys.exit("no dependency records found in %s (build it first)" % build)
    for b in sorted(set(bad)):
        print("FAIL:", b)
    print("%d includes of the project's own headers checked, %d cross a layer or an app" %
          (checked, len(set(bad))))
    print("%d passed, %d failed" % (1 if not bad else 0, 1 if bad else 0))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
