"""The lines of a write's answer that say what it did (from knowledge.reads.write_reports):
lines added and removed, the removed text with who wrote it, fields changed, observations and
relations parsed, links resolved or waiting, sources recorded, similar entries and entries with
the same body. Imports nothing
of mcp_api, so render may use it."""

from __future__ import annotations

import json

from knowledge.graph.parsing import MAX_ITEMS

MAX_SHOWN = 5
# A long log's facts past the parser's cap stay in its text, unindexed: say so, and what to do.
_FULL = (
    f" (the most one entry indexes: facts past its first {MAX_ITEMS} stay in its text but are "
    "not searchable as facts; write more in a new entry, e.g. the same title with ' (continued)')"
)
MAX_TEXT = 120


def _clip(text: str, size: int = MAX_TEXT) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def _value(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def fields_line(fields: dict) -> str:
    """Metadata changes on one line: `status active → resolved; tags [] → [a]`."""
    return "; ".join(
        f"{name} {_value(v['from'])} → {_value(v['to'])}" for name, v in fields.items()
    )


def removed_lines(change: dict) -> list[str]:
    """The removed text, grouped by the revision that wrote it."""
    rows = change.get("removed_lines") or []
    if not rows:
        return []
    groups: dict[tuple, list[str]] = {}
    for row in rows:
        groups.setdefault((row["version"], row["by"]), []).append(row["text"])
    out = [f"Removed text ({len(rows)} line(s)):"]
    for (version, by), texts in groups.items():
        where = (
            f"written in v{version} by {by}"
            if version
            else f"kept in {change['from_entry']}"
            if change.get("from_entry")
            else "origin unknown"
        )
        out += [f"  - {_clip(t)!r} ({where})" for t in texts[:MAX_SHOWN]]
        if len(texts) > MAX_SHOWN:
            out.append(f"  … {len(texts) - MAX_SHOWN} more from v{version}")
    if more := change.get("removed_lines_more"):
        out.append(f"  … and {more} more line(s)")
    return out


def _relation(rel: dict) -> str:
    if rel["resolved"]:
        e = rel["entry"]
        return f"{rel['type']} → {e['short_id']} {e['title']!r} (resolved)"
    if rel.get("candidates"):
        named = ", ".join(f"{c['short_id']} [[{c['permalink']}]]" for c in rel["candidates"])
        return (
            f"{rel['type']} → [[{rel['target']}]] (waiting: {rel['target']!r} names entries in "
            f"several projects you read: {named}; link the one you mean by its address)"
        )
    return (
        f"{rel['type']} → [[{rel['target']}]] (waiting: no one entry {rel['target']!r} you can "
        "see; a link resolves as [[Title]] (your project first, then the one in the others you "
        "read), [[project/path/slug]] or [[memory://project/path/slug]], as get and search "
        "print them)"
    )


def facts_lines(report: dict) -> list[str]:
    obs, rels = report.get("observations") or [], report.get("relations") or []
    out = []
    if obs:
        new = [o for o in obs if o["new"]]
        counted = report.get("observations_counted") or {"total": len(obs), "new": len(new)}
        shown = ", ".join(f"[{o['category']}] {_clip(o['content'], 60)}" for o in new[:MAX_SHOWN])
        out.append(
            f"Observations: {counted['total']} current, {counted['new']} new"
            + (f": {shown}" if shown else "")
            + (_FULL if counted["total"] >= MAX_ITEMS else "")
        )
    if rels:
        listed = "; ".join(_relation(r) for r in rels[:MAX_SHOWN])
        more = f"; … {len(rels) - MAX_SHOWN} more" if len(rels) > MAX_SHOWN else ""
        out.append(f"Relations: {listed}{more}")
    return out


def sources_lines(report: dict) -> list[str]:
    rows = report.get("sources") or []
    if not rows:
        return []
    parts = [
        f"{s['kind']}:{_clip(s['external_id'], 80)}"
        + (f" {_clip(s['title'], 80)!r}" if s.get("title") else "")
        + (f" <{_clip(s['url'], 200)}>" if s.get("url") else "")
        + (f" (also logged by {', '.join(s['also_logged_by'])})" if s["also_logged_by"] else "")
        for s in rows
    ]
    total = report.get("sources_total") or len(rows)
    held = f" The entry holds {total} sources; get() lists them." if total > len(rows) else ""
    return ["Sources recorded: " + "; ".join(parts) + "." + held]


def similar_lines(report: dict, short_id: str) -> list[str]:
    rows = report.get("similar") or []
    if not rows:
        return []
    listed = "; ".join(f"{s['short_id']} {s['title']!r} in {s['path']} ({s['why']})" for s in rows)
    first = rows[0]
    # Nothing here removes text: one entry's words are never advised away for another's.
    link = json.dumps(f"- same_as [[{first['title']}]]", ensure_ascii=False)
    return [
        f"Similar entries exist: {listed}. If one says the same, link them: "
        f'edit("{short_id}", operation="append", content={link}); or add what this one adds '
        f'to it: edit("{first["short_id"]}", operation="append", content=<what it adds>).'
    ]


def same_body_lines(report: dict, short_id: str) -> list[str]:
    rows = report.get("same_body") or []
    if not rows:
        return []
    listed = "; ".join(f"{s['short_id']} {s['title']!r} in {s['path']} ({s['kind']})" for s in rows)
    return [
        f"Same body (word for word, whitespace and case aside) as: {listed}. If it is the same "
        f'note, keep one: delete("{short_id}", reason=…), or update the older one\'s title.'
    ]


def rebased_lines(rebased: dict | None) -> list[str]:
    """A stale write that applied on the current version: which, and who changed it since."""
    if not rebased:
        return []
    since = "; ".join(
        f"v{c['version']} by {c['by']}" + (f" ({_clip(c['reason'], 60)})" if c["reason"] else "")
        for c in rebased["changes"][-3:]
    )
    return [
        f"Applied on version {rebased['version']}, the current one (you read version "
        f"{rebased['read_version']}; since then {since or 'changed'}): your change touches no "
        "line or field theirs changed, so both are kept."
    ]


def report_lines(report: dict | None, short_id: str) -> list[str]:
    """Every line of the report, body changes first, then metadata on one line."""
    if not report or report.get("outcome") == "unchanged":
        return []
    change = report.get("change") or {}
    lines = removed_lines(change)
    if (heading := change.get("under_heading")) and not change.get("removed"):
        lines.append(
            f"New text is under the heading {heading!r}: replace_section({heading!r}) would "
            "replace it too."
        )
    if change.get("fields"):
        lines.append("Fields: " + fields_line(change["fields"]))
    lines += facts_lines(report)
    lines += sources_lines(report)
    lines += similar_lines(report, short_id)
    lines += same_body_lines(report, short_id)
    return lines


def change_summary(report: dict | None) -> str:
    """`: +3 -1 lines` after the version, or nothing."""
    change = (report or {}).get("change")
    if not change:
        return ""
    return f": +{change['added']} -{change['removed']} lines"
