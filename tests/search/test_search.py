import datetime as dt

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.models import EntryStatus
from knowledge.search import SearchFilters, search_entries
from knowledge.services import EntryFields, entry_update, entry_upsert
from tests.factories import EntryFactory, ProjectFactory

pytestmark = pytest.mark.django_db


def titles(hits):
    return [h.title for h in hits]


@pytest.fixture(params=["exact", "index"])
def vector_path(request, settings):
    """Both ways the vector SQL reads chunks: every chunk of a small scope (exact), or the HNSW
    index walked with the scope checked per chunk (what a scope wider than
    CAIRN_SEARCH_EXACT_MAX gets). Filters and visibility must hold on both."""
    settings.CAIRN_SEARCH_EXACT_MAX = 2000 if request.param == "exact" else 0
    return request.param


@pytest.fixture
def corpus(actor, project, index):
    entries = [
        EntryFactory(
            project=project,
            title="Deployment checklist",
            body="Run migrations, then restart the workers and watch the error rate.",
            subtopic="ops",
            tags=["deploy", "runbook"],
        ),
        EntryFactory(
            project=project,
            title="Team lunch",
            body="We talked about the deployment checklist only briefly, then about pizza.",
            subtopic="social",
        ),
        EntryFactory(
            project=project,
            title="Database backups",
            body="Nightly pg_dump to object storage; restore tested every month.",
            subtopic="ops/storage",
            kind="decision",
            tags=["postgres"],
        ),
        EntryFactory(
            project=project,
            title="Holiday plans",
            body="Caroline is travelling to Sweden in July to see the midnight sun.",
            subtopic="people",
        ),
    ]
    index(*entries)
    return {e.title: e for e in entries}


def test_exact_title_beats_a_body_mention(actor, corpus):
    hits = search_entries(actor, "deployment checklist")
    assert titles(hits)[:2] == ["Deployment checklist", "Team lunch"]
    assert hits[0].score > hits[1].score


def test_a_question_with_unmatched_words_still_finds_the_entry(actor, corpus):
    # "frobnicate" and "yesterday" appear nowhere: the remaining words must still match.
    hits = search_entries(actor, "how do we frobnicate nightly backups yesterday", mode="text")
    assert titles(hits)[0] == "Database backups"


def test_a_paraphrase_with_no_shared_words_is_found_semantically(actor, corpus, vector_path):
    query = "vacation trip abroad in summer"
    assert search_entries(actor, query, mode="text") == []
    hits = search_entries(actor, query, mode="semantic")
    assert titles(hits)[0] == "Holiday plans"
    assert titles(search_entries(actor, query))[0] == "Holiday plans"  # hybrid too


def test_hits_carry_the_fields_callers_show(actor, corpus):
    hit = search_entries(actor, "restart workers", limit=1)[0]
    entry = corpus["Deployment checklist"]
    assert (hit.id, hit.short_id, hit.title) == (entry.pk, entry.short_id, entry.title)
    assert hit.path == "acme/ops" and hit.project == "acme"
    assert hit.kind == "note" and hit.tags == ["deploy", "runbook"]
    assert hit.status == "active" and isinstance(hit.updated, dt.datetime)
    assert "**restart**" in hit.snippet and len(hit.snippet) <= 300
    assert set(hit.matched) == {"text", "semantic"}


def test_a_semantic_only_hit_gets_its_best_chunk_as_snippet(actor, corpus):
    hit = search_entries(actor, "vacation trip abroad in summer", mode="semantic")[0]
    assert hit.snippet.startswith("Caroline is travelling")


