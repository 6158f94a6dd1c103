"""Kernel steps for the knowledge graph: index an entry's observations and relations when it is
saved, resolve links that wait for it. Called by the kernel's save step, in the same
transaction; never opens one of its own.

Facts are never rewritten: an observation or relation that a write drops is closed at that
revision (`valid_to`, `valid_to_version`) and a changed one is closed and added anew, so the
graph as it was at any time stays answerable. A superseded entry's facts are all closed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.graph.parsing import Graph, parse
from knowledge.graph.parsing import Observation as ParsedObservation
from knowledge.graph.resolve import (
    link_path,
    may_reference,
    resolve_links,
    split_target,
    target_key,
)
from knowledge.models import (
    Entry,
    EntryStatus,
    Project,
    Relation,
    content_hash,
)
from knowledge.paths import entry_slug, normalize_path
from knowledge.selectors import visible_projects

MAX_WAITING = 1000  # waiting links resolved per write
# The links waiting for an entry with this slug, through the relation_waiting index, with their
# source's project and last writer. Plain SQL: every new entry runs it, and building it as an ORM
# query cost more than running it (bench/write_profile.py). In the order the ORM gave them.
_WAITING = """SELECT r.id, r.target_text, e.project_id, p.sensitivity, e.updated_by_id
  FROM knowledge_relation r
  JOIN knowledge_entry e ON e.id = r.source_id
  JOIN knowledge_project p ON p.id = e.project_id
 WHERE r.target_id IS NULL AND r.valid_to IS NULL AND r.target_key = %(key)s
   AND r.source_id <> %(id)s
 ORDER BY e.updated_at DESC, r.position, r.id LIMIT %(limit)s"""


def writer_of(entry: Entry) -> Actor | None:
    """Who wrote an entry's links, when the save that wrote them is not at hand (a reindex, a
    link waiting for its entry): its last author. None when unknown: its links then stay in
    its own project."""
    return Actor.for_user(entry.updated_by) if entry.updated_by_id else None


# One round trip for both kinds of current facts of an entry.
_CURRENT_SQL = """
SELECT 'o', id, category, content, context, tags, NULL::bigint
  FROM knowledge_observation WHERE entry_id = %(entry)s AND valid_to IS NULL
UNION ALL
SELECT 'r', id, relation_type, target_text, '', '{}'::varchar(60)[], target_id
  FROM knowledge_relation WHERE source_id = %(entry)s AND valid_to IS NULL
"""

# One statement closes and adds both kinds (the CTEs touch different rows). An observation's
# vector is the one search reads: content A, category B, context C (as
# django.contrib.postgres's SearchVector writes it).
_WRITE_SQL = """
WITH closed_observations AS (
  UPDATE knowledge_observation SET valid_to = %(when)s, valid_to_version = %(version)s
   WHERE id = ANY(%(close_observations)s::bigint[])
), closed_relations AS (
  UPDATE knowledge_relation SET valid_to = %(when)s, valid_to_version = %(version)s
   WHERE id = ANY(%(close_relations)s::bigint[])
), observations AS (
  INSERT INTO knowledge_observation (entry_id, category, content, tags, context, "position",
         valid_from, valid_from_version, search_vector)
  SELECT %(entry)s, category, content, tags, context, "position", %(when)s, %(version)s,
         setweight(to_tsvector(%(config)s::regconfig, COALESCE(content, '')), 'A')
         || setweight(to_tsvector(%(config)s::regconfig, COALESCE(category, '')), 'B')
         || setweight(to_tsvector(%(config)s::regconfig, COALESCE(context, '')), 'C')
    FROM jsonb_to_recordset(%(observations)s::jsonb) AS x(category text, content text,
         tags text[], context text, "position" integer)
)
INSERT INTO knowledge_relation (source_id, relation_type, target_text, target_key, target_id,
       "position", valid_from, valid_from_version)
SELECT %(entry)s, type, text, key, target, "position", %(when)s, %(version)s
  FROM jsonb_to_recordset(%(relations)s::jsonb) AS x(type text, text text, key text,
       target bigint, "position" integer)
