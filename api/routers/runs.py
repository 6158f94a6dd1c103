"""Runs: what one token (and its agent label) wrote, and undoing one as one unit."""

from django.http import HttpRequest
from ninja import Query, Router

from api.schemas.fields import ProjectRef, Short
from api.schemas.runs import RunDetailOut, RunOut, UndoIn, UndoOut
from knowledge.reads.run_preview import run_preview
from knowledge.selectors.runs import DEFAULT_DAYS, MAX_DAYS, MAX_RUNS, Run, runs_list
from knowledge.services import run_undo

router = Router()


def _run(run: Run) -> dict:
    return {
        "key": run.key,
        "user": run.user,
        "token": run.token,
        "token_id": run.id.token_id,
        "token_revoked": run.token_revoked,
        "agent": run.agent,
        "run_id": run.id.run,
        "marked": run.marked,
        "is_undo": run.is_undo,
        "started": run.started,
        "ended": run.ended,
        "revisions": run.revisions,
        "entries": run.entries,
        "created": run.created,
        "changed": run.changed,
        "deleted": run.deleted,
        "projects": list(run.projects),
    }


@router.get("/runs", response=list[RunOut], tags=["runs"])
def runs(
    request: HttpRequest,
    days: int = Query(DEFAULT_DAYS, ge=1, le=MAX_DAYS),
    token: int | None = Query(None, ge=1, le=2**63 - 1),
    project: ProjectRef | None = None,
    mine: bool = False,
    limit: int = Query(50, ge=1, le=MAX_RUNS),
):
    """The runs you may see that wrote in the last `days` days, latest first: your tokens'
    runs, and the runs in the projects you maintain (only their rows there)."""
    found = runs_list(request.auth, days=days, token=token, project=project, mine=mine, limit=limit)
    return [_run(run) for run in found]


@router.get("/runs/{key}", response=RunDetailOut, tags=["runs"])
def run(request: HttpRequest, key: Short):
    """A run: every entry it wrote that you may see, with what it changed, what others changed
    since, and what an undo would do now (the preview: send `expected` with the undo)."""
    page = run_preview(request.auth, key)
    return {
        "run": _run(page["run"]),
        "entries": page["items"],
        "more": page["more"],
        "undo_refusal": page["refusal"],
        "expected": page["expected"],
    }


@router.post("/runs/{key}/undo", response=UndoOut, tags=["runs"])
def undo(request: HttpRequest, key: Short, data: UndoIn):
    """Undo the run as one unit: every entry back to before it, later changes by others kept;
    conflicts stay as they are unless `resolutions` says how. The undo is a run of its own."""
    resolutions = {
        pk: r.model_dump(exclude_none=True) for pk, r in (data.resolutions or {}).items()
    }
    report = run_undo(
        actor=request.auth,
        run=key,
        reason=data.reason,
        expected=data.expected,
        resolutions=resolutions,
    )
    return {
        "run": report.run,
        "undo_run": report.undo_run,
        "restored": list(report.restored),
        "deleted": list(report.deleted),
        "undeleted": list(report.undeleted),
        "conflicts": [list(c) for c in report.conflicts],
        "kept": [list(k) for k in report.kept],
        "summary": report.summary(),
    }
