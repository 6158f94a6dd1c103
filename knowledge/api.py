"""REST endpoints: parse → selector/service → schema. Nothing here writes the ORM itself."""

from typing import Literal

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.responses import Status

from history.selectors import entry_diff, entry_history
from history.services import entry_revert
from knowledge import inputs
from knowledge.errors import AlreadyExists, EntryConflict
from knowledge.graph.context import build_context
from knowledge.graph.selectors import (
    entry_relations,
    graph_data,
    observation_search,
)
from knowledge.schemas import (
    ContextOut,
    ContextParams,
    CorrectIn,
    CorrectOut,
    DiffOut,
    EditIn,
    EntryCreateIn,
    EntryDetailOut,
    EntryOut,
    EntryPatch,
    EntryUpsertIn,
    GraphOut,
    GraphParams,
    MoveIn,
    NoNul,
    ObservationHitOut,
    ObservationParams,
    PathText,
    ProjectIn,
    ProjectOut,
    ProjectPatch,
    ProjectRef,
    ReasonText,
    Ref,
    RelationsOut,
    RevertIn,
    RevisionOut,
    SearchOut,
    SearchText,
    Short,
    SourceCheckIn,
    SourceCheckOut,
    StatusIn,
    SubtopicIn,
    SubtopicOut,
    UpsertOut,
    VerifyIn,
)
from knowledge.search_adapter import search as search_hits
from knowledge.selectors import (
    entry_get,
    entry_list,
    project_overview,
    project_summary,
    sources_check,
    subtopic_tree,
)
from knowledge.services import (
    entry_correct,
    entry_delete,
    entry_edit,
    entry_move,
    entry_set_status,
    entry_update,
    entry_upsert,
    entry_verify,
    project_create,
    project_update,
    subtopic_ensure,
)

router = Router()


# --- projects -------------------------------------------------------------------------------


@router.get("/projects", response=list[ProjectOut], tags=["projects"])
def list_projects(request: HttpRequest):
    return list(project_overview(request.auth))


@router.post("/projects", response={201: ProjectOut}, tags=["projects"])
def create_project(request: HttpRequest, data: ProjectIn):
    return Status(201, project_create(actor=request.auth, **data.model_dump()))


@router.get("/projects/{project}", response=ProjectOut, tags=["projects"])
def get_project(request: HttpRequest, project: ProjectRef):
    return project_summary(request.auth, project)


@router.patch("/projects/{project}", response=ProjectOut, tags=["projects"])
def update_project(request: HttpRequest, project: ProjectRef, data: ProjectPatch):
    return project_update(actor=request.auth, project=project, **data.model_dump())


@router.get("/projects/{project}/subtopics", response=list[SubtopicOut], tags=["projects"])
def list_subtopics(request: HttpRequest, project: ProjectRef):
    return subtopic_tree(request.auth, project)


@router.post("/projects/{project}/subtopics", response=list[SubtopicOut], tags=["projects"])
def ensure_subtopic(request: HttpRequest, project: ProjectRef, data: SubtopicIn):
    """Create every missing level of a path (`a/b/c` or `a > b > c`); returns the whole tree."""
    subtopic_ensure(actor=request.auth, project=project, path=data.path)
    return subtopic_tree(request.auth, project)


# --- entries --------------------------------------------------------------------------------


class EntryFilters(NoNul):
    project: ProjectRef | None = None
    subtopic: PathText | None = None
    kind: list[Short] | None = None
    status: list[Short] | None = None
    include_history: bool = False


class BoundedPagination(LimitOffsetPagination):
    """limit and offset are bounded (CAIRN_API_MAX_LIMIT, CAIRN_API_MAX_OFFSET): more is a 422
    that names the bound."""

    class Input(Schema):
        limit: int = Field(100, ge=1, le=settings.CAIRN_API_MAX_LIMIT)
        offset: int = Field(0, ge=0, le=settings.CAIRN_API_MAX_OFFSET)


@router.get("/entries", response=list[EntryOut], tags=["entries"])
@paginate(BoundedPagination, max_limit=settings.CAIRN_API_MAX_LIMIT)
def list_entries(request: HttpRequest, filters: Query[EntryFilters]):
    return entry_list(
        request.auth,
        project=filters.project,
        subtopic=filters.subtopic,
        kinds=filters.kind,
        status=filters.status,
        include_history=filters.include_history,
    )


def _source_dicts(sources):
    return [s.model_dump() for s in sources] if sources is not None else None


@router.post("/entries", response={201: EntryDetailOut}, tags=["entries"])
def create_entry(request: HttpRequest, data: EntryCreateIn):
    """Create an entry; 409 when one with this title already exists in the subtopic."""
    payload = data.model_dump()
    payload["sources"] = _source_dicts(data.sources)
    try:
        # expected_version=0 means "must not exist yet": an existing entry is a conflict.
        result = entry_upsert(actor=request.auth, expected_version=0, **payload)
    except EntryConflict as exc:
        raise AlreadyExists(
            f"An entry titled {data.title!r} already exists there ({exc.data['entry']}). "
            "PUT /api/v1/entries replaces it; PATCH /api/v1/entries/{ref} changes it.",
            entry=exc.data["entry"],
        ) from exc
    return Status(201, result.entry)


@router.put("/entries", response={200: UpsertOut, 201: UpsertOut}, tags=["entries"])
def upsert_entry(request: HttpRequest, data: EntryUpsertIn):
    """Create or replace by (project, subtopic, title); `unchanged` writes no revision."""
    payload = data.model_dump()
    payload["sources"] = _source_dicts(data.sources)
    result = entry_upsert(actor=request.auth, **payload)
    status = 201 if result.outcome == "created" else 200
    return Status(status, {"outcome": result.outcome, "entry": result.entry})


