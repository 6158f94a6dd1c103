"""Search: full text + local embeddings, fused. See knowledge.search.engine."""

from knowledge.search.engine import MODES, search_entries
from knowledge.search.filters import SearchFilters
from knowledge.search.types import SearchHit

__all__ = ["MODES", "SearchFilters", "SearchHit", "search_entries"]
