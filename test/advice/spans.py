"""What the advice tests share: the length of a union of time spans."""


def union(spans):
    """The total length covered by (start, end) spans, overlaps counted once."""
    total, start, end = 0, None, None
    for s, e in sorted(spans):
        if end is not None and s <= end:
            end = max(end, e)
            continue
        if end is not None:
            total += end - start
        start, end = s, e
    return total + (end - start if end is not None else 0)
