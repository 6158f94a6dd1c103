"""Bounded work per request: statement timeout, REST pagination, search caps, odd dates."""

import pytest
from django.conf import settings
from django.db import OperationalError, connection, transaction

from knowledge import inputs
from knowledge.errors import ValidationFailed
from knowledge.search import search_entries

pytestmark = pytest.mark.django_db


def test_every_connection_has_the_statement_timeout():
    with connection.cursor() as cur:
        cur.execute("SHOW statement_timeout")
        assert cur.fetchone()[0] == f"{settings.CAIRN_STATEMENT_TIMEOUT_MS // 1000}s"


def test_a_statement_past_the_timeout_is_cancelled():
    with (
        pytest.raises(OperationalError, match="statement timeout"),
        transaction.atomic(),
        connection.cursor() as cur,
    ):
        cur.execute("SET LOCAL statement_timeout = 50")
        cur.execute("SELECT pg_sleep(2)")


def test_celery_tasks_have_soft_and_hard_time_limits():
    assert 0 < settings.CELERY_TASK_SOFT_TIME_LIMIT < settings.CELERY_TASK_TIME_LIMIT
    from memory_site.celery import app

    assert app.conf.task_soft_time_limit == settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert app.conf.task_time_limit == settings.CELERY_TASK_TIME_LIMIT


@pytest.mark.parametrize(
    "query",
    [
        "x" * 2001,
        " ".join(f'-"w{i}"' for i in range(20_000)),
        " ".join(f"w{i}" for i in range(65)),
        "".join(f'"w{i}"' for i in range(65)),  # no space: one word to split(), 65 phrases
    ],
    ids=["long", "20000-exclusions", "65-terms", "65-phrases-without-spaces"],
)
def test_search_caps_query_length_and_terms(actor, project, query):
    with pytest.raises(ValidationFailed, match="limit is") as exc:
        search_entries(actor, query)
    assert exc.value.data["field"] == "query"


def test_a_query_at_the_caps_runs(actor, project):
    assert search_entries(actor, " ".join(f"w{i}" for i in range(64)), mode="text") == []


@pytest.mark.parametrize(
    "value", ["2026-02-30", "99999999d", "2026-13-01", "2026-01-01T25:00", "9" * 400 + "d"]
)
def test_odd_dates_and_ages_say_the_accepted_forms(value):
    with pytest.raises(ValidationFailed, match=r"ISO date .* an age like"):
        inputs.when(value, field="after")


def test_ordinary_dates_and_ages_still_parse():
    assert inputs.when("2026-02-28").day == 28
    assert inputs.when("7d") is not None
    assert inputs.when("100 years") is not None


@pytest.mark.parametrize(
    "query",
    ["limit=100000000", "offset=1000000000000000000", "limit=0", "offset=-1"],
)
def test_rest_pagination_is_bounded(api, query):
    response = api.get(f"/api/v1/entries?{query}")
    assert response.status_code == 422, response.content


def test_rest_pagination_within_bounds(api):
    assert api.get("/api/v1/entries?limit=200&offset=100000").status_code == 200


@pytest.mark.parametrize("value", ["2026-02-30", "99999999d"])
def test_rest_odd_dates_are_422_with_the_forms(api, value):
    response = api.get(f"/api/v1/search?q=x&after={value}")
    assert response.status_code == 422
    assert "ISO date" in response.json()["detail"]


def test_rest_search_over_the_term_cap_is_422(api):
    response = api.get("/api/v1/search", {"q": " ".join(f'-"w{i}"' for i in range(20_000))})
    assert response.status_code == 422
    assert "the limit is" in response.json()["detail"]


def test_rest_body_over_the_limit_is_422(api, settings):
    settings.CAIRN_MAX_BODY_BYTES = 1000
    response = api.put(
        "/api/v1/entries",
        {"project": "acme", "title": "Big", "body": "x" * 1001},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert "CAIRN_MAX_BODY_BYTES" in response.json()["detail"]
