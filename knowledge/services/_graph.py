"""Kernel steps for the knowledge graph: index an entry's observations and relations when it is
saved, resolve links that wait for it. Called by the kernel's save step, in the same
transaction; never opens one of its own.

Facts are never rewritten: an observation or relation that a write drops is closed at that
revision (`valid_to`, `valid_to_version`) and a changed one is closed and added anew, so the
graph as it was at any time stays answerable. A superseded entry's facts are all closed.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.search import SearchVector, TrigramSimilarity
from django.db.models import Q

from knowledge.errors import ValidationFailed
from knowledge.graph.parsing import Graph, parse
from knowledge.models import Entry, EntryStatus, Observation, Relation, Sensitivity
from knowledge.paths import entry_slug, normalize_path

# A project may resolve links into projects at most as closed as itself: a public entry's link
# never points into a restricted project (readers are filtered again when it is shown).
_RANK = {
    Sensitivity.PUBLIC: 0,
    Sensitivity.INTERNAL: 1,
    Sensitivity.CONFIDENTIAL: 2,
    Sensitivity.RESTRICTED: 3,
}
_CANDIDATE = ("pk", "slug", "project_id", "project__slug", "project__sensitivity",
              "subtopic__path", "status")  # fmt: skip
MAX_WAITING = 1000  # waiting links resolved per write


def may_reference(source_sensitivity: str, target_sensitivity: str) -> bool:
    return _RANK.get(target_sensitivity, 3) <= _RANK.get(source_sensitivity, 0)


def target_key(text: str) -> str:
    """The slug a link's last segment names: what an entry's slug is matched on."""
    return entry_slug(text.rsplit("/", 1)[-1].strip())


def _split_target(text: str) -> tuple[str | None, str | None, str]:
    """`proj/a/b/Title` → ("proj", "a/b", key); `a/Title` → ("a", "", key) as well as the
    same-project reading ("a" as the subtopic) — the resolver tries both."""
    parts = [p.strip() for p in text.split("/") if p.strip()]
    if len(parts) <= 1:
        return None, None, target_key(text)
    try:
        return parts[0].lower(), normalize_path("/".join(parts[1:-1])), target_key(parts[-1])
    except ValidationFailed:  # a link that is no valid path just does not resolve
        return None, None, target_key(text)


def resolve_targets(source: Entry, texts: list[str]) -> dict[str, int | None]:
    """For each link text of `source`: the id of the entry it names, or None (waiting).

    Same project first: the exact path, then the title (same subtopic preferred, then the one
    entry with it, then the oldest); a `project/…/Title` link names another project only when
    that project exists and `source`'s project may reference it.
    """
    if not texts:
        return {}
    project = source.project
    keys = {target_key(t) for t in texts}
    firsts = {p for p, _, _ in map(_split_target, texts) if p}
    rows = list(
        Entry.objects.filter(slug__in=keys)
        .filter(Q(project_id=project.pk) | Q(project__slug__in=firsts))
        .exclude(pk=source.pk)
        .values_list(*_CANDIDATE)
        .order_by("pk")
    )
    answer: dict[str, int | None] = {}
    for text in texts:
        first, sub, key = _split_target(text)
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
                local_sub = normalize_path(text.rsplit("/", 1)[0]) if "/" in text else None
            else:
                local_sub = None
            own = [r for r in rows if r[2] == project.pk]
            found = _pick(own, key, local_sub, source.subtopic.path if source.subtopic_id else "")
            if found is None and local_sub is None:
                found = _close_enough(source, text)
        answer[text] = found
    return answer


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


def index_graph(entry: Entry, parsed: Graph | None = None) -> None:
    """Bring the entry's current observations and relations in line with its body."""
    when, version = entry.updated_at, entry.version
    if parsed is None:
        parsed = Graph() if entry.status == EntryStatus.SUPERSEDED else parse(entry.body)
    _index_observations(entry, parsed, when, version)
    _index_relations(entry, parsed, when, version)


