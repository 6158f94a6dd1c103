"""Runs: what one token wrote, and undoing one."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.fields import ReasonText, StrictIn


class RunOut(Schema):
    key: int = Field(description="names the run: the number of its first revision you may see")
    user: str
    token: str = Field(description='the token, e.g. "laptop (cairn_ab12cd…)"; "" if none')
    token_id: int | None
    token_revoked: bool
    agent: str
    run_id: str = Field(description="the client's run id (X-Cairn-Run), or the one Cairn gave")
    marked: bool = Field(description="the client marked its writes with this run id")
    is_undo: bool
    started: datetime
    ended: datetime
    revisions: int
    entries: int
    created: int
    changed: int
    deleted: int
    projects: list[str]


class LaterChangeOut(Schema):
    version: int
    action: str
    at: datetime
    by: str
    reason: str


class RunEntryOut(Schema):
    entry_id: int
    short_id: str
    title: str
    path: str
    run_action: Literal["created", "changed", "deleted"]
    did: str = Field(description="what the run changed: a diff from before it to its end")
    action: Literal["restore", "delete", "undelete", "keep", "conflict"] = Field(
        description="what an undo does now"
    )
    note: str
    will: str = Field(description="what an undo would change: a diff from now")
    version: int | None = Field(description="its version now; null while it is deleted")
    conflicts: list[dict]
    later: list[LaterChangeOut] = Field(description="what others changed since (first five)")


class RunDetailOut(Schema):
    run: RunOut
    entries: list[RunEntryOut]
    more: int = Field(description="entries of the run you may see that are not listed")
    undo_refusal: str | None = Field(description="why you may not undo it; null if you may")
    expected: dict[int, int] = Field(
        description="the versions this preview saw (0: deleted): send them with the undo"
    )


class Resolution(StrictIn):
    take: Literal["before"] | None = None
    body: str | None = None


class UndoIn(StrictIn):
    reason: ReasonText = Field(min_length=1)
    expected: dict[int, int] | None = Field(
        None, description="from GET /runs/{key}: refuses the undo if any of them changed since"
    )
    resolutions: dict[int, Resolution] | None = Field(
        None, description='per conflicting entry id: {"take": "before"} or {"body": "…"}'
    )


class UndoOut(Schema):
    run: int
    undo_run: int | None = Field(description="the undo's own run: undo it to put it all back")
    restored: list[str]
    deleted: list[str]
    undeleted: list[str]
    conflicts: list[list[str]] = Field(description="[short id, why it was left as it is]")
    kept: list[list[str]]
    summary: str
