"""The word statistics' recount (full-text idf): its own beat task, one at a time."""

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from knowledge.models import LexemeStat
from knowledge.services import EntryFields, entry_upsert
from knowledge.services.embeddings import STATS_LOCK_KEY, lexeme_stats_refresh
from knowledge.tasks import word_stats_refresh

pytestmark = pytest.mark.django_db(transaction=True)


def _other_connection():
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
    )


def test_a_second_recount_returns_while_the_first_holds_the_lock(actor, project):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Kafka", body="lag"))
    with _other_connection() as other:
        other.execute("BEGIN")
        other.execute("SELECT pg_advisory_xact_lock(%s)", [STATS_LOCK_KEY])
        assert lexeme_stats_refresh() is False  # no wait, no duplicate-key error
        assert not LexemeStat.objects.exists()
        other.execute("COMMIT")
    assert word_stats_refresh() is True
    assert LexemeStat.objects.filter(word="kafka", project=project, ndoc=1).exists()


def test_beat_recounts_on_its_own_schedule():
    job = settings.CELERY_BEAT_SCHEDULE["knowledge-word-stats"]
    assert job == {
        "task": "knowledge.tasks.word_stats_refresh",
        "schedule": settings.CAIRN_SEARCH_STATS_MAX_AGE,
    }
