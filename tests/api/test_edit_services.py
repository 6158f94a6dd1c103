"""The agent-facing entry services: partial edits, corrections and verification."""

import pytest

from knowledge.actors import Actor
from knowledge.errors import EntryConflict, Forbidden, ValidationFailed
from knowledge.models import Entry, EntryStatus
from knowledge.services import (
    EntryFields,
    apply_edit,
    entry_correct,
    entry_edit,
    entry_upsert,
    entry_verify,
)

pytestmark = pytest.mark.django_db

DOC = """# Plan

Intro.

## Next

- old step

### Detail

deep

## Notes

```
## not a heading
```
keep
"""


def test_replace_section_keeps_other_sections_and_ignores_code_fences():
    body = apply_edit(DOC, operation="replace_section", section="next", content="- new step")
    assert "- new step" in body and "old step" not in body and "deep" not in body
    assert body.index("## Notes") > body.index("- new step")
    assert "## not a heading\n```\nkeep" in body
    again = apply_edit(DOC, operation="replace_section", section="## Notes", content="x")
    assert again.endswith("## Notes\n\nx") and "keep" not in again


def test_replace_section_names_the_headings_when_missing():
    with pytest.raises(ValidationFailed, match="'Plan', 'Next', 'Detail', 'Notes'"):
        apply_edit(DOC, operation="replace_section", section="not a heading", content="x")


def test_a_section_is_named_by_its_words_whatever_they_start_with():
    body = "# XML notes\n\nold\n\n# X\n\nkept\n"
    assert apply_edit(body, operation="replace_section", section="XML notes", content="new") == (
        "# XML notes\n\nnew\n\n# X\n\nkept\n"
    )
    with pytest.raises(ValidationFailed, match="Its headings: none"):
        apply_edit("no headings here", operation="replace_section", section="Any", content="x")


def test_find_replace_counts_and_append_prepend():
    assert (
        apply_edit("a b a", operation="find_replace", find="a", content="c", expected_count=2)
        == "c b c"
    )
    with pytest.raises(ValidationFailed, match="occurs 2 times"):
        apply_edit("a b a", operation="find_replace", find="a", content="c")
    assert apply_edit("", operation="append", content="x") == "x"
    assert apply_edit("a\n", operation="append", content="b") == "a\n\nb\n"
    assert apply_edit("a", operation="prepend", content="b") == "b\n\na"
    with pytest.raises(ValidationFailed, match="Unknown operation"):
        apply_edit("a", operation="rewrite", content="b")


def test_append_and_prepend_keep_the_content_as_written_but_its_blank_edge_lines():
    """Only the blank lines around the content go (the edit puts one blank line between): its
    indentation, its spaces and its own first and last characters stay, and so does the body."""
    body, code, words = "Notes here\n", "\n    indented()\n", "X-ray: clear. Next step\n"
    assert apply_edit(body, operation="append", content=code) == "Notes here\n\n    indented()\n"
    assert apply_edit(body, operation="append", content=words) == (
        "Notes here\n\nX-ray: clear. Next step\n"
    )
    assert apply_edit(body, operation="prepend", content=code) == "    indented()\n\nNotes here\n"
    assert apply_edit(body, operation="prepend", content=words) == (
        "X-ray: clear. Next step\n\nNotes here\n"
    )
    # A list prepended to a list continues it, even after a line that introduces it.
    assert apply_edit("- old\n", operation="prepend", content="Tasks:\n- new") == (
        "Tasks:\n- new\n- old\n"
    )


def test_append_and_prepend_go_into_a_section_or_fill_an_empty_body():
    body = "# Plan\n\n## Next\n\n- one\n\n## Done\n\n- zero\n"
    assert apply_edit(body, operation="append", section="Next", content="- two") == (
        "# Plan\n\n## Next\n\n- one\n- two\n\n## Done\n\n- zero\n"
    )
    assert apply_edit(body, operation="prepend", section="done", content="- minus") == (
        "# Plan\n\n## Next\n\n- one\n\n## Done\n\n- minus\n- zero\n"
    )
    # An item appended after a list continues it, even after a line that introduces the list.
    assert apply_edit("Tasks:\n- old", operation="append", content="- new") == (
        "Tasks:\n- old\n- new\n"
    )
    assert apply_edit("  \n", operation="prepend", content="x") == "x"


