#!/usr/bin/env python3
"""Every key the report loader reads is documented.

    check_report_keys.py export/report_load.c docs/report-schema.md

export/report_load.c spells each key of commtap.report/v1 that the
exporters read once: in its field tables (F/FH entries) and in the calls
that walk sections and lists (section, list, get, read_enum, read_u64s).
Each must appear, backquoted, in docs/report-schema.md (alone or in a
path such as `capture.malformed.by_reason`), so that a key added to the
loader without its documentation fails here.
"""
import re
import sys

# a loader call or table entry naming a key: the first string literal of a key's shape
TABLE = re.compile(r'\bFH?\(struct [a-z_]+, "([A-Za-z_]+)"')
CALLS = re.compile(r'\b(?:section|list|get|read_enum|read_u64s)\([^;]*?"([A-Za-z_]+)"')


def loader_keys(text):
    return set(TABLE.findall(text)) | set(CALLS.findall(text))


def documented(text):
    names = set()
    for ticked in re.findall(r"`([^`]+)`", text):
        names.update(p for p in re.split(r"[.\[\]/ ,()]+", ticked) if p)
    return names


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    keys = loader_keys(open(sys.argv[1]).read())
    doc = documented(open(sys.argv[2]).read())
    if len(keys) < 50:  # the loader reads about a hundred: the pattern no longer matches it
        sys.exit(f"only {len(keys)} keys found in {sys.argv[1]}: update this check")
    missing = sorted(keys - doc)
    print(f"{len(keys)} keys in the loader, {len(keys) - len(missing)} documented")
    for k in missing:
        print(f"FAIL: '{k}' is read by {sys.argv[1]} but not in {sys.argv[2]}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
