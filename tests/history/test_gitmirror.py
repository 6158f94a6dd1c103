"""The git adapter alone: names, rendering, commits. No database."""

import datetime as dt
import unicodedata

import pytest

from history.file_format import (
    RevisionFile,
    alternate_path,
    entry_path,
    parse_markdown,
    safe_segment,
)
from history.mirror.git import Mirror, Person

WHEN = dt.datetime(2026, 8, 1, 12, 30, tzinfo=dt.UTC)


def state(**kw) -> RevisionFile:
    base = dict(
        id="k7m2x9qa",
        project="acme",
        subtopic="decisions",
        slug="pricing",
        title="Pricing",
        body="We charge per seat.\n",
        created=WHEN,
        updated=WHEN,
    )
    return RevisionFile(**(base | kw))


@pytest.mark.parametrize(
    "title",
    [
        "../../etc/passwd",
        "a/b\\c",
        "..",
        ".",
        "con",
        "nul",
        "tab\there\nnewline\x00nul\x1bescape",
        "é" * 400,
        "漢字" * 200,
        "👍" * 100,
        "   ",
        "-._-",
    ],
)
def test_hostile_names_become_one_safe_segment(title):
    name = safe_segment(title)
    assert name and "/" not in name and "\\" not in name
    assert name not in {".", ".."} and not name.startswith(".")
    assert all(unicodedata.category(ch)[0] != "C" for ch in name)
    assert len(name.encode()) <= 200
    assert name.lower() not in {"con", "nul"}


def test_unicode_forms_and_case_give_the_same_name():
    composed, decomposed = "Caf\u00e9 Notes", "Cafe\u0301 Notes"
    assert safe_segment(composed) == safe_segment(decomposed) == safe_segment("CAFÉ NOTES")


def test_entry_path_layout_and_alternate():
    path = entry_path("acme", "customer-x/2026-08", "incident")
    assert path == "acme/customer-x/2026-08/incident.md"
    assert alternate_path(path, "k7m2x9qa") == "acme/customer-x/2026-08/incident-k7m2x9qa.md"
    assert entry_path("acme", "", "x") == "acme/x.md"


def test_rendering_is_deterministic_and_parses_back():
    s = state(
        tags=("b", "a"),
        metadata={"z": 1, "a": {"y": [1, 2], "b": "é"}},
        sources=({"kind": "url", "external_id": "https://x"},),
    )
    one = s.render()
    same = RevisionFile.render(
        state(
            tags=("b", "a"),
            metadata={"a": {"b": "é", "y": [1, 2]}, "z": 1},
            sources=({"external_id": "https://x", "kind": "url"},),
        )
    )
    assert one == same
    front, body = parse_markdown(one)
    assert body == "We charge per seat."
    assert front["id"] == "k7m2x9qa"
    assert front["tags"] == ["b", "a"]
    assert front["created"] == "2026-08-01T12:30:00.000000Z"
    assert list(front)[:5] == ["id", "title", "kind", "status", "tags"]
    assert "verified_by" not in front  # empty optional keys are left out


@pytest.mark.parametrize("body", ["We charge per seat.\n", "No newline at the end", "", "\n\n"])
def test_render_parse_render_is_byte_identical(body):
    s = state(
        body=body,
        tags=("b", "a"),
        version=3,
        generated_by="agent:claude",
        verified_by="alice",
        verified_at=WHEN,
        supersedes="a2b3c4d5",
        superseded_by="e6f7g8h9",
        searchable=False,
        metadata={"z": 1, "a": {"y": [1, 2], "b": "é"}, "when": "2026-01-01"},
        sources=({"kind": "url", "external_id": "https://x", "title": "X"},),
    )
    raw = s.render()
    back = RevisionFile.parse(
        raw, body_newline=body.endswith("\n"), project="acme", subtopic="decisions", slug="pricing"
    )
    assert back.render() == raw
    assert back == s


