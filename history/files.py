"""The mirror's files as plain values: safe names, deterministic Markdown + YAML frontmatter
rendering and its parser. No git, no ORM: export and import use these too."""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from dataclasses import dataclass, field

import yaml

from knowledge.diffs import changed_line_count
from knowledge.safe_yaml import load_yaml

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


# --- Rendering ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryState:
    """One revision of an entry as plain values; the mirror file is a pure function of it."""

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


def frontmatter(state: EntryState) -> dict:
    """The frontmatter keys in their fixed order; empty optional keys are left out."""
    data: dict = {
        "id": state.id,
        "title": state.title,
        "kind": state.kind,
        "status": state.status,
        "tags": list(state.tags),
        "version": state.version,
        "created": _iso(state.created),
        "updated": _iso(state.updated),
        "generated_by": state.generated_by,
        "verified_by": state.verified_by,
        "verified_at": _iso(state.verified_at),
        "sources": [_sorted(dict(s)) for s in state.sources],
        "supersedes": state.supersedes,
        "superseded_by": state.superseded_by,
        "searchable": None if state.searchable else False,
        "metadata": _sorted(state.metadata or {}),
    }
    keep = {"id", "title", "kind", "status", "version"}
    return {k: v for k, v in data.items() if k in keep or v not in (None, "", [], {})}


def render_entry(state: EntryState) -> bytes:
    """Markdown with YAML frontmatter. Same state, same bytes (the body is kept verbatim)."""
    head = _dump(frontmatter(state))
    body = state.body or ""
    if body and not body.endswith("\n"):
        body += "\n"
    return f"---\n{head}---\n{body}".encode()


_KEY_ORDER = ("id", "title", "kind", "status", "tags", "version", "created", "updated",
              "generated_by", "verified_by", "verified_at", "sources", "supersedes",
              "superseded_by", "searchable", "metadata")  # fmt: skip


def with_key(raw: bytes, key: str, value) -> bytes:
    """A rendered file with one frontmatter key set (the body's bytes untouched): what
    render_entry would write for the state with that field changed."""
    text = raw.decode("utf-8")
    end = text.index("\n---\n", 3)
    data = load_yaml(text[4 : end + 1]) or {}
    data[key] = value
    data = {k: data[k] for k in _KEY_ORDER if k in data and data[k] not in (None, "", [], {})}
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

    Inverse of render_entry: parse_markdown(render_entry(s)) gives back the body minus the
    newline the renderer adds.
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
