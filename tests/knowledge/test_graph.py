"""The graph in the write path: indexing, resolution (forward references, renames, moves,
deletes, other projects), fact history, build_context, graph data and observation search."""

import datetime as dt

import pytest

from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.graph.selectors import (
    entry_relations,
    graph_data,
    observation_search,
)
from knowledge.models import Membership, Observation, Relation, Role, Sensitivity
from knowledge.reads.context import build_context
from knowledge.selectors import entry_get
from knowledge.services import (
    EntryFields,
    entry_correct,
    entry_delete,
    entry_move,
    entry_update,
    entry_upsert,
)
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def write(actor, title, body="", subtopic=None, project="acme"):
    return entry_upsert(
        actor=actor, project=project, fields=EntryFields(title=title, body=body), subtopic=subtopic
    ).entry


def current_relations(entry):
    return {
        (r.relation_type, r.target_text, r.target_id)
        for r in Relation.objects.filter(source=entry, valid_to__isnull=True)
    }


def test_a_write_indexes_observations_and_relations(actor, project):
    storage = write(actor, "Storage Layer")
    api = write(
        actor,
        "API",
        "- [decision] Use Postgres #db (load test)\n- depends on [[Storage Layer]]\n"
        "Also see [[Nowhere Yet]].",
    )
    (obs,) = Observation.objects.filter(entry=api)
    assert (obs.category, obs.content, obs.tags, obs.context) == (
        "decision",
        "Use Postgres",
        ["db"],
        "load test",
    )
    assert obs.valid_from_version == 1 and obs.valid_to is None
    assert current_relations(api) == {
        ("depends_on", "Storage Layer", storage.pk),
        ("links_to", "Nowhere Yet", None),
    }


def test_a_forward_reference_resolves_when_the_target_is_created(actor, project):
    api = write(actor, "API", "- uses [[Cache Design]]")
    assert current_relations(api) == {("uses", "Cache Design", None)}
    cache = write(actor, "cache design", subtopic="design")
    assert current_relations(api) == {("uses", "Cache Design", cache.pk)}


def test_a_rename_resolves_waiting_links_and_resolved_ones_follow_the_entry(actor, project):
    api = write(actor, "API", "- uses [[Cache]]\n- uses [[Old Name]]")
    other = write(actor, "Old Name")
    entry_update(actor=actor, ref=other.pk, fields=EntryFields(title="Cache"))
    # the resolved link follows the entry by id; the waiting one resolved to its new name
    assert current_relations(api) == {("uses", "Cache", other.pk), ("uses", "Old Name", other.pk)}


def test_a_move_resolves_a_path_link(actor, project):
    api = write(actor, "API", "- uses [[ops/Runbook]]")
    runbook = write(actor, "Runbook", subtopic="drafts")
    assert current_relations(api) == {("uses", "ops/Runbook", None)}
    entry_move(actor=actor, ref=runbook.pk, subtopic="ops")
    assert current_relations(api) == {("uses", "ops/Runbook", runbook.pk)}


def test_a_delete_unresolves_and_a_new_entry_resolves_again(actor, project):
    api = write(actor, "API", "[[Target]]")
    target = write(actor, "Target")
    entry_delete(actor=actor, ref=target.pk, reason="gone")
    assert current_relations(api) == {("links_to", "Target", None)}
    again = write(actor, "Target")
    assert current_relations(api) == {("links_to", "Target", again.pk)}


def test_the_same_subtopic_wins_among_equal_titles(actor, project):
    write(actor, "Notes", subtopic="a")
    near = write(actor, "Notes", subtopic="b")
    api = write(actor, "API", "[[Notes]]", subtopic="b")
    assert current_relations(api) == {("links_to", "Notes", near.pk)}


def test_an_edit_closes_dropped_facts_and_keeps_the_rest(actor, project):
    api = write(actor, "API", "- [fact] one\n- [fact] two\n- uses [[X]]")
    entry_update(actor=actor, ref=api.pk, fields=EntryFields(body="- [fact] one\n- [fact] three\n"))
    rows = {(o.content, o.valid_from_version, o.valid_to_version) for o in api.observations.all()}
    assert rows == {("one", 1, None), ("two", 1, 2), ("three", 2, None)}
    (rel,) = Relation.objects.filter(source=api)
    assert rel.valid_to_version == 2


def test_a_correction_keeps_the_old_facts_superseded_and_links_follow(actor, project):
    old = write(actor, "Plan", "- [decision] ship in May")
    api = write(actor, "API", "[[Plan]]")
    corrected = entry_correct(
        actor=actor, ref=old.pk, body="- [decision] ship in June", reason="slipped"
    )
    new, old = corrected.entry, corrected.superseded
    (was,) = Observation.objects.filter(entry=old)
    assert was.content == "ship in May" and was.valid_to is not None
    assert [o.content for o in Observation.objects.filter(entry=new)] == ["ship in June"]
    assert current_relations(api) == {("links_to", "Plan", new.pk)}


