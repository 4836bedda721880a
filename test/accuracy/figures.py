"""The figures of issue 29 that score.py, corpus_accuracy.py, gate.py and
dev_report.py share: the operation recognised per flow, the bytes wrong
at high confidence, the reliability of the confidence (a calibration
curve) and whether the layout's `sharded` is right. Stdlib only.

A truth flow may carry "operation" (the collective carrying most of its
bytes) and "operation_bytes" ({op: bytes}); the report's flow may carry
"operation". A flow is right for the bytes of its reported operation in its
truth's operation_bytes (only "operation": all its bytes when they agree);
a flow the report misses, or one with no operation, is wrong.
"""

CONFIDENT = 0.8
# the reliability table's bins of class_confidence: [0, 0.2), ..., [0.8, 1.0]
BINS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
NONE = "(none)"        # the report's flow has no "operation" (not written yet)
NOT_FOUND = "(not found)"


def flow_key(f):
    if f["transport"] == "roce":
        return ("roce", f["src"], f["dst"], f["qpn"])
    return (f["transport"], f["src"], f["dst"], f["sport"], f["dport"])


def truth_has_operations(truth):
    return any("operation" in f or "operation_bytes" in f for f in truth["flows"])


def operations(truth, found):
    """found: {flow_key: report flow}. (share of bytes right or None when
    the truth names no operation, confusion {truth op: {reported: bytes}})."""
    if not truth_has_operations(truth):
        return None, {}
    total = right = 0
    confusion = {}
    for f in truth["flows"]:
        per = f.get("operation_bytes") or ({f["operation"]: f["bytes"]} if "operation" in f
                                           else None)
        if per is None:
            continue
        g = found.get(flow_key(f))
        got = NOT_FOUND if g is None else (g.get("operation") or NONE)
        total += f["bytes"]
        right += per.get(got, 0)
        want = f.get("operation") or max(per, key=per.get)
        row = confusion.setdefault(want, {})
        row[got] = row.get(got, 0) + f["bytes"]
    return (right / total if total else None), confusion


def bin_of(conf):
    for i in range(len(BINS) - 2, -1, -1):
        if conf >= BINS[i]:
            return i
    return 0


def reliability(truth, found):
    """Per confidence bin, [bytes, bytes right]; a missing flow counts in
    the lowest bin, wrong."""
    table = [[0, 0] for _ in BINS[:-1]]
    for f in truth["flows"]:
        g = found.get(flow_key(f))
        conf = (g.get("class_confidence") or 0) if g else 0
        b = table[bin_of(conf)]
        b[0] += f["bytes"]
        b[1] += f["bytes"] if g and (g.get("class") or "Other") == f["class"] else 0
    return table


def confident_wrong(truth, found):
    """Share of all bytes in flows reported wrong at confidence >= CONFIDENT."""
    total = wrong = 0
    for f in truth["flows"]:
        g = found.get(flow_key(f))
        total += f["bytes"]
        if g and (g.get("class_confidence") or 0) >= CONFIDENT \
                and (g.get("class") or "Other") != f["class"]:
            wrong += f["bytes"]
    return wrong / total if total else None


def sharded(truth, report):
    """{"truth", "inferred", "right"}; right is None where the truth does
    not say (a report without the field is wrong where it does)."""
    want = (truth.get("layout") or {}).get("sharded")
    got = ((report.get("classification") or {}).get("inferred_layout") or {}).get("sharded")
    return {"truth": want, "inferred": got, "right": None if want is None else got is want}


def pool_reliability(tables):
    out = [[0, 0] for _ in BINS[:-1]]
    for t in tables:
        for i, (b, r) in enumerate(t or []):
            out[i][0] += b
            out[i][1] += r
    return out


def reliability_rows(table):
    """[{"bin": "0.8-1.0", "bytes", "right"}] of a table, for --json."""
    return [{"bin": "%.1f-%.1f" % (BINS[i], BINS[i + 1]), "bytes": b,
             "right": (r / b) if b else None} for i, (b, r) in enumerate(table)]


def show_reliability(table, indent="  "):
    total = sum(b for b, _ in table) or 1
    cells = []
    for row in reliability_rows(table):
        cells.append("%s %s/%.0f%%" % (
            row["bin"], "-" if row["right"] is None else "%.1f%%" % (100 * row["right"]),
            100 * row["bytes"] / total))
    return indent + "reliability (confidence bin: bytes right/share of bytes) " + \
        ", ".join(cells)


def show_op_confusion(conf):
    parts = []
    for t in sorted(conf):
        row = conf[t]
        tot = sum(row.values())
        cells = ", ".join("%s %.1f%%" % (c, 100 * b / tot)
                          for c, b in sorted(row.items(), key=lambda kv: -kv[1]))
        parts.append("%s -> %s" % (t, cells))
    return "; ".join(parts)


# The summary over cases: per figure the mean and the worst case. "higher"
# says which way is better.
SUMMARY = (("bytes right", "accuracy", True), ("op right", "operation_accuracy", True),
           ("confident wrong", "confident_wrong", False),
           ("confident right", "calibration", True), ("confident share", "confident_share", True))


def summary(named):
    """named: [(case, figures dict)]. {figure: {"mean", "worst", "worst_case", "cases"}}."""
    out = {}
    for label, k, higher in SUMMARY:
        vals = [(n, s.get(k)) for n, s in named if s.get(k) is not None]
        if not vals:
            out[k] = {"label": label, "mean": None, "worst": None, "worst_case": None,
                      "cases": 0}
            continue
        worst = (min if higher else max)(vals, key=lambda v: v[1])
        out[k] = {"label": label, "mean": sum(v for _, v in vals) / len(vals),
                  "worst": worst[1], "worst_case": worst[0], "cases": len(vals)}
    return out


def show_summary(summ):
    cells = []
    for k, s in summ.items():
        if s["worst"] is None:
            cells.append("%s -" % s["label"])
        else:
            cells.append("%s mean %.1f%% worst %.1f%% (%s)" % (
                s["label"], 100 * s["mean"], 100 * s["worst"], s["worst_case"]))
    return "summary over cases: " + "; ".join(cells)
