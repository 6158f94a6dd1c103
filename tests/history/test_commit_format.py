"""A mirror commit's trailers are one typed value with one writer and one reader
(history/commit_format.py). What they render is the mirror's format: existing mirrors must still
verify and restore, so the keys, their order and their values are held here exactly."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from history.commit_format import LOST, ProjectsTrailers, RestoreTrailers, RevisionTrailers
from history.mirror.git import build_message, trailers_of

WHEN = dt.datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=dt.UTC)


class Names:
    def user(self, pk):
        return ("alice", "Alice A.", "alice@example.org") if pk else ("", "", "")

    def project(self, pk):
        return "acme"

    def subtopic(self, pk):
        return "ops/runbooks"


def row(**changes):
    values = dict(history_type="~", history_user_id=7, history_date=WHEN, project_id=1,
                  history_change_reason='Say "why"\nin two lines', subtopic_id=3, id=42,
                  body="# Steps\n", history_token_id=None, history_agent="",
                  history_run="")  # fmt: skip
    return SimpleNamespace(**(values | changes))


def test_a_revision_renders_every_trailer_as_the_mirror_always_wrote_them():
    assert list(RevisionTrailers.of(row(), Names()).render().items()) == [
        ("Cairn-Action", "update"),
        ("Cairn-User", "alice"),
        ("Cairn-Time", "2026-03-04T05:06:07.891011Z"),
        ("Cairn-Reason", '"Say \\"why\\"\\nin two lines"'),
        ("Cairn-Project", "acme"),
        ("Cairn-Subtopic", "ops/runbooks"),
        ("Cairn-Row", "42"),
        ("Cairn-Body-Newline", "yes"),
    ]


def test_what_a_revision_does_not_have_it_does_not_write():
    deleted = row(history_type="-", history_user_id=None, history_change_reason=None,
                  subtopic_id=None)  # fmt: skip
    assert RevisionTrailers.of(deleted, Names()).render() == {
        "Cairn-Action": "delete",
        "Cairn-Time": "2026-03-04T05:06:07.891011Z",
        "Cairn-Project": "acme",
        "Cairn-Row": "42",
    }
    created = RevisionTrailers.of(row(history_type="+", body="no newline"), Names()).render()
    assert created["Cairn-Action"] == "create" and "Cairn-Body-Newline" not in created


def commit(trailers: dict, subject: str = "Say why", summary: str = "update ops/x: 1 line"):
    message = build_message(subject, summary, revision=5, entry_id="ab12cd", trailers=trailers)
    return trailers_of(message), message


UNSAID = {"history_type": "-", "history_user_id": None, "history_change_reason": None,
          "subtopic_id": None}  # fmt: skip


@pytest.mark.parametrize("changes", [{}, UNSAID], ids=["all", "unsaid"])
def test_what_is_written_reads_back_the_same(changes):
    written = RevisionTrailers.of(row(**changes), Names())
    # as history.mirror.render writes it: the reason is the subject
    trailers, message = commit(written.render(), subject=written.reason or "")
    read = RevisionTrailers.parse(
        trailers, message=message, author_email="someone@example.org", author_time=0
    )
    assert read == written


def test_a_commit_from_before_the_trailers_is_read_from_its_summary_author_and_subject():
    trailers, message = commit({}, subject="Fix the typo", summary="delete ops/x: 2 lines changed")
    read = RevisionTrailers.parse(
        trailers, message=message, author_email="bob@users.cairn.invalid", author_time=86400
    )
    assert (read.action, read.user, read.reason) == ("delete", "bob", "Fix the typo")
    assert read.time == dt.datetime(1970, 1, 2, tzinfo=dt.UTC)
    assert (read.project, read.subtopic, read.row, read.body_newline) == ("", "", None, False)
    # a person with an address of their own, a summary naming no action, no subject of its own
    trailers, message = commit({}, subject="", summary="moved things")
    read = RevisionTrailers.parse(
        trailers, message=message, author_email="bob@example.org", author_time=0
    )
    assert (read.action, read.user, read.reason) == ("update", "", None)


def test_a_revision_the_mirror_could_not_render_reads_as_lost():
    trailers, message = commit(LOST, subject="revision 5 of entry ab12cd could not be rendered")
    assert RevisionTrailers.parse(trailers, message=message, author_email="", author_time=0).lost
    trailers, message = commit({}, subject="revision 5 of entry ab12cd could not be rendered (x)")
    assert RevisionTrailers.parse(trailers, message=message, author_email="", author_time=0).lost
    trailers, message = commit(RevisionTrailers.of(row(), Names()).render())
    assert not RevisionTrailers.parse(
        trailers, message=message, author_email="", author_time=0
    ).lost


@pytest.mark.parametrize(
    "bad", [{"Cairn-Reason": "not json"}, {"Cairn-Time": "yesterday"}], ids=["reason", "time"]
)
def test_a_value_no_cairn_wrote_is_refused(bad):
    trailers, message = commit(bad)
    with pytest.raises(ValueError):
        RevisionTrailers.parse(trailers, message=message, author_email="", author_time=0)


def test_a_row_that_is_not_a_number_is_no_row():
    trailers, message = commit({"Cairn-Row": "4x"})
    read = RevisionTrailers.parse(trailers, message=message, author_email="", author_time=0)
    assert read.row is None


def test_the_manifest_and_restore_commits_render_as_they_always_did():
    assert list(
        ProjectsTrailers(".cairn/projects.yaml", WHEN, "alice", "tidy").render().items()
    ) == [
        ("Cairn-Manifest", ".cairn/projects.yaml"),
        ("Cairn-Time", "2026-03-04T05:06:07.891011Z"),
        ("Cairn-User", "alice"),
        ("Cairn-Reason", '"tidy"'),
    ]
    assert ProjectsTrailers("p.yaml", WHEN).render() == {
        "Cairn-Manifest": "p.yaml",
        "Cairn-Time": "2026-03-04T05:06:07.891011Z",
    }
    assert RestoreTrailers(WHEN).render() == {
        "Cairn-Restore": "choices",
        "Cairn-Time": "2026-03-04T05:06:07.891011Z",
    }


def test_a_revision_an_agent_wrote_names_its_token_agent_and_run_last_and_reads_them_back():
    written = row(history_token_id=5, history_agent="claude-code", history_run="r17")
    trailers = RevisionTrailers.of(written, Names()).render()
    assert list(trailers.items())[-3:] == [
        ("Cairn-Token", "5"),
        ("Cairn-Agent", "claude-code"),
        ("Cairn-Run", "r17"),
    ]
    message = build_message("update entry", "update entry", revision=9, entry_id="abc",
                            trailers=trailers)  # fmt: skip
    read = RevisionTrailers.parse(trailers_of(message), message=message,
                                  author_email="alice@example.org", author_time=0)  # fmt: skip
    assert (read.token, read.agent, read.run) == (5, "claude-code", "r17")
