"""Kernel steps for the knowledge graph: index an entry's observations and relations when it is
saved, then resolve the links that wait for it (waiting_links.py). Called by the kernel's save
step, in the same transaction; never opens one of its own.

Facts are never rewritten: an observation or relation that a write drops is closed at that
revision (`valid_to`, `valid_to_version`) and a changed one is closed and added anew, so the
graph as it was at any time stays answerable. A superseded entry's facts are all closed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from django.conf import settings

from knowledge.actors import Actor
from knowledge.db import compile_once, fetch_together
from knowledge.db.graph import write_facts
from knowledge.graph.parsing import (
    LINKS_TO,
    MAX_ITEMS,
    Graph,
    added_lines,
    parse,
    within_caps,
)
from knowledge.graph.parsing import Observation as ParsedObservation
from knowledge.graph.parsing import Relation as ParsedRelation
from knowledge.graph.resolve import resolve_links, target_key
from knowledge.models import Entry, EntryStatus, Observation, Relation, content_hash
from knowledge.paths import entry_slug
from knowledge.services._kernel.waiting_links import resolve_waiting
from knowledge.write_result import GraphFacts, ShownFacts


def writer_of(entry: Entry) -> Actor | None:
    """Who wrote an entry's links, when the save that wrote them is not at hand (a reindex, a
    link waiting for its entry): its last author. None when unknown: its links then stay in
    its own project."""
    return Actor.for_user(entry.updated_by) if entry.updated_by_id else None


def _current(entry_id: int) -> list[tuple]:
    """The entry's current observations ("o", id, category, content, context, tags, None) and
    relations ("r", id, type, link text, "", [], target id), in one round trip."""
    observations = compile_once(
        ("current_observations",),
        lambda s: (
            Observation.objects.filter(entry_id=s.int("entry"), valid_to__isnull=True)
            .order_by()
            .values_list("pk", "category", "content", "context", "tags")
        ),
    )
    relations = compile_once(
        ("current_relations",),
        lambda s: (
            Relation.objects.filter(source_id=s.int("entry"), valid_to__isnull=True)
            .order_by()
            .values_list("pk", "relation_type", "target_text", "target_id")
        ),
    )
    found_observations, found_relations = fetch_together(
        [observations.bind(entry=entry_id), relations.bind(entry=entry_id)]
    )
    return [
        ("o", pk, a, b, context, tags, None) for pk, a, b, context, tags in found_observations
    ] + [("r", pk, a, b, "", [], target) for pk, a, b, target in found_relations]


def _by_key(parsed: Graph) -> tuple[dict[tuple, ParsedObservation], dict[tuple, ParsedRelation]]:
    """A parse's observations and relations by the key of the row each is stored as, each where
    it first appears (in the body's order): a fact written twice is one row."""
    observations: dict[tuple, ParsedObservation] = {}
    for obs in parsed.observations:
        observations.setdefault((obs.category, obs.content, tuple(obs.tags), obs.context), obs)
    relations: dict[tuple, ParsedRelation] = {}
    for rel in parsed.relations:
        relations.setdefault((rel.type, rel.target.lower()), rel)
    return observations, relations


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
    want_obs, want_rel = _by_key(parsed)
    kept_obs, kept_rel, close_obs, close_rel, waiting = set(), set(), [], [], []
    targets: dict[tuple, int | None] = {}  # relation key -> its target, as stored or resolved
    current = []
    if not new_entry:
        current = _current(entry.pk)
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
    return _graph_facts(parsed, kept_obs, targets, links)


def _graph_facts(parsed: Graph, kept_obs: set, targets: dict, links: dict) -> GraphFacts:
    """The facts as a save leaves them, from the body's parse: observations in the body's order,
    new unless `kept_obs` holds their key; relations with their `targets` (key -> entry id)."""
    want_obs, want_rel = _by_key(parsed)
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


# --- an edit that adds lines -----------------------------------------------------------------


class _Deferred(GraphFacts):
    """GraphFacts built when first read, after the commit, so that an edit's parse of the whole
    body is not made while other writers wait for the entry's row; what the write's report lists
    of them (`shown`) is read from the top of the body alone."""

    def __init__(self, build: Callable[[], GraphFacts], shown: Callable[[int], ShownFacts]) -> None:
        object.__setattr__(self, "_build", build)
        object.__setattr__(self, "_shown", shown)

    def shown(self, cap: int) -> ShownFacts:
        return self._shown(cap)

    @cached_property
    def _built(self) -> GraphFacts:
        return self._build()

    observations = property(lambda self: self._built.observations)
    relations = property(lambda self: self._built.relations)
    ambiguous = property(lambda self: self._built.ambiguous)


def index_added_lines(entry: Entry, previous_body: str, writer: Actor | None) -> GraphFacts | None:
    """index_graph for an edit that only added lines (added_lines): the added lines alone are
    parsed and compared with the entry's current facts, which hold the old text's. The same rows
    as index_graph, without parsing the whole body under the row's lock. None when the change is
    another kind, or when its result could differ (a cap of MAX_ITEMS that may bind, current
    facts that are not one row per fact): index_graph then does it all."""
    found = added_lines(previous_body, entry.body)
    if found is None or entry.status == EntryStatus.SUPERSEDED:
        return None
    text, first_line, fence = found
    observations_fit, relations_fit = within_caps(previous_body, text)
    if not relations_fit or not (observations_fit or first_line):
        return None  # a prepend's facts come first: past a cap, they push old ones out
    part = parse(text, first_line=first_line, fence=fence)
    current = _current(entry.pk)
    obs_rows = {(a, b, tuple(tags), context) for kind, _, a, b, context, tags, _ in current
                if kind == "o"}  # fmt: skip
    rel_rows = {(a, b.lower()): (pk, target) for kind, pk, a, b, _, _, target in current
                if kind == "r"}  # fmt: skip
    if len(obs_rows) + len(rel_rows) != len(current):
        return None  # two rows of one fact: index_graph closes the extra one
    if not observations_fit:
        # A long log: when the old text's facts fill the cap, the parse of the whole body stops
        # before the added lines, so they add no observation (their relations still count).
        # Fewer rows than the cap (a fact written twice) may leave it room: index_graph decides.
        if len(obs_rows) < MAX_ITEMS:
            return None
        part = Graph(observations=[], relations=part.relations)
    part_obs, part_rel = _by_key(part)
    new_obs = {key: obs for key, obs in part_obs.items() if key not in obs_rows}
    # A typed relation anywhere makes the same target's links_to redundant (parse): the old
    # text's typed targets drop the added links_to, the added typed targets close the old ones.
    typed_old = {target for kind, target in rel_rows if kind != LINKS_TO}
    typed_new = {r.target.lower() for r in part.relations if r.type != LINKS_TO}
    new_rel = {
        key: rel
        for key, rel in part_rel.items()
        if key not in rel_rows and not (rel.type == LINKS_TO and key[1] in typed_old)
    }
    close_rel = [pk for (kind, target), (pk, _) in rel_rows.items()
                 if kind == LINKS_TO and target in typed_new]  # fmt: skip
    links = resolve_links(entry, [r.target for r in new_rel.values()], writer)
    resolved = {text: found for text, (found, _) in links.items()}
    _write_facts(
        entry,
        close=([], close_rel),
        observations=list(new_obs.values()),
        relations=[(r, resolved.get(r.target)) for r in new_rel.values()],
    )
    targets = {key: target for key, (_, target) in rel_rows.items()}
    targets |= {key: resolved.get(r.target) for key, r in new_rel.items()}
    body = entry.body
    kept_rel = {key for key in rel_rows if not (key[0] == LINKS_TO and key[1] in typed_new)}
    return _Deferred(
        lambda: _graph_facts(parse(body), obs_rows, targets, links),
        lambda cap: shown_from_the_top(
            body, cap, old=obs_rows, new=new_obs, relations=kept_rel | set(new_rel),
            targets=targets, links=links,
        ),
    )  # fmt: skip


def shown_from_the_top(
    body: str, cap: int, *, old: set, new: dict, relations: set, targets: dict, links: dict
) -> ShownFacts:
    """GraphFacts.shown of an edit's facts without parsing the whole body (5 ms for a log of 400
    observations, on every append to it): the new observations are known (`new`, key ->
    parsed), and so are the keys of the old ones (`old`) and of every relation (`relations`), so
    only the first lines are parsed, more of them until they hold `cap` of each kind or are the
    whole body (as many as there are). Parsing goes line by line from the top, so a body's
    first lines parse as they do in the whole (each fact where it first appears)."""
    added = sorted(new.values(), key=lambda o: o.position)[:cap]
    lines, size = body.split("\n"), 2 * cap
    while True:
        first_obs, first_rel = _by_key(parse("\n".join(lines[:size])))
        kept = [obs for key, obs in first_obs.items() if key in old][: cap - len(added)]
        first_rel = {key: rel for key, rel in first_rel.items() if key in relations}
        enough = len(kept) >= min(cap - len(added), len(old))
        if size >= len(lines) or (enough and len(first_rel) >= min(cap, len(relations))):
            break
        size *= 4
    return ShownFacts(
        observations=sorted(
            [*((o, True) for o in added), *((o, False) for o in kept)],
            key=lambda pair: pair[0].position,
        ),
        relations=[(r.type, r.target, targets.get(key)) for key, r in first_rel.items()][:cap],
        ambiguous={text: others for text, (_, others) in links.items() if len(others) > 1},
        total=len(old) + len(new),
        new=len(new),
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
    write_facts(
        entry_id=entry.pk,
        when=entry.updated_at,
        version=entry.version,
        close_observations=close[0],
        close_relations=close[1],
        observations=rows_obs,
        relations=rows_rel,
        config=settings.CAIRN_SEARCH_CONFIG,
    )


@dataclass(frozen=True)
class GraphChange:
    """What a save changes for the graph, read before the save stamps the entry."""

    text: bool  # new entry, new body, or a status that opens or closes its facts
    identity: bool  # created, renamed or moved: links waiting for it may now resolve
    moved: bool = False  # its own waiting links may now resolve (relative to the new place)
    new: bool = False  # created by this save: it has no facts yet


def graph_change(entry: Entry, *, moved: bool = False) -> GraphChange:
    """Call before the save sets slug and content hash: they still hold the stored values.
    `moved`: the write put the entry in another subtopic or project (place_entry)."""
    new = entry.pk is None
    renamed = entry.slug != entry_slug(entry.title)
    body = entry.content_hash != content_hash(entry.kind, entry.body)
    superseded = entry.status == EntryStatus.SUPERSEDED
    return GraphChange(
        text=new or body or renamed or moved or superseded,
        identity=new or renamed or moved or bool(entry.supersedes_id),
        moved=moved,
        new=new,
    )


def index_entry_graph(
    entry: Entry, change: GraphChange, writer: Actor, *, previous_body: str | None = None
) -> GraphFacts | None:
    """The save step's graph work: the entry's own facts (when its text changed), then the links
    that wait for it (when it is new, renamed or moved). A save that changes neither (a
    verification, tags, metadata) costs the graph nothing. `previous_body`: the body before a
    write that changed only the body; when lines were only added to it, only those are parsed
    (index_added_lines). Returns the facts when it indexed them."""
    facts = None
    if change.text and previous_body is not None and not (change.new or change.moved):
        facts = index_added_lines(entry, previous_body, writer)
    if change.text and facts is None:
        facts = index_graph(entry, writer=writer, recheck=change.moved, new_entry=change.new)
    if change.identity:
        resolve_waiting(entry)
    return facts
