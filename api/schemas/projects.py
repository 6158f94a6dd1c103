"""Projects and their subtopic trees."""

from typing import Literal

from ninja import Field, Schema

from api.schemas.fields import StrictIn
from knowledge import limits


class ProjectIn(StrictIn):
    slug: str = Field(..., max_length=limits.SLUG, examples=["customer-x"])
    name: str = Field("", max_length=limits.NAME)
    description: str = Field("", max_length=limits.DESCRIPTION)
    sensitivity: Literal["public", "internal", "confidential", "restricted"] = "internal"


class ProjectPatch(StrictIn):
    name: str | None = Field(None, max_length=limits.NAME)
    description: str | None = Field(None, max_length=limits.DESCRIPTION)
    sensitivity: Literal["public", "internal", "confidential", "restricted"] | None = None
    archived: bool | None = None
    schema_mode: Literal["off", "warn", "strict"] | None = None


class ProjectOut(Schema):
    id: int
    slug: str
    name: str
    description: str
    sensitivity: str
    archived: bool
    schema_mode: str = "off"
    entry_count: int | None = None


class SubtopicIn(StrictIn):
    path: str = Field(..., min_length=1, max_length=limits.PATH, examples=["customer-x/2026-08"])


class SubtopicOut(Schema):
    path: str
    name: str
    depth: int
    entries: int