def test_find_replace_may_fill_the_body_to_its_limit_and_shrink_a_full_one(settings):
    settings.CAIRN_MAX_BODY_BYTES = 100
    full = "a" * 90 + "0123456789"
    assert apply_edit(full, operation="find_replace", find="0123456789", content="z") == (
        "a" * 90 + "z"
    )
    body = "x" * 95 + "END"
    assert len(apply_edit(body, operation="find_replace", find="END", content="END!!")) == 100
    with pytest.raises(ValidationFailed, match="longer than the limit of 100 bytes"):
        apply_edit(body, operation="find_replace", find="END", content="END!!!")


def test_entry_edit_is_one_revision_and_checks_the_version(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="T", body="one")
    ).entry
    result = entry_edit(actor=actor, ref=entry.short_id, operation="append", content="two")
    edited = result.entry
    assert result.outcome == "updated"
    assert edited.version == 2 and edited.body == "one\n\ntwo\n"
    assert edited.history.count() == 2
    # A stale append touches no line changed since: it applies on the current version, says so.
    late = entry_edit(
        actor=actor, ref=entry.pk, operation="append", content="x", expected_version=1
    )
    assert late.entry.body == "one\n\ntwo\n\nx\n"
    assert (late.rebased.read_version, late.rebased.version) == (1, 2)
    with pytest.raises(EntryConflict):  # an edit of the text changed since is refused
        entry_edit(actor=actor, ref=entry.pk, operation="find_replace", find="two",
                   content="2", expected_version=1)  # fmt: skip


def test_an_edit_that_changes_nothing_writes_no_revision(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="T", body="one two")
    ).entry
    result = entry_edit(
        actor=actor, ref=entry.pk, operation="find_replace", find="two", content="two"
    )
    assert result.outcome == "unchanged"
    assert result.entry.version == 1 and entry.history.count() == 1


def test_entry_correct_keeps_both_and_links_them(actor, project):
    old = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="a",
        fields=EntryFields(title="Price", body="10", tags=["billing"], status="open"),
    ).entry
    corrected = entry_correct(actor=actor, ref=old.pk, body="12", reason="typo")
    new, old = corrected.entry, corrected.superseded
    old.refresh_from_db()
    assert (new.title, new.body, new.tags, new.status) == ("Price", "12", ["billing"], "open")
    assert new.supersedes_id == old.pk and old.superseded_by_id == new.pk
    assert (
        old.status == EntryStatus.SUPERSEDED and old.title == f"Price (superseded {old.short_id})"
    )
    assert old.body == "10" and old.history.first().history_change_reason == "superseded: typo"
    again = entry_upsert(
        actor=actor, project="acme", subtopic="a", fields=EntryFields(title="price", body="13")
    )
    assert again.entry.pk == new.pk  # the identity now belongs to the correction
    with pytest.raises(ValidationFailed, match="reason"):
        entry_correct(actor=actor, ref=new.pk, body="x", reason=" ")


def test_entry_verify_records_the_person_and_keeps_the_author(agent, actor, project):
    entry = entry_upsert(actor=agent, project="acme", fields=EntryFields(title="T", body="b")).entry
    verified = entry_verify(actor=actor, ref=entry.pk).entry
    assert verified.verified_by == actor.user and verified.generated_by == "agent:test"
    assert verified.version == 1
    entry_edit(actor=actor, ref=entry.pk, operation="append", content="more")
    assert Entry.objects.get(pk=entry.pk).verified_at is None


def test_read_only_actor_cannot_edit_correct_or_verify(actor, read_only_actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="T", body="b")).entry
    for call in (
        lambda: entry_edit(actor=read_only_actor, ref=entry.pk, operation="append", content="x"),
        lambda: entry_correct(actor=read_only_actor, ref=entry.pk, body="x", reason="y"),
        lambda: entry_verify(actor=read_only_actor, ref=entry.pk),
    ):
        with pytest.raises(Forbidden):
            call()
    assert Entry.objects.get(pk=entry.pk).version == 1


def test_anonymous_cannot_verify(project):
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(Forbidden, match="Sign in"):
        entry_verify(actor=Actor(user=AnonymousUser()), ref=1)


def test_an_api_token_cannot_verify_even_with_the_write_scope(user, project):
    entry = entry_upsert(
        actor=Actor.for_user(user), project="acme", fields=EntryFields(title="T", body="b")
    ).entry
    through_token = Actor(user=user, agent="agent:claude-code", token_id=7)
    with pytest.raises(Forbidden, match="Only a person can verify") as refused:
        entry_verify(actor=through_token, ref=entry.pk)
    assert "verify(" not in refused.value.message  # neutral: no tool name
    assert Entry.objects.get(pk=entry.pk).verified_at is None