"""


@dataclass(frozen=True)
class GraphFacts:
    """The entry's current facts as the save left them, for the write's report (no reading
    back): observations as (parsed observation, new at this revision), in the body's order;
    relations as (type, link text, target entry id or None while waiting)."""

    observations: list[tuple[ParsedObservation, bool]]
    relations: list[tuple[str, str, int | None]]
    # A waiting bare title that names one entry in each of several other projects: their ids.
    ambiguous: dict[str, list[int]] = field(default_factory=dict)


def index_graph(
    entry: Entry,
    parsed: Graph | None = None,
    *,
    writer: Actor | None,
    recheck: bool = False,
    new_entry: bool = False,
) -> GraphFacts:
    """Bring the entry's current observations and relations in line with its body: facts that
    no longer read so are closed at this revision, new ones added; unchanged ones stay as they
    are. `recheck` also tries again to resolve its waiting links (after a move). New links
    resolve only into projects the `writer` may read. `new_entry`: created by this save, so it
    has no facts yet to compare with. Returns the facts as they now stand."""
    if parsed is None:
        parsed = Graph() if entry.status == EntryStatus.SUPERSEDED else parse(entry.body)
    want_obs: dict[tuple, object] = {}
    for obs in parsed.observations:
        want_obs.setdefault((obs.category, obs.content, tuple(obs.tags), obs.context), obs)
    want_rel: dict[tuple, object] = {}
    for rel in parsed.relations:
        want_rel.setdefault((rel.type, rel.target.lower()), rel)
    kept_obs, kept_rel, close_obs, close_rel, waiting = set(), set(), [], [], []
    targets: dict[tuple, int | None] = {}  # relation key -> its target, as stored or resolved
    current = []
    if not new_entry:
        with connection.cursor() as cursor:
            cursor.execute(_CURRENT_SQL, {"entry": entry.pk})
            current = cursor.fetchall()
    for kind, pk, a, b, context, tags, target_id in current:
        if kind == "o":
            key, want, kept, closing = (a, b, tuple(tags), context), want_obs, kept_obs, close_obs
        else:
            key, want, kept, closing = (a, b.lower()), want_rel, kept_rel, close_rel
        if key in want and key not in kept:
            kept.add(key)
            if kind == "r":
                targets[key] = target_id
                if target_id is None and recheck:
                    waiting.append((pk, b, key))
        else:
            closing.append(pk)
    new = [r for k, r in want_rel.items() if k not in kept_rel]
    links = resolve_links(entry, [r.target for r in new] + [t for _, t, _ in waiting], writer)
    resolved = {text: found for text, (found, _) in links.items()}
    _write_facts(
        entry,
        close=(close_obs, close_rel),
        observations=[o for k, o in want_obs.items() if k not in kept_obs],
        relations=[(r, resolved.get(r.target)) for r in new],
    )
    for pk, text, key in waiting:
        if resolved.get(text):
            Relation.objects.filter(pk=pk).update(target_id=resolved[text])
            targets[key] = resolved[text]
    for r in new:
        targets[(r.type, r.target.lower())] = resolved.get(r.target)
    return GraphFacts(
        observations=sorted(
            ((o, k not in kept_obs) for k, o in want_obs.items()), key=lambda p: p[0].position
        ),
        relations=[
            (r.type, r.target, targets.get(k))
            for k, r in sorted(want_rel.items(), key=lambda kv: kv[1].position)
        ],
        ambiguous={text: others for text, (_, others) in links.items() if len(others) > 1},
    )


def _write_facts(
    entry: Entry, *, close: tuple[list[int], list[int]], observations: list, relations: list
) -> None:
    """In one statement: close the facts (observation and relation ids) the new text no longer
    holds at this revision, add its new observations and relations ((parsed, target id)), each
    observation's full-text vector computed by the INSERT itself."""
    if not (close[0] or close[1] or observations or relations):
        return
    rows_obs = [
        {"category": o.category, "content": o.content, "tags": list(o.tags),
         "context": o.context, "position": o.position}
        for o in observations
    ]  # fmt: skip
    rows_rel = [
        {"type": r.type, "text": r.target, "key": target_key(r.target)[:120], "target": target,
         "position": r.position}
        for r, target in relations
    ]  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            _WRITE_SQL,
            {
                "entry": entry.pk,
                "when": entry.updated_at,
                "version": entry.version,
                "close_observations": close[0],
                "close_relations": close[1],
                "config": settings.CAIRN_SEARCH_CONFIG,
                "observations": json.dumps(rows_obs),
                "relations": json.dumps(rows_rel),
            },
        )


