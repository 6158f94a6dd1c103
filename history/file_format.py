"""The mirror's file format, declared once: `RevisionFile`, one revision of an entry as plain
values, its one writer (`render`, Markdown with YAML frontmatter, the same value giving the same
bytes) and its one reader (`parse`), its record (export, restore) and its EntryFields (import).
Also the safe file names. No git, no ORM, no Django (so it sits beside history/mirror/, whose
package needs the apps loaded): the drain, export, import and restore all use this."""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import yaml

from knowledge.diffs import changed_line_count
from knowledge.safe_yaml import load_yaml

if TYPE_CHECKING:
    from knowledge.services import EntryFields

MAX_NAME_BYTES = 200  # below every filesystem's 255-byte limit, with room for "-<id>.md"
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul"} | {
    f"{p}{i}" for p in ("com", "lpt") for i in "123456789"
}
_UNSAFE = re.compile(r"[^\w.-]+", re.UNICODE)
# libyaml's emitter writes the same bytes as PyYAML's pure-Python one (tested), four times faster.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# --- Names --------------------------------------------------------------------------------


def safe_segment(text: str, *, fallback: str = "untitled") -> str:
    """One path segment that is safe on any filesystem and in git, whatever the input holds.

    NFC-normalized, lower-cased (so case-only renames keep the file), no separators, control
    characters, dot-only names or reserved device names, at most MAX_NAME_BYTES of UTF-8.
    """
    text = unicodedata.normalize("NFC", text or "").casefold()
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    text = _UNSAFE.sub("-", text).strip(".-_")
    text = re.sub(r"-{2,}", "-", text)
    encoded = text.encode()
    if len(encoded) > MAX_NAME_BYTES:
        text = encoded[:MAX_NAME_BYTES].decode(errors="ignore").rstrip(".-_")
    if not text or text.lower() in _WINDOWS_RESERVED:
        text = f"{fallback}-{text}" if text else fallback
    return text


def entry_path(project: str, subtopic: str, slug: str) -> str:
    """`<project>/<subtopic path>/<slug>.md`, each segment made safe."""
    parts = [safe_segment(project, fallback="project")]
    parts += [safe_segment(p, fallback="topic") for p in (subtopic or "").split("/") if p]
    parts.append(safe_segment(slug) + ".md")
    return "/".join(parts)


def alternate_path(path: str, entry_id: str) -> str:
    """Where an entry goes when another entry already holds its natural file name."""
    return f"{path[:-3]}-{safe_segment(entry_id, fallback='x')}.md"


# --- The file ---------------------------------------------------------------------------

# The frontmatter's keys in the order they are written; the first five are always there.
KEYS = ("id", "title", "kind", "status", "tags", "version", "created", "updated",
        "generated_by", "verified_by", "verified_at", "sources", "supersedes", "superseded_by",
        "searchable", "metadata")  # fmt: skip
REQUIRED_KEYS = frozenset(("id", "title", "kind", "status", "version"))
_EMPTY = (None, "", [], {})