def test_build_context_follows_relations_both_ways_up_to_depth(actor, project):
    c = write(actor, "C", "- [fact] the end")
    b = write(actor, "B", "- part of [[C]]")
    a = write(actor, "A", "- uses [[B]]")
    d = write(actor, "D", "[[A]]")
    one = build_context(actor, b.permalink)
    assert one["matched"] == "entry" and [p["short_id"] for p in one["primary"]] == [b.short_id]
    related = {r["short_id"]: r["relation"] for r in one["related"]}
    via = {"distance": 1, "via": b.short_id, "via_title": "B"}
    assert related == {
        c.short_id: {"type": "part_of", "direction": "outgoing", **via},
        a.short_id: {"type": "uses", "direction": "incoming", **via},
    }
    two = build_context(actor, f"memory://acme/{b.slug}", depth=2)
    assert two["related"][-1]["relation"]["via_title"] == "A"  # d is reached through a
    assert [(r["short_id"], r["relation"]["distance"]) for r in two["related"]][-1] == (
        d.short_id,
        2,
    )
    assert (
        next(r for r in two["related"] if r["short_id"] == c.short_id)["observations"][0]["content"]
        == "the end"
    )


def test_build_context_bounds_and_cuts(actor, project):
    hub = write(actor, "Hub", "\n".join(f"[[N{i}]]" for i in range(5)))
    for i in range(5):
        write(actor, f"N{i}")
    answer = build_context(actor, hub.short_id, max_related=2)
    assert len(answer["related"]) == 2 and answer["cut"] and answer["total_related"] == 5
    with pytest.raises(ValidationFailed, match="depth"):
        build_context(actor, hub.short_id, depth=4)


def test_build_context_globs_search_and_not_found(actor, project):
    write(actor, "Alpha", subtopic="ops")
    write(actor, "Beta", subtopic="ops/deep")
    shallow = build_context(actor, "memory://acme/ops/*")
    deep = build_context(actor, "memory://acme/ops/**")
    assert [p["title"] for p in shallow["primary"]] == ["Alpha"]
    assert {p["title"] for p in deep["primary"]} == {"Alpha", "Beta"}
    assert build_context(actor, "Alpha")["primary"][0]["title"] == "Alpha"
    with pytest.raises(NotFound, match="Search for it"):
        build_context(actor, "memory://acme/ops/nothing-here")