def test_phrases_are_required_and_exclusions_respected(actor, corpus):
    assert titles(search_entries(actor, '"deployment checklist"', mode="text")) == [
        "Deployment checklist",
        "Team lunch",
    ]
    assert titles(search_entries(actor, '"deployment checklist" -pizza')) == [
        "Deployment checklist"
    ]
    # exclusions hold in semantic mode as well
    hits = search_entries(actor, "deployment checklist -pizza", mode="semantic")
    assert "Team lunch" not in titles(hits)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"subtopic": "ops"}, {"Deployment checklist", "Database backups"}),
        ({"subtopic": "ops/storage"}, {"Database backups"}),
        ({"kinds": ["decision"]}, {"Database backups"}),
        ({"tags": ["deploy", "postgres"]}, {"Deployment checklist", "Database backups"}),
        ({"tags": ["deploy", "postgres"], "tags_all": True}, set()),
        ({"tags": ["deploy", "runbook"], "tags_all": True}, {"Deployment checklist"}),
        ({"before": "2000-01-01"}, set()),
    ],
)
def test_filters_apply_in_every_mode(actor, corpus, filters, expected, vector_path):
    query = "deployment checklist backups restore workers"
    for mode in ("text", "semantic", "hybrid"):
        assert (
            set(
                titles(
                    search_entries(actor, query, mode=mode, filters=SearchFilters.parse(**filters))
                )
            )
            <= expected
        )
    assert (
        set(
            titles(
                search_entries(actor, query, mode="hybrid", filters=SearchFilters.parse(**filters))
            )
        )
        == expected
    )


def test_date_filters_use_the_update_time(actor, corpus):
    today = dt.date.today()
    assert search_entries(
        actor, "backups", filters=SearchFilters.parse(after=today - dt.timedelta(days=1))
    )
    assert not search_entries(
        actor, "backups", filters=SearchFilters.parse(after=today + dt.timedelta(days=2))
    )


def test_superseded_and_transcripts_are_hidden_unless_asked(actor, project, index, vector_path):
    old = EntryFactory(project=project, title="Old pricing", body="Pricing is 10 euro a seat.")
    new = EntryFactory(project=project, title="New pricing", body="Pricing is 12 euro a seat.")
    talk = entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(
            title="Call transcript",
            kind="transcript",
            body="Customer asked about pricing per seat.",
        ),
    ).entry
    entry_update(actor=actor, ref=old.pk, fields=EntryFields(status=EntryStatus.SUPERSEDED))
    index(old, new, talk)
    for mode in ("text", "semantic", "hybrid"):
        assert titles(search_entries(actor, "pricing per seat", mode=mode)) == ["New pricing"]
    assert set(
        titles(
            search_entries(
                actor, "pricing per seat", filters=SearchFilters.parse(include_history=True)
            )
        )
    ) == {
        "Old pricing",
        "New pricing",
    }
    assert "Call transcript" in titles(
        search_entries(
            actor, "pricing per seat", filters=SearchFilters.parse(include_transcripts=True)
        )
    )
    assert titles(
        search_entries(actor, "pricing", filters=SearchFilters.parse(status="superseded"))
    ) == ["Old pricing"]


def test_search_only_sees_what_the_actor_may_see(actor, user, project, index, vector_path):
    other = ProjectFactory(slug="secret", name="Secret")
    mine = EntryFactory(project=project, title="Rocket plan", body="Launch window in May.")
    theirs = EntryFactory(project=other, title="Rocket budget", body="Launch costs money.")
    index(mine, theirs)
    narrowed = Actor(user=user, project_ids=frozenset({project.pk}))
    for mode in ("text", "semantic", "hybrid"):
        assert titles(search_entries(narrowed, "rocket launch", mode=mode)) == ["Rocket plan"]
        assert search_entries(Actor(user=AnonymousUser()), "rocket launch", mode=mode) == []
    assert len(search_entries(actor, "rocket launch")) == 2
    with pytest.raises(NotFound):
        search_entries(narrowed, "rocket", filters=SearchFilters.parse(project="secret"))
    assert titles(
        search_entries(actor, "rocket", filters=SearchFilters.parse(project="secret"))
    ) == ["Rocket budget"]


def test_an_entry_is_found_by_text_before_it_is_embedded(actor, project, index):
    entry = EntryFactory(project=project, title="Unembedded note", body="Zebra crossings.")
    assert titles(search_entries(actor, "zebra")) == ["Unembedded note"]
    assert search_entries(actor, "zebra", mode="semantic") == []
    index(entry)
    assert titles(search_entries(actor, "zebra", mode="semantic")) == ["Unembedded note"]


