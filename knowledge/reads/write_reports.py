"""What a write did, for the writer's answer: the body's change in lines (and the removed text
with the revision that wrote each line), the fields that changed, the observations and relations
the new text holds (links resolved or waiting), the sources recorded, and for a new entry the
similar entries that already exist and those whose body is the same (knowledge/reads/similar).

Built from what the write itself had at hand (the entry as it found it, the facts its graph step
parsed and resolved), so a report costs few statements: the removed lines' origins (only when
lines were removed), the link targets' names, and for a new entry one trigram lookup. Without
them (a surface that does not pass them) it reads them back from the entry and its revisions.
Everything is bounded: a few lines of removed text, a few facts, a few similar entries.
"""

from __future__ import annotations

import re

from django.db.models import Q

from knowledge.actors import Actor
from knowledge.diffs import line_opcodes
from knowledge.graph.selectors import entry_relations
from knowledge.markdown import is_fence, parse_heading
from knowledge.models import Entry, Observation
from knowledge.reads.similar import kept_similar, listed_same_body
from knowledge.reads.write_lookups import Lookups, Revision, blame_revisions, report_lookups
from knowledge.selectors import visible_projects
from knowledge.write_result import EntryBeforeWrite, ShownFacts, WriteResult

MAX_REMOVED_LINES = 20
MAX_LINE_CHARS = 300
MAX_BLAME_REVISIONS = 30
BLAME_STEPS = (4, MAX_BLAME_REVISIONS)  # versions read per statement, newest first
MAX_FACTS = 20
MAX_CANDIDATES = 5  # entries listed for a waiting title that several projects hold
MAX_SOURCES = 20
METADATA_FIELDS = ("title", "kind", "status", "tags", "path")


def _previous(actor: Actor, entry: Entry, version: int):
    """The revision at `version` the actor may see (the last saved with that number)."""
    return (
        entry.history.filter(version=version, project_id__in=visible_projects(actor).values("pk"))
        .exclude(history_type="-")
        .select_related("history_user", "project", "subtopic")
        .order_by("-history_id")
        .first()
    )


def _by(row) -> str:
    """Who wrote a revision: a history row, or a write_lookups.Revision."""
    if not row.history_user_id:
        user = ""
    elif isinstance(row, Revision):
        user = row.username or ""
    else:
        user = row.history_user.get_username()
    agent = row.generated_by or ""
    if agent and user and agent != user and not agent.startswith("user:"):
        return f"{agent} ({user})"
    return agent or user or "?"


def _origins(actor: Actor, entry: Entry, lines: list[str], before: int) -> dict[str, dict]:
    """For each line: the revision that wrote it (the oldest of the unbroken run of versions up
    to `before` whose body holds it), within the last MAX_BLAME_REVISIONS versions.

    Read newest first in two bounded steps: most removed lines were written a version or two
    ago, so the first few versions usually settle them all with one statement."""
    open_lines, found, seen = set(lines), {}, set()
    newest = before
    for step in BLAME_STEPS:
        oldest = max(before - MAX_BLAME_REVISIONS, newest - step)
        rows = blame_revisions(actor, entry.pk, newest=newest, oldest=oldest)
        for row in rows:
            if row.version in seen:
                continue
            seen.add(row.version)
            present = set(row.body.split("\n")) & open_lines
            for line in open_lines - present:  # absent here: the newer run started after
                open_lines.discard(line)
            for line in present:
                found[line] = {"version": row.version, "by": _by(row)}
            if not open_lines:
                return found
        newest = oldest
        if newest <= before - MAX_BLAME_REVISIONS or newest < 1:
            break
    return found


def body_change(old: str, new: str) -> tuple[int, int, list[str]]:
    """(lines added, lines removed, the removed non-blank lines in order), by knowledge.diffs,
    whose time grows with the text's length whatever the text (bodies are bounded by
    CAIRN_MAX_BODY_BYTES), so no rewrite needs counting as replaced whole."""
    a, b = _lines(old), _lines(new)
    added = removed = 0
    gone: list[str] = []
    for tag, i1, i2, j1, j2 in line_opcodes(a, b):
        if tag in ("replace", "delete"):
            removed += i2 - i1
            gone += [line for line in a[i1:i2] if line.strip()]
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed, gone


