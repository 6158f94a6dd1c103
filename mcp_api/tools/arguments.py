"""What an agent may send: the base of every tool's argument model and the argument types
several tools share. Field descriptions are documentation the agent reads: short, concrete.

Every string argument has a maximum length (knowledge.limits): a long one is refused before
any work, with the argument and the limit named (mcp_api.app words the error). Bodies (and
edit's content and find) keep their byte limit, CAIRN_MAX_BODY_BYTES, which the services check
before any work, in bytes as the setting says.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from knowledge import limits


class ToolArguments(BaseModel):
    """One tool's arguments, checked before the handler runs. Fields are named as the core
    names them; where the published name differs, it is the field's alias."""

    # Unknown arguments are refused (app.CairnMCP names the valid ones first); an alias is the
    # published name, the field name the core's.
    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True)


# What an argument of a shared type means (a project is its slug or name; an entry reference
# is an id, short id, path or memory:// address; a list may be 'a, b'; an age is '7d') is said
# once, in the server's instructions (mcp_api.app.INSTRUCTIONS), not in every tool's schema:
# tools/list is read into every agent's context.
Project = Annotated[str, Field(max_length=limits.PROJECT)]
OptProject = Annotated[str | None, Field(max_length=limits.PROJECT)]
Subtopic = Annotated[str | None, Field(max_length=limits.PATH)]
_Item = Annotated[str, Field(max_length=limits.SHORT)]
# Listed as an array of strings, the form to send; 'a, b' (one string) is accepted too.
StrList = Annotated[
    Annotated[list[_Item], Field(max_length=limits.ITEMS)]
    | Annotated[str, Field(max_length=limits.TAGS)]
    | None,
    WithJsonSchema({"type": "array", "items": {"type": "string"}}),
]
EntryRef = int | Annotated[str, Field(max_length=limits.REF)]
Status = Literal["active", "open", "resolved", "superseded", "archived"] | None
Kind = Annotated[str, Field(max_length=limits.KIND)]
Version = Annotated[int | None, Field(description="Refused if the entry is at another version.")]
Reason = Annotated[str, Field(max_length=limits.REASON, description="Why (kept in history).")]
Title = Annotated[str, Field(max_length=limits.TITLE)]
Short = Annotated[str, Field(max_length=limits.SHORT)]
Since = Annotated[Short | None, Field(description="Changed since this date or age.")]
Body = str
_SourceKey = Annotated[str, Field(max_length=max(map(len, limits.SOURCE_FIELDS)))]
Sources = Annotated[
    list[dict[_SourceKey, Annotated[str, Field(max_length=limits.URL)]]],
    Field(max_length=limits.ITEMS),
]
