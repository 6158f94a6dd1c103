"""From database rows to what the mirror commits: plain entry states, authors, file changes and
commit messages. Nothing here writes the repository's branch; bad data fails here, first."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from history.commit_format import ACTIONS, LOST, RevisionTrailers
from history.file_format import RevisionFile, with_key
from history.mirror.git import Mirror, Person, build_message
from history.mirror.queue import committer
from knowledge.models import Entry, HistoricalEntry, Project, Subtopic


class Names:
    """Slugs, paths and user names by id, with the history tables as fallback for deleted rows."""

    def __init__(self) -> None:
        self.projects: dict[int, str] = {}
        self.subtopics: dict[int, str] = {}
        self.users: dict[int, tuple[str, str, str]] = {}
        self.entries: dict[int, str] = {}

    def project(self, pk: int | None) -> str:
        return self._name(Project, "slug", pk, self.projects, "project")

    def subtopic(self, pk: int | None) -> str:
        return self._name(Subtopic, "path", pk, self.subtopics, "topic")

    @staticmethod
    def _name(model, field: str, pk: int | None, cache: dict, fallback: str) -> str:
        """The current value, else the last one its history knew (the row may be gone)."""
        if pk is None:
            return ""
        if pk not in cache:
            value = model.objects.filter(pk=pk).values_list(field, flat=True).first()
            if value is None:
                value = (
                    model.history.filter(id=pk)
                    .order_by("-history_id")
                    .values_list(field, flat=True)
                    .first()
                )
            cache[pk] = value or f"{fallback}-{pk}"
        return cache[pk]

    def user(self, pk: int | None) -> tuple[str, str, str]:
        """(username, full name, email) or empty strings."""
        if pk is None:
            return ("", "", "")
        if pk not in self.users:
            from django.contrib.auth import get_user_model

            user = get_user_model().objects.filter(pk=pk).first()
            self.users[pk] = (
                (user.get_username(), user.get_full_name(), user.email) if user else ("", "", "")
            )
        return self.users[pk]

    def entry(self, pk: int | None) -> str:
        if pk is None:
            return ""
        if pk not in self.entries:
            row = Entry.objects.filter(pk=pk).values_list("short_id", flat=True).first()
            if row is None:
                row = (
                    HistoricalEntry.objects.filter(id=pk)
                    .order_by("-history_id")
                    .values_list("short_id", flat=True)
                    .first()
                )
            self.entries[pk] = row or ""
        return self.entries[pk]


def sources_by_entry(entry_ids: Iterable[int]) -> dict[int, tuple[dict, ...]]:
    """Current sources of these entries (links are not versioned: a revision shows today's)."""
    through = Entry.sources.through
    out: dict[int, list[dict]] = {}
    rows = through.objects.filter(entry_id__in=set(entry_ids)).values(
        "entry_id", "source__kind", "source__external_id", "source__url", "source__title"
    )
    for row in rows:
        item = {"kind": row["source__kind"], "external_id": row["source__external_id"]}
        if row["source__url"]:
            item["url"] = row["source__url"]
        if row["source__title"]:
            item["title"] = row["source__title"]
        out.setdefault(row["entry_id"], []).append(item)
    return {
        k: tuple(sorted(v, key=lambda s: (s["kind"], s["external_id"]))) for k, v in out.items()
    }


def state_of(obj, names: Names, sources: dict[int, tuple[dict, ...]]) -> RevisionFile:
    """An Entry or a HistoricalEntry row as the plain state the mirror renders."""
    return RevisionFile(
        id=obj.short_id,
        project=names.project(obj.project_id),
        subtopic=names.subtopic(obj.subtopic_id),
        slug=obj.slug,
        title=obj.title,
        body=obj.body,
        kind=obj.kind,
        status=obj.status,
        tags=tuple(obj.tags or ()),
        version=obj.version,
        created=obj.created_at,
        updated=obj.updated_at,
        generated_by=obj.generated_by,
        verified_by=names.user(obj.verified_by_id)[0],
        verified_at=obj.verified_at,
        sources=sources.get(obj.id, ()),
        supersedes=names.entry(obj.supersedes_id),
        superseded_by=names.entry(obj.superseded_by_id),
        searchable=obj.searchable,
        metadata=obj.metadata or {},
    )


def author_of(row, names: Names) -> Person:
    """The acting user (and the agent label they wrote under), else the agent label alone."""
    username, full_name, email = names.user(row.history_user_id)
    label = row.generated_by if row.history_type != "-" else ""
    if username:
        name = full_name or username
        if label.startswith("agent:"):
            name = f"{label} ({name})"
        return Person(name, email or f"{username}@users.cairn.invalid")
    return Person(label or "cairn", "system@cairn.invalid")


@dataclass
class Prepared:
    changes: dict[str, bytes | None]
    message: str


def render_revision(mirror: Mirror, row, names: Names, sources: dict) -> Prepared:
    """The file changes and message for one revision (no write yet: this is where bad data
    fails, before anything touches the repository)."""
    state = None if row.history_type == "-" else state_of(row, names, sources)
    changes, n_lines = mirror.apply(state, entry_id=row.short_id)
    if row.history_type == "+" and row.supersedes_id:
        changes.update(_mark_superseded(mirror, names.entry(row.supersedes_id), row.short_id))
    where = next(iter(changes), "") or f"{names.project(row.project_id)}/{row.slug}.md"
    summary = f"{ACTIONS.get(row.history_type, 'update')} {where.removesuffix('.md')}: "
    summary += f"{n_lines} line{'s' if n_lines != 1 else ''} changed"
    message = build_message(
        row.history_change_reason or "",
        summary,
        revision=row.history_id,
        entry_id=row.short_id,
        trailers=RevisionTrailers.of(row, names).render(),
    )
    return Prepared(changes, message)


def _mark_superseded(mirror: Mirror, old: str, new: str) -> dict[str, bytes]:
    """A correction points the corrected entry at it without a revision of its own: its file
    shows the link from the correction's commit on, as its row does."""
    path = mirror.path_of(old) if old else None
    raw = mirror.read(path) if path else None
    if raw is None:
        return {}
    updated = with_key(raw, "superseded_by", new)
    return {path: updated} if updated != raw else {}


def note_revision(row, error: str) -> Prepared:
    """A commit with no file change for a revision that cannot be rendered but was followed by
    a newer one: git records that it happened, the database history keeps its text."""
    summary = (
        f"revision {row.history_id} of entry {row.short_id} could not be rendered ({error}); "
        "its text is in the database history"
    )
    message = build_message(
        summary,
        summary,
        revision=row.history_id,
        entry_id=row.short_id,
        trailers=dict(LOST),
    )
    return Prepared({}, message)


def commit_prepared(mirror: Mirror, row, names: Names, prepared: Prepared) -> str:
    return mirror.commit(
        prepared.changes,
        author=author_of(row, names),
        committer=committer(),
        message=prepared.message,
        when=row.history_date,
    )


def commit_revision(mirror: Mirror, row, names: Names, sources: dict) -> str:
    """Write the commit for one revision on top of the mirror's tip; returns its hash."""
    return commit_prepared(mirror, row, names, render_revision(mirror, row, names, sources))
