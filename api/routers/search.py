"""Search and the source check."""

from django.http import HttpRequest
from ninja import Query, Router

from api.schemas.search import SearchOut, SearchParams, SourceCheckIn, SourceCheckOut
from knowledge.search import SearchFilters, left_out_note, no_words_note, search_entries
from knowledge.selectors import sources_check

router = Router()


@router.get("/search", response=SearchOut, tags=["search"])
def search(request: HttpRequest, params: Query[SearchParams]):
    """Hybrid search; `after`/`before` accept ISO dates or ages like `7d`; `explain=true`
    adds each hit's signals (ranks and scores by words and by meaning)."""
    found = search_entries(
        request.auth,
        params.q,
        filters=SearchFilters.pick(params.model_dump()),
        limit=max(1, min(params.limit, 100)),
        mode=params.mode,
        weak=params.weak,
    )
    hits = [hit.as_dict() | ({} if params.explain else {"signals": None}) for hit in found]
    notes = (no_words_note(params.q, found), left_out_note(found), found.note)
    note = " ".join(n for n in notes if n)
    return {
        "results": hits,
        "words_matched": found.words_matched,
        "left_out": found.left_out,
        "note": note,
    }


@router.post("/sources/check", response=list[SourceCheckOut], tags=["search"])
def check_sources(request: HttpRequest, data: SourceCheckIn):
    """Which sources are already logged, and by which entries."""
    items = [{"kind": s.kind, "external_id": s.external_id} for s in data.sources]
    return sources_check(request.auth, data.project, items)
