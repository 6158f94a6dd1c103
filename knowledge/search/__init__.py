"""Search: full text + local embeddings, fused. See knowledge.search.engine."""

from knowledge.search.engine import MODES, search_entries
from knowledge.search.filters import SearchFilters
from knowledge.search.providers import EmbeddingUnavailable, get_provider
from knowledge.search.types import SearchHit, SearchResults

__all__ = [
    "MODES",
    "EmbeddingUnavailable",
    "SearchFilters",
    "SearchHit",
    "SearchResults",
    "get_provider",
    "search_entries",
]
