"""Issue 37: a stale write shows what changed and how to apply only its change; a deleted entry
comes back under its own id."""

import pytest

from knowledge import merges
from knowledge.errors import AlreadyExists, EntryConflict, NotFound, ValidationFailed
from knowledge.models import Entry, Subtopic
from knowledge.selectors import entry_get
from knowledge.services import (
    EntryFields,
    entry_correct,
    entry_delete,
    entry_set_status,
    entry_undelete,
    entry_update,
    entry_upsert,
)

BASE = "# Room\n\n[seats] 40\n[floor] 2\n\nBooked on Tuesdays."


def test_changes_to_different_lines_merge():
    theirs = BASE.replace("[seats] 40", "[seats] 45")
    mine = BASE.replace("Tuesdays", "Wednesdays")
    result = merges.merge(BASE, theirs, mine)
    assert result.body == BASE.replace("[seats] 40", "[seats] 45").replace("Tuesdays", "Wednesdays")
    assert result.conflicts == []


def test_changes_to_the_same_line_conflict_with_both_sides():
    result = merges.merge(BASE, BASE.replace("40", "45"), BASE.replace("40", "50"))
    assert result.body is None
    assert result.conflicts == [
        {"lines": "3-3", "base": "[seats] 40", "theirs": "[seats] 45", "mine": "[seats] 50"}
    ]


def test_insertions_merge_in_place_and_the_same_change_twice_is_one():
    theirs = BASE + "\nNote A"
    mine = BASE.replace("# Room\n", "# Room\nintro\n")
    assert merges.merge(BASE, theirs, mine).body == mine + "\nNote A"
    same = BASE.replace("40", "45")
    assert merges.merge(BASE, same, same).body == same


def test_an_insertion_next_to_a_changed_line_conflicts():
    theirs = BASE.replace("[floor] 2", "[floor] 3")
    mine = BASE.replace("[floor] 2", "[floor] 2\n[wifi] yes")
    assert merges.merge(BASE, theirs, mine).conflicts


LINES = "a\nb\nc\nd\ne\nf"


def _replace(text: str, line: int, new: str) -> str:
    lines = text.split("\n")
    lines[line] = new
    return "\n".join(lines)


def _insert(text: str, before: int, new: str) -> str:
    lines = text.split("\n")
    lines.insert(before, new)
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("theirs", "mine", "merged"),
    [
        # Changes to neighbouring lines are different lines: both are kept.
        (_replace(LINES, 1, "B"), _replace(LINES, 2, "C"), "a\nB\nC\nd\ne\nf"),
        (_replace(LINES, 2, "C"), _replace(LINES, 1, "B"), "a\nB\nC\nd\ne\nf"),
        # An insertion a line away from the other side's change is kept beside it.
        (_replace(LINES, 1, "B"), _insert(LINES, 3, "new"), "a\nB\nc\nnew\nd\ne\nf"),
        (_insert(LINES, 3, "new"), _replace(LINES, 1, "B"), "a\nB\nc\nnew\nd\ne\nf"),
    ],
)
def test_changes_that_do_not_touch_merge(theirs, mine, merged):
    assert merges.merge(LINES, theirs, mine) == merges.Merge(
        merged, [], merges.changes(LINES.split("\n"), mine.split("\n"))
    )


@pytest.mark.parametrize(
    ("theirs", "mine", "lines"),
    [
        # An insertion at either edge of a line the other side changed is a conflict: it may
        # belong to the old text or to the new.
        (_replace(LINES, 2, "C"), _insert(LINES, 2, "new"), "3-3"),
        (_replace(LINES, 2, "C"), _insert(LINES, 3, "new"), "3-3"),
        (_insert(LINES, 2, "new"), _replace(LINES, 2, "C"), "3-3"),
        (_insert(LINES, 3, "new"), _replace(LINES, 2, "C"), "3-3"),
        (_insert(LINES, 3, "theirs"), _insert(LINES, 3, "mine"), "4-4"),
    ],
)
def test_an_insertion_at_the_edge_of_the_other_change_conflicts(theirs, mine, lines):
    result = merges.merge(LINES, theirs, mine)
    assert result.body is None and [c["lines"] for c in result.conflicts] == [lines]


def test_a_conflict_shows_each_side_whole():
    theirs = LINES.replace("b\nc", "B1\nB2\nC")
    mine = LINES.replace("b\nc", "b2\nc2")
    assert merges.merge(LINES, theirs, mine).conflicts == [
        {"lines": "2-3", "base": "b\nc", "theirs": "B1\nB2\nC", "mine": "b2\nc2"}
    ]


