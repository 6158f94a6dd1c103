"""The MCP next moves after a core error, in MCP words.

The core's messages say what went wrong without naming any surface's calls; this module adds
the tool calls an agent can make next, chosen by the error class and its `data` keys. A move
is left out when the message (or an earlier move) already names one of its tools, so an agent
sees each hint once, whether or not the core message still names tools itself.
"""

from __future__ import annotations

import re

from knowledge.errors import (
    EntryConflict,
    KnowledgeError,
    NotFound,
    SchemaMisfit,
    ValidationFailed,
)

_CALL = re.compile(r"\b([a-z_]+)\(")


def next_moves(exc: KnowledgeError) -> list[str]:
    named = set(_CALL.findall(exc.message))
    moves = []
    for move in _moves(exc):
        tools = set(_CALL.findall(move))
        if tools & named:
            continue
        moves.append(move)
        named |= tools
    return moves


def _moves(exc: KnowledgeError) -> list[str]:
    data = exc.data
    if isinstance(exc, EntryConflict):
        return [
            f'Retry: get("{data["entry"]}") to read the current text, then repeat your call '
            f"with expected_version={data['current_version']}."
        ]
    if isinstance(exc, SchemaMisfit):
        return [
            "Add the missing lines to the body (e.g. "
            + ", ".join(repr(f"- [{m['field']}] …") for m in data.get("misfits", [])[:3])
            + f") and call again; schema_validate(note_type={data.get('schema')!r}) shows the "
            "schema's fields."
        ]
    if isinstance(exc, NotFound) and "project" in data:
        return ["List projects with browse(), or create one with create_project(slug, name)."]
    if isinstance(exc, NotFound) and data.get("context"):
        term = str(data.get("entry") or "").rsplit("/", 1)[-1].replace("-", " ") or "…"
        return [
            f'Find it with search("{term}"), see what changed lately with recent(), or '
            f'create it with upsert(project=…, title="{term}", body=…).'
        ]
    if isinstance(exc, NotFound) and data.get("deleted"):
        gone = data["deleted"]
        return [
            f'Bring it back: upsert(project="{gone["project"]}", subtopic="{gone["subtopic"]}", '
            f'title="{gone["title"]}", body=<its last text, version {gone["version"]}: '
            "error.deleted.body>)."
        ]
    if isinstance(exc, NotFound) and "entry" in data:
        return _entry_moves(str(data["entry"]), version="version" in data)
    if isinstance(exc, ValidationFailed) and data.get("field") == "find":
        return ["get(id) shows the current text."]
    return []


def _entry_moves(ref: str, *, version: bool) -> list[str]:
    if version:  # the entry exists, the version does not
        return [f'history("{ref}") lists its versions.']
    term = ref.rsplit("/", 1)[-1]
    if not term or term.isdigit():
        return ["Find it with search(query), or list a project's entries with browse(project)."]
    moves = [f'Find it with search("{term}"), or list a project\'s entries with browse(project).']
    if "/" in ref:  # a path names where the entry would be: it can be created there
        moves.append(f'Not there yet? Create it with upsert(project=…, title="{term}", body=…).')
    return moves


# A database outage, as a tool error or as the 503 of a request whose token could not be checked.
DATABASE_DOWN = (
    "Cairn's database is not answering right now (it may be restarting). Retry in a few "
    "seconds; if a write was cut off, check with get or history before repeating it."
)
