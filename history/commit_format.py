"""A mirror commit's trailers: one typed value per kind of commit, one writer (`render`), one
reader (`parse`).

The trailers are part of the mirror's format: a restore reads a revision's who, when, why and
where back from them, and `mirror verify` compares commits written years apart. So `render`
gives exactly the keys, values and order the mirror has always written (tests/history/
test_commit_format.py holds them), and `parse` also reads commits from before some trailers
existed, falling back on what those commits say elsewhere (their summary, author and subject).
`Cairn-Revision` and `Cairn-Entry` are written by history.mirror.git.build_message.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Literal

from history.file_format import iso_time, one_line_json, parse_time

Action = Literal["create", "update", "delete"]
ACTIONS: dict[str, Action] = {"+": "create", "~": "update", "-": "delete"}  # by history_type
USERS_DOMAIN = "@users.cairn.invalid"  # the author email of a person with no address
LOST = {"Cairn-Lost": "not rendered"}  # a revision the mirror could not render (a note commit)
_NOT_RENDERED = "could not be rendered"  # what such a commit's subject said before LOST
REASON_LENGTH = 100  # as a write records a reason


@dataclass(frozen=True)
class RevisionTrailers:
    """What an entry revision's commit holds beyond its file: the action, who (username), when
    (to the microsecond), why (JSON: any text on one line), the place as slugs, the entry's
    numeric id, whether the body ends with a newline (the file always does), and the token,
    agent label and run that wrote it (knowledge.runs: a restored history keeps its runs)."""

    action: Action
    user: str
    time: dt.datetime
    reason: str | None
    project: str
    subtopic: str = ""
    row: int | None = None
    body_newline: bool = False
    token: int | None = None
    agent: str = ""
    run: str = ""
    lost: bool = False  # read only: a note commit, no file (LOST)

    @classmethod
    def of(cls, row, names) -> RevisionTrailers:
        """A history row's trailers (names: history.mirror.render.Names)."""
        return cls(
            action=ACTIONS.get(row.history_type, "update"),
            user=names.user(row.history_user_id)[0] or "",
            time=row.history_date,
            reason=row.history_change_reason,
            project=names.project(row.project_id),
            subtopic=names.subtopic(row.subtopic_id) if row.subtopic_id else "",
            row=row.id,
            body_newline=row.history_type != "-" and (row.body or "").endswith("\n"),
            token=row.history_token_id,
            agent=row.history_agent or "",
            run=row.history_run or "",
        )

    def render(self) -> dict[str, str]:
        out = {"Cairn-Action": self.action}
        if self.user:
            out["Cairn-User"] = self.user
        out["Cairn-Time"] = iso_time(self.time)
        if self.reason is not None:
            out["Cairn-Reason"] = one_line_json(self.reason)
        out["Cairn-Project"] = self.project
        if self.subtopic:
            out["Cairn-Subtopic"] = self.subtopic
        if self.row is not None:
            out["Cairn-Row"] = str(self.row)
        if self.body_newline:
            out["Cairn-Body-Newline"] = "yes"
        if self.token is not None:
            out["Cairn-Token"] = str(self.token)
        if self.agent:
            out["Cairn-Agent"] = self.agent
        if self.run:
            out["Cairn-Run"] = self.run
        return out

    @classmethod
    def parse(
        cls, trailers: dict[str, str], *, message: str, author_email: str, author_time: int
    ) -> RevisionTrailers:
        """The trailers of a revision's commit (history.mirror.git.trailers_of) with its
        message and author. Raises ValueError on a value no Cairn wrote (a reason that is not
        JSON, a time that is not one). Project and subtopic are "" when the commit does not
        name them: the file's path says."""
        lines = message.splitlines()
        subject = lines[0] if lines else ""
        has_summary = len(lines) > 2 and lines[2] and not lines[2].startswith("Cairn-")
        summary = lines[2] if has_summary else subject
        action = trailers.get("Cairn-Action", "")
        if action not in ACTIONS.values():  # a commit from before the trailers: its summary says
            first = summary.split(" ", 1)[0]
            action = first if first in ACTIONS.values() else "update"
        user = trailers.get("Cairn-User") or (
            author_email.removesuffix(USERS_DOMAIN) if author_email.endswith(USERS_DOMAIN) else ""
        )
        if "Cairn-Reason" in trailers:
            reason = json.loads(trailers["Cairn-Reason"])
            reason = None if reason is None else str(reason)[:REASON_LENGTH]
        else:
            reason = subject[:REASON_LENGTH] if has_summary else None
        row = trailers.get("Cairn-Row", "")
        return cls(
            action=action,
            user=user,
            time=parse_time(trailers.get("Cairn-Time"))
            or dt.datetime.fromtimestamp(author_time, dt.UTC),
            reason=reason,
            project=trailers.get("Cairn-Project", ""),
            subtopic=trailers.get("Cairn-Subtopic", ""),
            row=int(row) if row.isdigit() else None,
            body_newline=trailers.get("Cairn-Body-Newline") == "yes",
            token=int(token) if (token := trailers.get("Cairn-Token", "")).isdigit() else None,
            agent=trailers.get("Cairn-Agent", "")[:120],
            run=trailers.get("Cairn-Run", "")[:80],
            lost="Cairn-Lost" in trailers
            or (_NOT_RENDERED in subject and "Cairn-Action" not in trailers),
        )


@dataclass(frozen=True)
class ProjectsTrailers:
    """The projects manifest's commit (history/mirror/manifest.py): its path, when, who, why."""

    path: str
    time: dt.datetime
    user: str = ""
    reason: str = ""

    def render(self) -> dict[str, str]:
        out = {"Cairn-Manifest": self.path, "Cairn-Time": iso_time(self.time)}
        if self.user:
            out["Cairn-User"] = self.user
        if self.reason:
            out["Cairn-Reason"] = one_line_json(self.reason)
        return out


@dataclass(frozen=True)
class RestoreTrailers:
    """The commit of what a `mirror restore` chose otherwise than the mirror said."""

    time: dt.datetime

    def render(self) -> dict[str, str]:
        return {"Cairn-Restore": "choices", "Cairn-Time": iso_time(self.time)}
