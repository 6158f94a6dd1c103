"""Markdown → observations and relations, the way Basic Memory reads a note (no LLM, no database).

- `- [category] content #tag1 #tag2 (context)` is an observation about the entry;
- `- relation_type [[Target]]` is a typed relation (the words before the link, slugified);
- `- [[Target]]` and any `[[Target]]` in prose is a `links_to` relation;
- `[[Target|shown text]]` and `[[Target#Heading]]` name Target; `[[project/path/Title]]` may
  name another project (resolution decides).

Nothing inside fenced (``` or ~~~) or inline code counts. Liberal in what it accepts: `*` and
`+` bullets, extra spaces, mixed-case categories. Pure: no Django imports, never raises on text.

Every step runs in linear time, because every write parses its body inside the request: the
patterns this replaced were cubic (`- [` then 800 spaces took 0.8 s, a line of 1,000 backticks
and spaces never finished). Bullets, observations and contexts are str scans; the patterns left
cannot backtrack (a bounded prefix, or a possessive run over a class that excludes what follows).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

LINKS_TO = "links_to"
TASK_MARKS = {"x", "", "-", "/"}
MAX_ITEMS = 500  # observations, and relations, kept per entry
MAX_CATEGORY = 60
MAX_CONTENT = 2000
MAX_CONTEXT = 500
MAX_TAG = 60
MAX_TARGET = 500
MAX_TYPE = 60

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"\[\[([^\[\]\n]*+)\]\]")
_TAG = re.compile(r"(?<![\w&/])#(\w[\w\-/]*+)")
_BULLETS = ("-", "*", "+")
# A line that may hold an observation: a bullet, then `[` (an upper bound, fenced lines included).
_MAYBE_OBSERVATION = re.compile(r"^[^\S\n]*[-*+][^\S\n]+\[", re.MULTILINE)


@dataclass(frozen=True)
class Observation:
    category: str
    content: str
    tags: tuple[str, ...] = ()
    context: str = ""
    position: int = 0


@dataclass(frozen=True)
class Relation:
    type: str
    target: str
    shown: str = ""
    heading: str = ""
    position: int = 0


@dataclass
class Graph:
    observations: list[Observation] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


def relation_type(words: str) -> str:
    """`Depends on` → `depends_on`; empty → links_to."""
    text = unicodedata.normalize("NFKC", words).lower()
    slug = re.sub(r"[^\w]+", "_", text, flags=re.UNICODE).strip("_")
    return slug[:MAX_TYPE].strip("_") or LINKS_TO


def split_link(inner: str) -> tuple[str, str, str]:
    """`Target#Heading|shown` → (target, shown, heading); whitespace collapsed."""
    target, _, shown = inner.partition("|")
    target, _, heading = target.partition("#")
    return (
        " ".join(target.split())[:MAX_TARGET],
        " ".join(shown.split()),
        " ".join(heading.split()),
    )


def targets(text: str) -> list[str]:
    """Every link target in `text` outside code, in order (duplicates kept)."""
    return [t for t, _, _ in (split_link(m) for m in _LINK.findall(_strip_code(text))) if t]


def _strip_code(text: str, fence: str | None = None) -> str:
    """The text with fenced blocks and inline code blanked (line structure kept); `fence`: the
    fence still open where the text starts (`fence_after` of the text before it)."""
    lines = []
    for line in _lines(text):
        fence, code = _fence_step(fence, line)
        lines.append("" if code else _blank_inline_code(line))
    return "\n".join(lines)


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _fence_step(fence: str | None, line: str) -> tuple[str | None, bool]:
    """The code fence open after `line`, given the one open before it, and whether the line is
    code (a fence's mark or inside one)."""
    m = _FENCE.match(line)
    if fence is None:
        return (m.group(1)[0] * 3, True) if m else (None, False)
    return (None if m and m.group(1).startswith(fence) else fence), True


def _blank_inline_code(line: str) -> str:
    """`line` with each code span blanked, the spans the old `(`+)(?:(?!\\1).)+?\\1` found.

    That pattern tried every opening width at every backtick; its answer depends only on the
    backtick runs: from a run of width w, with the longest later run m, a span opens at the first
    backtick that leaves fewer than 2·m backticks in the run, is min(w, m) wide and closes at the
    first later run at least that wide (a longer closing run keeps its rest for the next span).
    """
    if "`" not in line:
        return line
    runs, at = [], line.find("`")
    while at >= 0:
        end = at
        while end < len(line) and line[end] == "`":
            end += 1
        runs.append([at, end - at])
        at = line.find("`", end)
    longest_after = [0] * (len(runs) + 1)
    for k in range(len(runs) - 1, -1, -1):
        longest_after[k] = max(runs[k][1], longest_after[k + 1])
    pieces, done, k = [], 0, 0
    while k < len(runs):
        start, width = runs[k]
        later = longest_after[k + 1]
        skip = max(0, width - 2 * later + 1)
        if skip >= width:
            k += 1
            continue
        start, width = start + skip, width - skip
        size = min(width, later)
        close = k + 1
        while runs[close][1] < size:
            close += 1
        close_at, close_width = runs[close]
        pieces += [line[done:start], " " * (close_at + size - start)]
        done = close_at + size
        if close_width > size:
            runs[close] = [done, close_width - size]
            k = close
        else:
            k = close + 1
    return "".join(pieces) + line[done:]


def _bullet_item(line: str) -> str | None:
    """The stripped text after a `-`, `*` or `+` bullet and at least one space, else None."""
    rest = line.lstrip()
    if rest[:1] in _BULLETS and rest[1:2].isspace():
        return rest[1:].strip()
    return None


def _split_context(rest: str) -> tuple[str, str]:
    """(`rest` without a trailing `(context)`, the context); a context needs text before it."""
    if not rest.endswith(")"):
        return rest, ""
    last = len(rest) - 1
    opener = max(rest.rfind("(", 0, last), rest.rfind(")", 0, last))
    if opener <= 0 or rest[opener] != "(":
        return rest, ""
    return rest[:opener].rstrip(), " ".join(rest[opener + 1 : last].split())[:MAX_CONTEXT]


def _observation(item: str, position: int) -> Observation | None:
    """`[category] content #tag (context)`: the category closes at the first bracket after `[`."""
    if not item.startswith("["):
        return None
    close, opener = item.find("]", 1), item.find("[", 1)
    if close < 0 or 0 <= opener < close or item.startswith("(", close + 1):
        return None  # `[[link]]`, `[a](url)` and unclosed brackets are no observations
    category = " ".join(item[1:close].split()).lower()[:MAX_CATEGORY]
    if category in TASK_MARKS:  # `- [x] done` is a task list item, not an observation
        return None
    rest, context = _split_context(item[close + 1 :].strip())
    tags: dict[str, None] = {}
    for tag in _TAG.findall(rest):
        tags.setdefault(tag.lower()[:MAX_TAG], None)
    content = " ".join(_TAG.sub(" ", rest).split()) if tags else " ".join(rest.split())
    if not category or not (content or tags):
        return None
    return Observation(category, content[:MAX_CONTENT], tuple(tags), context, position)


def fence_after(text: str) -> str | None:
    """The code fence still open at the end of `text` (its mark, as _strip_code tracks it), or
    None. A text with no run of three backticks or tildes opens none: no line is scanned."""
    if "```" not in text and "~~~" not in text:
        return None
    fence = None
    for line in _lines(text):
        fence, _ = _fence_step(fence, line)
    return fence


def added_lines(old: str, new: str) -> tuple[str, int, str | None] | None:
    """When `new` is `old` with lines added after its end (its trailing whitespace aside, as an
    append leaves it) or before its start (a prepend), and nothing else changed how a line
    parses: (the added lines' text, their first line's number in `new`, the code fence open
    above them). None for any other change."""
    if "\r" in old or "\r" in new:  # a lone CR is a line break to the parser, not to split()
        return None
    stem = old.rstrip()
    if stem and new.startswith(stem) and new[len(stem) : len(stem) + 1] == "\n":
        # Only whitespace left the old text's end, which no line's facts depend on.
        return new[len(stem) + 1 :], stem.count("\n") + 1, fence_after(stem)
    if old and new.endswith(old) and new[-len(old) - 1 : -len(old)] == "\n":
        head = new[: -len(old) - 1]
        if fence_after(head) is None:  # a fence left open would swallow the old lines
            return head, 0, None
    return None


def within_caps(old: str, part: str) -> tuple[bool, bool]:
    """Whether the parse of old and part together stays under MAX_ITEMS observations, and under
    MAX_ITEMS relations, so that no fact of that kind is dropped (counted from above, without
    parsing old: a fact needs a bullet and `[`, a relation a `[[`, which makes at most two)."""
    observations = len(_MAYBE_OBSERVATION.findall(old)) + len(_MAYBE_OBSERVATION.findall(part))
    relations = 2 * (old.count("[[") + part.count("[["))
    return observations <= MAX_ITEMS, relations <= MAX_ITEMS


def parse(text: str | None, *, first_line: int = 0, fence: str | None = None) -> Graph:
    """The observations and relations of a Markdown body (each relation once per type+target).
    A part of a body: `first_line` is its first line's number in the body (positions count from
    it) and `fence` the code fence open where it starts (`fence_after` of the text above)."""
    graph = Graph()
    if not text:
        return graph
    seen: set[tuple[str, str]] = set()

    def add(kind: str, inner: str, position: int) -> None:
        target, shown, heading = split_link(inner)
        key = (kind, target.lower())
        if target and key not in seen and len(graph.relations) < MAX_ITEMS:
            seen.add(key)
            graph.relations.append(Relation(kind, target, shown, heading, position))

    for number, line in enumerate(_strip_code(text, fence).split("\n"), first_line):
        item = _bullet_item(line)
        if item is not None:
            obs = _observation(item, number)
            if obs is not None and len(graph.observations) < MAX_ITEMS:
                graph.observations.append(obs)
            first = _LINK.search(item)
            if obs is None and first is not None:
                words = item[: first.start()]
                if "[" not in words and "]" not in words and len(words) <= 120:
                    add(relation_type(words), first.group(1), number)
        for m in _LINK.finditer(line):
            add(LINKS_TO, m.group(1), number)
    # A typed relation makes the same target's links_to redundant.
    typed = {r.target.lower() for r in graph.relations if r.type != LINKS_TO}
    graph.relations = [
        r for r in graph.relations if r.type != LINKS_TO or r.target.lower() not in typed
    ]
    return graph
