"""The knowledge graph: an entry's relations, context around an entry, graph data,
observations."""

from django.http import HttpRequest
from ninja import Query, Router

from api.schemas.fields import Ref
from api.schemas.graph import (
    ContextOut,
    ContextParams,
    GraphOut,
    GraphParams,
    ObservationHitOut,
    ObservationParams,
    RelationsOut,
)
from knowledge.graph.selectors import entry_relations, graph_data, observation_search
from knowledge.reads.context import build_context
from knowledge.selectors import entry_get

router = Router()


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