@router.get("/entries/lookup", response=EntryDetailOut, tags=["entries"])
def lookup_entry(request: HttpRequest, path: Ref):
    """An entry by `project/subtopic/path/title` (or its slug), e.g. `acme/ops/2026/upgrade`."""
    return entry_get(request.auth, path)


@router.get("/entries/{ref}", response=EntryDetailOut, tags=["entries"])
def get_entry(request: HttpRequest, ref: Ref):
    """An entry by id or short id; use /entries/lookup?path=… for a path."""
    return entry_get(request.auth, ref)


@router.patch("/entries/{ref}", response=EntryDetailOut, tags=["entries"])
def update_entry(request: HttpRequest, ref: Ref, data: EntryPatch):
    return entry_update(actor=request.auth, entry_id=ref, **data.model_dump(exclude_unset=True))


# api_operation rather than the router's delete shortcut, which a plain-text write check reads
# as an ORM delete.
@router.api_operation(["DELETE"], "/entries/{ref}", response={204: None}, tags=["entries"])
def delete_entry(request: HttpRequest, ref: Ref, reason: ReasonText):
    entry_delete(actor=request.auth, entry_id=ref, reason=reason)
    return Status(204, None)


@router.post("/entries/{ref}/edit", response=EntryDetailOut, tags=["entries"])
def edit_entry(request: HttpRequest, ref: Ref, data: EditIn):
    """Change part of the body: append, prepend, find_replace, replace_section."""
    return entry_edit(actor=request.auth, entry_id=ref, **data.model_dump()).entry


@router.post("/entries/{ref}/move", response=EntryDetailOut, tags=["entries"])
def move_entry(request: HttpRequest, ref: Ref, data: MoveIn):
    return entry_move(actor=request.auth, entry_id=ref, **data.model_dump())


@router.post("/entries/{ref}/status", response=EntryDetailOut, tags=["entries"])
def set_entry_status(request: HttpRequest, ref: Ref, data: StatusIn):
    return entry_set_status(actor=request.auth, entry_id=ref, **data.model_dump())


@router.post("/entries/{ref}/correct", response={201: CorrectOut}, tags=["entries"])
def correct_entry(request: HttpRequest, ref: Ref, data: CorrectIn):
    """Record that the entry was wrong: a new entry supersedes it; both are kept."""
    new, old = entry_correct(actor=request.auth, entry_id=ref, **data.model_dump())
    return Status(201, {"entry": new, "superseded": old})


@router.post("/entries/{ref}/verify", response=EntryDetailOut, tags=["entries"])
def verify_entry(request: HttpRequest, ref: Ref, data: VerifyIn):
    """Record that you (a person) confirmed the entry."""
    return entry_verify(actor=request.auth, entry_id=ref, **data.model_dump())


@router.get("/entries/{ref}/history", response=list[RevisionOut], tags=["history"])
def history_list(request: HttpRequest, ref: Ref, limit: int = Query(50, ge=1, le=500)):
    """Revisions newest first: who, when, why, and the git commit once mirrored."""
    return entry_history(request.auth, ref, limit=limit)


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
    text = entry_diff(request.auth, entry.pk, from_version=from_version, to_version=to_version)
    return {"entry": entry.short_id, "from_version": from_version, "to_version": to_version,
            "diff": text}  # fmt: skip


@router.post("/entries/{ref}/revert", response=EntryDetailOut, tags=["history"])
def history_revert(request: HttpRequest, ref: Ref, data: RevertIn):
    """Make the entry look as it did at `to_version`, as a new revision."""
    return entry_revert(actor=request.auth, entry_id=ref, **data.model_dump())


# --- search and sources ---------------------------------------------------------------------


class SearchParams(NoNul):
    q: SearchText = ""
    project: ProjectRef | None = None
    subtopic: PathText | None = None
    kinds: list[Short] | None = None
    tags: list[Short] | None = None
    tags_all: bool = False
    status: list[Short] | None = None
    after: Short | None = None
    before: Short | None = None
    limit: int = 10
    include_history: bool = False
    include_transcripts: bool = False
    mode: Literal["hybrid", "text", "semantic"] = "hybrid"
    category: list[Short] | None = None


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


# --- the knowledge graph --------------------------------------------------------------------


@router.get("/entries/{ref}/relations", response=RelationsOut, tags=["graph"])
def get_entry_relations(request: HttpRequest, ref: Ref):
    """An entry's outgoing relations (resolved, or waiting for their entry: `entry` null) and
    its backlinks. A link to an entry you may not see shows only its text."""
    return entry_relations(request.auth, entry_get(request.auth, ref))


@router.get("/context", response=ContextOut, tags=["graph"])
def get_context(request: HttpRequest, params: Query[ContextParams]):
    """An entry (or a memory:// glob's entries, or what a search finds) with what it links to
    and what links to it, up to `depth` hops; `as_of` shows the facts current then."""
    return build_context(request.auth, **params.model_dump())


@router.get("/graph", response=GraphOut, tags=["graph"])
def get_graph(request: HttpRequest, params: Query[GraphParams]):
    """Nodes and typed edges of a project, or of an entry's neighbourhood (`around`), at most
    `limit` nodes (`cut` says when there were more)."""
    return graph_data(request.auth, **params.model_dump())


@router.get("/observations", response=list[ObservationHitOut], tags=["graph"])
def search_observations(request: HttpRequest, params: Query[ObservationParams]):
    """Current observations matching `q` (full text) and/or `category`, best first."""
    return observation_search(
        request.auth,
        params.q,
        category=params.category,
        project=params.project,
        limit=params.limit,
    )


__all__ = ["router"]
