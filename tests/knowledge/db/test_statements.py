"""Each statement of knowledge/db written by hand (the ORM cannot say it, or costs a write or a
search more CPU to build it than to run it), held to what its ORM form does on a small fixture:
the same rows, the same vectors, the same answers. A statement added to knowledge/db gets its
test here."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import Counter
from dataclasses import astuple

import pytest
from django.conf import settings
from django.contrib.postgres.search import (
    SearchHeadline,
    SearchQuery,
    SearchRank,
    SearchVector,
    TrigramSimilarity,
)
from django.db import connection, transaction
from django.db.models import Case, F, OuterRef, Q, Subquery, Sum, TextField, Value, When
from django.db.models.functions import Coalesce, Concat
from django.forms.models import model_to_dict
from django.utils import timezone
from pgvector import Vector
from pgvector.django import CosineDistance

from knowledge.access import project_ids_sql, visible_projects
from knowledge.db import fetch_together
from knowledge.db.expressions import EmbeddingKey
from knowledge.db.graph import write_facts
from knowledge.db.revisions import record_commits, token_latest
from knowledge.db.search import (
    exact_distances,
    fetch_rows,
    hit_matches,
    hit_rows,
    hnsw_scan,
    idf_rank_sum,
    matches,
    recount_lexemes,
    text_constraint,
    weighted_rank,
    word_stats_sql,
)
from knowledge.db.text import weighted_vector
from knowledge.db.tokens import token_recheck
from knowledge.db.write_lookups import MAX_SIMILAR, SIMILAR_CANDIDATES, report_rows
from knowledge.models import (
    EMBEDDING_DIM,
    ApiToken,
    Entry,
    EntryChunk,
    EntryStatus,
    HistoricalEntry,
    LexemeStat,
    Observation,
    Project,
    Relation,
    Sensitivity,
    embedding_key,
)
from knowledge.models.entries import body_key
from knowledge.reads.write_lookups import blame_revisions
from knowledge.search.hits import HEADLINE_OPTIONS
from knowledge.services import EntryFields, entry_delete, entry_update, entry_upsert
from knowledge.services.tokens import token_create
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

WHEN = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def _rows(model, **where) -> list[dict]:
    leave = {"id", "search_vector"}
    return [
        {k: v for k, v in model_to_dict(row).items() if k not in leave}
        for row in model.objects.filter(**where).order_by("position", "pk")
    ]


def test_write_facts_closes_and_adds_as_the_orm_does(actor, project):
    one = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="One", body="")).entry
    two = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Two", body="")).entry
    observations = [
        {"category": "fact", "content": "It ran", "tags": ["ops"], "context": "ctx", "position": 0},
        {"category": "idea", "content": "Cache", "tags": [], "context": "", "position": 2},
    ]
    relations = [
        {"type": "relates_to", "text": "Two", "key": "two", "target": two.pk, "position": 1},
        {"type": "needs", "text": "Nowhere", "key": "nowhere", "target": None, "position": 3},
    ]
    # By hand, in one statement, for entry one; by the ORM for entry two.
    write_facts(entry_id=one.pk, when=WHEN, version=3, close_observations=[],
                close_relations=[], observations=observations, relations=relations,
                config=settings.CAIRN_SEARCH_CONFIG)  # fmt: skip
    Observation.objects.bulk_create(
        Observation(entry=two, valid_from=WHEN, valid_from_version=3, **o) for o in observations
    )
    Relation.objects.bulk_create(
        Relation(source=two, relation_type=r["type"], target_text=r["text"], target_key=r["key"],
                 target_id=r["target"], position=r["position"], valid_from=WHEN,
                 valid_from_version=3)
        for r in relations
    )  # fmt: skip
    for model, key in ((Observation, "entry"), (Relation, "source")):
        mine, theirs = _rows(model, **{key: one}), _rows(model, **{key: two})
        assert [{**r, key: None} for r in mine] == [{**r, key: None} for r in theirs], model
    # The vector each observation gets is the one SearchVector makes (content A, category B,
    # context C).
    config = settings.CAIRN_SEARCH_CONFIG
    for row in Observation.objects.filter(entry=one).annotate(
        expected=SearchVector("content", weight="A", config=config)
        + SearchVector("category", weight="B", config=config)
        + SearchVector("context", weight="C", config=config)
    ):
        assert row.search_vector == row.expected and row.search_vector
    # Closing: the same as an update of valid_to and valid_to_version.
    later = WHEN + dt.timedelta(hours=1)
    write_facts(entry_id=one.pk, when=later, version=4,
                close_observations=list(one.observations.values_list("pk", flat=True)[:1]),
                close_relations=list(one.relations_out.values_list("pk", flat=True)[:1]),
                observations=[], relations=[], config=config)  # fmt: skip
    Observation.objects.filter(pk__in=two.observations.values("pk")[:1]).update(
        valid_to=later, valid_to_version=4
    )
    Relation.objects.filter(pk__in=two.relations_out.values("pk")[:1]).update(
        valid_to=later, valid_to_version=4
    )
    for model, key in ((Observation, "entry"), (Relation, "source")):
        mine, theirs = _rows(model, **{key: one}), _rows(model, **{key: two})
        assert [{**r, key: None} for r in mine] == [{**r, key: None} for r in theirs], model
        assert sum(r["valid_to"] is not None for r in mine) == 1


@pytest.mark.parametrize("writes", [0, 1, 3])
def test_token_latest_is_the_tokens_newest_revision_as_the_orm_reads_it(actor, project, writes):
    agent = dataclasses.replace(actor, token_id=4242)
    other = dataclasses.replace(actor, token_id=4243)
    for n in range(writes):
        entry_upsert(actor=agent, project="acme", fields=EntryFields(title=f"T{n}", body="x"))
        entry_upsert(actor=other, project="acme", fields=EntryFields(title=f"O{n}", body="y"))
    orm = (
        HistoricalEntry.objects.filter(history_token_id=4242)
        .order_by("-history_id")
        .values_list("history_run", "history_date")
        .first()
    )
    assert token_latest(4242) == orm
    assert (orm is None) == (writes == 0)


# --- the named statements held to their ORM forms (issue 45: each statement the ORM cannot say
# at the same cost is checked against the query the ORM would build) ------------------------


def _vector(*head: float) -> list[float]:
    return [*head, *([0.0] * (EMBEDDING_DIM - len(head)))]


def _lexemes(vector: str) -> set[str]:
    return {m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", vector or "")}


def _raw(tsquery: str) -> SearchQuery:
    """A tsquery's text as the ORM sends it: to_tsquery('simple', …) leaves lexemes as they are."""
    return SearchQuery(tsquery, search_type="raw", config="simple")


