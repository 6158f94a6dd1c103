"""Entries: list, create, upsert, look up, change, delete, and the one-step changes (edit,
move, status, correct, verify). Each endpoint parses, calls a selector or service, returns a
schema; nothing here writes the ORM itself."""

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.responses import Status

from api.schemas.entries import (
    CorrectIn,
    CorrectOut,
    EditIn,
    EntryCreateIn,
    EntryDetailOut,
    EntryFilters,
    EntryOut,
    EntryPatch,
    EntryUpsertIn,
    EntryWriteOut,
    MoveIn,
    StatusIn,
    UndeleteIn,
    UpsertOut,
    VerifyIn,
)
from api.schemas.fields import ReasonText, Ref
from knowledge.errors import AlreadyExists
from knowledge.models import Entry
from knowledge.reads.listings import entry_list
from knowledge.reads.write_reports import write_report
from knowledge.search import SearchFilters
from knowledge.selectors import entry_get
from knowledge.services import (
    EntryFields,
    WriteResult,
    entry_correct,
    entry_create,
    entry_delete,
    entry_edit,
    entry_move,
    entry_set_status,
    entry_undelete,
    entry_update,
    entry_upsert,
    entry_verify,
)

router = Router()


class BoundedPagination(LimitOffsetPagination):
    """limit and offset are bounded (CAIRN_API_MAX_LIMIT, CAIRN_API_MAX_OFFSET): more is a 422
    that names the bound."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=settings.CAIRN_API_MAX_LIMIT)
        offset: int = Field(0, ge=0, le=settings.CAIRN_API_MAX_OFFSET)


@router.get("/entries", response=list[EntryOut], tags=["entries"])
@paginate(BoundedPagination, max_limit=settings.CAIRN_API_MAX_LIMIT)
def list_entries(request: HttpRequest, filters: Query[EntryFilters]):
    # A listing shows transcripts too, which a search leaves out.
    return entry_list(
        request.auth,
        SearchFilters.pick({**filters.model_dump(), "include_transcripts": True}),
        sort=filters.sort,
    )


def _written(result: WriteResult) -> Entry:
    """The written entry as EntryWriteOut answers it: with `applied_on` when a stale write
    applied on the current version."""
    entry = result.entry
    entry.applied_on = result.rebased.as_dict() if result.rebased else None
    return entry


def _sources(data: EntryCreateIn) -> list[dict] | None:
    return [s.model_dump() for s in data.sources] if data.sources is not None else None


@router.post("/entries", response={201: EntryDetailOut}, tags=["entries"])
def create_entry(request: HttpRequest, data: EntryCreateIn):
    """Create an entry; 409 when one with this title already exists in the subtopic."""
    try:
        result = entry_create(
            actor=request.auth,
            project=data.project,
            subtopic=data.subtopic,
            fields=EntryFields.pick(data.model_dump()),
            sources=_sources(data),
            reason=data.reason,
        )
    except AlreadyExists as exc:
        if "entry" not in exc.data:
            raise
        raise AlreadyExists(
            f"{exc.message} PUT /api/v1/entries replaces it; PATCH "
            f"/api/v1/entries/{exc.data['entry']} changes it.",
            **exc.data,
        ) from exc
    return Status(201, result.entry)


@router.put("/entries", response={200: UpsertOut, 201: UpsertOut}, tags=["entries"])
def upsert_entry(request: HttpRequest, data: EntryUpsertIn):
    """Create or replace by (project, subtopic, title); `unchanged` writes no revision."""
    result = entry_upsert(
        actor=request.auth,
        project=data.project,
        subtopic=data.subtopic,
        fields=EntryFields.pick(data.model_dump()),
        sources=_sources(data),
        expected_version=data.expected_version,
        reason=data.reason,
    )
    status = 201 if result.outcome == "created" else 200
    return Status(
        status,
        {
            "outcome": result.outcome,
            "entry": result.entry,
            "schema_report": result.schema.as_dict() if result.schema is not None else None,
            "report": write_report(request.auth, result),
        },
    )


@router.get("/entries/lookup", response=EntryDetailOut, tags=["entries"])
def lookup_entry(request: HttpRequest, path: Ref):
    """An entry by `project/subtopic/path/title` (or its slug), e.g. `acme/ops/2026/upgrade`."""
    return entry_get(request.auth, path)


@router.get("/entries/{ref}", response=EntryDetailOut, tags=["entries"])
def get_entry(request: HttpRequest, ref: Ref):
    """An entry by id or short id; use /entries/lookup?path=… for a path."""
    return entry_get(request.auth, ref)


@router.patch("/entries/{ref}", response=EntryWriteOut, tags=["entries"])
def update_entry(request: HttpRequest, ref: Ref, data: EntryPatch):
    result = entry_update(
        actor=request.auth,
        ref=ref,
        fields=EntryFields.pick(data.model_dump()),
        expected_version=data.expected_version,
        reason=data.reason,
    )
    return _written(result)


# api_operation rather than the router's delete shortcut, which a plain-text write check reads
# as an ORM delete.
@router.api_operation(["DELETE"], "/entries/{ref}", response={204: None}, tags=["entries"])
def delete_entry(request: HttpRequest, ref: Ref, reason: ReasonText):
    entry_delete(actor=request.auth, ref=ref, reason=reason)
    return Status(204, None)


@router.post("/entries/{ref}/undelete", response=EntryDetailOut, tags=["entries"])
def undelete_entry(request: HttpRequest, ref: Ref, data: UndeleteIn):
    """Bring a deleted entry back as it was: same id, place, kind, tags, sources and history."""
    return entry_undelete(actor=request.auth, ref=ref, reason=data.reason).entry


@router.post("/entries/{ref}/edit", response=EntryWriteOut, tags=["entries"])
def edit_entry(request: HttpRequest, ref: Ref, data: EditIn):
    """Change part of the body: append, prepend, find_replace, replace_section."""
    return _written(entry_edit(actor=request.auth, ref=ref, **data.model_dump()))


@router.post("/entries/{ref}/move", response=EntryWriteOut, tags=["entries"])
def move_entry(request: HttpRequest, ref: Ref, data: MoveIn):
    return _written(entry_move(actor=request.auth, ref=ref, **data.model_dump()))


@router.post("/entries/{ref}/status", response=EntryWriteOut, tags=["entries"])
def set_entry_status(request: HttpRequest, ref: Ref, data: StatusIn):
    return _written(entry_set_status(actor=request.auth, ref=ref, **data.model_dump()))


@router.post("/entries/{ref}/correct", response={201: CorrectOut}, tags=["entries"])
def correct_entry(request: HttpRequest, ref: Ref, data: CorrectIn):
    """Record that the entry was wrong: a new entry supersedes it; both are kept."""
    result = entry_correct(actor=request.auth, ref=ref, **data.model_dump())
    return Status(201, {"entry": result.entry, "superseded": result.superseded})


@router.post("/entries/{ref}/verify", response=EntryDetailOut, tags=["entries"])
def verify_entry(request: HttpRequest, ref: Ref, data: VerifyIn):
    """Record that you (a person) confirmed the entry."""
    return entry_verify(actor=request.auth, ref=ref, **data.model_dump()).entry
