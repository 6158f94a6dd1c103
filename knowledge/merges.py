"""Three-way line merges: what a stale writer meant to change, applied to the text as it is now.

base is the version the writer read, theirs the text now, mine what the writer sent. Each side's
changes are knowledge.diffs opcodes against base; changes that touch different base lines are
both kept, changes to the same lines (or an insertion inside or at the edge of a line the other
side changed) are a conflict, reported with the base line numbers and both sides' text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.diffs import line_opcodes


@dataclass(frozen=True)
class Change:
    """Lines base[start:stop] replaced by `lines` (start == stop: inserted before base[start])."""

    start: int
    stop: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Merge:
    body: str | None  # None when the two sides conflict
    conflicts: list[dict] = field(default_factory=list)
    mine: list[Change] = field(default_factory=list)  # the writer's own changes, when they merge


def changes(base: list[str], other: list[str]) -> list[Change]:
    return [
        Change(i1, i2, tuple(other[j1:j2]))
        for tag, i1, i2, j1, j2 in line_opcodes(base, other)
        if tag != "equal"
    ]


def touches(a: Change, b: Change) -> bool:
    """Whether two changes to base collide: they overlap, or an insertion falls inside or at
    the edge of the other change."""
    if a.start == a.stop or b.start == b.stop:  # an insertion meets a change at or around it
        return b.start <= a.start <= b.stop if a.start == a.stop else a.start <= b.start <= a.stop
    return a.start < b.stop and b.start < a.stop


def clashes(ours: list[Change], others: list[Change]) -> list[list[Change]]:
    """For each of `ours`, the changes of `others` it touches, in one sweep.

    Each side's changes come from one diff: sorted by start and disjoint, so their stops are
    sorted too. The first other that can still touch a change only moves forward, and the scan
    from it stops at the first other starting past the change: every pair looked at touches
    (or is the one that ends the scan), and two disjoint sorted lists touch in at most
    len(ours) + len(others) pairs. Linear, where comparing every pair was n·m."""
    found: list[list[Change]] = []
    first = 0
    for change in ours:
        while first < len(others) and others[first].stop < change.start:
            first += 1
        clash, at = [], first
        while at < len(others) and others[at].start <= change.stop:
            if touches(change, others[at]):
                clash.append(others[at])
            at += 1
        found.append(clash)
    return found


def merge(base: str, theirs: str, mine: str) -> Merge:
    """Both sides' changes to `base` in one text, or the lines where they collide."""
    b, t, m = base.split("\n"), theirs.split("\n"), mine.split("\n")
    ours, others = changes(b, m), changes(b, t)
    picked: list[Change] = []
    conflicts = []
    for change, clash in zip(ours, clashes(ours, others), strict=True):
        if not clash or all(o == change for o in clash):
            picked.append(change)
            continue
        start = min(c.start for c in [change, *clash])
        stop = max(c.stop for c in [change, *clash])
        conflicts.append({
            "lines": f"{start + 1}-{max(stop, start + 1)}",
            "base": "\n".join(b[start:stop]),
            "theirs": "\n".join(line for o in clash for line in o.lines),
            "mine": "\n".join(change.lines),
        })  # fmt: skip
    if conflicts:
        return Merge(None, conflicts)
    kept = set(picked)
    picked += [o for o in others if o not in kept]
    out: list[str] = []
    at = 0
    # At one position an insertion goes before a change that starts there.
    for change in sorted(picked, key=lambda c: (c.start, c.stop != c.start)):
        out += b[at : change.start]
        out += change.lines
        at = max(at, change.stop)
    out += b[at:]
    return Merge("\n".join(out), [], ours)


def find_replace(base: list[str], change: Change, current: str) -> tuple[str, str] | None:
    """(find, replace) doing `change` on `current` once, when its anchor occurs there exactly
    once: the lines it replaced, or for an insertion the line before (or after) it."""
    if change.start < change.stop:
        find = "\n".join(base[change.start : change.stop])
        replace = "\n".join(change.lines)
    elif change.start > 0:
        find = base[change.start - 1]
        replace = "\n".join([find, *change.lines])
    elif base and base[0]:
        find = base[0]
        replace = "\n".join([*change.lines, find])
    else:
        return None
    if not find.strip() or current.count(find) != 1:
        return None
    return find, replace