@pytest.fixture
def written(actor, project):
    """Four entries of acme (one not searchable, one in a subtopic) and one of another project
    alice cannot see; word statistics counted."""
    other = ProjectFactory(slug="other", sensitivity=Sensitivity.RESTRICTED)
    found = {}
    for title, body, subtopic in (
        ("Cache rollback", "Roll back the cache.\n- [decision] Roll back the cache #ops\n", "ops"),
        ("Queue restart", "Restart the queue.\n- [fact] The queue lags (at night)\n", None),
        ("Cache and queue", "The  cache and the QUEUE.\n", None),
        ("Scratch", "Roll back the cache.\n", None),
    ):
        fields = EntryFields(title=title, body=body)
        found[title] = entry_upsert(actor=actor, project="acme", subtopic=subtopic,
                                    fields=fields).entry  # fmt: skip
    Entry.objects.filter(title="Scratch").update(searchable=False)
    found["Hidden"] = Entry.objects.create(project=other, title="Hidden cache", slug="hidden",
                                           body="Roll back the cache.\n")  # fmt: skip
    Entry.objects.filter(pk=found["Hidden"].pk).update(
        search_vector=SearchVector(Value("Roll back the cache."), config=CONFIG)
    )
    with transaction.atomic():
        recount_lexemes()
    return found


CONFIG = settings.CAIRN_SEARCH_CONFIG


def test_weighted_vector_weighs_as_search_vector_does(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="D", body="")).entry
    title, place, body = "Deploy notes", "ops db infra prod", "Roll back the cache.\n"
    Entry.objects.filter(pk=entry.pk).update(
        search_vector=weighted_vector(CONFIG, title, place, body)
    )
    ours = Entry.objects.values_list("search_vector", flat=True).get(pk=entry.pk)
    Entry.objects.filter(pk=entry.pk).update(
        search_vector=SearchVector(Value(title), weight="A", config=CONFIG)
        + SearchVector(Value(place), weight="B", config=CONFIG)
        + SearchVector(Value(body), weight="C", config=CONFIG)
    )
    theirs = Entry.objects.values_list("search_vector", flat=True).get(pk=entry.pk)
    assert ours == theirs and "'deploy':1A" in ours and "'infra':5B" in ours and "cach" in ours