def test_build_context_timeframe_keeps_recent_related_only(actor, project):
    old = write(actor, "Old")
    hub = write(actor, "Hub", "[[Old]] [[New]]")
    write(actor, "New")
    type(old).objects.filter(pk=old.pk).update(updated_at=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
    titles = [r["title"] for r in build_context(actor, hub.short_id, timeframe="7d")["related"]]
    assert titles == ["New"]


def test_as_of_shows_what_was_current_then(actor, project):
    api = write(actor, "API", "- [fact] v1 fact\n[[Gone]]")
    write(actor, "Gone")
    Observation.objects.filter(entry=api).update(valid_from=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    Relation.objects.filter(source=api).update(valid_from=dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    entry_update(actor=actor, ref=api.pk, fields=EntryFields(body="- [fact] v2 fact"))
    march = build_context(actor, api.short_id, as_of="2026-03-15")
    assert [o["content"] for o in march["primary"][0]["observations"]] == ["v1 fact"]
    assert [r["title"] for r in march["related"]] == ["Gone"]
    now = build_context(actor, api.short_id, include_history=True)
    assert [(o["content"], o["current"]) for o in now["primary"][0]["observations"]] == [
        ("v1 fact", False),
        ("v2 fact", True),
    ]
    assert now["related"] == []


def test_entry_relations_and_graph_data(actor, project):
    target = write(actor, "Target")
    src = write(actor, "Source", "- uses [[Target]]\n- uses [[Missing]]")
    rel = entry_relations(actor, entry_get(actor, src.pk))
    assert [
        (o["type"], o["target_text"], o["entry"] and o["entry"]["id"]) for o in rel["outgoing"]
    ] == [
        ("uses", "Target", target.pk),
        ("uses", "Missing", None),
    ]
    back = entry_relations(actor, entry_get(actor, target.pk))["backlinks"]
    assert [(b["type"], b["entry"]["id"]) for b in back] == [("uses", src.pk)]
    data = graph_data(actor, project="acme")
    assert data["edges"] == [{"source": src.pk, "target": target.pk, "type": "uses"}]
    assert {n["id"]: n["degree"] for n in data["nodes"]} == {src.pk: 1, target.pk: 1}
    assert graph_data(actor, project="acme", limit=1)["cut"] is True
    around = graph_data(actor, around=target.permalink)
    assert {n["id"] for n in around["nodes"]} == {src.pk, target.pk}


def test_observation_search_by_words_and_category(actor, project):
    write(actor, "API", "- [decision] Use Postgres for storage\n- [risk] vendor lock-in")
    assert [o["content"] for o in observation_search(actor, "postgres")] == [
        "Use Postgres for storage"
    ]
    assert [o["content"] for o in observation_search(actor, category="Risk")] == ["vendor lock-in"]


def test_cross_project_links_resolve_only_into_referencable_projects(actor, project):
    open_proj = ProjectFactory(slug="infra", sensitivity=Sensitivity.INTERNAL)
    closed = ProjectFactory(slug="vault", sensitivity=Sensitivity.RESTRICTED)
    for p in (open_proj, closed):
        Membership.objects.create(project=p, user=actor.user, role=Role.EDITOR)
    auth = write(actor, "Auth", project="infra")
    write(actor, "Keys", project="vault")
    api = write(actor, "API", "[[infra/Auth]] [[vault/Keys]]")
    assert current_relations(api) == {
        ("links_to", "infra/Auth", auth.pk),
        ("links_to", "vault/Keys", None),  # an internal project may not reference a restricted
    }


def test_hidden_targets_show_only_the_link_text(actor, project):
    secret = ProjectFactory(slug="secret", sensitivity=Sensitivity.CONFIDENTIAL)
    Membership.objects.create(project=secret, user=actor.user, role=Role.EDITOR)
    project.sensitivity = Sensitivity.CONFIDENTIAL
    project.save()
    hidden = write(actor, "Hidden Plan", "[[acme/API]]", project="secret")
    api = write(actor, "API", "- uses [[secret/Hidden Plan]]")
    assert current_relations(api) == {("uses", "secret/Hidden Plan", hidden.pk)}
    bob = UserFactory(username="bob")
    Membership.objects.create(project=project, user=bob, role=Role.VIEWER)
    reader = Actor.for_user(bob)
    rel = entry_relations(reader, entry_get(reader, api.pk))
    assert rel == {
        "outgoing": [{"type": "uses", "target_text": "secret/Hidden Plan", "entry": None}],
        "backlinks": [],
    }
    assert build_context(reader, api.short_id, depth=3)["related"] == []
    assert {n["id"] for n in graph_data(reader, around=api.short_id)["nodes"]} == {api.pk}


def test_search_filters_by_observation_category(actor, project):
    from knowledge.search import SearchFilters, search_entries

    write(actor, "Pricing decision", "- [decision] pricing goes up")
    write(actor, "Pricing note", "pricing talk, no decision item\n- [idea] pricing tiers")
    hits = search_entries(
        actor, "pricing", mode="text", filters=SearchFilters.parse(categories=["Decision"])
    )
    assert [h.title for h in hits] == ["Pricing decision"]
    assert len(search_entries(actor, "pricing", mode="text")) == 2


def test_a_close_enough_title_resolves_only_when_unique(actor, project, settings):
    settings.CAIRN_GRAPH_FUZZY_THRESHOLD = 0.5
    target = write(actor, "Deployment Checklist")
    api = write(actor, "API", "[[Deployment Checklists]] [[Totally Different]]")
    assert current_relations(api) == {
        ("links_to", "Deployment Checklists", target.pk),
        ("links_to", "Totally Different", None),
    }
    write(actor, "Deployment Checklist 2")  # now two are close: no guess
    other = write(actor, "Other", "[[Deployment Checklists]]")
    assert current_relations(other) == {("links_to", "Deployment Checklists", None)}
    settings.CAIRN_GRAPH_FUZZY_THRESHOLD = 0
    off = write(actor, "Off", "[[Deployment Checklists]]", subtopic="x")
    assert current_relations(off) == {("links_to", "Deployment Checklists", None)}


def test_waiting_links_resolve_only_at_the_place_they_name(actor, project):
    infra = ProjectFactory(slug="infra", sensitivity=Sensitivity.INTERNAL)
    Membership.objects.create(project=infra, user=actor.user, role=Role.EDITOR)
    api = write(actor, "API", "[[infra/Auth]] [[ops/Runbook]] [[acme/Root Note]] [[Anywhere]]")
    write(actor, "Auth", project="infra", subtopic="deep")  # not at infra's root
    write(actor, "Runbook", subtopic="elsewhere")  # not in ops
    write(actor, "Root Note", subtopic="x")  # not at acme's root
    assert {t for _, _, t in current_relations(api)} == {None}
    auth = write(actor, "Auth", project="infra")
    runbook = write(actor, "Runbook", subtopic="ops")
    root = write(actor, "Root Note")
    anywhere = write(actor, "Anywhere", subtopic="a/b")
    assert current_relations(api) == {
        ("links_to", "infra/Auth", auth.pk),
        ("links_to", "ops/Runbook", runbook.pk),
        ("links_to", "acme/Root Note", root.pk),
        ("links_to", "Anywhere", anywhere.pk),
    }
