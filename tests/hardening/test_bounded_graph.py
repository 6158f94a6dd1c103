"""The graph's answers and search snippets stay bounded however much a writer stored (issue
32): graph edges, the facts build_context shows with their history, and the window a search
snippet is taken from."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from knowledge.graph.selectors import MAX_GRAPH_EDGES, graph_data
from knowledge.models import Observation, Relation
from knowledge.reads.context import MAX_HISTORY_OBSERVATIONS, build_context
from knowledge.search.snippets import WINDOW_CHARS, highlight
from knowledge.services import EntryFields, entry_upsert


def _write(actor, title, body=""):
    fields = EntryFields(title=title, body=body or title)
    return entry_upsert(actor=actor, project="acme", fields=fields).entry


def _best_of_three(fn, *args) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(
    ("unit", "lexemes"),
    [
        ("ab ", ["ab"]),
        ("restart ", ["restart"]),
        (" ".join(f"w{i:02d}x" for i in range(64)) + " ", [f"w{i:02d}x" for i in range(64)]),
    ],
    ids=["short-word", "word", "64-words"],
)
def test_a_snippet_costs_the_same_in_a_10_kb_and_a_1_mb_body(unit, lexemes):
    small = unit * (10_000 // len(unit))
    large = unit * (1_000_000 // len(unit))
    # Bounded work takes about as long on both; every match sorted through, 100 times longer.
    ratio = _best_of_three(highlight, large, lexemes) / _best_of_three(highlight, small, lexemes)
    assert ratio < 10, ratio


def test_a_snippet_is_a_window_even_without_spaces():
    snippet = highlight("restart\n" * 125_000, ["restart"])
    assert 0 < len(snippet) < 2 * WINDOW_CHARS + 100, len(snippet)
    assert snippet.startswith("**restart**")


def test_a_snippet_without_spaces_around_a_late_match_still_shows_it():
    body = "x" * 5_000 + " restart " + "y" * 5_000
    assert "**restart**" in highlight(body, ["restart"])


@pytest.mark.django_db
def test_graph_edges_stop_at_the_cap_and_say_so(actor, project):
    a, b = _write(actor, "A"), _write(actor, "B")
    now = timezone.now()
    Relation.objects.bulk_create(
        Relation(
            source=src,
            target=dst,
            relation_type=f"t{i}",
            target_text=dst.title,
            target_key=dst.title.lower(),
            valid_from=now,
            valid_from_version=1,
        )
        for i in range(MAX_GRAPH_EDGES // 2 + 1)
        for src, dst in ((a, b), (b, a))
    )
    data = graph_data(actor, project="acme")
    assert len(data["edges"]) == MAX_GRAPH_EDGES and data["edges_cut"] is True
    assert sum(n["degree"] for n in data["nodes"]) == 2 * MAX_GRAPH_EDGES


@pytest.mark.django_db
def test_graph_edges_cut_is_in_the_rest_answer(api, acme, owner):
    from knowledge.actors import Actor

    _write(Actor.for_user(owner), "A")
    answer = api.get("/api/v1/graph", {"project": "acme"}).json()
    assert answer["edges_cut"] is False and answer["edges"] == []


@pytest.mark.django_db
def test_context_history_stops_at_the_cap_and_says_so(actor, project):
    entry = _write(actor, "Plan", "- [step] now")
    now = timezone.now()
    Observation.objects.bulk_create(
        Observation(
            entry=entry,
            category="step",
            content=f"old {i}",
            position=i + 1,
            valid_from=now,
            valid_from_version=1,
            valid_to=now,
            valid_to_version=2,
        )
        for i in range(MAX_HISTORY_OBSERVATIONS + 50)
    )
    [primary] = build_context(actor, entry.short_id, include_history=True)["primary"]
    assert len(primary["observations"]) == MAX_HISTORY_OBSERVATIONS
    assert primary["observations_cut"] is True
    assert primary["observations"][0]["content"] == "now"  # position 0 first
    [current] = build_context(actor, entry.short_id)["primary"]
    assert [o["content"] for o in current["observations"]] == ["now"]
    assert current["observations_cut"] is False
