"""Search and the source check."""

from django.http import HttpRequest
from ninja import Query, Router

from api.schemas.search import SearchOut, SearchParams, SourceCheckIn, SourceCheckOut
from knowledge import inputs
from knowledge.search_adapter import search as search_hits
from knowledge.selectors import sources_check

router = Router()


@router.get("/search", response=SearchOut, tags=["search"])
def search(request: HttpRequest, params: Query[SearchParams]):
    """Hybrid search; `after`/`before` accept ISO dates or ages like `7d`."""
    hits = search_hits(
        request.auth,
        params.q,
        project=params.project,
        subtopic=params.subtopic,
        kinds=params.kinds,
        tags=[t.lower() for t in params.tags] if params.tags else None,
        tags_all=params.tags_all,
        status=params.status,
        after=inputs.when(params.after, field="after"),
        before=inputs.when(params.before, field="before"),
        limit=max(1, min(params.limit, 100)),
        include_history=params.include_history,
        include_transcripts=params.include_transcripts,
        mode=params.mode,
        categories=params.category,
    )
    return {"results": hits}


@router.post("/sources/check", response=list[SourceCheckOut], tags=["search"])
def check_sources(request: HttpRequest, data: SourceCheckIn):
    """Which sources are already logged, and by which entries."""
    items = [{"kind": s.kind, "external_id": s.external_id} for s in data.sources]
    return sources_check(request.auth, data.project, items)
