"""The text of what links where: an entry's links and backlinks (get) and build_context's
answer, each entry named with its short id, title and kind. Imports nothing of mcp_api, so
render may use it."""

from __future__ import annotations


def relation_lines(relations: dict) -> str:
    """`Links:` and `Backlinks:` lines (empty when there are none)."""
    out = [
        f"{r['type']} → {_named(r['entry'])}"
        if r["entry"]
        else f"{r['type']} → [[{r['target_text']}]] (not found)"
        for r in relations["outgoing"]
    ]
    back = [f"{r['type']} ← {_named(r['entry'])}" for r in relations["backlinks"]]
    lines = []
    if out:
        lines.append("Links: " + "; ".join(out))
    if back:
        lines.append("Backlinks: " + "; ".join(back))
    return "\n\n" + "\n".join(lines) if lines else ""


def _named(entry: dict) -> str:
    """`k3x9 'Cache memory alarm' (decision)`: enough to tell whether to read it."""
    return f"{entry['short_id']} {entry['title']!r} ({entry['kind']})"


def _observation_line(obs: dict) -> str:
    tags = "".join(f" #{t}" for t in obs["tags"])
    context = f" ({obs['context']})" if obs["context"] else ""
    until = "" if obs["current"] else f" [until v{obs['until_version']}, {obs['until'][:10]}]"
    return f"  - [{obs['category']}] {obs['content']}{tags}{context}{until}"


def context_text(ctx: dict) -> str:
    """build_context: the primary entries, then the related ones with how each was reached."""
    when = f", as of {ctx['as_of'][:10]}" if ctx["as_of"] else ""
    lines = [f"Context for {ctx['url']!r} ({ctx['matched']}, depth {ctx['depth']}{when}):"]
    for entry in ctx["primary"]:
        lines.append(
            f"## {entry['short_id']} · {entry['title']} · {entry['kind']} · {entry['permalink']}"
        )
        if entry["excerpt"]:
            lines.append(f"  {entry['excerpt']}")
        lines += [_observation_line(o) for o in entry["observations"]]
    if ctx["primary_cut"]:
        lines.append("(More entries match: narrow the glob.)")
    links = ctx.get("links") or []
    if links:
        lines.append(f"Links among them ({len(links)}):")
        lines += [
            f"- {link['source']} {link['source_title']!r} {link['type']} → "
            f"{link['target']} {link['target_title']!r}"
            for link in links
        ]
    if ctx["related"]:
        lines.append(f"Related ({len(ctx['related'])} of {ctx['total_related']}):")
    for entry in ctx["related"]:
        rel = entry["relation"]
        arrow = f"{rel['type']} →" if rel["direction"] == "outgoing" else f"← {rel['type']}"
        via = f"{rel['via']} {rel['via_title']!r}" if rel.get("via_title") else rel["via"]
        lines.append(
            f"- {rel['distance']} hop(s), {via} {arrow} {entry['short_id']} · "
            f"{entry['title']} · {entry['kind']} · {entry['path']} · {entry['updated'][:10]}"
        )
        lines += [_observation_line(o) for o in entry["observations"][:5]]
    if not ctx["related"]:
        other = " other" if links else ""
        lines.append(f"No{other} related entries" + (" at this time." if ctx["as_of"] else "."))
    first = ctx["primary"][0]["short_id"]
    if ctx["cut"]:
        lines.append(
            f"Cut at {len(ctx['related'])} of {ctx['total_related']}: "
            f'build_context("{ctx["url"]}", max_related={min(50, ctx["total_related"])}) '
            "shows more."
        )
    further = f'; build_context("{first}", depth={ctx["depth"] + 1}) goes further'
    lines.append(f'Next: get("{first}") reads one in full{further if ctx["depth"] < 3 else ""}.')
    return "\n".join(lines)