def test_a_query_of_stop_words_still_answers_in_hybrid_mode(actor, corpus, settings):
    assert search_entries(actor, "what is it", mode="text") == []
    settings.CAIRN_SEARCH_MIN_SIMILARITY = 0.0
    assert len(search_entries(actor, "what is it")) == 4
    # With the relevance floor, meaning-only hits this far from the question are left out.
    settings.CAIRN_SEARCH_MIN_SIMILARITY = 0.8
    kept = search_entries(actor, "what is it")
    assert 1 <= len(kept) < 4


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"query": "  "}, "query"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": 1000}, "limit"),
        ({"query": "x", "status": "done"}, "status"),
        ({"query": "x", "after": "last tuesday"}, "after"),
    ],
)
def test_bad_input_gets_a_clear_error(actor, kwargs, field):
    query, mode, limit = kwargs.pop("query"), kwargs.pop("mode", "hybrid"), kwargs.pop("limit", 10)
    with pytest.raises(ValidationFailed) as err:
        search_entries(actor, query, filters=SearchFilters.parse(**kwargs), mode=mode, limit=limit)
    assert err.value.data["field"] == field


def test_limit_caps_the_results(actor, corpus):
    assert len(search_entries(actor, "the deployment backups plans lunch", limit=2)) == 2


def test_a_quoted_title_spelled_differently_falls_back_to_its_words(actor, project, index):
    entry = EntryFactory(project=project, title="Reading", body="Becoming Nicole moved me a lot.")
    index(entry)
    assert titles(search_entries(actor, 'What did she take from "Nicole Becoming"?')) == ["Reading"]
    assert search_entries(actor, '"Nicole Becoming" -nicole') == []  # exclusions still hold


def test_a_wide_scope_walks_the_index_and_a_small_one_compares_every_chunk(actor, corpus, settings):
    def vector_sql():
        with CaptureQueriesContext(connection) as ctx:
            search_entries(actor, "deployment checklist", mode="semantic")
        return next(q["sql"] for q in ctx.captured_queries if "<=>" in q["sql"])

    exact = vector_sql()
    assert "+ 0.0" in exact  # ordered by an expression the HNSW index cannot serve
    settings.CAIRN_SEARCH_EXACT_MAX = 3  # the corpus has four entries
    walked = vector_sql()
    assert "+ 0.0" not in walked and "LIMIT 1" in walked  # the per-chunk scope check


def test_a_large_text_pool_is_cut_by_one_rank_first_and_keeps_the_best(actor, corpus, monkeypatch):
    from knowledge.search import fulltext

    query = "deployment checklist restart workers"
    whole = titles(search_entries(actor, query, mode="text"))
    monkeypatch.setattr(fulltext, "FIRST_CUT", 1)  # the pool (3 entries) is over the cut
    cut = titles(search_entries(actor, query, mode="text"))
    assert cut == whole[:1] == ["Deployment checklist"]


def test_hits_loaded_while_the_query_embeds_are_the_same_hits(actor, corpus, monkeypatch):
    from knowledge.search import engine, stages

    query = "deployment checklist backups restore"
    monkeypatch.setattr(engine, "_still_embedding", lambda vector: False)
    with stages.collect() as spent:
        after = search_entries(actor, query)
    assert "prefetch" not in spent
    monkeypatch.setattr(engine, "_still_embedding", lambda vector: True)
    with stages.collect() as spent:
        early = search_entries(actor, query)
    assert "prefetch" in spent
    assert len(early) >= 3
    assert [(h.id, h.snippet, h.score, h.matched) for h in early] == [
        (h.id, h.snippet, h.score, h.matched) for h in after
    ]


def test_one_statistics_query_gives_the_idf_and_the_searched_projects_size(
    actor, project, corpus, index
):
    from knowledge.search.fulltext import word_stats
    from knowledge.selectors import visible_projects

    other = ProjectFactory(slug="other", name="Other")
    index(EntryFactory(project=other, title="Elsewhere", body="Deployment elsewhere."))
    seen = visible_projects(actor)
    everywhere = word_stats(["deployment"], "english", seen)
    here = word_stats(["deployment"], "english", seen, searched=project.pk)
    assert (everywhere.entries, here.entries) == (5, 4)
    assert [(t.tsquery, t.ndoc) for t in here.terms] == [("'deploy'", 3)]
    assert here.terms == everywhere.terms  # the idf counts every visible project either way
    assert word_stats([], "english", seen, searched=other.pk).entries == 1