def test_every_change_of_the_writer_is_kept():
    theirs = _replace(LINES, 5, "F")
    mine = _replace(_replace(LINES, 0, "A"), 3, "D")
    assert merges.merge(LINES, theirs, mine).body == "A\nb\nc\nD\ne\nF"


def _room(actor):
    return entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Room", body=BASE)
    ).entry


def test_a_stale_upsert_shows_their_change_and_a_merged_body(actor, agent, project):
    entry = _room(actor)
    entry_update(
        actor=actor, ref=entry.pk, fields=EntryFields(body=BASE.replace("40", "45")), reason="more"
    )
    with pytest.raises(EntryConflict) as caught:
        entry_upsert(
            actor=agent,
            project="acme",
            fields=EntryFields(title="Room", body=BASE.replace("Tuesdays", "Wednesdays")),
            expected_version=1,
        )
    data = caught.value.data
    assert "-[seats] 40\n+[seats] 45" in data["diff"]
    assert data["changes"][0]["version"] == 2 and data["changes"][0]["reason"] == "more"
    assert data["changes"][0]["by"]
    assert "[seats] 45" in data["merged_body"] and "Wednesdays" in data["merged_body"]
    assert data["edits"] == [{"find": "Booked on Tuesdays.", "replace": "Booked on Wednesdays."}]
    assert "repeat" not in caught.value.message.lower()
    assert "merged_body keeps both" in caught.value.message
    # Following the advice keeps both changes.
    entry_upsert(
        actor=agent,
        project="acme",
        fields=EntryFields(title="Room", body=data["merged_body"]),
        expected_version=2,
    )
    body = Entry.objects.get(pk=entry.pk).body
    assert "[seats] 45" in body and "Wednesdays" in body


def test_a_stale_update_of_the_same_line_names_the_conflict(actor, project):
    entry = _room(actor)
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=BASE.replace("40", "45")))
    refused = _seats_50_from_version_1(actor, entry)
    assert refused.data["conflicts"][0]["theirs"] == "[seats] 45"
    assert "merged_body" not in refused.data
    assert "same lines (3-3 of version 1)" in refused.message


def _seats_50_from_version_1(actor, entry) -> EntryConflict:
    """The refusal of a write that read version 1 and changes the line another write changed."""
    with pytest.raises(EntryConflict) as caught:
        entry_update(
            actor=actor,
            ref=entry.pk,
            fields=EntryFields(body=BASE.replace("40", "50")),
            expected_version=1,
        )
    return caught.value


def test_undelete_restores_id_kind_tags_sources_and_history(actor, project):
    entry = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="rooms",
        fields=EntryFields(title="Room", body=BASE, kind="decision", tags=["space"]),
        sources=[{"kind": "mail", "external_id": "m-1"}],
    ).entry
    entry_delete(actor=actor, ref=entry.short_id, reason="tidy up")
    with pytest.raises(NotFound, match="deleted") as caught:
        entry_get(actor, entry.short_id)
    assert caught.value.data["deleted"]["short_id"] == entry.short_id
    back = entry_undelete(actor=actor, ref=entry.short_id, reason="still needed").entry
    again = entry_get(actor, entry.short_id)
    assert (back.pk, again.pk) == (entry.pk, entry.pk)
    assert (again.kind, again.tags, again.subtopic.path) == ("decision", ["space"], "rooms")
    assert [(s.kind, s.external_id) for s in again.sources.all()] == [("mail", "m-1")]
    assert again.version == 2
    assert again.created_at == entry.created_at
    assert list(again.history.values_list("history_type", flat=True)) == ["+", "-", "+"]
    with pytest.raises(ValidationFailed, match="not deleted"):
        entry_undelete(actor=actor, ref=entry.short_id, reason="twice")


def test_undelete_refuses_when_another_entry_took_the_title(actor, project):
    entry = _room(actor)
    entry_delete(actor=actor, ref=entry.pk, reason="gone")
    _room(actor)
    with pytest.raises(AlreadyExists, match="Rename or delete that one first"):
        entry_undelete(actor=actor, ref=entry.short_id, reason="back")


