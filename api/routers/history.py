"""An entry's revisions: list, diff, revert."""

from django.http import HttpRequest
from ninja import Query, Router

from api.schemas.entries import EntryDetailOut
from api.schemas.fields import Ref
from api.schemas.history import DiffOut, RevertIn, RevisionOut
from history.selectors import correction_diff, entry_diff, entry_history
from knowledge.selectors import entry_get
from knowledge.services import entry_revert

router = Router()


@router.get("/entries/{ref}/history", response=list[RevisionOut], tags=["history"])
def history_list(request: HttpRequest, ref: Ref, limit: int = Query(50, ge=1, le=500)):
    """Revisions newest first: who, when, why, and the git commit once mirrored; with those of
    the entries a correction links it to (`correction` says how)."""
    entry = entry_get(request.auth, ref)
    return entry_history(request.auth, entry, limit=limit, corrections=True)


@router.get("/entries/{ref}/diff", response=DiffOut, tags=["history"])
def history_diff(
    request: HttpRequest,
    ref: Ref,
    from_version: int | None = Query(None, ge=1),
    to_version: int | None = Query(None, ge=1),
):
    """A unified diff between two versions (to_version defaults to the current one,
    from_version to the one before it). Without from_version, a correction at version 1 is
    diffed against the entry it corrected (`from_entry`)."""
    entry = entry_get(request.auth, ref)
    to_version = to_version or entry.version
    first = from_version is None and to_version == 1
    if first and (fix := correction_diff(request.auth, entry, to_version=1)):
        return {"entry": entry.short_id, **fix}
    from_version = from_version or max(1, to_version - 1)
    text = entry_diff(request.auth, entry, from_version=from_version, to_version=to_version)
    return {"entry": entry.short_id, "from_version": from_version, "to_version": to_version,
            "diff": text}  # fmt: skip


@router.post("/entries/{ref}/revert", response=EntryDetailOut, tags=["history"])
def history_revert(request: HttpRequest, ref: Ref, data: RevertIn):
    """Make the entry look as it did at `to_version`, as a new revision."""
    return entry_revert(actor=request.auth, ref=ref, **data.model_dump()).entry