def resolve_waiting(entry: Entry) -> int:
    """Point the links that wait for an entry like this one at it (after a create, rename or
    move), and a correction's incoming links at the correcting entry. Returns how many.

    A waiting link matched nothing before, so this entry is its match when the link names it:
    decided from the link text, with no query per link."""
    count = 0
    if entry.supersedes_id:
        count += Relation.objects.filter(
            target_id=entry.supersedes_id, valid_to__isnull=True
        ).update(target_id=entry.pk)
    if entry.status == EntryStatus.SUPERSEDED:
        return count
    with connection.cursor() as cursor:
        cursor.execute(_WAITING, {"key": entry.slug[:120], "id": entry.pk, "limit": MAX_WAITING})
        rows = cursor.fetchall()
    sub = entry.subtopic.path if entry.subtopic_id else ""
    project = entry.project
    candidates = [
        (pk, source_project, writer)
        for pk, text, source_project, source_sensitivity, writer in rows
        if _names(text, project, sub, source_project, source_sensitivity)
    ]
    # A bare title from another project names this entry only when it is the one entry with
    # its slug (its writer may read several, and a link never guesses between them).
    if any(source_project != project.pk and split_target(text)[0] is None
           for _, text, source_project, _, _ in rows):  # fmt: skip
        lone = not Entry.objects.filter(slug=entry.slug).exclude(pk=entry.pk).exists()
        bare = {pk for pk, text, *_ in rows if split_target(text)[0] is None}
        candidates = [c for c in candidates if c[1] == project.pk or c[0] not in bare or lone]
    # From another project, only a link whose writer may read this one (see resolve_targets).
    writers = {w for _, source_project, w in candidates if source_project != project.pk and w}
    readers = set(_writers_who_read(writers, project))
    matched = [
        pk
        for pk, source_project, writer in candidates
        if source_project == project.pk or writer in readers
    ]
    if matched:
        count += Relation.objects.filter(pk__in=matched).update(target_id=entry.pk)
    return count


def _writers_who_read(user_ids: set[int], project: Project):
    """The users among `user_ids` who may read `project` (one query each; a waiting link from
    another project is rare, and its writers are few)."""
    from django.contrib.auth import get_user_model

    for user in get_user_model().objects.filter(pk__in=user_ids):
        if visible_projects(Actor.for_user(user)).filter(pk=project.pk).exists():
            yield user.pk


def _names(text: str, project, sub: str, source_project: int, source_sensitivity: str) -> bool:
    """Whether a link `text` written in project `source_project` names an entry (whose slug
    matches) in `project` at subtopic `sub`, by the rules of resolve_targets."""
    first, path_sub, _ = split_target(text)
    if first is None:  # a bare title: any subtopic of the source's own project, or another's
        return source_project == project.pk or may_reference(
            source_sensitivity, project.sensitivity
        )
    if first == project.slug:  # project/…/Title: that exact place
        if source_project != project.pk and not may_reference(
            source_sensitivity, project.sensitivity
        ):
            return False
        return path_sub == sub
    # subtopic/…/Title within the source's own project
    try:
        path = link_path(text)
        return source_project == project.pk and normalize_path(path.rsplit("/", 1)[0]) == sub
    except ValidationFailed:
        return False


@dataclass(frozen=True)
class GraphChange:
    """What a save changes for the graph, read before the save stamps the entry."""

    text: bool  # new entry, new body, or a status that opens or closes its facts
    identity: bool  # created, renamed or moved: links waiting for it may now resolve
    moved: bool = False  # its own waiting links may now resolve (relative to the new place)
    new: bool = False  # created by this save: it has no facts yet


def graph_change(entry: Entry) -> GraphChange:
    """Call before the save sets slug and content hash: they still hold the stored values."""
    new = entry.pk is None
    renamed = entry.slug != entry_slug(entry.title)
    moved = getattr(entry, "graph_moved", False)
    body = entry.content_hash != content_hash(entry.kind, entry.body)
    superseded = entry.status == EntryStatus.SUPERSEDED
    return GraphChange(
        text=new or body or renamed or moved or superseded,
        identity=new or renamed or moved or bool(entry.supersedes_id),
        moved=moved,
        new=new,
    )


def index_entry_graph(entry: Entry, change: GraphChange, writer: Actor) -> GraphFacts | None:
    """The save step's graph work: the entry's own facts (when its text changed), then the links
    that wait for it (when it is new, renamed or moved). A save that changes neither (a
    verification, tags, metadata) costs the graph nothing. Returns the facts when it indexed
    them."""
    facts = None
    if change.text:
        facts = index_graph(entry, writer=writer, recheck=change.moved, new_entry=change.new)
    if change.identity:
        resolve_waiting(entry)
    return facts
