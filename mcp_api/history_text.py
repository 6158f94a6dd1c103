"""History answers for an agent: an entry's revisions (with those of the entries a correction
links it to, marked) and diffs, including what a correction changed."""

from __future__ import annotations

from collections.abc import Iterable

from mcp_types import CallToolResult

from knowledge.models import Entry
from mcp_api.render import result


def revisions(entry: Entry, history: Iterable[dict]) -> CallToolResult:
    rows = [{**r, "at": r["at"].isoformat()} for r in history]
    lines = [f"History of {entry.short_id} {entry.title!r} (newest first):"]
    lines += [
        f"- {_mark(r)}v{r['version']} {r['at'][:16]} {r['action']} by {_who(r)}"
        + (f": {r['reason']}" if r["reason"] else "")
        + (f" [{r['git_commit'][:10]}]" if r["git_commit"] else "")
        for r in rows
    ]
    own = [r for r in rows if not r.get("correction")]
    if len(own) > 1:
        lines.append(
            f"Next: diff({entry.short_id}, from_version={own[1]['version']}) for the last change."
        )
    elif entry.supersedes_id and len(own) < len(rows):
        lines.append(f"Next: diff({entry.short_id}) shows what the correction changed.")
    return result("\n".join(lines), {"entry": entry.short_id, "revisions": rows})


def _mark(rev: dict) -> str:
    """`[corrected abc123] `: a row of another entry, and how a correction links it."""
    return f"[{rev['correction']} {rev['entry']}] " if rev.get("correction") else ""


def _who(rev: dict) -> str:
    """`agent:x (sam)`: the label the write was recorded under, and the user behind it."""
    agent, user = rev.get("generated_by") or "", rev.get("user") or ""
    if agent and user and not agent.endswith(f":{user}"):
        return f"{agent} ({user})"
    return agent or user or "?"


def entry_diff(
    entry: Entry,
    from_version: int,
    to_version: int,
    text: str,
    *,
    from_entry: str = "",
    corrected_by: str = "",
) -> CallToolResult:
    """A diff between two versions of `entry`, or (`from_entry`) from the entry it corrected;
    `corrected_by` names the entry that corrected this one, when the reader may see it."""
    if from_entry:
        summary = (
            f"What {entry.short_id} {entry.title!r} changed when it corrected {from_entry}, "
            f"{from_entry}@v{from_version} → {entry.short_id}@v{to_version}:"
        )
    elif text:
        summary = (
            f"Diff of {entry.short_id} {entry.title!r}, version {from_version} → {to_version}:"
        )
    elif from_version == to_version:  # e.g. the default on an entry at version 1
        summary = (
            f"{entry.short_id} has one version so far: nothing to compare."
            if entry.version == 1
            else f"That compares version {to_version} with itself; history lists the others."
        )
    else:
        summary = f"Versions {from_version} and {to_version} of {entry.short_id} are the same."
    if not text and from_entry:
        summary += " (the same text)"
    if corrected_by:
        summary += f"\n(Corrected since: diff({corrected_by}) shows what the correction changed.)"
    data = {"entry": entry.short_id, "from_version": from_version, "to_version": to_version}
    if from_entry:
        data["from_entry"] = from_entry
    return result(f"{summary}\n{text}".rstrip(), {**data, "diff": text})
