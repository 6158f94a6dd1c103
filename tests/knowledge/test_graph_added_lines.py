"""An edit that only adds lines (append, prepend) indexes only those lines (issue 49): the same
graph rows and the same reported facts as parsing the whole body, on many generated bodies."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from knowledge.graph.parsing import MAX_ITEMS, added_lines, fence_after, parse
from knowledge.models import Observation, Relation
from knowledge.reads.write_reports import write_report
from knowledge.services import EntryFields, entry_upsert
from knowledge.services._kernel import graph as kernel_graph
from knowledge.services.entries_edit import apply_edit, entry_edit

LINES = st.sampled_from(
    [
        "",
        "   ",
        "Plain prose about the work.",
        "- [note] the worker restarted #ops",
        "- [note] the worker restarted #ops",  # the same fact twice
        "- [Note]   the worker   restarted #ops (at night)",
        "- [decision] keep the cache (after the outage)",
        "* [idea] split the queue #perf #ops",
        "- [x] a done task, no observation",
        "See [[Alpha]] and [[beta]].",
        "- depends_on [[Alpha]]",
        "- relates_to [[Gamma|the third]]",
        "- [[beta]]",
        "- [[Beta#Heading]]",
        "Inline `- [note] not a fact` and `[[Delta]]`.",
        "```",
        "~~~",
        "    ```",
        "# Heading",
        "- [note] a fact with trailing spaces   ",
        "  - [nested] an indented fact",
    ]
)
BODIES = st.lists(LINES, min_size=0, max_size=25).map("\n".join)
EDITS = st.tuples(st.sampled_from(["append", "prepend"]), st.lists(LINES, min_size=1, max_size=8))
COUNTER = itertools.count()


def rows(entry_id: int) -> dict:
    """The entry's graph rows as a save leaves them (ids and times aside)."""
    return {
        "observations": sorted(
            Observation.objects.filter(entry_id=entry_id).values_list(
                "category",
                "content",
                "tags",
                "context",
                "position",
                "valid_from_version",
                "valid_to_version",
            )
        ),
        "relations": sorted(
            Relation.objects.filter(source_id=entry_id).values_list(
                "relation_type",
                "target_text",
                "target_key",
                "target_id",
                "position",
                "valid_from_version",
                "valid_to_version",
            ),
            key=repr,
        ),
    }


def facts(result) -> tuple:
    f = result.facts
    return (f.observations, f.relations, f.ambiguous)


@pytest.mark.django_db
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(old=BODIES, edit=EDITS)
# A typed relation added to a prose link's target, and the other way round; a fence left open.
@example(old="See [[Alpha]] and [[beta]].", edit=("append", ["- depends_on [[Alpha]]"]))
@example(old="- depends_on [[Alpha]]", edit=("prepend", ["See [[alpha]]", "- [[beta]]"]))
@example(old="a\n```\n- [note] x", edit=("append", ["- [note] y", "```", "- [note] z"]))
def test_added_lines_index_as_the_whole_body_does(agent, project, old, edit):
    operation, lines = edit
    _indexes_as_the_whole_body(agent, old, operation, "\n".join(lines))


def _indexes_as_the_whole_body(agent, old: str, operation: str, content: str) -> None:
    if not content.strip():
        return  # an edit with nothing to add is refused before the graph
    n = next(COUNTER)
    entry_upsert(actor=agent, project="acme", fields=EntryFields(title="Alpha", body="x"))
    edited = entry_upsert(
        actor=agent, project="acme", fields=EntryFields(title=f"Edited {n}", body=old)
    ).entry
    whole = entry_upsert(
        actor=agent, project="acme", fields=EntryFields(title=f"Whole {n}", body=old)
    ).entry
    new = apply_edit(old, operation=operation, content=content)
    by_edit = entry_edit(actor=agent, ref=edited.pk, operation=operation, content=content)
    # The same new body replaced whole: the graph step parses all of it (index_graph).
    by_whole = entry_upsert(
        actor=agent, project="acme", fields=EntryFields(title=f"Whole {n}", body=new)
    )
    assert by_edit.entry.body == by_whole.entry.body == new
    assert rows(edited.pk) == rows(whole.pk)
    if by_whole.facts is None:  # no text change (whitespace only): neither indexed
        assert by_edit.facts is None
    else:
        # What a report lists, read from the top of the body, before anything parses it whole;
        # caps under a body's facts make the top grow.
        for cap in (1, 2, 3, 20):
            assert by_edit.facts.shown(cap) == by_whole.facts.shown(cap), cap
        assert facts(by_edit) == facts(by_whole)


