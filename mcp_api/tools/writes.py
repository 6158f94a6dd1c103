"""Writing entries: upsert by identity, edit part of a body, update fields, correct, delete.
Each argument model hands the services an EntryFields (or the edit's own arguments)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from knowledge import inputs
from knowledge.actors import Actor
from knowledge.reads.write_reports import write_report
from knowledge.selectors.supersession import unseen_links
from knowledge.services import (
    EntryFields,
    entry_correct,
    entry_delete,
    entry_edit,
    entry_undelete,
    entry_update,
    entry_upsert,
)
from knowledge.write_result import WriteResult
from mcp_api import render
from mcp_api.tools.arguments import (
    Body,
    EntryRef,
    Kind,
    Project,
    Reason,
    Short,
    Sources,
    Status,
    StrList,
    Subtopic,
    Title,
    Version,
)
from mcp_api.tools.arguments import ToolArguments as Arguments
from mcp_api.tools.registry import DESTRUCTIVE, IDEMPOTENT_WRITE, WRITE, Tool


class UpsertArguments(Arguments):
    project: Project
    title: Annotated[Title, Field(description="Identity within the subtopic (any case).")]
    body: Annotated[Body, Field(description="The whole Markdown body.")]
    subtopic: Subtopic = None
    kind: Annotated[
        Kind | None, Field(description="note, decision, fact, person, session, task, …")
    ] = None
    tags: StrList = None
    status: Status = None
    sources: Annotated[
        Sources | None,
        Field(description='Where it came from: [{"kind": "email", "external_id": "…"}].'),
    ] = None
    expected_version: Version = None
    reason: Reason = ""

    def fields(self) -> EntryFields:
        """Tags as a list ('a, b' or '["a", "b"]' read as one); empty ones keep the old."""
        return EntryFields.pick({**dict(self), "tags": inputs.str_list(self.tags)})


def upsert(actor: Actor, args: UpsertArguments):
    """Create or replace the entry at project + subtopic + title (kind, tags, status left out
    are kept); the answer says what changed. Part of a body: edit; fields only: update."""
    result = entry_upsert(
        actor=actor,
        project=args.project,
        subtopic=args.subtopic or None,
        fields=args.fields(),
        sources=args.sources,
        expected_version=args.expected_version,
        reason=args.reason,
    )
    return _saved(actor, result)


class EditArguments(Arguments):
    id: EntryRef
    operation: Literal["append", "prepend", "find_replace", "replace_section"]
    content: Annotated[
        Body,
        Field(description="Text to add, or the replacement."),
    ]
    find: Annotated[Body | None, Field(description="find_replace: exact text.")] = None
    section: Annotated[
        Short | None,
        Field(description="A heading's text."),
    ] = None
    expected_count: Annotated[
        int | None, Field(description="find_replace: matches expected (1).")
    ] = None
    expected_version: Version = None
    reason: Reason = ""


def edit(actor: Actor, args: EditArguments):
    """Change part of a body: append or prepend (under section if given), find_replace, or
    replace_section (the text under a heading)."""
    return _saved(actor, entry_edit(actor=actor, ref=args.id, **args.model_dump(exclude={"id"})))


class UpdateArguments(Arguments):
    id: EntryRef
    title: Annotated[Title | None, Field(description="New title.")] = None
    kind: Kind | None = None
    tags: Annotated[StrList, Field(description="Replace the tags.")] = None
    status: Status = None
    subtopic: Annotated[Subtopic, Field(description="Move here ('' = root).")] = None
    expected_version: Version = None
    reason: Reason = ""

    def fields(self) -> EntryFields:
        """An empty title keeps the old one; empty tags clear them."""
        tags = None if self.tags is None else inputs.str_list(self.tags) or []
        return EntryFields.pick({**dict(self), "title": self.title or None, "tags": tags})


def update(actor: Actor, args: UpdateArguments):
    """Set title, kind, tags, status or subtopic without resending the body; the rest is kept."""
    result = entry_update(
        actor=actor,
        ref=args.id,
        fields=args.fields(),
        subtopic=args.subtopic,
        expected_version=args.expected_version,
        reason=args.reason,
    )
    return _saved(actor, result)


def _saved(actor: Actor, result: WriteResult):
    return render.entry_saved(
        result, report=write_report(actor, result), unseen=unseen_links(actor, [result.entry])
    )


class DeleteArguments(Arguments):
    id: EntryRef
    reason: Annotated[Reason, Field(description="Why it is deleted.")]
    undo: bool = False  # the docstring says what it does


def delete(actor: Actor, args: DeleteArguments):
    """Delete an entry (history kept; undo=true brings it back). To fix one, use correct."""
    if args.undo:
        entry = entry_undelete(actor=actor, ref=args.id, reason=args.reason).entry
        return render.entry_deleted(entry.short_id, entry.title, back=entry)
    entry = entry_delete(actor=actor, ref=args.id, reason=args.reason).entry
    return render.entry_deleted(entry.short_id, entry.title)


class CorrectArguments(Arguments):
    id: EntryRef
    body: Annotated[Body, Field(description="The corrected body.")]
    reason: Annotated[Reason, Field(description="What was wrong.")]
    title: Annotated[Title | None, Field(description="Default: the old title.")] = None


def correct(actor: Actor, args: CorrectArguments):
    """Record that an entry was wrong: a new entry supersedes it, both kept; search shows the
    new one."""
    result = entry_correct(
        actor=actor, ref=args.id, body=args.body, reason=args.reason, title=args.title or None
    )
    return render.entry_corrected(
        result,
        report=write_report(actor, result),
        unseen=unseen_links(actor, [result.entry, result.superseded]),
    )


UPSERT = Tool("upsert", UpsertArguments, upsert, IDEMPOTENT_WRITE)
EDIT = Tool("edit", EditArguments, edit, WRITE)
UPDATE = Tool("update", UpdateArguments, update, IDEMPOTENT_WRITE)
DELETE = Tool("delete", DeleteArguments, delete, DESTRUCTIVE)
CORRECT = Tool("correct", CorrectArguments, correct, WRITE)
