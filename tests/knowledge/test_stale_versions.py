"""Every entry write that takes expected_version refuses a stale one that touches what changed
since, and writes nothing; one that touches nothing changed since applies on the current version
and says so (WriteResult.rebased, issue 48).

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

READ = {1: "one", 2: "two"}  # the body's one line at each version
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
    "entry_edit": lambda actor, entry, version: entry_edit(  # the line it read, replaced
        actor=actor, ref=entry.pk, operation="find_replace", find=READ[version], content="mine",
        expected_version=version,
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


# Tags are changed by difference (another writer's are kept): a retag never clashes.
NEVER_CLASH = {"entry_retag"}


def _plan(actor, *, move: bool):
    """ "Plan" at version 1, then another writer's version 2 that changes its text and every
    field a write here sets (kind, status; its place when `move`: an upsert names the entry by
    the place it read)."""
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one\n")
    ).entry
    entry_update(
        actor=actor,
        ref=entry.pk,
        fields=EntryFields(body="two\n", kind="howto", status="resolved"),
        subtopic="there" if move else None,
    )
    return entry


@pytest.mark.parametrize("write", sorted(set(WRITES) - NEVER_CLASH))
def test_a_stale_version_is_refused_and_nothing_is_written(actor, project, write):
    entry = _plan(actor, move=write == "entry_move")
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


# A write that touches nothing the other writer changed (here only the text changed since).
UNTOUCHED = {
    "entry_update": WRITES["entry_update"],
    "entry_move": WRITES["entry_move"],
    "entry_set_status": WRITES["entry_set_status"],
    "entry_retag": WRITES["entry_retag"],
    "entry_edit": lambda actor, entry, version: entry_edit(
        actor=actor, ref=entry.pk, operation="append", content="mine", expected_version=version
    ),
}  # fmt: skip


@pytest.mark.parametrize("write", sorted(UNTOUCHED))
def test_a_stale_write_that_touches_nothing_changed_applies_and_says_so(actor, project, write):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one\n")
    ).entry
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="two\n"))  # now version 2

    written = UNTOUCHED[write](actor, entry, 1)

    assert written.outcome == "updated"
    assert (written.rebased.read_version, written.rebased.version) == (1, 2)
    assert [c["version"] for c in written.rebased.changes] == [2]
    assert written.entry.version == 3
    assert Entry.objects.get(pk=entry.pk).body.startswith("two")  # theirs is kept
    assert UNTOUCHED[write](actor, entry, 3).rebased is None  # read the current one: no rebase
