"""Revisions, diffs and revert."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.fields import ReasonText, StrictIn


class RevisionOut(Schema):
    revision: int
    version: int
    action: Literal["created", "changed", "deleted"]
    at: datetime
    user: str | None
    generated_by: str
    reason: str
    title: str
    git_commit: str | None = Field(None, description="null until the git mirror commits it")
    entry: str | None = Field(None, description="the entry this revision is of (short id)")
    correction: str | None = Field(
        None, description='another entry\'s revision: "corrected" or "corrected by" this one'
    )


class DiffOut(Schema):
    entry: str
    from_entry: str | None = Field(None, description="set when diffing against a corrected entry")
    from_version: int
    to_version: int
    diff: str = Field(description="unified diff; empty when the versions are the same")


class RevertIn(StrictIn):
    to_version: int = Field(ge=1)
    expected_version: int | None = None
    reason: ReasonText = ""
