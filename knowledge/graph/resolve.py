"""Which entry a link names: the rules every save applies to its `[[links]]`, and the editor's
preview asks before saving. Reads only; the write kernel (knowledge.services) stores the answer.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.search import TrigramSimilarity
from django.db.models import Q

from knowledge.access import projects_for, reach
from knowledge.actors import Actor
from knowledge.db import Stand, compile_once
from knowledge.errors import ValidationFailed
from knowledge.models import Entry, EntryStatus, Sensitivity
from knowledge.paths import entry_slug, normalize_path

# A project may resolve links into projects at most as closed as itself: a public entry's link
# never points into a restricted project (readers are filtered again when it is shown).
_RANK = {
    Sensitivity.PUBLIC: 0,
    Sensitivity.INTERNAL: 1,
    Sensitivity.CONFIDENTIAL: 2,
    Sensitivity.RESTRICTED: 3,
}


def may_reference(source_sensitivity: str, target_sensitivity: str) -> bool:
    return _RANK.get(target_sensitivity, 3) <= _RANK.get(source_sensitivity, 0)


ADDRESS = "memory://"  # the address the server prints: memory://project/path/slug


def target_key(text: str) -> str:
    """The slug a link's last segment names: what an entry's slug is matched on."""
    return entry_slug(text.rsplit("/", 1)[-1].strip())


def split_target(text: str) -> tuple[str | None, str | None, str]:
    """`proj/a/b/Title` → ("proj", "a/b", key); `a/Title` → ("a", "", key) as well as the
    same-project reading ("a" as the subtopic) — the resolver tries both. A `memory://`
    address reads as its `proj/a/b/slug`."""
    text = link_path(text)
    parts = [p.strip() for p in text.split("/") if p.strip()]
    if len(parts) <= 1:
        return None, None, target_key(text)
    try:
        return parts[0].lower(), normalize_path("/".join(parts[1:-1])), target_key(parts[-1])
    except ValidationFailed:  # a link that is no valid path just does not resolve
        return None, None, target_key(text)


def link_path(text: str) -> str:
    text = text.strip()
    return text[len(ADDRESS) :] if text[: len(ADDRESS)].lower() == ADDRESS else text


MAX_CANDIDATES = 500  # entries a save's links are matched among (a title in many projects)


def _candidates(
    source: Entry, keys: set[str], firsts: set[str], bare: set[str], writer: Actor | None
):
    """The entries whose slug a link names, in the source's project, in a project the link
    names, or (for a bare title) in any project, of those the writer can read: (id, slug,
    project id, project slug, its sensitivity, subtopic path, status), oldest first (ordered by
    id). Every save with links runs it: compiled once per shape."""
    r = reach(writer) if (firsts or bare) and writer is not None else None
    new = source.pk is None

    def build(s: Stand):
        here = Q(project_id=s.int("project"))
        if r is not None:
            readable = projects_for(r, "read", s)
            named = Q(project__slug__any=s.texts("firsts")) | Q(slug__any=s.texts("bare"))
            here |= named & Q(project__in=readable)
        found = Entry.objects.filter(slug__any=s.texts("keys")).filter(here)
        if not new:
            found = found.exclude(pk=s.int("id"))
        return found.order_by("pk").values_list(
            "pk", "slug", "project_id", "project__slug", "project__sensitivity",
            "subtopic__path", "status",
        )[:MAX_CANDIDATES]  # fmt: skip

    compiled = compile_once(("link_candidates", r and r.shape, new), build)
    return compiled.rows(
        keys=sorted(keys),
        id=source.pk,
        project=source.project_id,
        firsts=sorted(firsts),
        bare=sorted(bare),
        **(r.values if r is not None else {}),
    )


def resolve_targets(source: Entry, texts: list[str], writer: Actor | None) -> dict[str, int | None]:
    """For each link text of `source`: the id of the entry it names, or None (waiting).

    Same project first: the exact path, then the title (same subtopic preferred, then the one
    entry with it, then the oldest); a `project/…/Title` link (or its `memory://` address)
    names another project only when that project exists, `source`'s project may reference it
    and the `writer` may read it. A bare title not in the source's project names the one entry
    with it in the other projects the writer reads (several: it waits, elsewhere_matches lists
    them). A project the writer cannot read is treated as one that does not exist, so a link
    never tells its writer whether a hidden entry is there.
    """
    return {text: found for text, (found, _) in resolve_links(source, texts, writer).items()}


def resolve_links(
    source: Entry, texts: list[str], writer: Actor | None
) -> dict[str, tuple[int | None, list[int]]]:
    """resolve_targets, with the entries a waiting bare title could mean in other projects."""
    if not texts:
        return {}
    project = source.project
    keys = {target_key(t) for t in texts}
    firsts = {p for p, _, _ in map(split_target, texts) if p}
    bare = {key for first, _, key in map(split_target, texts) if first is None}
    rows = _candidates(source, keys, firsts, bare, writer)
    answer: dict[str, tuple[int | None, list[int]]] = {}
    for text in texts:
        first, sub, key = split_target(text)
        found = None
        if first and first != project.slug:
            found = _pick(
                [r for r in rows if r[3] == first and may_reference(project.sensitivity, r[4])],
                key,
                sub,
                None,
            )
        if found is None:
            if first == project.slug:
                local_sub = sub
            elif first:
                path = link_path(text)
                local_sub = normalize_path(path.rsplit("/", 1)[0]) if "/" in path else None
            else:
                local_sub = None
            own = [r for r in rows if r[2] == project.pk]
            found = _pick(own, key, local_sub, source.subtopic.path if source.subtopic_id else "")
        others: list[int] = []
        if found is None and first is None:
            others = _elsewhere(rows, project, key)
            found = others[0] if len(others) == 1 else None
            if found is None and not others:
                found = _close_enough(source, text)
        answer[text] = (found, others if found is None else [])
    return answer


def _elsewhere(rows: list[tuple], project, key: str) -> list[int]:
    """The entries of other projects a bare title names (not superseded, when one is not)."""
    same = [r for r in rows if r[2] != project.pk and r[1] == key]
    same = [r for r in same if may_reference(project.sensitivity, r[4])]
    live = [r for r in same if r[6] != EntryStatus.SUPERSEDED] or same
    return [r[0] for r in live]


def _close_enough(source: Entry, text: str) -> int | None:
    """The one entry of the source's project whose title is similar enough to `text`
    (pg_trgm, CAIRN_GRAPH_FUZZY_THRESHOLD): none when two are, so a guess is never ambiguous."""
    threshold = settings.CAIRN_GRAPH_FUZZY_THRESHOLD
    name = text.rsplit("/", 1)[-1].strip()
    if not threshold or len(name) < 4:
        return None
    close = list(
        Entry.objects.filter(project_id=source.project_id, title__trigram_similar=name)
        .exclude(pk=source.pk)
        .exclude(status=EntryStatus.SUPERSEDED)
        .annotate(similarity=TrigramSimilarity("title", name))
        .filter(similarity__gte=threshold)
        .values_list("pk", flat=True)[:2]
    )
    return close[0] if len(close) == 1 else None


def _pick(rows: list[tuple], key: str, sub: str | None, near: str | None) -> int | None:
    same = [r for r in rows if r[1] == key]
    if sub is not None:
        same = [r for r in same if (r[5] or "") == sub]
    if not same:
        return None
    live = [r for r in same if r[6] != EntryStatus.SUPERSEDED] or same
    if near is not None:
        close = [r for r in live if (r[5] or "") == near]
        if close:
            return close[0][0]
    return live[0][0]
