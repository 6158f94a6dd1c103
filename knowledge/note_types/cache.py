"""Parsed schemas kept per schema entry version, so a page, a write of the type or a report
does not read the same YAML again (pure: the caller names the key and the parse).

A key names one stored version of one schema entry: (entry id, version, updated_at). A version
is never rewritten in place; updated_at tells apart two saves numbered alike when the first
one's transaction rolled back. A Schema is frozen and holds only tuples and scalars, so every
caller may share one; a schema that does not parse is kept as its error and raised anew.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from knowledge.note_types.picoschema import Schema, SchemaError

MAX_CACHED = 512  # schema entries; a few KB each

_parsed: OrderedDict[Hashable, Schema | SchemaError | None] = OrderedDict()
_lock = threading.Lock()


def cached_schema(key: Hashable, parse: Callable[[], Schema | None]) -> Schema | None:
    """`parse()`'s answer for `key`, parsed at most once while it stays among the last
    MAX_CACHED used (raises the SchemaError it raised)."""
    with _lock:
        found = _parsed.get(key, _parsed)
        if found is not _parsed:
            _parsed.move_to_end(key)
    if found is _parsed:
        try:
            found = parse()
        except SchemaError as exc:
            found = exc
        with _lock:
            _parsed[key] = found
            while len(_parsed) > MAX_CACHED:
                _parsed.popitem(last=False)
    if isinstance(found, SchemaError):
        raise SchemaError(found.message, field=found.field)
    return found


def forget_schemas() -> None:
    """Empty the cache (tests, and a restore that rewrites entries under their old ids)."""
    with _lock:
        _parsed.clear()
