"""Markdown → observations and relations, the way Basic Memory reads a note (no LLM, no database).

- `- [category] content #tag1 #tag2 (context)` is an observation about the entry;
- `- relation_type [[Target]]` is a typed relation (the words before the link, slugified);
- `- [[Target]]` and any `[[Target]]` in prose is a `links_to` relation;
- `[[Target|shown text]]` and `[[Target#Heading]]` name Target; `[[project/path/Title]]` may
  name another project (resolution decides).

Nothing inside fenced (``` or ~~~) or inline code counts. Liberal in what it accepts: `*` and
`+` bullets, extra spaces, mixed-case categories. Pure: no Django imports, never raises on text.
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
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_LINK = re.compile(r"\[\[([^\[\]\n]*?)\]\]")
_OBSERVATION = re.compile(r"^\[\s*([^\[\]]+?)\s*\](?!\()\s*(.*)$")
_TAG = re.compile(r"(?<![\w&/])#([\w][\w\-/]*)", re.UNICODE)
_CONTEXT = re.compile(r"\(([^()]*)\)\s*$")


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


def _strip_code(text: str) -> str:
    """The text with fenced blocks and inline code blanked (line structure kept)."""
    lines, fence = [], None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            lines.append("")
        elif fence is not None:
            if m and m.group(1).startswith(fence):
                fence = None
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(_INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line) for line in lines)


def _observation(item: str, position: int) -> Observation | None:
    m = _OBSERVATION.match(item)
    if m is None or item.startswith("[["):
        return None
    category = " ".join(m.group(1).split()).lower()[:MAX_CATEGORY]
    if category in TASK_MARKS:  # `- [x] done` is a task list item, not an observation
        return None
    rest = m.group(2).strip()
    context = ""
    if (c := _CONTEXT.search(rest)) and c.start() > 0:
        context = " ".join(c.group(1).split())[:MAX_CONTEXT]
        rest = rest[: c.start()].rstrip()
    tags: dict[str, None] = {}
    for tag in _TAG.findall(rest):
        tags.setdefault(tag.lower()[:MAX_TAG], None)
    content = " ".join(_TAG.sub(" ", rest).split()) if tags else " ".join(rest.split())
    if not category or not (content or tags):
        return None
    return Observation(category, content[:MAX_CONTENT], tuple(tags), context, position)


def parse(text: str | None) -> Graph:
    """The observations and relations of a Markdown body (each relation once per type+target)."""
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

    for number, line in enumerate(_strip_code(text).split("\n")):
        bullet = _BULLET.match(line)
        if bullet:
            item = bullet.group(1).strip()
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
