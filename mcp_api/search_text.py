"""The search tool's answer text: one line per hit saying how it matched (by words, by meaning
or both; in which observation or passage), its snippet, and in explain mode each signal's part.
When no hit holds a word of the query, the first line says so before anything else."""

from __future__ import annotations


def size(entry: dict) -> str:
    """An entry's size as listings and hits show it: '1,204 chars, 31 lines'."""
    lines = entry["lines"]
    return f"{entry['chars']:,} chars, {lines} line{'' if lines == 1 else 's'}"


HOW = {("text", "semantic"): "words + meaning", ("text",): "words", ("semantic",): "meaning"}


def search_text(
    query: str, hits: list[dict], *, note: str = "", no_words: str = "", left_out: str = ""
) -> str:
    what = f"for {query!r}" if query.strip() else "matching the filters, newest first"
    if not hits:
        none = f"No entry contains {' '.join(query.split())!r}" if query.strip() else "No results"
        text = (
            f"{none}. Try fewer or other words, drop filters, or browse(project) to see what "
            "exists."
        )
        return text + (f"\n{note} Search again in a few seconds." if note else "")
    head = f"{no_words.rstrip('.')}:" if no_words else f"{len(hits)} result(s) {what}:"
    lines = [head]
    for hit in hits:
        lines.append(hit_line(hit))
        if hit.get("why"):
            lines.append("  why: " + " · ".join(f"{label}: {value}" for label, value in hit["why"]))
    if left_out:
        lines.append(left_out)
    lines.append(
        f'Next: get("{hits[0]["short_id"]}") to read one; narrow with project=, '
        "subtopic=, kinds=, tags=, since=."
    )
    if note:
        lines.append(note)
    return "\n".join(lines)


def hit_line(hit: dict) -> str:
    tags = f" [{', '.join(hit['tags'])}]" if hit.get("tags") else ""
    status = "" if hit.get("status") in ("active", None) else f" ({hit['status']})"
    where = hit.get("address") or hit["path"]
    head = f"- {hit['short_id']} · {hit['title']}{status} · {where} · {hit['kind']}{tags}"
    if "chars" in hit:
        head += f" · {size(hit)}"
    how = HOW.get(tuple(hit.get("matched") or ()))
    if how:
        where = hit.get("matched_in")
        head += f" · by {how}" + (f", {where}" if where else "")
    snippet = (hit.get("snippet") or "").strip()
    return f"{head}\n  {snippet}" if snippet else head
