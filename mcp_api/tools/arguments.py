"""What an agent may send: the base of every tool's argument model and the argument types
several tools share. Field descriptions are documentation the agent reads: short, concrete.

Every string argument has a maximum length (knowledge.limits): a long one is refused before
any work, with the argument and the limit named (mcp_api.app words the error). Bodies (and
edit's content and find) keep their byte limit, CAIRN_MAX_BODY_BYTES, which the services check
before any work, in bytes as the setting says.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import limits


class ToolArguments(BaseModel):
    """One tool's arguments, checked before the handler runs. Fields are named as the core
    names them; where the published name differs, it is the field's alias."""

    # Unknown arguments are refused (app.CairnMCP names the valid ones first); an alias is the
    # published name, the field name the core's.
    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True)


Project = Annotated[
    str, Field(max_length=limits.PROJECT, description="Project slug or name (case-insensitive).")
]
OptProject = Annotated[
    str | None, Field(max_length=limits.PROJECT, description="Project slug or name; omit for all.")
]
Subtopic = Annotated[
    str | None,
    Field(max_length=limits.PATH, description="Subtopic path, 'a/b' or 'a > b'; created on write."),
]
_Item = Annotated[str, Field(max_length=limits.SHORT)]
StrList = Annotated[
    Annotated[list[_Item], Field(max_length=limits.ITEMS)]
    | Annotated[str, Field(max_length=limits.TAGS)]
    | None,
    Field(description="A list or 'a, b'."),
]
EntryRef = Annotated[
    int | Annotated[str, Field(max_length=limits.REF)],
    Field(description="Entry id (42), short id, project/subtopic/title or memory:// address."),
]
Status = Annotated[
    Literal["active", "open", "resolved", "superseded", "archived"] | None,
    Field(description="open = needs follow-up; resolved when done."),
]
Kind = Annotated[str, Field(max_length=limits.KIND)]
Version = Annotated[
    int | None, Field(description="Fail with a conflict if the entry's version differs.")
]
Reason = Annotated[
    str, Field(max_length=limits.REASON, description="Why (kept in the entry's history).")
]
Title = Annotated[str, Field(max_length=limits.TITLE)]
Short = Annotated[str, Field(max_length=limits.SHORT)]
Since = Annotated[
    Short | None, Field(description="Changed since: ISO date or age like '7d', '2 weeks'.")
]
Body = str
_SourceKey = Annotated[str, Field(max_length=max(map(len, limits.SOURCE_FIELDS)))]
Sources = Annotated[
    list[dict[_SourceKey, Annotated[str, Field(max_length=limits.URL)]]],
    Field(max_length=limits.ITEMS),
]