def test_the_file_value_gives_the_record_and_the_entry_fields():
    s = state(tags=("a",), verified_by="", supersedes="a2b3c4d5")
    record = s.record()
    assert record["path"] == "acme/decisions/pricing.md"
    assert record["tags"] == ["a"] and record["created"] == WHEN
    assert record["verified_by"] is None and record["supersedes"] == "a2b3c4d5"
    fields = s.entry_fields()
    assert (fields.title, fields.body, fields.tags, fields.kind) == (
        "Pricing", "We charge per seat.\n", ["a"], "note",
    )  # fmt: skip


def test_a_file_cairn_did_not_write_is_refused_by_the_reader():
    with pytest.raises(KeyError):
        RevisionFile.parse(b"---\nid: x\n---\nno title\n")
    with pytest.raises(ValueError):
        RevisionFile.parse(b"---\ntitle: t\nversion: many\n---\n")


def test_a_title_that_looks_like_yaml_survives():
    s = state(title="key: value # not a comment\n---", body="---\nnot frontmatter\n---\n")
    front, body = parse_markdown(s.render())
    assert front["title"] == s.title
    assert body + "\n" == s.body


def test_commits_chain_and_publish_moves_the_branch(tmp_path):
    m = Mirror(tmp_path / "m.git")
    author, cairn = Person("Alice", "alice@example.com"), Person("Cairn", "cairn@localhost")
    changes, lines = m.apply(state(), entry_id="k7m2x9qa")
    assert lines > 0
    sha = m.commit(changes, author=author, committer=cairn, message="create\n", when=WHEN)
    assert m.head() is None  # not published yet
    m.publish()
    reopened = Mirror(tmp_path / "m.git")
    assert str(reopened.head().id) == sha
    assert reopened.head().author.name == "Alice"
    assert reopened.head().commit_time == int(WHEN.timestamp())
    assert reopened.files() == {"acme/decisions/pricing.md": state().render()}
    moved = state(subtopic="archive", version=2)
    changes, _ = reopened.apply(moved, entry_id="k7m2x9qa")
    assert changes == {
        "acme/archive/pricing.md": moved.render(),
        "acme/decisions/pricing.md": None,
    }
    reopened.commit(changes, author=author, committer=cairn, message="move\n", when=WHEN)
    reopened.publish()
    assert list(reopened.files()) == ["acme/archive/pricing.md"]


def test_a_taken_name_gets_the_entry_id(tmp_path):
    m = Mirror(tmp_path / "m.git")
    p = Person("A", "a@x")
    first = state()
    second = state(id="zzzzzzzz", title="Pricing!", body="other")
    for s in (first, second):
        changes, _ = m.apply(s, entry_id=s.id)
        m.commit(changes, author=p, committer=p, message="x\n", when=WHEN)
    assert sorted(m.files()) == ["acme/decisions/pricing-zzzzzzzz.md", "acme/decisions/pricing.md"]
    # Deleting the first leaves the second where it is: no rename noise.
    changes, _ = m.apply(None, entry_id=first.id)
    m.commit(changes, author=p, committer=p, message="x\n", when=WHEN)
    changes, _ = m.apply(state(id="zzzzzzzz", title="Pricing!", body="v2"), entry_id="zzzzzzzz")
    m.commit(changes, author=p, committer=p, message="x\n", when=WHEN)
    assert list(m.files()) == ["acme/decisions/pricing-zzzzzzzz.md"]


def test_libyaml_and_pure_python_yaml_render_the_same_bytes(monkeypatch):
    import yaml

    from history import file_format as files

    hostile = state(
        title="Ünïcode 漢字 key: value # x\n---",
        tags=("yes", "null", "1e3", "-x"),
        metadata={"z": "\u2028x\x85y\ttab", "on": "off", "n": None, "f": 1.5, "l": [{"a": "b"}]},
        generated_by="agent:'quoted\"",
    )
    assert files._DUMPER is yaml.CSafeDumper  # the pinned PyYAML wheel ships libyaml
    fast = hostile.render()
    monkeypatch.setattr(files, "_DUMPER", yaml.SafeDumper)
    assert hostile.render() == fast
    assert parse_markdown(fast)[0]["metadata"]["z"] == "\u2028x\x85y\ttab"
