"""Every input is bounded in the services: each limit refuses with a message naming it and
loses nothing (the entry keeps its last good version)."""

import pytest

from knowledge.errors import ValidationFailed
from knowledge.models import Entry
from knowledge.reads.listings import entry_list
from knowledge.search import SearchFilters
from knowledge.selectors import entry_get
from knowledge.services import EntryFields, entry_edit, entry_upsert
from knowledge.services._kernel import check_limits

pytestmark = pytest.mark.django_db


def _nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_body_over_the_limit_is_refused_and_the_entry_kept(actor, project, settings):
    settings.CAIRN_MAX_BODY_BYTES = 1000
    saved = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Doc", body="short")
    ).entry
    with pytest.raises(ValidationFailed, match="CAIRN_MAX_BODY_BYTES") as exc:
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Doc", body="x" * 1001))
    assert exc.value.data["field"] == "body"
    assert Entry.objects.get(pk=saved.pk).body == "short"


def test_body_limit_counts_utf8_bytes(actor, project, settings):
    settings.CAIRN_MAX_BODY_BYTES = 1000
    entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Ok", body="é" * 500)
    )  # 1000 bytes
    with pytest.raises(ValidationFailed, match="1,000 bytes"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Big", body="é" * 501))


def test_default_body_limit_is_one_megabyte(actor, project):
    with pytest.raises(ValidationFailed, match="1,000,000 bytes"):
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title="Huge", body="word " * 700_000)
        )


def test_overlong_line_is_refused(actor, project, settings):
    settings.CAIRN_MAX_LINE_CHARS = 100
    entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Lines", body=("y" * 100 + "\n") * 5)
    )
    with pytest.raises(ValidationFailed, match="A line of the body"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Line", body="y" * 101))


def test_deep_metadata_is_refused(actor, project):
    entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Ten", body="b", metadata=_nested(10))
    )
    with pytest.raises(ValidationFailed, match="deeper than 10 levels"):
        entry_upsert(
            actor=actor,
            project="acme",
            fields=EntryFields(title="Eleven", body="b", metadata=_nested(11)),
        )


def test_very_deep_metadata_is_refused_without_recursion(actor, project):
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValidationFailed, match="metadata nests deeper"):
        entry_upsert(
            actor=actor,
            project="acme",
            fields=EntryFields(title="Deep", body="b", metadata={"x": deep}),
        )


def test_large_metadata_is_refused(actor, project):
    with pytest.raises(ValidationFailed, match="65,536 bytes"):
        entry_upsert(
            actor=actor,
            project="acme",
            fields=EntryFields(title="Meta", body="b", metadata={"x": "m" * 70_000}),
        )


def test_tag_and_source_counts_are_bounded(actor, project):
    with pytest.raises(ValidationFailed, match="at most 50 tags"):
        entry_upsert(
            actor=actor,
            project="acme",
            fields=EntryFields(title="T", body="b", tags=[f"t{i}" for i in range(51)]),
        )
    sources = [{"kind": "ref", "external_id": str(i)} for i in range(51)]
    with pytest.raises(ValidationFailed, match="At most 50 sources"):
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title="S", body="b"), sources=sources
        )
    assert not Entry.objects.filter(title__in=["T", "S"]).exists()


def test_an_edit_that_would_grow_past_the_limit_is_refused_before_building_it(
    actor, project, settings
):
    settings.CAIRN_MAX_BODY_BYTES = 10_000
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="E", body="a " * 1000)
    ).entry
    with pytest.raises(ValidationFailed, match="Replacing 1000 occurrences"):
        entry_edit(
            actor=actor,
            ref=entry.pk,
            operation="find_replace",
            find="a",
            content="b" * 100,
            expected_count=1000,
        )
    with pytest.raises(ValidationFailed, match="The content is over"):
        entry_edit(actor=actor, ref=entry.pk, operation="append", content="c" * 10_001)
    assert Entry.objects.get(pk=entry.pk).version == 1