def test_undelete_makes_its_removed_subtopic_again(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", subtopic="ops/old", fields=EntryFields(title="Note", body="x")
    ).entry
    entry_delete(actor=actor, ref=entry.pk, reason="gone")
    Subtopic.objects.filter(path="ops/old").delete()  # as a tidy-up would
    entry_upsert(  # a subtopic made since, the project's latest
        actor=actor, project="acme", subtopic="ops/new", fields=EntryFields(title="N", body="y")
    )
    back = entry_undelete(actor=actor, ref=entry.short_id, reason="back").entry
    assert entry_get(actor, back.short_id).subtopic.path == "ops/old"


@pytest.mark.parametrize("deleted", ["old", "new"])
def test_undelete_links_a_correction_both_ways_again(actor, project, deleted):
    """Deleting either side of a correction clears the other's link to it; bringing it back sets
    that link again, so the old entry still says what replaced it and the new one what it
    replaced."""
    wrong = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Rota", body="Tuesdays")
    ).entry
    corrected = entry_correct(actor=actor, ref=wrong.pk, body="Wednesdays", reason="moved")
    new, old = corrected.entry, corrected.superseded
    gone, other = (old, new) if deleted == "old" else (new, old)
    entry_delete(actor=actor, ref=gone.pk, reason="oops")
    other.refresh_from_db()
    assert (other.supersedes_id, other.superseded_by_id) == (None, None)

    entry_undelete(actor=actor, ref=gone.short_id, reason="oops")
    new, old = Entry.objects.get(pk=new.pk), Entry.objects.get(pk=old.pk)
    assert (new.supersedes_id, old.superseded_by_id) == (old.pk, new.pk)
    assert (new.superseded_by_id, old.supersedes_id) == (None, None)


def test_undeleting_a_correction_leaves_a_newer_correction_of_its_entry_in_place(actor, project):
    """The old entry, reopened, was corrected again while its first correction was deleted: the
    newer correction keeps the link, and the one brought back still says what it replaced."""
    wrong = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Rota", body="Tuesdays")
    ).entry
    first = entry_correct(actor=actor, ref=wrong.pk, body="Wednesdays", reason="moved").entry
    entry_delete(actor=actor, ref=first.pk, reason="oops")
    entry_set_status(actor=actor, ref=wrong.pk, status="open", reason="its correction is gone")
    second = entry_correct(actor=actor, ref=wrong.pk, body="Thursdays", reason="moved").entry
    entry_undelete(actor=actor, ref=first.short_id, reason="keep it")
    assert Entry.objects.get(pk=wrong.pk).superseded_by_id == second.pk
    assert Entry.objects.get(pk=first.pk).supersedes_id == wrong.pk


def test_a_stale_write_names_the_entry_and_counts_the_changes_past_twenty(actor, project):
    """The refusal names the entry and both versions (in the diff's file names too), lists the
    twenty newest changes since the version read, and counts them all only past twenty."""
    entry = _room(actor)
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=BASE.replace("40", "45")))
    for n in range(3, 22):  # v3..v21: twenty changes since version 1 in all
        entry_update(actor=actor, ref=entry.pk, fields=EntryFields(tags=[f"t{n}"]))

    twenty = _seats_50_from_version_1(actor, entry)
    assert [c["version"] for c in twenty.data["changes"]] == list(range(2, 22))
    assert "changes_total" not in twenty.data
    assert twenty.data["entry"] == entry.short_id
    assert twenty.message.startswith(f"Entry {entry.short_id} changed since version 1 (now 21)")
    assert f"--- {entry.short_id}@v1\n+++ {entry.short_id}@v21\n" in twenty.data["diff"]
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(tags=["t22"]))
    more = _seats_50_from_version_1(actor, entry)
    assert [c["version"] for c in more.data["changes"]] == list(range(3, 23))  # the newest
    assert more.data["changes_total"] == 21


def test_a_stale_write_after_a_delete_and_undelete_lists_each_version_once(actor, project):
    """The deletion is no version of its own (its revision repeats the version it deleted): the
    changes since are the update and the undelete, not the deletion beside them."""
    entry = _room(actor)
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body=BASE.replace("40", "45")))
    entry_delete(actor=actor, ref=entry.pk, reason="by mistake")
    entry_undelete(actor=actor, ref=entry.short_id, reason="it was right")
    with pytest.raises(EntryConflict) as caught:
        entry_update(
            actor=actor, ref=entry.pk, fields=EntryFields(body=BASE + "\nmine"), expected_version=1
        )
    changes = caught.value.data["changes"]
    assert [(c["version"], c["reason"]) for c in changes] == [
        (2, "update body"),
        (3, "undelete: it was right"),
    ]
