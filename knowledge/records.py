"""A record of the knowledge as a restore reads it back: projects with their memberships and
subtopics, and one entry's fields at one revision, as typed values.

The git mirror is the record (history/manifest_format.py reads its projects manifest,
history.mirror_restore its revisions); knowledge.services.memory_restore writes what these say.
A record is a file anyone who can push to the mirror's remote may have written, so `parse`
refuses a value of the wrong shape (RecordRefused) before anything trusts it, and the restore
still checks each value as a write would (lengths, NUL, sources' URLs).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class RecordRefused(ValueError):
    """A record holds a value no Cairn writes; `value` is the offending part as read."""

    def __init__(self, message: str, value: object = None):
        super().__init__(message)
        self.value = value


def _text(value: object, name: str, *, default: str = "") -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        raise RecordRefused(f"{name} is not text ({type(value).__name__})", value)
    return value


def _number(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordRefused(f"{name} is not a whole number", value)
    return value


def _mapping(value: object, name: str) -> dict:
    if not isinstance(value, Mapping):
        raise RecordRefused(f"{name} is not a mapping", value)
    return dict(value)


def _items(value: object, name: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise RecordRefused(f"{name} is not a list", value)
    return list(value)


# --- projects ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberRecord:
    """One membership: a user's or a group's name and its role ("" when the record says none;
    the restore makes it a viewer). A record naming neither is skipped by the restore."""

    role: str = ""
    user: str = ""
    group: str = ""

    @classmethod
    def parse(cls, value: object) -> MemberRecord:
        data = _mapping(value, "a membership")
        return cls(
            role=_text(data.get("role"), "a membership's role"),
            user=_text(data.get("user"), "a membership's user"),
            group=_text(data.get("group"), "a membership's group"),
        )

    def plain(self) -> dict:
        who = {"user": self.user} if self.user else {"group": self.group}
        return {**who, "role": self.role}


@dataclass(frozen=True)
class SubtopicRecord:
    """A subtopic with its id and path (its slug is the path's last level); `created_at` as
    written (ISO 8601 text; None when the record does not say)."""

    id: int
    path: str
    name: str = ""
    created_at: str | None = None

    @classmethod
    def parse(cls, value: object) -> SubtopicRecord:
        data = _mapping(value, "a subtopic")
        if not isinstance(data.get("path"), str):
            raise RecordRefused("a subtopic's path is not text", value)
        return cls(
            id=_number(data.get("id"), "a subtopic's id"),
            path=data["path"],
            name=_text(data.get("name"), "a subtopic's name"),
            created_at=_text(data.get("created_at"), "a subtopic's created_at", default=None),
        )

    def plain(self) -> dict:
        return {"id": self.id, "path": self.path, "name": self.name, "created_at": self.created_at}


@dataclass(frozen=True)
class ProjectRecord:
    """A project with its id, its settings (every concrete field of the model but its id, under
    the field's name, as plain values: a field added later travels without a change here; the
    restore sets the fields it knows), its memberships and its subtopics."""

    id: int
    settings: dict[str, Any]
    memberships: tuple[MemberRecord, ...] = ()
    subtopics: tuple[SubtopicRecord, ...] = ()

    @property
    def slug(self) -> str:
        return str(self.settings.get("slug"))

    @classmethod
    def parse(cls, value: object) -> ProjectRecord:
        """A project as the manifest holds it. Raises RecordRefused (its `value` is the whole
        project) for a shape Cairn does not write."""
        try:
            data = _mapping(value, "a project")
            return cls(
                id=_number(data.get("id"), "a project's id"),
                settings=_mapping(data.get("settings"), "a project's settings"),
                memberships=tuple(
                    MemberRecord.parse(m) for m in _items(data.get("memberships"), "memberships")
                ),
                subtopics=tuple(
                    SubtopicRecord.parse(s) for s in _items(data.get("subtopics"), "subtopics")
                ),
            )
        except RecordRefused as exc:
            raise RecordRefused(str(exc), value) from exc

    def plain(self) -> dict:
        return {
            "id": self.id,
            "settings": dict(self.settings),
            "memberships": [m.plain() for m in self.memberships],
            "subtopics": [s.plain() for s in self.subtopics],
        }


# --- entries ----------------------------------------------------------------------------------


def _time(value: object, name: str) -> dt.datetime | None:
    if value is not None and not isinstance(value, dt.datetime):
        raise RecordRefused(f"{name} is not a time", value)
    return value


@dataclass(frozen=True)
class EntryRecord:
    """One entry's own fields at one revision, as its mirror file had them (the file format's
    record: history.file_format.RevisionFile.record). Where it sits, who saved it, when and why
    come with the revision, not here. Links and a verifier are short ids and a username ("" for
    none); `sources` are as written, checked by the restore as a write checks them."""

    # The order the file format's record lists the fields in (a restore names the first
    # field holding a NUL in this order).
    ORDER = ("id", "title", "body", "kind", "status", "tags", "version", "created", "updated",
             "generated_by", "verified_by", "verified_at", "sources", "supersedes",
             "superseded_by", "searchable", "metadata")  # fmt: skip

    title: str
    body: str
    kind: str
    version: int
    id: str = ""  # the short id the file names (the revision's commit says which entry it is)
    status: str = "active"
    tags: tuple[str, ...] = ()
    searchable: bool = True
    metadata: dict = field(default_factory=dict)
    generated_by: str = ""
    verified_by: str = ""
    verified_at: dt.datetime | None = None
    supersedes: str = ""
    superseded_by: str = ""
    created: dt.datetime | None = None
    updated: dt.datetime | None = None
    sources: tuple[Any, ...] = ()

    @classmethod
    def parse(cls, value: object) -> EntryRecord:
        """The record from its plain form (RevisionFile.record's keys; others are ignored).
        Raises RecordRefused for a missing title, body, kind or version, or a value of the
        wrong type."""
        data = _mapping(value, "an entry")
        for name in ("title", "body", "kind", "version"):
            if data.get(name) is None:
                raise RecordRefused(f"an entry has no {name}", value)
        tags = _items(data.get("tags"), "tags")
        searchable = data.get("searchable", True)
        if not isinstance(searchable, bool):
            raise RecordRefused("searchable is not true or false", searchable)
        return cls(
            title=_text(data["title"], "title"),
            body=_text(data["body"], "body"),
            kind=_text(data["kind"], "kind"),
            version=_number(data["version"], "version"),
            id=_text(data.get("id"), "id"),
            status=_text(data.get("status"), "status", default="active"),
            tags=tuple(_text(t, "a tag") for t in tags),
            searchable=searchable,
            metadata=_mapping(data.get("metadata") or {}, "metadata"),
            generated_by=_text(data.get("generated_by"), "generated_by"),
            verified_by=_text(data.get("verified_by"), "verified_by"),
            verified_at=_time(data.get("verified_at"), "verified_at"),
            supersedes=_text(data.get("supersedes"), "supersedes"),
            superseded_by=_text(data.get("superseded_by"), "superseded_by"),
            created=_time(data.get("created"), "created"),
            updated=_time(data.get("updated"), "updated"),
            sources=tuple(_items(data.get("sources"), "sources")),
        )