def _lines(text: str) -> list[str]:
    """The text's lines; a final newline ends the last line, it starts no empty one (30 lines
    and their newlines are 30 lines, an empty body none)."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


# The lines heading_above reads: a heading (`#` first) or a fence (``` or ~~~ after whitespace).
_MAY_MATTER = re.compile(r"^(?:#|[^\S\n]*(?:```|~~~))", re.MULTILINE)


def heading_above(body: str, old: str) -> str | None:
    """The heading under which the new text starts (where `body` first differs from `old`),
    None above the first heading: a later replace_section of that heading replaces it too."""
    a, b = old.split("\n"), body.split("\n")
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    found, fenced = None, False
    top = "\n".join(b[: start + 1])
    # Only the lines that may open a heading or a fence are read: an append to a long log has
    # every line above it to pass (a Python loop over all of them was 2 ms at 900 lines).
    for match in _MAY_MATTER.finditer(top):
        end = top.find("\n", match.start())
        line = top[match.start() : end if end >= 0 else len(top)]
        if is_fence(line):
            fenced = not fenced
        elif not fenced and (heading := parse_heading(line)):
            found = heading[1]
    return found


def _fields_of(row_or_entry) -> dict:
    if isinstance(row_or_entry, EntryBeforeWrite):
        return {
            "title": row_or_entry.title,
            "kind": row_or_entry.kind,
            "status": row_or_entry.status,
            "tags": list(row_or_entry.tags),
            "path": row_or_entry.path,
        }
    path = row_or_entry.project.slug + (
        f"/{row_or_entry.subtopic.path}" if row_or_entry.subtopic_id else ""
    )
    return {
        "title": row_or_entry.title,
        "kind": row_or_entry.kind,
        "status": row_or_entry.status,
        "tags": list(row_or_entry.tags or []),
        "path": path,
    }


def fields_changed(old, new) -> dict:
    """The metadata that differs between two revisions (or a revision and the entry):
    {name: {"from": …, "to": …}} for title, kind, status, tags and path."""
    a, b = _fields_of(old), _fields_of(new)
    return {k: {"from": a[k], "to": b[k]} for k in METADATA_FIELDS if a[k] != b[k]}


def metadata_line(fields: dict) -> str:
    """`Metadata: status active → open; tags [a] → [a, b]`, or "" when nothing changed."""
    if not fields:
        return ""
    show = lambda v: "[" + ", ".join(v) + "]" if isinstance(v, list) else str(v)  # noqa: E731
    return "Metadata: " + "; ".join(
        f"{k} {show(v['from'])} → {show(v['to'])}" for k, v in fields.items()
    )


def _change(actor: Actor, entry: Entry, before: EntryBeforeWrite | None = None) -> dict:
    if before is None and entry.version > 1:
        before = _previous(actor, entry, entry.version - 1)
    if before is None:
        added = len(_lines(entry.body))
        return {"added": added, "removed": 0, "removed_lines": [], "fields": {}}
    added, removed, gone = body_change(before.body, entry.body)
    fields = fields_changed(before, entry)
    shown = gone[:MAX_REMOVED_LINES]
    origins = _origins(actor, entry, shown, entry.version - 1) if shown else {}
    removed_lines = [
        {
            "text": line[:MAX_LINE_CHARS],
            "version": origins.get(line, {}).get("version"),
            "by": origins.get(line, {}).get("by"),
        }
        for line in shown
    ]
    return {
        "added": added,
        "removed": removed,
        "removed_lines": removed_lines,
        "removed_lines_more": len(gone) - len(shown),
        "fields": fields,
        "from_version": before.version,
        "under_heading": heading_above(entry.body, before.body) if added else None,
    }


def _facts(
    actor: Actor, entry: Entry, facts: ShownFacts | None = None, lookups: Lookups | None = None
) -> tuple[list[dict], list[dict]]:
    """The entry's current observations and relations: from `facts` (what the report lists of
    the save's GraphFacts, with their targets in `lookups`) when given, else read back."""
    if facts is None:
        return _facts_read_back(actor, entry)
    observations = [
        {
            "category": o.category,
            "content": o.content[:MAX_LINE_CHARS],
            "tags": list(o.tags),
            "new": new,
        }
        for o, new in facts.observations
    ]
    targets = lookups.targets if lookups else {}
    relations = [
        {
            "type": kind,
            "target": text,
            "resolved": target in targets,
            "entry": targets[target].compact() if target in targets else None,
        }
        for kind, text, target in facts.relations
    ]
    for rel in relations:  # a title in several other projects: which, for the writer to pick
        ids = facts.ambiguous.get(rel["target"], [])[:MAX_CANDIDATES]
        if not rel["resolved"] and (named := [targets[pk] for pk in ids if pk in targets]):
            rel["candidates"] = [n.compact() for n in named]
    return observations, relations