def test_replace_section_works_past_a_hostile_heading(actor, project):
    body = "# " + " " * 3000 + "x \x0b\n\ntext\n\n## Next\n\nold\n"
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="H", body=body)
    ).entry
    result = entry_edit(
        actor=actor, ref=entry.pk, operation="replace_section", section="Next", content="new"
    )
    assert result.entry.body.endswith("## Next\n\nnew")


LONG_PATH = "p/a" + " " * 200_000 + "b/x"
TB = EntryFields(title="T", body="b")


@pytest.mark.parametrize(
    ("call", "field", "limit"),
    [
        (lambda a: entry_get(a, LONG_PATH), "entry reference", "1,000"),
        (lambda a: entry_list(a, SearchFilters(project="p" * 201)), "project", "200"),
        (lambda a: entry_upsert(actor=a, project="acme", subtopic=LONG_PATH, fields=TB),
         "subtopic", "500"),
        (lambda a: entry_upsert(actor=a, project="acme", fields=EntryFields(title="t" * 301)),
         "title", "300"),
        (lambda a: entry_upsert(actor=a, project="acme", fields=TB, reason="r" * 1001),
         "reason", "1,000"),
        (lambda a: entry_upsert(actor=a, project="acme", fields=TB,
                                sources=[{"kind": "url", "external_id": "x", "url": "u" * 2001}]),
         "sources.url", "2,000"),
    ],
)  # fmt: skip
def test_the_services_refuse_overlong_strings_themselves(actor, project, call, field, limit):
    """What a surface lets through (the admin, a command, a future tool) is still bounded."""
    with pytest.raises(ValidationFailed, match=f"the limit is {limit}") as exc:
        call(actor)
    assert exc.value.data["field"] == field
    assert not Entry.objects.filter(title="T").exists()


def test_tags_sent_as_one_string_are_counted_once_split(actor, project, settings):
    settings.CAIRN_MAX_TAGS = 3
    with pytest.raises(ValidationFailed, match="at most 3 tags"):
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title="T", body="b", tags="a,b,c,d")
        )
    assert not Entry.objects.filter(title="T").exists()


def test_an_edit_that_joins_lines_past_the_line_limit_is_refused(actor, project, settings):
    settings.CAIRN_MAX_LINE_CHARS = 100
    body = "\n".join(["x" * 40] * 5) + "\n"
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="E", body=body))
    with pytest.raises(ValidationFailed) as refused:
        entry_edit(
            actor=actor,
            ref=entry.entry.pk,
            operation="find_replace",
            find="\n",
            content=" ",
            expected_count=5,
        )
    assert refused.value.data["field"] == "body"
    assert Entry.objects.get(pk=entry.entry.pk).body == body


def test_a_revision_from_a_mirror_is_held_to_the_same_limits(settings):
    """What a write makes but no writer sent (a revision restored from a mirror anyone who can
    push may have written) is checked by the kernel itself."""
    settings.CAIRN_MAX_TAGS, settings.CAIRN_MAX_LINE_CHARS = 3, 100
    check_limits(Entry(body="short", metadata={"a": 1}, tags=["a"]))
    for entry, field in [
        (Entry(body="x" * 101, metadata={}, tags=[]), "body"),
        (Entry(body="", metadata=_nested(100), tags=[]), "metadata"),
        (Entry(body="", metadata={"a": "x" * 2_000_000}, tags=[]), "metadata"),
        (Entry(body="", metadata={}, tags=["a", "b", "c", "d"]), "tags"),
    ]:
        with pytest.raises(ValidationFailed) as refused:
            check_limits(entry)
        assert refused.value.data["field"] == field


def test_a_value_exactly_at_a_limit_is_accepted(actor, project, settings):
    settings.CAIRN_MAX_BODY_BYTES = 1000
    title = "t" * 300  # limits.TITLE
    saved = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title=title, body="x" * 1000)
    )
    assert (len(saved.entry.title), len(saved.entry.body)) == (300, 1000)
