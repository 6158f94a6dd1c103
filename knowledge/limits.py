"""How many characters each string a caller sends may hold: one table for the MCP tool
arguments, the REST schemas and parameters, and the services' own checks.

A bounded string keeps every parse, lookup and error message small: a 200,000-character path
once held a web process. Bodies keep their byte limit (CAIRN_MAX_BODY_BYTES) and queries theirs
(CAIRN_SEARCH_MAX_QUERY_CHARS); the rest have no setting because the columns they land in or
are matched against are no longer (knowledge.models).
"""

from __future__ import annotations

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
