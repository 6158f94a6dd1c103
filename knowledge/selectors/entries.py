"""Entries by reference (id, short id, path or memory:// address), scoped by the actor."""

from __future__ import annotations

import difflib

from django.db.models import Case, Q, QuerySet, When

from knowledge import limits
from knowledge.access import visible_entries, visible_projects
from knowledge.actors import Actor
from knowledge.errors import NotFound
from knowledge.models import Entry, Source
from knowledge.paths import normalize_path
from knowledge.selectors.addresses import moved_entry_id
from knowledge.selectors.deleted import deleted_entry
from knowledge.selectors.projects import project_get

MEMORY_SCHEME = "memory://"


def strip_memory_scheme(text: str) -> str:
    """`memory://acme/a/b` → `acme/a/b` (any case of the scheme); other text as it is."""
    if text[: len(MEMORY_SCHEME)].lower() == MEMORY_SCHEME:
        return text[len(MEMORY_SCHEME) :].strip("/")
    return text


def entry_ref_parts(ref: str | int) -> tuple[str, dict]:
    """What kind of reference `ref` is (numeric id, short id, path at the project root, path in
    a subtopic), and its values by name: entry_ref_q's two arguments."""
    text = strip_memory_scheme(str(ref).strip())
    limits.check_length(text, field="entry reference", limit=limits.REF)
    if text.isdigit():
        number = int(text)
        if number > 2**63 - 1:
            return "short", {"text": text}
        return "id", {"id": number, "text": text}
    if "/" not in text:
        return "short", {"text": text.lower()}
    project_slug, _, rest = text.strip("/").partition("/")
    sub_path, _, name = rest.rpartition("/")
    values = {"project": project_slug, "name": name, "slug": name.lower()}
    if sub_path:
        return "subpath", values | {"path": normalize_path(sub_path)}
    return "path", values


REF_NAMES = {  # the values of each kind of reference: name -> int or text
    "id": {"id": int, "text": str},
    "short": {"text": str},
    "path": {"project": str, "name": str, "slug": str},
    "subpath": {"project": str, "name": str, "slug": str, "path": str},
}


def entry_ref_q(kind: str, v: dict) -> tuple[Q, Case | None]:
    """The condition naming one entry, and for a number that could also be a short id the
    ordering that prefers the id: the one reference rule, whether `v` holds a call's values or
    a compiled statement's stand-ins (REF_NAMES)."""
    if kind == "id":
        return Q(pk=v["id"]) | Q(short_id=v["text"]), Case(When(pk=v["id"], then=0), default=1)
    if kind == "short":
        return Q(short_id=v["text"]), None
    where = Q(project__slug__iexact=v["project"]) & (Q(title__iexact=v["name"]) | Q(slug=v["slug"]))
    if kind == "subpath":
        return where & Q(subtopic__path=v["path"]), None
    return where & Q(subtopic__isnull=True), None


def entry_ref_filter(ref: str | int) -> tuple[Q, Case | None]:
    """The condition naming one entry (numeric id, short id, `project/subtopic/title-or-slug`
    or its `memory://project/subtopic/slug` permalink) and, for a number that could also be a
    short id, the ordering that prefers the id."""
    return entry_ref_q(*entry_ref_parts(ref))


def entry_lookup(entries: QuerySet[Entry], ref: str | int) -> Entry | None:
    """The entry `ref` names among `entries`, in one query (the caller may lock it)."""
    if not str(ref).strip():
        return None
    where, preference = entry_ref_filter(ref)
    found = entries.filter(where)
    if preference is not None:
        found = found.order_by(preference)
    return found.first()


def entry_not_found(actor: Actor, ref: str | int) -> NotFound:
    text = str(ref).strip()
    if gone := deleted_entry(visible_projects(actor), strip_memory_scheme(text)):
        return NotFound(
            f"Entry {gone['short_id']} {gone['title']!r} was deleted on {gone['deleted_at'][:16]} "
            f"by {gone['deleted_by']}" + (f": {gone['reason']}" if gone["reason"] else "") + ". "
            "Its history is kept: undelete it to bring it back as it was (same id, sources, "
            "kind, tags and history).",
            entry=text,
            deleted=gone,
        )
    return NotFound(
        f"No entry {text!r} that you can see. Search for it, or list the project's entries.",
        entry=text,
        suggestions=_close_titles(actor, text),
    )


def entry_get(actor: Actor, ref: str | int) -> Entry:
    """An entry by numeric id, short id, or `project/subtopic/path/title-or-slug`."""
    entries = visible_entries(actor).select_related("project", "subtopic")
    entry = entry_lookup(entries, ref)
    if entry is None and (moved := moved_entry_id(actor, strip_memory_scheme(str(ref).strip()))):
        entry = entries.filter(pk=moved).first()  # an old address: the entry at its new one
    if entry is None:
        raise entry_not_found(actor, ref)
    return entry


def _close_titles(actor: Actor, text: str) -> list[str]:
    name = text.rsplit("/", 1)[-1]
    if not name or name.isdigit():
        return []
    titles = list(
        visible_entries(actor)
        .filter(title__icontains=name[:3])
        .values_list("title", flat=True)[:200]
    )
    return difflib.get_close_matches(name, titles, n=3, cutoff=0.4)


def sources_check(actor: Actor, project: str | int | None, items: list[dict]) -> list[dict]:
    """For each {kind, external_id}: whether it is already logged, and by which entries, in the
    project, or without one in every project the actor can see."""
    projects = visible_projects(actor)
    if project is not None:
        projects = projects.filter(pk=project_get(actor, project).pk)
    found: dict[tuple, list[str]] = {}
    for s in Source.objects.filter(
        project__in=projects, external_id__in=[str(i.get("external_id", "")) for i in items]
    ).prefetch_related("entries"):
        found.setdefault((s.kind, s.external_id), []).extend(e.short_id for e in s.entries.all())
    answer = []
    for item in items:
        key = (str(item.get("kind", "")).lower(), str(item.get("external_id", "")))
        entries = found.get(key, [])
        answer.append({**item, "logged": bool(entries), "entries": entries})
    return answer
