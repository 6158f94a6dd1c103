"""Leak-matrix columns for the knowledge graph: an entry's relations and backlinks, build_context,
graph data and observation search, as selectors, over REST and over MCP.

Each case links the public `commons` entry and the target entry both ways and gives the target
an observation with the secret word (rows written directly: the world is shared and each case's
savepoint rolls them back). A reader who may not see the target must get the link text only
("the plan"), never its title, id, slug or observations, and no backlink from it.
"""

from __future__ import annotations

import json

from django.contrib.postgres.search import SearchVector
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.graph.selectors import (
    entry_relations,
    graph_data,
    observation_search,
)
from knowledge.models import Membership, Observation, Relation, Role
from knowledge.reads.context import build_context
from knowledge.selectors import entry_get
from knowledge.services import EntryFields, entry_move, entry_update, entry_upsert
from tests.access.surfaces import surface
from tests.access.surfaces_api import API, _mcp
from tests.access.world import ROLES, SECRET_WORD, SLUG, TITLE, World

LINK_TEXT = "the plan"


def _link(world: World) -> None:
    now = timezone.now()
    common = {"valid_from": now, "valid_from_version": 1}
    Relation.objects.create(
        source=world.commons_entry, relation_type="refers_to", target_text=LINK_TEXT,
        target_key="the-plan", target=world.entry, **common,
    )  # fmt: skip
    Relation.objects.create(
        source=world.entry, relation_type="uses", target_text="Commons note",
        target_key="commons-note", target=world.commons_entry, **common,
    )  # fmt: skip
    Observation.objects.create(
        entry=world.entry, category="fact", content=f"The {SECRET_WORD} costs 43", **common
    )
    Observation.objects.filter(entry=world.entry).update(search_vector=SearchVector("content"))


def _silent(world: World, text: str, saw: bool) -> bool:
    """`saw` whether the target showed; when it did not, nothing of it may show either."""
    if not saw:
        lowered = text.lower()
        assert SECRET_WORD not in lowered, f"the graph leaks the hidden entry: {text[:300]}"
        assert world.entry.short_id not in text, "the graph names the hidden entry's id"
        assert f"{SLUG}/" not in lowered, "the graph names the hidden project"
    return saw


def _dump(data) -> str:
    return json.dumps(data, default=str)


@surface("graph_entry_relations", "read")
def _graph_entry_relations(world: World) -> bool:
    _link(world)
    actor = world.actor()
    rel = entry_relations(actor, entry_get(actor, world.commons_entry.pk))
    (out,) = rel["outgoing"]
    assert out["target_text"] == LINK_TEXT
    saw = out["entry"] is not None
    assert saw == any(b["entry"]["id"] == world.entry.pk for b in rel["backlinks"])
    return _silent(world, _dump(rel), saw)


@surface("graph_build_context", "read")
def _graph_build_context(world: World) -> bool:
    _link(world)
    ctx = build_context(world.actor(), world.commons_entry.short_id, depth=2)
    saw = any(r["id"] == world.entry.pk for r in ctx["related"])
    assert not saw or SECRET_WORD in _dump(ctx["related"]).lower()  # its observation shows
    return _silent(world, _dump(ctx), saw)


@surface("graph_data_around", "read")
def _graph_data_around(world: World) -> bool:
    _link(world)
    data = graph_data(world.actor(), around=world.commons_entry.short_id, depth=2)
    saw = any(n["id"] == world.entry.pk for n in data["nodes"])
    return _silent(world, _dump(data), saw)


@surface("graph_observation_search", "read")
def _graph_observation_search(world: World) -> bool:
    _link(world)
    hits = observation_search(world.actor(), SECRET_WORD)
    saw = any(h["entry"]["id"] == world.entry.pk for h in hits)
    return _silent(world, _dump(hits), saw)


@surface("rest_context", "read")
def _rest_context(world: World) -> bool:
    _link(world)
    response = world.rest_client.get(
        f"{API}/context", {"url": world.commons_entry.short_id, "depth": 2}
    )
    assert response.status_code == 200, response.content
    saw = any(r["id"] == world.entry.pk for r in response.json()["related"])
    return _silent(world, response.content.decode(), saw)


@surface("rest_entry_relations", "read")
def _rest_entry_relations(world: World) -> bool:
    _link(world)
    response = world.rest_client.get(f"{API}/entries/{world.commons_entry.short_id}/relations")
    assert response.status_code == 200, response.content
    saw = response.json()["outgoing"][0]["entry"] is not None
    return _silent(world, response.content.decode(), saw)


