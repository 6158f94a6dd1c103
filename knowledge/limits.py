"""How many characters each string a caller sends may hold: one table for the MCP tool
arguments, the REST schemas and parameters, and the services' own checks.

A bounded string keeps every parse, lookup and error message small: a 200,000-character path
once held a web process. Bodies keep their byte limit (CAIRN_MAX_BODY_BYTES) and queries theirs
(CAIRN_SEARCH_MAX_QUERY_CHARS); the rest have no setting because the columns they land in or
are matched against are no longer (knowledge.models).
"""

from __future__ import annotations

import json

from django.conf import settings

from knowledge.errors import ValidationFailed

TITLE = 300  # Entry.title
SLUG = 80  # Project.slug
NAME = 200  # Project.name
DESCRIPTION = 5_000  # Project.description
PROJECT = 200  # a project reference: its slug, name or id
PATH = 500  # Subtopic.path: 'a/b/c' or 'a > b > c'
REF = 1_000  # an entry reference: id, short id, project/subtopic/title or memory:// URL
KIND = 40  # Entry.kind, Source.kind
EXTERNAL_ID = 500  # Source.external_id
URL = 2_000  # Source.url
SOURCE_TITLE = 500  # Source.title
TAG = 60  # one tag (how many: CAIRN_MAX_TAGS)
TAGS = 5_000  # a comma-separated list of tags, kinds, statuses or categories
REASON = 1_000  # why a change was made (the history keeps its first 100 characters)
SHORT = 1_000  # anything else short: dates, ages, statuses, categories, headings, URLs
ITEMS = 500  # strings in one list argument (tags: CAIRN_MAX_TAGS; sources: CAIRN_MAX_SOURCES)
SOURCE_FIELDS = {"kind": KIND, "external_id": EXTERNAL_ID, "url": URL, "title": SOURCE_TITLE}


def _depth(value: object) -> int:
    """How deeply objects and lists nest in `value` (iterative: deep input must not recurse)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend(
                (v, level + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def _too_big(field: str, what: str, limit: int, unit: str, setting: str) -> ValidationFailed:
    return ValidationFailed(
        f"{what} is over the limit of {limit:,} {unit}; shorten it or split it into several "
        f"entries (an administrator can raise {setting}).",
        field=field,
        limit=limit,
    )


def check_body_size(body: str, field: str = "body") -> None:
    """Refuse a body over the size limit or with an overlong line, before any work on it."""
    limit = settings.CAIRN_MAX_BODY_BYTES
    # A str's length bounds its UTF-8 size from below (x1) and above (x4): encode only near it.
    if len(body) > limit or (len(body) * 4 > limit and len(body.encode()) > limit):
        raise _too_big(field, f"The {field}", limit, "bytes (UTF-8)", "CAIRN_MAX_BODY_BYTES")
    line_limit = settings.CAIRN_MAX_LINE_CHARS
    if len(body) > line_limit and max(map(len, body.split("\n"))) > line_limit:
        raise _too_big(
            field, f"A line of the {field}", line_limit, "characters", "CAIRN_MAX_LINE_CHARS"
        )


def check_metadata(metadata: object) -> None:
    """A JSON object, nested and sized within the limits."""
    metadata = metadata if metadata is not None else {}
    if not isinstance(metadata, dict):
        raise ValidationFailed(
            'metadata must be a JSON object, e.g. {"customer": "acme"}.', field="metadata"
        )
    depth_limit = settings.CAIRN_MAX_METADATA_DEPTH
    if _depth(metadata) > depth_limit:
        raise ValidationFailed(
            f"metadata nests deeper than {depth_limit} levels; flatten it "
            "(an administrator can raise CAIRN_MAX_METADATA_DEPTH).",
            field="metadata",
            limit=depth_limit,
        )
    size_limit = settings.CAIRN_MAX_METADATA_BYTES
    try:
        size = len(json.dumps(metadata, ensure_ascii=False).encode())
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(f"metadata is not plain JSON: {exc}", field="metadata") from exc
    if size > size_limit:
        raise _too_big(
            "metadata", "metadata", size_limit, "bytes as JSON", "CAIRN_MAX_METADATA_BYTES"
        )


def check_tag_count(tags: list | str | None) -> None:
    """At most CAIRN_MAX_TAGS tags in a list (a comma-separated string is counted once it is
    split, by the write; each surface bounds its length)."""
    if isinstance(tags, str):
        return
    count = len(tags or [])
    tag_limit = settings.CAIRN_MAX_TAGS
    if count > tag_limit:
        raise ValidationFailed(
            f"An entry may have at most {tag_limit} tags (this one has {count}).",
            field="tags",
            limit=tag_limit,
        )


def check_entry_sizes(*, body: str | None, metadata: object = None, tags=None) -> None:
    """The sizes of what a writer sends about an entry, checked before any work on it (a merge,
    a diff, a parse): the body's bytes and lines, the metadata's depth and bytes, the tags."""
    if body is not None:
        check_body_size(body)
    if metadata is not None:
        check_metadata(metadata)
    check_tag_count(tags)


def check_length(value: str | None, *, field: str, limit: int) -> None:
    """Refuse `value` when it is longer than `limit` characters, naming the field and limit."""
    if value is not None and len(value) > limit:
        raise ValidationFailed(
            f"{field} is {len(value):,} characters long; the limit is {limit:,}. "
            "Send a shorter value.",
            field=field,
            limit=limit,
        )


_TOO_LONG = {"string_too_long": "characters", "too_long": "items"}


def too_long(error: dict) -> str | None:
    """A pydantic error over a length limit in the same words on every surface (`the limit is
    1,000 characters (this one has 1,200), send a shorter value`); None for other errors."""
    unit = _TOO_LONG.get(error.get("type", ""))
    if unit is None:
        return None
    limit = (error.get("ctx") or {}).get("max_length")
    value = error.get("input")
    size = f" (this one has {len(value):,})" if hasattr(value, "__len__") else ""
    return f"the limit is {limit:,} {unit}{size}, send a shorter value"