def test_record_commits_writes_hashes_as_per_row_updates_do(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="")).entry
    for n in range(3):
        entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=f"{n}\n"))
    ids = list(HistoricalEntry.objects.filter(id=entry.pk).order_by("history_id")
               .values_list("history_id", flat=True))  # fmt: skip
    HistoricalEntry.objects.filter(id=entry.pk).update(git_commit="")
    HistoricalEntry.objects.filter(history_id=ids[0]).update(git_commit="kept")
    shas = {ids[0]: "a" * 40, ids[1]: "b" * 40, ids[2]: "c" * 40}
    record_commits(shas)
    ours = dict(HistoricalEntry.objects.filter(id=entry.pk).values_list("history_id", "git_commit"))
    HistoricalEntry.objects.filter(history_id__in=ids[1:3]).update(git_commit="")
    for i, sha in shas.items():  # the ORM form, one row at a time
        HistoricalEntry.objects.filter(history_id=i, git_commit="").update(git_commit=sha)
    theirs = dict(
        HistoricalEntry.objects.filter(id=entry.pk).values_list("history_id", "git_commit")
    )
    assert ours == theirs
    assert ours[ids[0]] == "kept" and ours[ids[1]] == "b" * 40 and ours[ids[3]] == ""


def test_recount_lexemes_counts_as_a_read_of_every_vector_does(written):
    ours = {(s.project_id, s.word): s.ndoc for s in LexemeStat.objects.all()}
    theirs: Counter = Counter()
    for project_id, vector in Entry.objects.filter(searchable=True).values_list(
        "project_id", "search_vector"
    ):
        theirs[(project_id, "")] += 1
        theirs.update((project_id, word) for word in _lexemes(vector))
    assert ours == dict(theirs)
    acme = written["Queue restart"].project_id
    assert ours[(acme, "cach")] == 2 and ours[(acme, "")] == 3


def test_the_embedding_key_in_sql_is_the_models(actor, project):
    for title in ("Plain", "Ünïcode ✓ title", "Quote's \\ and\nnewline"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body="x\n"))
    found = Entry.objects.annotate(
        key=EmbeddingKey(Concat(F("content_hash"), Value("\n"), F("title")))
    )
    assert len(found) == 3
    for entry in found:
        assert entry.key == embedding_key(entry)


def test_exact_distances_are_the_orms_cosine_distances(written):
    entries = [written["Cache rollback"], written["Queue restart"], written["Cache and queue"]]
    for i, entry in enumerate(entries):
        for ordinal in range(2):
            EntryChunk.objects.create(
                entry=entry,
                ordinal=ordinal,
                text=f"{i}.{ordinal}",
                model="m",
                embedding=_vector(1.0, i + ordinal * 0.5 + 0.1),
            )
    EntryChunk.objects.create(entry=entries[0], ordinal=9, text="other model", model="n",
                              embedding=_vector(1.0))  # fmt: skip
    query = _vector(1.0, 0.2)
    scope = Entry.objects.filter(pk__in=[entries[0].pk, entries[2].pk])
    sql, params = exact_distances(scope, Vector._to_db(query), "m", 3)
    assert "+ 0.0" in sql  # keeps the planner off the HNSW index
    (ours,) = fetch_together([(sql, params)])
    theirs = list(
        EntryChunk.objects.filter(model="m", entry__in=scope)
        .annotate(distance=CosineDistance("embedding", query))
        .order_by("distance")
        .values_list("entry_id", "distance", "pk")[:3]
    )
    assert [(e, round(d, 6), c) for e, d, c in ours] == [(e, round(d, 6), c) for e, d, c in theirs]
    assert len(ours) == 3 and {e for e, _, _ in ours} <= {entries[0].pk, entries[2].pk}


@pytest.mark.django_db(transaction=True)
def test_the_hnsw_settings_are_the_orms_set_local():
    def show() -> tuple[str, str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('hnsw.ef_search'), "
                           "current_setting('hnsw.iterative_scan')")  # fmt: skip
            return cursor.fetchone()

    EntryChunk.objects.count()  # the connection has loaded the extension
    before = show()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.ef_search = 321")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        theirs = show()
    assert show() == before
    with transaction.atomic():
        fetch_together([hnsw_scan(321)])
        ours = show()
    assert ours == theirs == ("321", "relaxed_order") != before == show()