def _index_observations(entry: Entry, parsed: Graph, when, version: int) -> None:
    wanted = {}
    for obs in parsed.observations:
        wanted.setdefault((obs.category, obs.content, tuple(obs.tags), obs.context), obs)
    kept, closing = set(), []
    for pk, *key in Observation.objects.filter(
        entry_id=entry.pk, valid_to__isnull=True
    ).values_list("pk", "category", "content", "tags", "context"):
        key = (key[0], key[1], tuple(key[2]), key[3])
        if key in wanted and key not in kept:
            kept.add(key)
        else:
            closing.append(pk)
    if closing:
        Observation.objects.filter(pk__in=closing).update(valid_to=when, valid_to_version=version)
    new = [
        Observation(
            entry_id=entry.pk,
            category=o.category,
            content=o.content,
            tags=list(o.tags),
            context=o.context,
            position=o.position,
            valid_from=when,
            valid_from_version=version,
        )
        for key, o in wanted.items()
        if key not in kept
    ]
    if new:
        Observation.objects.bulk_create(new)
        config = settings.CAIRN_SEARCH_CONFIG
        Observation.objects.filter(entry_id=entry.pk, search_vector__isnull=True).update(
            search_vector=SearchVector("category", weight="B", config=config)
            + SearchVector("content", weight="A", config=config)
            + SearchVector("context", weight="C", config=config)
        )


def _index_relations(entry: Entry, parsed: Graph, when, version: int) -> None:
    wanted = {}
    for rel in parsed.relations:
        wanted.setdefault((rel.type, rel.target.lower()), rel)
    kept, closing, waiting = set(), [], []
    for pk, rtype, text, target_id in Relation.objects.filter(
        source_id=entry.pk, valid_to__isnull=True
    ).values_list("pk", "relation_type", "target_text", "target_id"):
        key = (rtype, text.lower())
        if key in wanted and key not in kept:
            kept.add(key)
            if target_id is None:
                waiting.append((pk, text))
        else:
            closing.append(pk)
    if closing:
        Relation.objects.filter(pk__in=closing).update(valid_to=when, valid_to_version=version)
    new = [rel for key, rel in wanted.items() if key not in kept]
    resolved = resolve_targets(entry, [r.target for r in new] + [t for _, t in waiting])
    if new:
        Relation.objects.bulk_create(
            Relation(
                source_id=entry.pk,
                relation_type=r.type,
                target_text=r.target,
                target_key=target_key(r.target)[:120],
                target_id=resolved.get(r.target),
                position=r.position,
                valid_from=when,
                valid_from_version=version,
            )
            for r in new
        )
    for pk, text in waiting:
        if resolved.get(text):
            Relation.objects.filter(pk=pk).update(target_id=resolved[text])


def resolve_waiting(entry: Entry) -> int:
    """Point the links that wait for an entry like this one at it (after a create, rename or
    move), and a correction's incoming links at the correcting entry. Returns how many."""
    count = 0
    if entry.supersedes_id:
        count += Relation.objects.filter(
            target_id=entry.supersedes_id, valid_to__isnull=True
        ).update(target_id=entry.pk)
    if entry.status == EntryStatus.SUPERSEDED:
        return count
    rows = list(
        Relation.objects.filter(
            target__isnull=True, valid_to__isnull=True, target_key=entry.slug[:120]
        )
        .exclude(source_id=entry.pk)
        .select_related("source__project", "source__subtopic")[:MAX_WAITING]
    )
    for rel in rows:
        if resolve_targets(rel.source, [rel.target_text]).get(rel.target_text) == entry.pk:
            Relation.objects.filter(pk=rel.pk).update(target_id=entry.pk)
            count += 1
    return count


def index_entry_graph(entry: Entry) -> None:
    """The save step's graph work: the entry's own facts, then the links that wait for it."""
    index_graph(entry)
    resolve_waiting(entry)
