"""The learned second stage (issue 46): weights shipped in the package that reproduce from
their script, a known pair scored as recorded, `off` leaving the first stage's answer as it
was, a clear leader skipping the stage, and explain saying when the stage moved a hit."""

from __future__ import annotations

import json
import socket
from importlib import resources

import numpy as np
import pytest

from bench.second_stage_fit import L2, fit, read_fixture
from knowledge.search import explain_parts, reranking, search_entries, second_stage
from knowledge.search.second_stage import FEATURES, Candidate, Model
from knowledge.search.types import Rankings
from tests.factories import EntryFactory


def shipped() -> dict:
    return json.loads(resources.files("knowledge.search").joinpath("second_stage.json").read_text())


def test_the_weights_reproduce_from_their_script():
    """Refit from the tune split's rows (the committed fixture): the same weights, means and
    scales as the file the search loads, at 1e-6."""
    weights = shipped()
    refit = fit(read_fixture(), FEATURES)
    assert weights["features"] == list(FEATURES) and weights["l2"] == L2
    for part in ("mean", "scale", "weights"):
        for name in FEATURES:
            assert refit[part][name] == pytest.approx(weights[part][name], abs=1e-6), (part, name)


def test_the_model_loads_from_the_installed_package_without_the_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the second stage tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    second_stage.installed.cache_clear()
    model = second_stage.installed()
    assert model.features == FEATURES
    assert np.isfinite(model.weights).all() and (model.scale > 0).all()


def test_a_known_pair_scores_as_recorded():
    """A "when" question and two candidates: the first stage's leader, found by meaning, and
    the second, whose title holds the rare word and whose text dates the event. The stage
    puts the second first, with the scores recorded for the shipped weights."""
    question = "When did Caroline go to the support group?"
    idf = {"'carolin'": 0.5, "'support'": 2.0, "'group'": 1.5}
    fused = [(1, 0.9), (2, 0.8)]
    candidates = {
        1: Candidate(similarities=(0.86, 0.84), lexemes=frozenset({"'carolin'"})),
        2: Candidate(
            similarities=(0.83,),
            lexemes=frozenset(idf),
            title_lexemes=frozenset({"'support'"}),
            body="Caroline: I went to the LGBTQ support group yesterday.",
        ),
    }
    rows = second_stage.features(question, fused, {1: 3.0, 2: 4.0}, idf, candidates)
    assert rows.tolist() == [
        [0.9, 1.0, 0.75, 0.86, 0.0, 0.85, 0.125, 0.0, 0.0],
        [0.8, 0.5, 1.0, 0.83, pytest.approx(0.03), 0.83, 1.0, 0.5, 1.0],
    ]
    scores = Model.of(shipped()).score(rows)
    assert scores.tolist() == pytest.approx(RECORDED, abs=1e-6)
    assert [i for i, _ in second_stage.reorder(fused, scores)] == [2, 1]


RECORDED = [-0.276168, 5.627666]  # the known pair's scores under the shipped weights


def _rankings() -> Rankings:
    return Rankings(text=[1, 2, 3], text_scores={1: 3.0, 2: 2.0, 3: 1.0}, idf={"'x'": 1.0})


def test_a_clear_leader_skips_the_stage(settings, monkeypatch):
    settings.CAIRN_SEARCH_RERANK = "learned"
    settings.CAIRN_SEARCH_RERANK_SKIP_LEAD = 0.3
    computed = []

    def counted(query, top, found):
        computed.append(len(top))
        return np.array([[0.0] * len(FEATURES)] * len(top))

    monkeypatch.setattr(reranking, "features", counted)
    leader = [(1, 1.0), (2, 0.5), (3, 0.4)]  # leads by 0.5
    assert reranking.rerank("q", leader, _rankings(), "hybrid") == (leader, {})
    assert computed == []
    close = [(1, 1.0), (2, 0.8), (3, 0.4)]  # leads by 0.2: the stage runs
    reranking.rerank("q", close, _rankings(), "hybrid")
    assert computed == [3]


def _reversing(monkeypatch):
    """Weights that rank by the first stage's place backwards, so the stage visibly moves."""
    names = {"features": ["first_rank"], "mean": {"first_rank": 0.0}}
    model = Model.of({**names, "scale": {"first_rank": 1.0}, "weights": {"first_rank": -1.0}})
    monkeypatch.setattr(second_stage, "installed", lambda: model)


@pytest.fixture
def three(actor, project, index):
    entries = [
        EntryFactory(project=project, title=f"Deploy note {n}", body=f"deploy the {w} service")
        for n, w in enumerate(("billing", "search", "mail"), 1)
    ]
    index(*entries)
    return entries


