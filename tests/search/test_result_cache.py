"""A repeated search is answered from the process's kept answers until a write changes what it
read (knowledge/search/result_cache.py). Committing tests: the generation advances only when a
write commits, and inside a transaction the cache is not used at all."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from knowledge.actors import Actor
from knowledge.db import generation
from knowledge.models import (
    Entry,
    EntryChunk,
    LexemeStat,
    Membership,
    Project,
    Role,
    Sensitivity,
)
from knowledge.search import SearchFilters, query_vectors, result_cache, search_entries
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entries_embed,
    entry_delete,
    entry_retag,
    entry_undelete,
    entry_update,
    entry_upsert,
    lexeme_stats_refresh,
    membership_grant,
    project_update,
    subtopic_move,
    token_create,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(actor, project):
    made = [
        entry_upsert(
            actor=actor,
            project="acme",
            subtopic="ops",
            fields=EntryFields(title=title, body=body, tags=["ops"]),
        ).entry
        for title, body in [
            ("Deployment checklist", "Run migrations, then restart the workers."),
            ("Database restore", "Restore the nightly dump; it takes about 20 minutes."),
        ]
    ]
    entries_embed(entry_ids=[e.pk for e in made])
    lexeme_stats_refresh()
    return made


def statements(call) -> tuple[object, int]:
    with CaptureQueriesContext(connection) as captured:
        result = call()
    return result, len(captured)


def answer(actor, query="restore the workers", **filters):
    hits = search_entries(actor, query, filters=SearchFilters.parse(**filters))
    return [(h.title, h.address, h.tags, h.snippet) for h in hits], hits


def test_a_repeated_search_is_one_statement_and_the_same_answer(actor, notes):
    (first, hits), cold = statements(lambda: answer(actor))
    (again, kept), warm = statements(lambda: answer(actor))
    assert again == first and first
    assert [h.as_dict() for h in kept] == [h.as_dict() for h in hits]
    assert warm == 1 < cold  # the generation with the actor's projects, nothing else


def test_a_new_question_reads_the_generation_in_its_first_round_trip(actor, notes):
    query_vectors.clear()  # a question not asked lately: no kept answer to look for
    with CaptureQueriesContext(connection) as captured:
        answer(actor, "restore workers")
    reading = [q["sql"] for q in captured if "knowledge_search_generation" in q["sql"]]
    assert len(reading) == 1 and "knowledge_lexemestat" in reading[0]  # with the word stats
    assert statements(lambda: answer(actor, "restore workers"))[1] == 1  # and it was kept


def test_what_a_caller_changes_in_an_answer_is_not_kept(actor, notes):
    _, hits = answer(actor)
    hits[0].title = "scribbled"
    hits.note = "scribbled"
    _, again = answer(actor)
    assert again[0].title != "scribbled" and again.note != "scribbled"


def _upsert_new(actor, entries):
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Restore drill", body="Restore the workers' queue weekly."),
    )


def _update_body(actor, entries):
    entry_update(
        actor=actor, ref=entries[1].pk, fields=EntryFields(body="Restore the workers first.")
    )


def _delete(actor, entries):
    entry_delete(actor=actor, ref=entries[1].pk, reason="obsolete")


def _undelete(actor, entries):
    entry_delete(actor=actor, ref=entries[1].pk, reason="obsolete")
    answer(actor)  # kept without it
    entry_undelete(actor=actor, ref=entries[1].pk, reason="still true")


def _retag(actor, entries):
    entry_retag(actor=actor, ref=entries[1].pk, add=["restore"])


def _move(actor, entries):
    subtopic_move(actor=actor, project="acme", path="ops", to="runbooks", reason="tidy")


def _rename(actor, entries):
    project_update(actor=actor, project="acme", fields=ProjectFields(name="Acme Ops"))


def _embed(actor, entries):
    EntryChunk.objects.all().delete()  # as if the vectors had not arrived yet
    answer(actor)  # kept without them
    entries_embed(entry_ids=[e.pk for e in entries], force=True)


def _recount(actor, entries):
    lexeme_stats_refresh()


@pytest.mark.parametrize(
    "write",
    [_upsert_new, _update_body, _delete, _undelete, _retag, _move, _rename, _embed, _recount],
)
def test_every_write_that_can_change_an_answer_retires_the_kept_one(actor, notes, write, user):
    Membership.objects.filter(project__slug="acme", user=user).update(role=Role.MAINTAINER)
    answer(actor)  # kept
    write(actor, notes)
    _, warm = statements(lambda: answer(actor))
    assert warm > 1, "answered from the kept answer after a write"


def test_the_next_search_after_a_write_shows_it(actor, notes):
    before, _ = answer(actor, "nightly dump")
    entry_update(actor=actor, ref=notes[1].pk, fields=EntryFields(body="Restore the weekly dump."))
    after, _ = answer(actor, "nightly dump")
    assert "nightly" in before[0][3] and "nightly" not in after[0][3]


def test_access_is_decided_on_every_call(actor, notes, user):
    assert answer(actor)[0]  # kept
    stranger = Actor.for_user(UserFactory(username="mallory"))
    # Both changes go past Django (the driver's own connection), so the generation stays.
    raw(f"UPDATE {Project._meta.db_table} SET sensitivity = %s WHERE slug = 'acme'",
        [Sensitivity.RESTRICTED])  # fmt: skip
    assert answer(stranger)[0] == []
    raw(f"DELETE FROM {Membership._meta.db_table} WHERE user_id = %s", [user.pk])
    assert answer(actor)[0] == []


def raw(sql: str, params: list) -> None:
    connection.ensure_connection()
    connection.connection.execute(sql, params)


def now() -> int:
    return generation.fetch((generation.CURRENT, []))[0][0]


@pytest.mark.parametrize("model", [Entry, EntryChunk, Project, Membership, LexemeStat])
def test_a_committed_write_of_a_searched_table_advances_the_generation_once(notes, model):
    field = next(f.attname for f in model._meta.concrete_fields if not f.primary_key)
    before = now()
    with transaction.atomic():
        for _ in range(2):  # two writes, one advance
            model.objects.filter(pk__gte=0).update(**{field: F(field)})
    assert now() == before + 1


def test_a_write_rolled_back_a_read_for_update_and_other_tables_leave_it(notes, user):
    before = now()
    with transaction.atomic():
        Entry.objects.filter(pk=notes[0].pk).update(title="Not kept")
        transaction.set_rollback(True)
    with transaction.atomic():
        list(Entry.objects.select_for_update().filter(pk=notes[0].pk))
    token_create(actor=Actor.for_user(user), user=user, name="t")  # no answer reads tokens
    Entry.objects.filter(pk=-1).update(title="None")  # the sweep finding nothing stale
    assert now() == before


def test_readers_who_see_the_same_projects_do_not_share_answers(actor, notes, user):
    bob = UserFactory(username="bob")
    Membership.objects.create(project=notes[0].project, user=bob, role=Role.EDITOR)
    answer(actor)  # kept for alice
    assert statements(lambda: answer(Actor.for_user(bob)))[1] > 1
    assert statements(lambda: answer(Actor.for_user(bob)))[1] == 1  # kept for bob now


def test_a_membership_change_retires_kept_answers(actor, notes, user):
    answer(actor)  # kept
    membership_grant(
        actor=actor_maintaining(user), project="acme", role="viewer", user=UserFactory()
    )
    assert statements(lambda: answer(actor))[1] > 1


def actor_maintaining(user) -> Actor:
    Membership.objects.filter(project__slug="acme", user=user).update(role=Role.MAINTAINER)
    return Actor.for_user(user)


def test_inside_a_transaction_the_cache_is_neither_read_nor_filled(actor, notes):
    assert "Database restore" in [title for title, *_ in answer(actor)[0]]  # kept
    with transaction.atomic():
        Entry.objects.filter(pk=notes[1].pk).delete()  # not committed: no one else sees it
        inside, _ = answer(actor)
        assert "Database restore" not in [title for title, *_ in inside]
        transaction.set_rollback(True)
    after, _ = answer(actor)
    assert "Database restore" in [title for title, *_ in after]


def test_a_search_that_fell_back_to_words_is_not_kept(actor, notes, settings):
    settings.CAIRN_EMBEDDING_PROVIDER = "none"
    answer(actor)
    _, again = statements(lambda: answer(actor))
    assert again > 1


def test_switched_off_it_keeps_nothing(actor, notes, settings):
    settings.CAIRN_SEARCH_RESULT_CACHE_SECONDS = 0
    answer(actor)
    _, again = statements(lambda: answer(actor))
    assert again > 1


def test_the_oldest_answers_go_first_past_the_byte_budget(actor, notes, settings):
    answer(actor, "restore")
    one = result_cache._answers.bytes  # what one kept answer measures
    settings.CAIRN_SEARCH_RESULT_CACHE_BYTES = one * 5  # room for about four such answers
    for query in ("workers", "migrations", "deploy", "backup", "index"):
        answer(actor, query)
    assert 0 < result_cache._answers.bytes <= settings.CAIRN_SEARCH_RESULT_CACHE_BYTES
    assert statements(lambda: answer(actor, "index"))[1] == 1
    assert statements(lambda: answer(actor, "restore"))[1] > 1


def test_an_answer_over_a_quarter_of_the_budget_is_not_kept(actor, notes, settings):
    answer(actor, "restore")
    settings.CAIRN_SEARCH_RESULT_CACHE_BYTES = result_cache._answers.bytes * 3
    result_cache.clear()
    answer(actor, "restore")
    assert len(result_cache._answers) == 0
    assert statements(lambda: answer(actor, "restore"))[1] > 1


def test_a_write_whose_advance_fails_is_still_a_committed_write(actor, notes, caplog):
    """The advance runs after the commit: its failure is logged, never the write's error."""
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER SEQUENCE {generation.SEQUENCE} RENAME TO cairn_away")
    try:
        _upsert_new(actor, notes)
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER SEQUENCE cairn_away RENAME TO {generation.SEQUENCE}")
    assert Entry.objects.filter(title="Restore drill").exists()
    assert "Could not advance the search generation" in caplog.text