def test_the_text_constraint_is_the_orms_search_query_filters(written):
    def titles(where) -> set[str]:
        return set(Entry.objects.filter(where).values_list("title", flat=True))

    assert text_constraint([], [], CONFIG) is None
    phrase = lambda text: SearchQuery(text, search_type="phrase", config=CONFIG)  # noqa: E731
    cases = [
        (([["roll back"]], []), Q(search_vector=phrase("roll back"))),
        (([["roll back", "restart the"]], []),
         Q(search_vector=phrase("roll back") | phrase("restart the"))),
        (([], ["cache"]), ~Q(search_vector=SearchQuery("cache", config=CONFIG))),
        (([], ["back the cache"]), ~Q(search_vector=phrase("back the cache"))),
        (([["queue"]], ["roll back"]),
         Q(search_vector=phrase("queue")) & ~Q(search_vector=phrase("roll back"))),
    ]  # fmt: skip
    Entry.objects.filter(title="Scratch").update(search_vector=None)  # kept by an exclusion
    for (required, excluded), orm in cases:
        ours = titles(text_constraint(required, excluded, CONFIG))
        assert ours == titles(orm), (required, excluded)
    assert titles(text_constraint([], ["cache"], CONFIG)) == {"Queue restart", "Scratch"}


def test_word_stats_count_as_the_orm_sums_the_statistics(written, actor):
    acme = written["Queue restart"].project_id
    words = ["caches", "queue", "nowhere"]
    for scope, searched in (
        (visible_projects(actor), None),
        (visible_projects(actor), acme),
        (Project.objects.all(), acme),
        (Project.objects.none(), None),
    ):
        ours = fetch_rows(word_stats_sql(words, CONFIG, scope, searched=searched))
        lexemes = _lexemes(
            Project.objects.annotate(v=SearchVector(Value(" ".join(words)), config=CONFIG))
            .values_list("v", flat=True)
            .first()
        )
        stats = LexemeStat.objects.filter(project__in=scope)
        theirs = {
            (f"'{w}'", stats.filter(word=w).aggregate(n=Coalesce(Sum("ndoc"), 0))["n"], None)
            for w in lexemes
        }
        total = stats.filter(word="").aggregate(n=Coalesce(Sum("ndoc"), 0))["n"]
        of_searched = (stats.filter(word="", project_id=searched) if searched else
                       stats.filter(word="")).aggregate(n=Sum("ndoc"))["n"]  # fmt: skip
        theirs.add((None, total, of_searched))
        assert set(ours) == theirs and len(ours) == len(theirs), (scope, searched)
    assert ("'cach'", 2, None) in fetch_rows(word_stats_sql(words, CONFIG, visible_projects(actor)))


def test_the_rank_expressions_are_the_orms_search_rank(written):
    weights, query = [0.1, 0.2, 0.4, 1.0], "'cach' & 'roll'"
    ranked = (
        Entry.objects.filter(matches(query))
        .annotate(
            ours=weighted_rank(weights, query, 32),
            theirs=SearchRank(F("search_vector"), _raw(query), weights=weights, normalization=32),
            ours_sum=idf_rank_sum([(1.5, "'cach'"), (0.25, "'queue'")], weights, 32),
            theirs_sum=Value(1.5)
            * SearchRank(F("search_vector"), _raw("'cach'"), weights=weights, normalization=32)
            + Value(0.25)
            * SearchRank(F("search_vector"), _raw("'queue'"), weights=weights, normalization=32),
        )
        .order_by("pk")
    )
    orm = Entry.objects.filter(search_vector=_raw(query)).order_by("pk")
    assert [e.pk for e in ranked] == [e.pk for e in orm] and len(orm) == 3
    for entry in ranked:
        assert entry.ours == pytest.approx(entry.theirs) and entry.ours > 0
        assert entry.ours_sum == pytest.approx(entry.theirs_sum)