@dataclass(frozen=True)
class RevisionFile:
    """One revision of an entry as plain values; its mirror file is a pure function of it.

    The place (project, subtopic, slug) is the file's path, not its content: `parse` leaves it
    empty for the caller to fill from where the file was found.
    """

    id: str
    project: str
    subtopic: str
    slug: str
    title: str
    body: str
    kind: str = "note"
    status: str = "active"
    tags: tuple[str, ...] = ()
    version: int = 1
    created: dt.datetime | None = None
    updated: dt.datetime | None = None
    generated_by: str = ""
    verified_by: str = ""
    verified_at: dt.datetime | None = None
    sources: tuple[dict, ...] = ()
    supersedes: str = ""
    superseded_by: str = ""
    searchable: bool = True
    metadata: dict = field(default_factory=dict)

    @property
    def path(self) -> str:
        return entry_path(self.project, self.subtopic, self.slug)

    @classmethod
    def parse(
        cls, raw: bytes | str, *, body_newline: bool = False, project: str = "",
        subtopic: str = "", slug: str = "",
    ) -> RevisionFile:  # fmt: skip
        """The one reader: a file `render` wrote back into the value. The renderer always ends
        the body with a newline, so whether the body had one is said apart (`body_newline`, the
        commit's Cairn-Body-Newline trailer). Raises FrontmatterError, KeyError (no title),
        TypeError or ValueError for a file Cairn did not write."""
        data, body = parse_markdown(raw)
        body += "\n" if body_newline else ""
        return cls.from_frontmatter(data, body, project=project, subtopic=subtopic, slug=slug)

    @classmethod
    def from_frontmatter(
        cls, data: dict, body: str, *, project: str = "", subtopic: str = "", slug: str = ""
    ) -> RevisionFile:
        """The value from a parsed frontmatter and body (the typed half of `parse`)."""
        return cls(
            id=str(data.get("id") or ""),
            project=project,
            subtopic=subtopic,
            slug=slug,
            title=str(data["title"]),
            body=body,
            kind=str(data.get("kind") or "note"),
            status=str(data.get("status") or "active"),
            tags=tuple(str(t) for t in data.get("tags") or ()),
            version=int(data.get("version") or 1),
            created=parse_time(data.get("created")),
            updated=parse_time(data.get("updated")),
            generated_by=str(data.get("generated_by") or ""),
            verified_by=str(data.get("verified_by") or ""),
            verified_at=parse_time(data.get("verified_at")),
            sources=tuple(data.get("sources") or ()),
            supersedes=str(data.get("supersedes") or ""),
            superseded_by=str(data.get("superseded_by") or ""),
            searchable=data.get("searchable") is not False,
            metadata=data.get("metadata") or {},
        )

    def render(self) -> bytes:
        """The one writer: Markdown with YAML frontmatter. Same value, same bytes (the body is
        kept verbatim, ending with a newline)."""
        head = _dump(self.frontmatter())
        body = self.body or ""
        if body and not body.endswith("\n"):
            body += "\n"
        return f"---\n{head}---\n{body}".encode()

    def frontmatter(self) -> dict:
        """The frontmatter keys in their fixed order; empty optional keys are left out."""
        data: dict = {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "status": self.status,
            "tags": list(self.tags),
            "version": self.version,
            "created": _iso(self.created),
            "updated": _iso(self.updated),
            "generated_by": self.generated_by,
            "verified_by": self.verified_by,
            "verified_at": _iso(self.verified_at),
            "sources": [_sorted(dict(s)) for s in self.sources],
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "searchable": None if self.searchable else False,
            "metadata": _sorted(self.metadata or {}),
        }
        return {k: v for k, v in data.items() if k in REQUIRED_KEYS or v not in _EMPTY}

    def record(self) -> dict:
        """Every field as a plain Python value (times stay datetimes), with the path: the
        JSON export's record of an entry and what a mirror restore writes back. An unset
        verification or link is None."""
        return {
            "id": self.id,
            "project": self.project,
            "subtopic": self.subtopic,
            "path": self.path,
            "title": self.title,
            "body": self.body,
            "kind": self.kind,
            "status": self.status,
            "tags": list(self.tags),
            "version": self.version,
            "created": self.created,
            "updated": self.updated,
            "generated_by": self.generated_by,
            "verified_by": self.verified_by or None,
            "verified_at": self.verified_at,
            "sources": list(self.sources),
            "supersedes": self.supersedes or None,
            "superseded_by": self.superseded_by or None,
            "searchable": self.searchable,
            "metadata": self.metadata,
        }

    def entry_fields(self) -> EntryFields:
        """The entry's own fields, as a write takes them (import)."""
        # Imported here: the services need Django set up, this module does not.
        from knowledge.services import EntryFields

        return EntryFields(
            title=self.title,
            body=self.body,
            kind=self.kind,
            tags=list(self.tags),
            status=self.status,
            searchable=self.searchable,
            metadata=self.metadata,
        )


# Where str.splitlines() breaks besides \n and \r: JSON may keep these raw, a trailer may not.
_LINE_BREAKS = {c: f"\\u{ord(c):04x}" for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line_json(value) -> str:
    """JSON on one line whatever the text holds (readable: non-ASCII stays as it is)."""
    return json.dumps(value, ensure_ascii=False).translate(str.maketrans(_LINE_BREAKS))


def iso_time(value: dt.datetime | None) -> str | None:
    """UTC, to the microsecond, with a Z: what the mirror writes for every time."""
    return _iso(value)


def parse_time(value) -> dt.datetime | None:
    """The inverse of iso_time (a YAML datetime is taken as it is, naive as UTC)."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.isoformat(timespec="microseconds") + "Z"


def _sorted(value):
    if isinstance(value, dict):
        return {str(k): _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [_sorted(v) for v in value]
    return value


def with_key(raw: bytes, key: str, value) -> bytes:
    """A rendered file with one frontmatter key set (the body's bytes untouched): what
    RevisionFile.render writes for the value with that field changed."""
    text = raw.decode("utf-8")
    end = text.index("\n---\n", 3)
    data = load_yaml(text[4 : end + 1]) or {}
    data[key] = value
    data = {k: data[k] for k in KEYS if k in data and data[k] not in _EMPTY}
    return f"---\n{_dump(data)}{text[end + 1 :]}".encode()


def _dump(data: dict) -> str:
    return yaml.dump(
        data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, default_flow_style=False,
        width=10**6,
    )  # fmt: skip


class FrontmatterError(ValueError):
    pass


def parse_markdown(raw: bytes | str) -> tuple[dict, str]:
    """Split a Markdown file into (frontmatter, body); no frontmatter gives ({}, text).

    Any Markdown file (import reads other tools' files with it too); for the mirror's own,
    RevisionFile.parse. It gives back the body minus the newline the renderer adds.
    """
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    text = text.removeprefix("\ufeff")
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return {}, text.removesuffix("\n")
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in ("---", "..."):
            head = "".join(lines[1:i])
            body = "".join(lines[i + 1 :])
            break
    else:
        raise FrontmatterError("the frontmatter starts with --- but never ends")
    try:
        data = load_yaml(head) if head.strip() else {}
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"bad YAML in the frontmatter: {exc}".splitlines()[0]) from exc
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter is not a mapping of keys to values")
    if body.endswith("\n"):
        body = body[:-1]
    return data, body


def entry_id_of(blob: bytes) -> str | None:
    """Read `id:` from the top of a rendered file without parsing all of it."""
    for line in blob[:400].split(b"\n")[1:8]:
        if line.startswith(b"id: "):
            return line[4:].decode(errors="replace").strip().strip("'\"")
    return None


def changed_lines(old: bytes | None, new: bytes | None) -> int:
    a = old.decode(errors="replace").splitlines() if old else []
    b = new.decode(errors="replace").splitlines() if new else []
    return changed_line_count(a, b)
