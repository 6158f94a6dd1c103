"""Search: full text + local embeddings, fused. See knowledge.search.engine."""

from knowledge.search.engine import MODES, search_entries
from knowledge.search.types import SearchHit

__all__ = ["MODES", "SearchHit", "search_entries"]