def test_the_matches_explain_reads_are_the_orms(written, actor):
    ids = [e.pk for e in written.values()]
    rollback = written["Cache rollback"]
    chunks = []
    for ordinal in range(3):
        chunks.append(EntryChunk.objects.create(entry=rollback, ordinal=ordinal, text="t",
                                                model="m", embedding=_vector(1.0)))  # fmt: skip
    EntryChunk.objects.create(entry=rollback, ordinal=9, text="t", model="n", embedding=_vector(1))
    # Two observations that match, one better: the best is the one explained.
    body = "- [first] the queue\n- [best] the queue, the queue and the cache\n"
    fields = EntryFields(title="Twice", body=body)
    twice = entry_upsert(actor=actor, project="acme", fields=fields).entry
    ids.append(twice.pk)
    query, every = "'cach' | 'queue'", "'cach' & 'roll'"
    ours = fetch_rows(hit_matches(ids, query, [chunks[1].pk], every))
    best = (
        Observation.objects.filter(
            entry_id__in=ids, valid_to__isnull=True, search_vector=_raw(query)
        )
        .annotate(rank=SearchRank(F("search_vector"), _raw(query)))
        .order_by("entry_id", "-rank", "position")
        .distinct("entry_id")
        .values_list("entry_id", "category", "content")
    )
    theirs = [("o", e, c, t, None, None) for e, c, t in best]
    theirs += [
        ("c", c.entry_id, None, None, c.ordinal + 1,
         EntryChunk.objects.filter(entry_id=c.entry_id, model=c.model).count())
        for c in EntryChunk.objects.filter(pk__in=[chunks[1].pk])
    ]  # fmt: skip
    theirs += [
        ("a", pk, None, None, None, None)
        for pk in Entry.objects.filter(pk__in=ids, search_vector=_raw(every)).values_list(
            "pk", flat=True
        )
    ]
    assert sorted(ours, key=repr) == sorted(theirs, key=repr)
    assert ("c", rollback.pk, None, None, 2, 3) in ours
    assert {r[0] for r in ours} == {"o", "c", "a"}
    assert next(r for r in ours if r[:2] == ("o", twice.pk))[2] == "best"


def test_the_hits_rows_are_the_orms(written):
    rollback, queue = written["Cache rollback"], written["Queue restart"]
    chunk = EntryChunk.objects.create(entry=rollback, ordinal=0, text="the passage", model="m",
                                      embedding=_vector(1.0))  # fmt: skip
    ids, headline = [rollback.pk, queue.pk, written["Hidden"].pk], "'cach'"
    options = dict(max_words=30, min_words=12, max_fragments=2, fragment_delimiter=" … ",
                   start_sel="**", stop_sel="**")  # fmt: skip
    ours = fetch_rows(hit_rows(ids, chunk_ids=[chunk.pk], headline=headline, headed=[rollback.pk],
                               config=CONFIG, options=HEADLINE_OPTIONS))  # fmt: skip
    head = SearchHeadline("body", _raw(headline), config=CONFIG, **options)
    passage = EntryChunk.objects.filter(entry=OuterRef("pk"), pk__in=[chunk.pk]).values("text")
    found = (
        Entry.objects.filter(pk__in=ids)
        .annotate(
            head=Case(When(pk__in=[rollback.pk], then=head)),
            passage=Coalesce(Subquery(passage[:1]), Value("", output_field=TextField())),
        )
        .values_list(
            *("pk", "short_id", "title", "slug", "body", "kind", "tags", "status", "updated_at"),
            *("project__slug", "subtopic__path", "head", "passage"),
        )
    )
    assert sorted(ours) == sorted(found)
    mine = {row[0]: row for row in ours}
    assert "**cache**" in mine[rollback.pk][11] and mine[queue.pk][11] is None
    assert mine[rollback.pk][10] == "ops" and mine[rollback.pk][12] == "the passage"
    assert fetch_rows(hit_rows([queue.pk], chunk_ids=[], headline=None, headed=[queue.pk],
                               config=CONFIG, options=HEADLINE_OPTIONS))[0][11] is None  # fmt: skip


def _named(entry_rows) -> list[tuple]:
    return [
        (e.pk, e.short_id, e.title, e.slug, e.kind, e.status, e.updated_at, e.project.slug,
         e.subtopic.path if e.subtopic_id else None)
        for e in entry_rows
    ]  # fmt: skip


