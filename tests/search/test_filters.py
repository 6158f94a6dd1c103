"""SearchFilters reads what every surface receives the same way: comma or JSON lists, '#tags',
ISO dates or ages, and one clear error per bad value."""

import datetime as dt

import pytest
from django.utils import timezone

from knowledge.errors import ValidationFailed
from knowledge.search import SearchFilters


def test_raw_arguments_are_read_once_into_plain_values():
    filters = SearchFilters.parse(
        project="",
        subtopic="Ops/Storage",
        kinds='["Decision", "note"]',
        tags="#Deploy, runbook",
        status=["open"],
        after="7d",
        before="2026-08-01",
        categories=["  Open   Question "],
    )
    assert filters.project is None
    assert filters.subtopic == "ops/storage"
    assert filters.kinds == ("decision", "note")
    assert filters.tags == ("deploy", "runbook")
    assert filters.status == ("open",)
    assert filters.categories == ("open question",)
    assert timezone.now() - filters.after - dt.timedelta(days=7) < dt.timedelta(minutes=1)
    assert filters.before == timezone.make_aware(dt.datetime(2026, 8, 1))
    assert filters.narrowed
    assert not SearchFilters.parse(project="acme").narrowed


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        ({"status": "done"}, "status", "Unknown status done; use any of"),
        ({"after": "last tuesday"}, "after", "Cannot read after='last tuesday'"),
        ({"before": "2026-02-30"}, "before", "Cannot read before='2026-02-30'"),
    ],
)
def test_a_bad_filter_says_which_and_how(raw, field, words):
    with pytest.raises(ValidationFailed) as err:
        SearchFilters.parse(**raw)
    assert err.value.data["field"] == field
    assert words in err.value.message