def test_added_lines_finds_appends_and_prepends_only():
    assert added_lines("a\nb  \n\n", "a\nb\n\nc\n") == ("\nc\n", 2, None)
    assert added_lines("a\n```\nb", "a\n```\nb\nc") == ("c", 3, "```")
    assert added_lines("a\nb", "c\n\na\nb") == ("c\n", 0, None)
    assert added_lines("a\nb", "```\n\na\nb") is None  # the fence swallows a, b
    assert added_lines("a\nb", "a\nbc") is None  # the last line changed
    assert added_lines("a\nb", "a\nX\nb") is None  # in the middle
    assert added_lines("a\rb", "a\rb\nc") is None  # CR: the parser's lines differ
    assert added_lines("", "c") is None


def test_a_part_parses_as_in_its_body():
    body = "intro\n```\n- [note] fenced\n```\n- [note] open #a\n~~~\n- [note] in tilde"
    lines = body.split("\n")
    for cut in range(len(lines)):
        head, tail = "\n".join(lines[:cut]), "\n".join(lines[cut:])
        whole = parse(body).observations
        part = parse(tail, first_line=cut, fence=fence_after(head)).observations
        assert [o for o in whole if o.position >= cut] == part


@pytest.mark.django_db
def test_the_whole_body_is_parsed_when_the_caps_may_bind(agent, project, monkeypatch):
    """Past MAX_ITEMS possible observations the old text's count matters: index_graph decides
    for a prepend, and for an append to a text whose facts do not fill the cap (a fact written
    twice counts twice towards it)."""
    calls = []
    real = kernel_graph.index_graph
    monkeypatch.setattr(
        kernel_graph, "index_graph", lambda *a, **kw: calls.append(1) or real(*a, **kw)
    )
    full = "\n".join(f"- [note] fact {i}" for i in range(MAX_ITEMS))
    twice = "\n".join(f"- [note] fact {i // 2}" for i in range(MAX_ITEMS))
    ids = {
        title: entry_upsert(actor=agent, project="acme", fields=EntryFields(title=title, body=body))
        .entry.pk
        for title, body in (("Full", full), ("Prepended", full), ("Twice", twice))
    }  # fmt: skip
    calls.clear()
    entry_edit(actor=agent, ref=ids["Full"], operation="append", content="- [note] one more")
    assert calls == []  # the old facts fill the cap: the added line adds none
    entry_edit(actor=agent, ref=ids["Prepended"], operation="prepend", content="- [note] one")
    assert calls == [1]
    entry_edit(actor=agent, ref=ids["Twice"], operation="append", content="- [note] one more")
    assert calls == [1, 1]


@pytest.mark.django_db
def test_an_append_past_the_cap_indexes_as_the_whole_body_does(agent, project):
    """A log past MAX_ITEMS observations: an append adds no observation (the whole body's parse
    stops before it), and its relations still count, typed ones closing a prose link's."""
    old = "\n".join(
        ["# Log", "See [[Alpha]] and [[Beta]].", "- depends_on [[Gamma]]"]
        + [f"- [note] fact {i} #log" for i in range(MAX_ITEMS + 5)]
    )
    added = ["- [note] past the cap", "- relates_to [[Beta]]", "See [[Delta]] and [[gamma]].",
             "- [note] fact 3 #log", "- [[Epsilon]]"]  # fmt: skip
    _indexes_as_the_whole_body(agent, old, "append", "\n".join(added))


@pytest.mark.django_db
def test_the_report_of_an_append_to_a_long_log_parses_only_its_top(agent, project, monkeypatch):
    """Listing twenty facts and counting them needs no parse of the whole log (5 ms for 400
    observations, after every append)."""
    old = "# Log\n\n" + "\n".join(f"- [done] step {i} #log" for i in range(400))
    log = entry_upsert(actor=agent, project="acme", fields=EntryFields(title="Log", body=old))
    parsed: list[int] = []
    real = kernel_graph.parse
    monkeypatch.setattr(kernel_graph, "parse", lambda text, **kw: parsed.append(
        text.count("\n") + 1) or real(text, **kw))  # fmt: skip
    result = entry_edit(
        actor=agent, ref=log.entry.pk, operation="append", content="- [decision] y #z"
    )
    report = write_report(agent, result)
    assert report["observations_counted"] == {"total": 401, "new": 1}
    assert report["observations"][0]["content"] == "step 0"
    assert [o["content"] for o in report["observations"] if o["new"]] == ["y"]
    assert len(report["observations"]) == 20
    assert max(parsed) < 100, parsed  # the added line, then the top of the log
