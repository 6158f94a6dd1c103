"""Every entry write that takes expected_version refuses a stale one and writes nothing.

The rule is the kernel's (check_version), but each service must pass the caller's version on:
a service that dropped it would write over a change its caller never saw. So each is tried here,
and the first test keeps the table complete when a service gains the argument.
"""

from __future__ import annotations

import inspect

import pytest

from knowledge import services
from knowledge.errors import EntryConflict
from knowledge.models import Entry, HistoricalEntry
from knowledge.services import (
    EntryFields,
    entry_correct,
    entry_edit,
    entry_move,
    entry_retag,
    entry_revert,
    entry_set_status,
    entry_update,
    entry_upsert,
    entry_verify,
)

pytestmark = pytest.mark.django_db

# Each write as its caller would send it, having read `version` of the entry "Plan".
WRITES = {
    "entry_upsert": lambda actor, entry, version: entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="mine\n"),
        expected_version=version,
    ),
    "entry_update": lambda actor, entry, version: entry_update(
        actor=actor, ref=entry.pk, fields=EntryFields(kind="decision"), expected_version=version
    ),
    "entry_move": lambda actor, entry, version: entry_move(
        actor=actor, ref=entry.pk, subtopic="elsewhere", expected_version=version
    ),
    "entry_set_status": lambda actor, entry, version: entry_set_status(
        actor=actor, ref=entry.pk, status="open", expected_version=version
    ),
    "entry_revert": lambda actor, entry, version: entry_revert(
        actor=actor, ref=entry.pk, to_version=1, expected_version=version
    ),
    "entry_edit": lambda actor, entry, version: entry_edit(
        actor=actor, ref=entry.pk, operation="append", content="mine", expected_version=version
    ),
    "entry_correct": lambda actor, entry, version: entry_correct(
        actor=actor, ref=entry.pk, body="right\n", reason="was wrong", expected_version=version
    ),
    "entry_verify": lambda actor, entry, version: entry_verify(
        actor=actor, ref=entry.pk, expected_version=version
    ),
    "entry_retag": lambda actor, entry, version: entry_retag(
        actor=actor, ref=entry.pk, add=["mine"], expected_version=version
    ),
}  # fmt: skip


def _state() -> tuple:
    """Everything a write could leave behind: every entry row and every revision."""
    return (
        list(Entry.objects.order_by("pk").values()),
        HistoricalEntry.objects.count(),
    )


def test_every_write_that_takes_expected_version_is_tried_here():
    takes = {
        name
        for name in services.__all__
        if callable(fn := getattr(services, name))
        and "expected_version" in inspect.signature(fn).parameters
    }
    assert takes == set(WRITES)


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_stale_version_is_refused_and_nothing_is_written(actor, project, write):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one\n")
    ).entry
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="two\n"))  # now version 2
    before = _state()

    with pytest.raises(EntryConflict) as refused:
        WRITES[write](actor, entry, 1)
    assert (refused.value.data["expected_version"], refused.value.data["current_version"]) == (
        1,
        2,
    )
    assert _state() == before

    WRITES[write](actor, entry, 2)  # the same write, having read the current version, is done
    assert HistoricalEntry.objects.count() > before[1]
