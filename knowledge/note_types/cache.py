"""Parsed schemas kept per schema entry version, so a page, a write of the type or a report
does not read the same YAML again (pure: the caller names the key and the parse).

A key names one stored version of one schema entry: (entry id, version, updated_at). A version
is never rewritten in place; updated_at tells apart two saves numbered alike when the first
one's transaction rolled back. A Schema is frozen and holds only tuples and scalars, so every
caller may share one; a schema that does not parse is kept as its error and raised anew.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from knowledge.note_types.picoschema import Schema, SchemaError
from ops.lru import BoundedCache

# A schema is a few KB; its YAML block is bounded (20,000 characters, 200 fields), so one is at
# most a few hundred KB and 16 MB holds hundreds of the largest.
MAX_BYTES = 16 << 20
_MISSING = object()
_parsed: BoundedCache[Schema | SchemaError | None] = BoundedCache(MAX_BYTES)


def cached_schema(key: Hashable, parse: Callable[[], Schema | None]) -> Schema | None:
    """`parse()`'s answer for `key`, parsed at most once while it stays among those used last
    (within MAX_BYTES; raises the SchemaError it raised)."""
    found = _parsed.get(key, _MISSING)
    if found is _MISSING:
        try:
            found = parse()
        except SchemaError as exc:
            found = exc.with_traceback(None)  # the error, not the frames of its parse
        _parsed.put(key, found)
    if isinstance(found, SchemaError):
        raise SchemaError(found.message, field=found.field)
    return found


def forget_schemas() -> None:
    """Empty the cache (tests, and a restore that rewrites entries under their old ids)."""
    _parsed.clear()