@pytest.mark.django_db
def test_off_gives_the_first_stage_answer_byte_for_byte(actor, three, settings, monkeypatch):
    _reversing(monkeypatch)
    settings.CAIRN_SEARCH_RERANK_SKIP_LEAD = 0.0
    settings.CAIRN_SEARCH_RESULT_CACHE_SECONDS = 0
    settings.CAIRN_SEARCH_RERANK = "learned"
    learned = [h.id for h in search_entries(actor, "deploy service", limit=3)]
    settings.CAIRN_SEARCH_RERANK = "off"
    off = [h.as_dict() for h in search_entries(actor, "deploy service", limit=3)]
    with monkeypatch.context() as m:
        m.setattr("knowledge.search.engine.rerank", lambda q, fused, found, mode: (fused, {}))
        without = [h.as_dict() for h in search_entries(actor, "deploy service", limit=3)]
    assert json.dumps(off, default=str) == json.dumps(without, default=str)
    assert learned == [h["id"] for h in off][::-1]  # the stage ran when learned


@pytest.mark.django_db
def test_explain_says_the_stage_moved_a_hit(actor, three, settings, monkeypatch):
    _reversing(monkeypatch)
    settings.CAIRN_SEARCH_RERANK = "learned"
    settings.CAIRN_SEARCH_RERANK_SKIP_LEAD = 0.0
    hits = search_entries(actor, "deploy service", limit=3)
    assert hits[0].signals.first_place == 3 and hits[2].signals.first_place == 1
    assert hits[1].signals.first_place is None  # the middle one stayed
    assert ("second stage", "moved it from #3 (learned weights)") in explain_parts(hits[0])
    assert all(label != "second stage" for label, _ in explain_parts(hits[1]))


@pytest.mark.django_db
def test_the_features_are_read_as_the_search_holds_them(actor, project, index):
    """Which query lexemes an entry's text and its title hold comes from its search vector;
    a "when" question reads the body for a date."""
    dated = EntryFactory(project=project, title="Support group", body="Went there yesterday.")
    other = EntryFactory(project=project, title="Notes", body="A support call about billing.")
    index(dated, other)
    found = Rankings(
        text_scores={dated.pk: 2.0, other.pk: 1.0},
        similarities={dated.pk: [0.9], other.pk: [0.8, 0.7]},
        idf={"'support'": 1.0, "'group'": 3.0},
    )
    rows = reranking.features("When was the support group?", [(dated.pk, 1.0), (other.pk, 0.5)],
                              found)  # fmt: skip
    column = {n: i for i, n in enumerate(FEATURES)}
    assert rows[:, column["cover"]].tolist() == [1.0, 0.25]
    assert rows[:, column["title_cover"]].tolist() == [1.0, 0.0]
    assert rows[:, column["when_dated"]].tolist() == [1.0, 0.0]
    assert rows[:, column["dense_mean"]].tolist() == pytest.approx([0.9, 0.75])


def test_an_unknown_setting_says_what_to_set(settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.CAIRN_SEARCH_RERANK = "cross-encoder"
    with pytest.raises(ImproperlyConfigured, match=r"learned .* or off"):
        reranking.rerank("q", [(1, 1.0), (2, 0.9)], _rankings(), "hybrid")


def test_a_when_question_shows_the_date_it_used():
    """The date written near the matched words, else the words that date the event as of the
    entry's date (its title's, else its own), else that date alone."""
    title = "Session 3 (1:56 pm on 8 May, 2023)"
    said = "Caroline: I went to the support group yesterday."
    assert second_stage.date_used(title, said, "2026-12-04") == "yesterday (as of 8 May, 2023)"
    assert second_stage.date_used("Notes", said, "2026-12-04") == "yesterday (as of 2026-12-04)"
    moved = "We moved to Berlin on 3 June, 2022, after the visa came."
    assert second_stage.date_used(title, moved, "2026-12-04") == "3 June, 2022"
    assert second_stage.date_used("Notes", "nothing dated here", "2026-12-04") == "2026-12-04"


@pytest.mark.django_db
def test_only_a_when_question_shows_a_date(actor, project, index, settings):
    settings.CAIRN_SEARCH_RESULT_CACHE_SECONDS = 0
    entry = EntryFactory(
        project=project,
        title="Session 3 (1:56 pm on 8 May, 2023)",
        body="Caroline: I went to the LGBTQ support group yesterday.",
    )
    index(entry)
    (hit,) = search_entries(actor, "When did Caroline go to the support group?", limit=1)
    assert hit.signals.date_used == "yesterday (as of 8 May, 2023)"
    assert ("date", "yesterday (as of 8 May, 2023) (a question about time)") in explain_parts(hit)
    (hit,) = search_entries(actor, "Who went to the support group?", limit=1)
    assert hit.signals.date_used == ""