def test_the_report_lookups_are_the_orms(written, actor):
    for title, searchable in (
        ("Cache rollbacks in the old ops notes", True),
        ("Cache rollback plans", True),
        ("Cache rollbacks", False),
    ):
        made = entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title,
                            body=title)).entry  # fmt: skip
        Entry.objects.filter(pk=made.pk).update(searchable=searchable)
    new = entry_upsert(actor=actor, project="acme", fields=EntryFields(
        title="Cache rollbacks!", body="roll back  THE cache.")).entry  # fmt: skip
    targets = [written["Queue restart"].pk, written["Hidden"].pk]
    ours = report_rows(project_ids_sql(actor, "read"), targets=targets, similar=True,
                       same_body=True, title=new.title, project=new.project_id,
                       entry_id=new.pk, body=new.body)  # fmt: skip
    visible = visible_projects(actor)
    entries = Entry.objects.select_related("project", "subtopic")
    theirs = [("t", *row, 0.0) for row in _named(
        entries.filter(pk__in=targets, project__in=visible))]  # fmt: skip
    alike = (
        entries.filter(project_id=new.project_id, title__trigram_similar=new.title, searchable=True)
        .exclude(pk=new.pk)
        .exclude(status=EntryStatus.SUPERSEDED)
        .annotate(score=TrigramSimilarity("title", new.title))
        .order_by("-score", "pk")[:SIMILAR_CANDIDATES]
    )
    theirs += [("s", *row, e.score) for row, e in zip(_named(alike), alike, strict=True)]
    key = Entry.objects.filter(pk=new.pk).annotate(k=body_key()).values("k")[:1]
    same = (
        entries.annotate(k=body_key())
        .filter(k=Subquery(key), project__in=visible)
        .exclude(pk=new.pk)
        .order_by("-updated_at")[:MAX_SIMILAR]
    )
    theirs += [("b", *row, 0.0) for row in _named(same)]
    assert [(*r[:-1], round(r[-1], 5)) for r in ours] == [
        (*r[:-1], round(r[-1], 5)) for r in theirs
    ]
    parts = Counter(r[0] for r in ours)
    assert parts["t"] == 1 and parts["s"] >= 1 and parts["b"] == 1  # Hidden is not seen


def test_the_blame_read_is_the_orms(written, actor):
    entry = written["Queue restart"]
    for n in range(3):
        entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=f"Line {n}\n"))
    entry_delete(actor=actor, ref=entry.pk, reason="gone")  # a delete's row is left out
    assert HistoricalEntry.objects.filter(id=entry.pk, history_type="-", version=4).exists()
    ours = [astuple(r) for r in blame_revisions(actor, entry.pk, newest=4, oldest=1)]
    theirs = list(
        HistoricalEntry.objects.filter(
            id=entry.pk, version__lte=4, version__gt=1, project__in=visible_projects(actor)
        )
        .exclude(history_type="-")
        .order_by("-version", "-history_id")
        .values_list("version", "body", "generated_by", "history_user_id", "history_user__username")
    )
    assert ours == theirs and [r[0] for r in ours] == [4, 3, 2] and ours[0][4] == "alice"
    assert blame_revisions(actor, entry.pk, newest=3, oldest=3) == []


def test_the_token_recheck_is_the_orms(actor, project):
    made = token_create(actor=actor, user=actor.user, name="t", projects=["acme"])
    token = ApiToken.objects.get(pk=made.token.pk)
    now = timezone.now()

    def orm(digest, oldest):
        live = ApiToken.objects.filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=now),
            pk=token.pk, secret_hash=digest, revoked_at__isnull=True, user__is_active=True,
        )  # fmt: skip
        if oldest is not None:
            live = live.filter(created_at__gt=oldest)
        row = live.values_list("last_used_at", "agent_label", "user__is_superuser", "scope",
                               "narrowed", "resource").first()  # fmt: skip
        if row is None:
            return None
        projects = sorted(token.projects.values_list("pk", flat=True))
        return (*row[:5], projects, row[5])

    def ours(digest, oldest):
        row = token_recheck(token.pk, digest, now=now, oldest=oldest)
        return None if row is None else (*row[:5], sorted(row[5]), row[6])

    digest = token.secret_hash
    cases = [(digest, None), (digest, now - dt.timedelta(days=1)), (digest, now), ("x", None)]
    for given, oldest in cases:
        assert ours(given, oldest) == orm(given, oldest), (given, oldest)
    assert ours(digest, None)[5] == [project.pk]
    for change in ({"revoked_at": now}, {"expires_at": now - dt.timedelta(seconds=1)}):
        ApiToken.objects.filter(pk=token.pk).update(**change)
        assert ours(digest, None) is None is orm(digest, None)
        ApiToken.objects.filter(pk=token.pk).update(revoked_at=None, expires_at=None)
    type(actor.user).objects.filter(pk=actor.user.pk).update(is_active=False)
    assert ours(digest, None) is None is orm(digest, None)
