"""Projects and their subtopic trees."""

from typing import Literal

from ninja import Field, Schema

from api.schemas.fields import StrictIn
from knowledge import limits
from knowledge.note_types.lookup import readable_schema_library


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
    schemas_shared: bool | None = Field(
        None, description="Let other projects take their note types' schemas from this one."
    )
    schema_library: str | None = Field(
        None,
        max_length=limits.SLUG,
        description="A shared project whose schemas apply here to note types this project has "
        "none for; empty clears it.",
    )


class ProjectOut(Schema):
    id: int
    slug: str
    name: str
    description: str
    sensitivity: str
    archived: bool
    schema_mode: str = "off"
    schemas_shared: bool = False
    schema_library: str | None = None
    entry_count: int | None = None

    @staticmethod
    def resolve_schema_library(obj, context) -> str | None:
        if not getattr(obj, "schema_library_id", None):
            return None
        library = readable_schema_library(context["request"].auth, obj)
        return library.slug if library else None


class SubtopicIn(StrictIn):
    path: str = Field(..., min_length=1, max_length=limits.PATH, examples=["customer-x/2026-08"])


class SubtopicOut(Schema):
    path: str
    name: str
    depth: int
    entries: int