def _facts_read_back(actor: Actor, entry: Entry) -> tuple[list[dict], list[dict]]:
    observations = [
        {
            "category": o.category,
            "content": o.content[:MAX_LINE_CHARS],
            "tags": list(o.tags),
            "new": o.valid_from_version == entry.version,
        }
        for o in Observation.objects.filter(entry_id=entry.pk, valid_to__isnull=True).order_by(
            "position", "pk"
        )[:MAX_FACTS]
    ]
    relations = [
        {
            "type": r["type"],
            "target": r["target_text"],
            "resolved": r["entry"] is not None,
            "entry": r["entry"],
        }
        for r in entry_relations(actor, entry, backlinks=False)["outgoing"][:MAX_FACTS]
    ]
    return observations, relations


def _sources(entry: Entry, given) -> tuple[list[dict], int]:
    """The sources this write sent, as stored (with their url and title), and how many the
    entry holds in all (a write adds to the sources an entry has)."""
    if not given:
        return [], 0
    wanted = {(str(s.get("kind", "")).lower(), str(s.get("external_id", ""))) for s in given}
    match = Q()
    for kind, external_id in wanted:
        match |= Q(kind=kind, external_id=external_id)
    rows = entry.sources.filter(match).prefetch_related("entries__project", "entries__subtopic")
    answer = []
    for source in rows.order_by("pk")[:MAX_SOURCES]:
        others = [e.short_id for e in source.entries.all() if e.pk != entry.pk][:5]
        answer.append(
            {
                "kind": source.kind,
                "external_id": source.external_id,
                "url": source.url,
                "title": source.title,
                "also_logged_by": others,
            }
        )
    return answer, entry.sources.count()


def write_report(actor: Actor, result: WriteResult) -> dict:
    """What the write did, from its result alone (outcome: created, updated, unchanged,
    corrected). Without `result.before` (and past version 1) the previous revision is read
    back; without `result.facts` the entry's current facts are read back."""
    entry, outcome, facts = result.entry, result.outcome, result.facts
    report: dict = {"outcome": outcome, "address": entry.permalink}
    if outcome == "unchanged":
        return report
    report["change"] = _change(actor, entry, result.before)
    if result.superseded is not None:  # the removed text stays in the corrected entry
        report["change"]["from_entry"] = result.superseded.short_id
    created = outcome == "created"
    lookups = None
    facts = facts.shown(MAX_FACTS) if facts is not None else None
    if facts is not None or created:
        targets = {t for _, _, t in facts.relations if t} if facts else set()
        if facts:  # a waiting title's candidates, named in the same statement as the targets
            targets |= {pk for ids in facts.ambiguous.values() for pk in ids[:MAX_CANDIDATES]}
        lookups = report_lookups(actor, entry, targets=targets, new=created)
    report["observations"], report["relations"] = _facts(actor, entry, facts, lookups)
    if facts is not None and facts.total > len(report["observations"]):
        report["observations_counted"] = {"total": facts.total, "new": facts.new}
    report["sources"], report["sources_total"] = _sources(entry, result.sources)
    if created:
        report["similar"] = kept_similar(entry, lookups.similar)
        report["same_body"] = listed_same_body(lookups.same_body)
    return report


__all__ = [
    "body_change",
    "fields_changed",
    "metadata_line",
    "write_report",
]
