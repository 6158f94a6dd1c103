"""An entry's revisions: list, diff, revert."""

from django.http import HttpRequest
from ninja import Query, Router

from api.schemas.entries import EntryDetailOut
from api.schemas.fields import Ref
from api.schemas.history import DiffOut, RevertIn, RevisionOut
from history.selectors import entry_diff, entry_history
from knowledge.selectors import entry_get
from knowledge.services import entry_revert

router = Router()


@router.get("/entries/{ref}/history", response=list[RevisionOut], tags=["history"])
def history_list(request: HttpRequest, ref: Ref, limit: int = Query(50, ge=1, le=500)):
    """Revisions newest first: who, when, why, and the git commit once mirrored."""
    return entry_history(request.auth, entry_get(request.auth, ref), limit=limit)


@router.get("/entries/{ref}/diff", response=DiffOut, tags=["history"])
def history_diff(
    request: HttpRequest,
    ref: Ref,
    from_version: int = Query(..., ge=1),
    to_version: int | None = Query(None, ge=1),
):
    """A unified diff between two versions (to_version defaults to the current one)."""
    entry = entry_get(request.auth, ref)
    to_version = to_version or entry.version
    text = entry_diff(request.auth, entry, from_version=from_version, to_version=to_version)
    return {"entry": entry.short_id, "from_version": from_version, "to_version": to_version,
            "diff": text}  # fmt: skip


@router.post("/entries/{ref}/revert", response=EntryDetailOut, tags=["history"])
def history_revert(request: HttpRequest, ref: Ref, data: RevertIn):
    """Make the entry look as it did at `to_version`, as a new revision."""
    return entry_revert(actor=request.auth, ref=ref, **data.model_dump())