@surface("rest_graph", "read")
def _rest_graph(world: World) -> bool:
    _link(world)
    response = world.rest_client.get(f"{API}/graph", {"around": world.commons_entry.short_id})
    assert response.status_code == 200, response.content
    saw = any(n["id"] == world.entry.pk for n in response.json()["nodes"])
    return _silent(world, response.content.decode(), saw)


@surface("mcp_build_context", "read")
def _mcp_build_context(world: World) -> bool:
    _link(world)
    ok, text = _mcp(
        "build_context", world, id=world.commons_entry.short_id, depth=2,
        since=None, max_related=10, include_history=False, as_of=None,
    )  # fmt: skip
    assert ok, text
    return _silent(world, text, world.entry.short_id in text)


@surface("mcp_get_links", "read")
def _mcp_get_links(world: World) -> bool:
    _link(world)
    ok, text = _mcp("get", world, id=world.commons_entry.short_id, offset=0, max_chars=8000)
    assert ok and LINK_TEXT in text, text
    return _silent(world, text, world.entry.short_id in text)


# --- links the actor writes, and an entry's past in the target project ---------------------------

WRITERS_OF_LINKS = tuple(r for r in ROLES if r != "read_token")  # a read-only token writes nothing


def _write_link(world: World, target: str) -> Relation:
    """The actor writes `- refers_to [[target]]` in a project it edits (made so for the case);
    the project is restricted, so the old rule "no link into a more closed project" never
    refuses it: only whether the writer can read the target decides."""
    source = world.commons if world.role == "narrowed" else world.elsewhere
    if world.role != "superuser":
        Membership.objects.get_or_create(
            project=source, user=world.user, defaults={"role": Role.EDITOR}
        )
    entry = entry_upsert(
        actor=world.actor(),
        project=source.slug,
        fields=EntryFields(title="Linker", body=f"- refers_to [[{target}]]"),
    ).entry
    return Relation.objects.get(source=entry, valid_to__isnull=True)


@surface("graph_link_into_target", "read", WRITERS_OF_LINKS)
def _graph_link_into_target(world: World) -> bool:
    """A writer who may not read the target cannot learn its entries exist by linking to them:
    the link stays waiting, like a link to an entry that does not exist."""
    link = _write_link(world, f"{SLUG}/ops/2026/{TITLE}")
    assert link.target_id in (None, world.entry.pk)
    return link.target_id == world.entry.pk


# A link that waits resolves later for its entry's last author, a person: which token they
# wrote it with is not recorded, so a narrowed token's waiting link resolves as its user's would.
@surface(
    "graph_link_waits_for_target", "read", tuple(r for r in WRITERS_OF_LINKS if r != "narrowed")
)
def _graph_link_waits_for_target(world: World) -> bool:
    """The same for a link written before its entry: creating it later resolves the link only
    for a writer who may read the target."""
    link = _write_link(world, f"{SLUG}/ops/2026/Zebracorn sequel")
    assert link.target_id is None
    created = entry_upsert(
        actor=Actor.for_user(world.users["superuser"]),
        project=SLUG,
        subtopic="ops/2026",
        fields=EntryFields(title="Zebracorn sequel", body="later"),
    ).entry
    link.refresh_from_db()
    assert link.target_id in (None, created.pk)
    return link.target_id == created.pk


def _moved_from_target(world: World):
    """An entry written in the target, stripped of its fact and link, then moved to `commons`."""
    root = Actor.for_user(world.users["superuser"])
    body = f"- [fact] The {SECRET_WORD} moved\n- uses [[commons/Commons note]]"
    moved = entry_upsert(
        actor=root, project=SLUG, fields=EntryFields(title="Moved note", body=body)
    ).entry
    then = timezone.now()
    entry_update(actor=root, ref=moved.pk, fields=EntryFields(body="Nothing to see."))
    entry_move(actor=root, ref=moved.pk, project="commons", subtopic="")
    return moved, then


@surface("graph_context_moved_past", "read", prepare=_moved_from_target)
def _graph_context_moved_past(world: World) -> bool:
    """An entry that lived in the target and moved to the public `commons`: its facts from the
    target (an observation and a link, both dropped before the move) show in build_context's
    history and as_of only to readers of the target."""
    moved, then = world.prepared
    actor = world.actor()
    past = build_context(actor, moved.short_id, include_history=True)
    at = build_context(actor, moved.short_id, as_of=then)
    (history,) = past["primary"]
    (then_primary,) = at["primary"]
    saw = [o["content"] for o in history["observations"]] == [f"The {SECRET_WORD} moved"]
    assert saw == (then_primary["observations"] != [])
    assert saw == any(r["id"] == world.commons_entry.pk for r in at["related"])
    if not saw:
        text = _dump(past) + _dump(at)
        assert SECRET_WORD not in text.lower(), f"the entry's hidden past shows: {text[:300]}"
    return saw
