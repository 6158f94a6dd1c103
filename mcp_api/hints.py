"""The MCP next moves after a core error, in MCP words.

The core's messages say what went wrong without naming any surface's calls; this module adds
the tool calls an agent can make next, chosen by the error class and its `data` keys. A move
is left out when the message (or an earlier move) already names one of its tools, so an agent
sees each hint once, whether or not the core message still names tools itself.
"""

from __future__ import annotations

import json
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
        return _conflict_moves(data)
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
        return [f'delete("{gone["short_id"]}", reason=…, undo=true) brings it back as it was.']
    if isinstance(exc, NotFound) and "entry" in data:
        return _entry_moves(str(data["entry"]), version="version" in data)
    if isinstance(exc, ValidationFailed) and data.get("field") == "find":
        return ["get(id) shows the current text."]
    return []


def conflict_lines(exc: KnowledgeError) -> list[str]:
    """A conflict's other change as a diff, then the merged body or the lines both changed."""
    if not isinstance(exc, EntryConflict):
        return []
    data, lines = exc.data, []
    if data.get("diff"):
        lines.append(f"Their change (v{data['expected_version']} → v{data['current_version']}):")
        lines.append(f"```diff\n{data['diff']}\n```")
    for name, change in (data.get("fields") or {}).items():
        lines.append(f"Their {name}: {change['was']!r} → {change['now']!r}.")
    if "merged_body" in data:
        lines.append("Merged body (their change and yours):")
        lines.append(f"```markdown\n{data['merged_body']}\n```")
    for c in data.get("conflicts") or []:
        lines.append(
            f"Both changed line(s) {c['lines']} of v{data['expected_version']}: it read "
            f"{c['base']!r}; theirs {c['theirs']!r}; yours {c['mine']!r}."
        )
    if total := data.get("conflicts_total"):
        lines.append(f"… and {total - len(data['conflicts'])} more spots that both changed.")
    return lines


def _conflict_moves(data: dict) -> list[str]:
    """Apply only the caller's change: never "repeat your call", which would undo the other's,
    and never a call that drops text or values the caller did not write."""
    ref, now = data["entry"], data["current_version"]
    if data.get("both_changed") and "update" in data:
        return _both_changed_moves(ref, data, now)
    if data.get("edits"):
        # Each edit is a revision: the next one expects the version the last one made.
        steps = [
            f'edit("{ref}", operation="find_replace", find={json.dumps(e["find"])}, '
            f"content={json.dumps(e['replace'])}, expected_version={now + i})"
            for i, e in enumerate(data["edits"])
        ]
        return [
            "Apply only your change: " + "; then ".join(steps) + ". Or send the merged body "
            f"above (both changes) as body with expected_version={now}."
        ]
    if "merged_body" in data:
        return [f"Send the merged body above (both changes) as body with expected_version={now}."]
    if data.get("conflicts"):
        return _clash_moves(ref, data, now)
    return [
        f'get("{ref}") for the current text; then apply only your change to it, e.g. '
        f'edit("{ref}", operation="find_replace", find=…, content=…, expected_version={now}).'
    ]


def _clash_moves(ref: str, data: dict, now: int) -> list[str]:
    """Lines both changed: theirs stays. The only calls offered add yours beside theirs; which
    of the two should stay is for the writers to decide, never a call that drops theirs."""
    moves = ["Their text stays as it is: it is not yours to remove without asking its writer."]
    if data.get("keep_both"):
        steps = [
            f'edit("{ref}", operation="find_replace", find={json.dumps(e["find"])}, '
            f"content={json.dumps(e['replace'])}, expected_version={now + i})"
            for i, e in enumerate(data["keep_both"])
        ]
        moves.append("To keep both (yours after theirs): " + "; then ".join(steps) + ".")
    else:
        moves.append(
            f'get("{ref}") shows the current text; add only your own lines to it, next to theirs '
            f"(expected_version={now})."
        )
    return moves


def _both_changed_moves(ref: str, data: dict, now: int) -> list[str]:
    """Both set the same fields: their values stay. Tags are kept as theirs plus yours; a title,
    kind, status or place of theirs is left as it is, the rest of the update applies."""
    both, theirs = data["both_changed"], data.get("fields") or {}
    update = dict(data["update"])
    kept = [name for name in both if name != "tags"]
    for name in kept:
        update.pop("subtopic" if name == "place" else name, None)
        update.pop("project", None) if name == "place" else None
    if "tags" in both and "tags" in update:
        now_tags = list(theirs.get("tags", {}).get("now") or [])
        update["tags"] = now_tags + [t for t in update["tags"] if t not in now_tags]
    left_out = [k for k in data.get("update_left_out", []) if k not in kept]
    names = ", ".join(both)
    moves = [f"Both changed {names} (their values above); theirs stay unless their writer agrees."]
    if update or left_out:
        what = "your other fields, and tags as theirs plus yours" if "tags" in both else "the rest"
        call = _same_update(ref, {"update": update, "update_left_out": left_out}, now)
        moves.append(f"To keep theirs and apply {what}: {call}.")
    return moves


def _same_update(ref: str, data: dict, now: int) -> str:
    """The writer's own update as a call on the current version; a value too long to have come
    back (`update_left_out`) is named, for the writer to send as it did."""
    args = [f'"{ref}"'] + [f"{key}={json.dumps(value)}" for key, value in data["update"].items()]
    args += [f"{key}=<your {key}, unchanged>" for key in data.get("update_left_out", [])]
    return f"update({', '.join(args)}, expected_version={now})"


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
