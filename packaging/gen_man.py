#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A man page from a program's --help, which commtap generates from its
option tables (common/params.c): usage, what it does, the options' two
columns, the notes after them. Nothing is written by hand, so a page
cannot fall behind its program.

usage: gen_man.py --name commtap-analyze --summary TEXT --version V -o OUT
                  [--argv0 NAME] -- PROGRAM ARGS...
"""
import argparse
import re
import subprocess
import sys

# An option's head: "-o, --output FILE", "--window S", "--table"; its
# argument is an upper-case word ("S", "ADDR:PORT", "[N]") that --help puts
# one space after the name.
OPTION = re.compile(r"^  (-[a-zA-Z], )?(--[a-z0-9][a-z0-9-]*)( [A-Z\[][A-Z0-9_:.,|\[\]+-]*)?(\s+|$)(.*)$")
CONTINUATION = re.compile(r"^ {5,}(\S.*)$")


def roff(text):
    """Text as roff reads it: backslashes and hyphens escaped, no line led by a dot."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


LIST_ITEM = re.compile(r"^  ([a-z][a-z0-9-]*) {2,}(\S.*)$")


def parse(help_text):
    """usage lines, description paragraphs, lists ("commands:" and their
    items), options, note paragraphs, the exit statuses."""
    usage, description, lists, options, notes, exits = [], [], [], [], [], []
    indent = None
    for line in help_text.splitlines():
        if not line.strip():
            continue
        m = OPTION.match(line)
        if line.startswith("exit status:"):
            exits.append(line[len("exit status:"):].strip())
        elif usage and not notes and m:
            short, name, arg, _, text = m.groups()
            options.append([(short or "") + name, (arg or "").strip(), [text] if text else []])
        elif options and not notes and CONTINUATION.match(line):
            options[-1][2].append(CONTINUATION.match(line).group(1))
        elif options:
            # a paragraph per change of indentation
            level = len(line) - len(line.lstrip())
            if not notes or level != indent:
                notes.append([])
            indent = level
            notes[-1].append(line.strip())
        elif line.startswith("usage:") or (usage and not description and not lists and
                                           line.startswith("       ")):
            usage.append(line[len("usage:"):].strip() if line.startswith("usage:") else line.strip())
        elif line.rstrip().endswith(":") and not line.startswith(" "):
            lists.append([line.strip().rstrip(":"), []])
        elif lists and LIST_ITEM.match(line):
            lists[-1][1].append(LIST_ITEM.match(line).groups())
        elif lists:
            notes.append([line.strip()])
        else:
            description.append(line.strip())
    return usage, description, lists, options, notes, exits


def page(name, summary, version, help_text):
    usage, description, lists, options, notes, exits = parse(help_text)
    out = [f'.TH {name.upper()} 1 "" "commtap {version}" "commtap"',
           ".SH NAME", f"{roff(name)} \\- {roff(summary)}"]
    if usage:
        out.append(".SH SYNOPSIS")
        for i, u in enumerate(usage):
            if i:
                out.append(".br")
            out.append(roff(u))
    if description:
        out += [".SH DESCRIPTION", roff(" ".join(description))]
    for title, items in lists:
        out.append(f".SH {roff(title.upper())}")
        for item, text in items:
            out += [".TP", f"\\fB{roff(item)}\\fR", roff(text)]
    if options:
        out.append(".SH OPTIONS")
        for head, arg, text in options:
            heads = ", ".join(f"\\fB{roff(h)}\\fR" for h in head.split(", "))
            out += [".TP", heads + (f" \\fI{roff(arg)}\\fR" if arg else ""), roff(" ".join(text))]
    if notes:
        out.append(".SH NOTES")
        for i, paragraph in enumerate(notes):
            out += ([".PP"] if i else []) + [roff(" ".join(paragraph))]
    if exits:
        out += [".SH EXIT STATUS", roff(" ".join(exits))]
    # commtap(1) points at its commands' pages, the others back at commtap(1)
    pages = [f"commtap-{item}" for _, items in lists for item, _ in items] or ["commtap"]
    out += [".SH SEE ALSO",
            ", ".join(f"\\fB{roff(p)}\\fR(1)" for p in pages if p != name) + ", /usr/share/doc/commtap"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("-o", "--output", required=True)
    # a program that names itself by its argv[0] (its build path otherwise)
    ap.add_argument("--argv0")
    # the program's own arguments after the first "--", untouched (commtap-mirror has a "--")
    cut = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    a = ap.parse_args(sys.argv[1:cut])
    if cut + 1 >= len(sys.argv):
        sys.exit("gen_man.py: no program after --")
    binary = sys.argv[cut + 1]
    program = [a.argv0 or binary] + sys.argv[cut + 2:]
    run = subprocess.run(program, executable=binary, capture_output=True, text=True, timeout=60)
    # a program that prints its usage on stderr and exits 1 (no --help) still has a page
    text = run.stdout or run.stderr
    if not text.strip():
        sys.exit(f"gen_man.py: {' '.join(program)} printed no help")
    with open(a.output, "w") as f:
        f.write(page(a.name, a.summary, a.version, text))


if __name__ == "__main__":
    main()
