#!/usr/bin/env python3
"""Check that no two source files call each other, directly or around a circle.

The calls are read from the build's objects as the linker sees them: each
object's defined and undefined symbols (nm -P), its source from
compile_commands.json. File A depends on file B when A uses a symbol B
defines; a circle is a strongly connected set of two or more files (Tarjan).
Calls inside one file and to static functions are not seen (they need no
symbol), nor headers' inline functions: a circle here is one between
translation units, which the issue's "no circles" goal is about.

The circles issue 34 names and has not removed yet are listed in KNOWN: a
circle that is not inside one of them fails; a known one that is gone is
reported so the list can shrink. Tests (test/, host_gpu/test/) are not
checked.

  check_circles.py SOURCE_ROOT BUILD_ROOT
"""
import collections
import json
import os
import subprocess
import sys

EXEMPT = ("test/", "host_gpu/test/")
# Circles still in the code (issue 34, item 2): the classifiers call back
# ct_class_set, jobs.c and periodicity.c each other. (The detectors' circle
# went when their shared helpers left the registry for anomaly_util.c.)
KNOWN = [
    {"analysis/jobs.c", "analysis/periodicity.c"},
    {"analysis/classify.c", "analysis/classify_groups.c", "analysis/classify_profile.c",
     "analysis/classify_signature.c", "analysis/layout_check.c"},
]
DEFINED = set("TDBRCGSVWi")  # nm -P types of a symbol an object defines


def sources(src_root, build):
    """object path -> its source relative to src_root, for the project's own sources."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    out = {}
    for c in commands:
        obj = c.get("output")
        src = os.path.realpath(os.path.join(c["directory"], c["file"]))
        if not obj or not src.startswith(src_root + "/"):
            continue
        rel = os.path.relpath(src, src_root)
        path = os.path.join(build, obj)
        if not rel.startswith(EXEMPT) and os.path.exists(path):
            out[path] = rel
    return out


def graph(objects):
    """source -> the sources whose symbols it uses."""
    defs, uses = collections.defaultdict(set), collections.defaultdict(set)
    for obj, src in objects.items():
        text = subprocess.run(["nm", "-P", obj], check=True, capture_output=True,
                              text=True).stdout
        for line in text.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            if parts[1] == "U":
                uses[src].add(parts[0])
            elif parts[1] in DEFINED:
                defs[parts[0]].add(src)
    edges = collections.defaultdict(set)
    for src, names in uses.items():
        for name in names:
            edges[src] |= defs.get(name, set()) - {src}
    for src in objects.values():
        edges.setdefault(src, set())
    return edges


def circles(edges):
    """The strongly connected sets of two or more files (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src_root, build = (os.path.realpath(p) for p in sys.argv[1:])
    objects = sources(src_root, build)
    if not objects:
        sys.exit("no objects found in %s (build it first)" % build)
    found = circles(graph(objects))
    bad = [c for c in found if not any(c <= k for k in KNOWN)]
    for k in KNOWN:
        if not any(c & k for c in found):
            print("gone (remove it from KNOWN):", " <-> ".join(sorted(k)))
    for c in found:
        print("%s: %s" % ("FAIL" if c in bad else "known", " <-> ".join(sorted(c))))
    print("%d files' calls checked, %d circles, %d not known" %
          (len(objects), len(found), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
